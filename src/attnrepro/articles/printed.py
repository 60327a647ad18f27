"""Every number a listing printed, paired with the published one and with a second run's.

A listing runs twice; each number of its first run's output is a :class:`Printed`: its place (the
listing, its printed line among the non-blank ones, its place in that line), its text in both runs,
and the published number it pairs with (:func:`attnrepro.articles.listings.pair_lines`: the same
line shape, then the same place in the line). :func:`table_rows` is the table of them that a drafted
claim's source selects from (``experiment: listings``): ``listing``, ``printed_line``, ``number``,
the published ``line`` and ``column`` (None when the article does not show it), ``text``,
``again`` (the second run's) and ``value``. :func:`unpaired` gives the published numbers nothing
printed pairs with. A number inside a version, a section number or a date is none (``2.4.0`` is not
2.4 and 0). Pure Python: no NumPy, no pandas.
"""

import re
from dataclasses import dataclass

from attnrepro.articles import listings as listing_text

DOTTED = re.compile(r"\d+(?:\.\d+){2,}|\d{4}-\d{2}-\d{2}")
TABLE_COLUMNS = ["case", "listing", "printed_line", "number", "line", "column", "text", "again", "value"]


@dataclass(frozen=True)
class Printed:
    """One number a listing printed in the first run, with its twin of the second run."""

    listing: int
    printed_line: int  # from 1, among the listing's non-blank printed lines
    number: int  # from 1, in that line
    text: str  # as the first run printed it
    again: str | None  # as the second run printed it (None: no such number there)
    line: int | None = None  # the published line it pairs with
    column: int | None = None  # where the published number stands in that line
    published: str | None = None
    shape: str = ""  # its printed line with the numbers blanked (listings.shape)

    @property
    def value(self):
        return as_float(self.text)


BOOLEANS = {"True": 1.0, "False": 0.0}  # a printed boolean's value (the ledger writes it back as a word)


def as_float(text):
    if text in BOOLEANS:
        return BOOLEANS[text]
    try:
        return float(text)
    except ValueError:
        return None


def numbers_in(text, offset=0):
    """The tokens of a printed or published line: its numbers and booleans, but none inside a
    version, a section number or a date (``2.4.0`` is not 2.4 and 0)."""
    runs = [m.span() for m in DOTTED.finditer(text)]
    return [t for t in listing_text.tokens(text, offset) if as_float(t.text) is not None
            and not any(a <= t.column - 1 - offset < b for a, b in runs)]


def _printed_lines(run):
    return [text for text in (run or {}).get("stdout", "").splitlines() if text.strip()]


def printed_numbers(listing, first, second):
    """[Printed] of one listing: every number of the first run's output, paired with the second
    run's same place and with the published line its printed line pairs with."""
    lines, again = _printed_lines(first), _printed_lines(second)
    published = listing.lines()
    partner = {j: i for i, j in listing_text.pair_lines(published, lines)}
    out = []
    for j, text in enumerate(lines):
        mine = numbers_in(text)
        twins = numbers_in(again[j]) if j < len(again) else []
        shown = published[partner[j]] if j in partner else None
        theirs = numbers_in(shown.text, shown.offset) if shown is not None else []
        for k, token in enumerate(mine):
            twin = twins[k].text if len(twins) == len(mine) else None
            pub = theirs[k] if len(theirs) == len(mine) else None
            out.append(Printed(listing.index, j + 1, k + 1, token.text, twin,
                               shown.number if pub else None, pub.column if pub else None,
                               pub.text if pub else None, listing_text.shape(text)))
    return out


def unpaired(listing, numbers, status):
    """(unclaimed, lines): a listing's published numbers that nothing printed pairs with, each
    with the reason, and the published lines among them whose difference is the listing's (its
    first output block, or a later one some printed line pairs with; a later block nothing pairs
    with is not its output: a formula or a table laid out between two listings)."""
    paired = {(n.line, n.column) for n in numbers if n.line is not None}
    shown = {n.line for n in numbers if n.line is not None}
    unclaimed, lines = [], []
    for k, block in enumerate(listing.blocks):
        outside = status == "ran" and k > 0 and not shown & {line.number for line in block}
        for line in block:
            missed = [t for t in numbers_in(line.text, line.offset) if (line.number, t.column) not in paired]
            if missed and status == "ran" and not outside:
                lines.append(line.number)
            why = (f"listing {listing.index} {status}" if status != "ran" else
                   "not the listing's output: nothing it prints pairs with this block" if outside else
                   f"listing {listing.index} printed no line like this one")
            unclaimed += [{"line": line.number, "column": t.column, "text": t.text, "reason": why}
                          for t in missed]
    return unclaimed, lines


def published_count(listing):
    """How many numbers the article prints after ``listing``."""
    return sum(len(numbers_in(line.text, line.offset)) for line in listing.lines())


def table_rows(printed):
    """The rows of the printed numbers' table (one per number; a claim's source selects one)."""
    return [{"case": f"listing-{n.listing}", "listing": n.listing, "printed_line": n.printed_line,
             "number": n.number, "line": n.line, "column": n.column, "text": n.text, "again": n.again,
             "value": n.value} for n in printed]
