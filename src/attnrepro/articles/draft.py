"""Claims drafted from an article's text and two runs of its listings, classed by stated rules.

Every number of every output block becomes a claim in ``config/published.yaml``'s schema, with its
location, the published string and a class decided by these rules, in this order:

1. **machine-bound** when the listing reads a clock (:data:`CLOCK`) and the two runs printed other
   digits in the number's field (its place in lines of one shape: a column of a table of times): a
   time moves with the machine;
2. **stochastic** when the two runs printed other digits otherwise: an unseeded draw moves it, and
   the claim's note gives both runs' digits (the ledger never calls it *differs*: one run cannot
   place a draw);
3. **round-off** when it is not zero and below :data:`ROUND_OFF` in magnitude: the last bits of a
   computation, judged by that tolerance;
4. **echo** when the listing's code states the number (a literal of its code, or a number inside one
   of its strings; 0 and 1 excepted, which code states everywhere): it shows a setting;
5. **exact** otherwise: two runs print the same digits.

Each number of the prose (paragraphs, lists, lines broken by hand) is paired with a printed number
it restates, the same value at the prose's digits, preferring the nearest listing above it: the
prose claim reads the same source, so the ledger gives it the printed number's verdict
(:mod:`attnrepro.report.ledger.restated`). A prose number that restates none but lies within
:data:`NEAR` units of its last digit (or :data:`NEAR_SHARE`) of a printed one is drafted against
that one and flagged as a likely misprint; every other prose number is listed as unclaimed with the
reason.

The reproduced values live in the table of every number each listing printed
(:mod:`attnrepro.articles.printed`); a claim's source selects its row. Pure Python.
"""

import ast
import re
from dataclasses import dataclass, field

from attnrepro.articles import listings as listing_text
from attnrepro.articles import printed

LISTINGS = "listings"  # the experiment name of a drafted claim's source: the listings' printed numbers
CLOCK = re.compile(r"\b(?:perf_counter(?:_ns)?|process_time|monotonic|timeit|time\.time)\b|%%?timeit")
# a prose number is a likely misprint of a printed one within NEAR units of its last digit or within
# NEAR_SHARE of the printed value: a digit typed wrong, or two digits swapped (0.4631 for 0.4613)
NEAR = 3
NEAR_SHARE = 0.01
PROSE_KINDS = ("paragraph", "list", "lines")
# what states no result in prose or output: code, markup, mathematics, an address or a path, a version
# or a section number (dotted runs), a date
NOT_STATED = re.compile(r"`[^`]*`|<[^>]*>|\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\]|https?://\S+|\S*/\S*"
                        r"|\d+(?:\.\d+){2,}|\d{4}-\d{2}-\d{2}")
NO_RESULT = "it states no result: code, markup, mathematics, an address, a path, a version or a date"
SMALL = 10  # a prose integer below it is a count, an index or a step more often than a result
SMALL_INTEGER = "a small integer of the prose: a count, an index or a step more often than a result"
STATED = "a number a listing's code states (an input, a setting), named by the prose"
# a non-zero figure below this is at the level of the last bits of float32 or float64 arithmetic on
# values of order one (float32's epsilon is 1.2e-7; a difference of tens of last bits stays below it)
ROUND_OFF = 1e-5
HEADER = ("Claims drafted from the article's text by attnrepro (attnrepro.articles.draft): confirm each by "
          "copying it into the article's claims file (config articles: claims)")
RATIONALES = {
    "echo-stated": "the listing's code states this number (a literal of its code) and prints it back: it "
                   "shows a setting, not a computation",
    "round-off": "a figure at the level of the last bits (below 1e-5 on values of order one): its digits "
                 "move with the CPU, the BLAS kernel and the library versions",
    "clock": "read from a clock: it moves with the machine and with what else runs (two runs of the listing "
             "here printed other digits)",
}


@dataclass
class Draft:
    """What the text and two runs give: the printed numbers, the claims, the prose left unclaimed,
    and one entry per listing that did not run or printed other lines than the published ones."""

    article: str
    printed: list = field(default_factory=list)
    claims: list = field(default_factory=list)
    unclaimed: list = field(default_factory=list)
    failures: list = field(default_factory=list)

    def document(self):
        """The claims file: rationales and claims (published.yaml's schema)."""
        return {"rationales": dict(RATIONALES), "claims": self.claims}


def stated_numbers(code):
    """The numbers a listing's code states: its numeric literals and the numbers inside its strings."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            found.add(float(node.value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            values = (printed.as_float(t.text) for t in printed.numbers_in(node.value))
            found |= {v for v in values if v is not None}
    return found - {0.0, 1.0}


def _field(number):
    """A number's field: its listing, the shape of its line and its place in it (a table's column)."""
    return number.listing, number.shape, number.number


def moving_fields(numbers):
    """The fields in which some number moved between the two runs."""
    return {_field(n) for n in numbers if n.again != n.text}


def classify(number, code, moving=frozenset()):
    """(class, why) of a printed number by the module's rules (``code``: its listing's code;
    ``moving``: :func:`moving_fields`). In a listing that reads a clock, a number whose field moved
    in some line comes from the clock even where two runs happened to print the same digits."""
    moved = number.again != number.text
    if CLOCK.search(code) and (moved or _field(number) in moving):
        return "machine-bound", "clock"
    if moved:
        return "stochastic", None
    if number.value is not None and 0 < abs(number.value) < ROUND_OFF:
        return "round-off", "round-off"
    if number.value in stated_numbers(code):
        return "echo", "echo-stated"
    return "exact", None


def heading_lines(blocks):
    """[(first line, text)] of the headings among ``blocks``, without Markdown's ``#`` marks."""
    return [(b.first, " ".join(b.lines).strip().lstrip("#").strip()) for b in blocks if b.kind == "heading"]


def section(headings, line):
    """The heading above ``line`` ([(first line, text)] of the headings)."""
    above = [text for first, text in headings if first <= line]
    return above[-1] if above else "(before the first heading)"


def _source(number):
    where = ({"listing": number.listing, "line": number.line, "number": number.number}
             if number.line is not None else
             {"listing": number.listing, "printed_line": number.printed_line, "number": number.number})
    return {"experiment": LISTINGS, "where": where, "column": "value"}


def _claim(article, claim_id, section, what, published, location, cls, why, number):
    claim = {"id": claim_id, "article": article, "section": section, "claim": what, "published": published,
             "class": cls, "source": _source(number), "location": location}
    if cls == "machine-bound":
        claim["raw_time"] = True
    if cls == "round-off":
        claim["tolerance"] = ROUND_OFF
    if why:
        claim["why"] = why
    if cls == "stochastic":
        claim["note"] = (f"an unseeded draw moves it: two runs of listing {number.listing} here printed "
                         f"{number.text} and {'no such number' if number.again is None else number.again}")
    return claim


def output_claims(article, listings, numbers, headings):
    """A claim for each published number that a printed one pairs with; {(listing, line, number): claim}."""
    code, moving = {item.index: item.code for item in listings}, moving_fields(numbers)
    drafted = {}
    for number in numbers:
        if number.line is None:
            continue
        cls, why = classify(number, code[number.listing], moving)
        claim_id = f"{article}.listing-{number.listing}.line-{number.line}.number-{number.number}"
        what = f"number {number.number} of the output line {number.line}, printed by listing {number.listing}"
        drafted[number] = _claim(article, claim_id, section(headings, number.line), what, number.published,
                                 {"line": number.line, "column": number.column}, cls, why, number)
    return drafted


def _digits(text):
    """Decimals of a number as written in fixed notation (None for scientific notation)."""
    return None if "e" in text.lower() else len(text.partition(".")[2])


def _normal(text):
    """A number as written, without a plus sign and with its exponent as an integer ("1.5e-05": "1.5e-5")."""
    mantissa, mark, exponent = text.lower().lstrip("+").partition("e")
    return f"{mantissa}e{int(exponent)}" if mark else mantissa


def written_like(value, prose):
    """``value`` written with the digits and notation of the number ``prose``."""
    mantissa, mark, _ = prose.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return _normal(f"{value:.{decimals}e}" if mark else f"{value:.{decimals}f}")


def restates(prose, value):
    """Whether ``value`` written at the digits of the prose number ``prose`` is ``prose``; a prose
    integer restates a value within 1% of it (0 only 0 itself): "0" or "3" round many values they
    do not state."""
    if value is None or written_like(value, prose) != _normal(prose):
        return False
    return _digits(prose) != 0 or abs(value - float(prose)) <= 0.01 * abs(float(prose))


def near(prose, value):
    """Whether a prose number with decimals lies within NEAR_SHARE of ``value`` or, written with
    three or more significant digits, within NEAR units of its last digit (a likely misprint of
    it: 0.4631 for 0.4613); an integer of the prose is a count or a size more often than a
    measurement, and is never taken for a misprint, nor is "4.0" for 4.15."""
    decimals = _digits(prose)
    significant = len(prose.lstrip("+-").replace(".", "").lstrip("0"))
    if not decimals or value is None or significant < 2:
        return False
    gap = abs(float(prose) - value)
    return gap <= NEAR_SHARE * abs(value) or (significant >= 3 and gap <= NEAR * 10.0 ** -decimals)


def _nearest_first(numbers, line, first_lines):
    """``numbers`` ordered from the listing nearest above ``line`` to the farthest, then those below."""
    def key(number):
        first = first_lines[number.listing]
        return (0, line - first) if first <= line else (1, first - line)
    return sorted(numbers, key=key)


def _sentence_end(token):
    """A prose number without the full stop that ends its sentence ("16." is 16)."""
    return listing_text.Token(token.text.rstrip("."), token.column) if token.text.endswith(".") else token


def prose_figures(text):
    """(figures, left) of a prose line: the numbers that may restate a result, and those that state
    none (inside markup, mathematics, an address or a path), which are listed unclaimed."""
    spans = [m.span() for m in NOT_STATED.finditer(text)]
    figures, left = [], []
    words = printed.BOOLEANS  # a word of prose is no claim
    for token in (_sentence_end(t) for t in printed.numbers_in(text) if t.text not in words):
        inside = any(a <= token.column - 1 < b for a, b in spans)
        (left if inside else figures).append(token)
    return figures, left


def _candidates(token, numbers, line, first_lines):
    """The printed numbers a prose number may restate, the nearest listing above it first; an
    integer only those of that listing (integers stand everywhere: a count, an index), and one
    below :data:`SMALL` none."""
    ordered = _nearest_first(numbers, line, first_lines)
    if _digits(token.text) != 0:
        return ordered
    if abs(float(token.text)) < SMALL:
        return []
    above = [n.listing for n in ordered if first_lines[n.listing] <= line]
    return [n for n in ordered if above and n.listing == above[0]]


def _prose_claim(article, headings, line, k, token, cell, drafted, misprint):
    """The claim of prose number ``token`` (the ``k``-th of ``line``) restating ``cell``, or flagged
    as a likely ``misprint`` of it."""
    cls, why = (drafted[cell]["class"], drafted[cell].get("why")) if cell in drafted else ("exact", None)
    place = f"output line {cell.line}" if cell.line else f"printed line {cell.printed_line}"
    what = (f"likely misprint: no printed number has this value at its digits; the nearest is number "
            f"{cell.number} of listing {cell.listing}'s {place}, printed {cell.text}" if misprint else
            f"the prose restates number {cell.number} of listing {cell.listing}'s {place}")
    return _claim(article, f"{article}.prose.line-{line}.number-{k}", section(headings, line), what,
                  token.text, {"line": line, "column": token.column}, cls, why, cell)


def prose_claims(article, blocks, numbers, drafted, headings, listings):
    """(claims, unclaimed) of the prose's numbers: each restating a printed number, a likely
    misprint of one, or unclaimed with the reason (among them, a number a listing's code states: an
    input or a setting, which the prose may name without restating a result)."""
    claims, unclaimed = [], []
    first_lines = {item.index: item.first for item in listings}
    literals = set().union(*(stated_numbers(item.code) for item in listings))
    for block in (b for b in blocks if b.kind in PROSE_KINDS):
        for line, text in zip(block.numbers, block.lines):
            figures, left = prose_figures(text)
            unclaimed += [{"line": line, "column": t.column, "text": t.text, "reason": NO_RESULT}
                          for t in left]
            for k, token in enumerate(figures, start=1):
                candidates = _candidates(token, numbers, line, first_lines)
                match = next((n for n in candidates if restates(token.text, n.value)), None)
                stated = match is None and printed.as_float(token.text) in literals
                misprint = None if match or stated else next(
                    (n for n in candidates if near(token.text, n.value)), None)
                if match or misprint:
                    claims.append(_prose_claim(article, headings, line, k, token, match or misprint, drafted,
                                               misprint is not None))
                else:
                    small = _digits(token.text) == 0 and abs(float(token.text)) < SMALL
                    unclaimed.append({"line": line, "column": token.column, "text": token.text,
                                      "reason": STATED if stated else SMALL_INTEGER if small else
                                      "no number the listings print has this value at its digits"})
    return claims, unclaimed


def draft(article, blocks, listings, first_runs, second_runs):
    """The :class:`Draft` of an article: its ``blocks`` and ``listings`` (articles.listings.extract),
    and the records of two runs of its listings ({listing name: {status, error, stdout}})."""
    headings = heading_lines(blocks)
    result = Draft(article)
    for item in listings:
        first, second = first_runs.get(item.name) or {}, second_runs.get(item.name) or {}
        status = first.get("status", "not run")
        numbers = printed.printed_numbers(item, first, second) if status == "ran" else []
        result.printed += numbers
        unclaimed, lines = printed.unpaired(item, numbers, status)
        result.unclaimed += unclaimed
        if status != "ran" or lines:
            result.failures.append({"listing": item.index, "line": item.first, "status": status,
                                    "error": first.get("error") or status,
                                    "published": printed.published_count(item),
                                    "unpaired_lines": lines, "notes": first.get("notes") or []})
    drafted = output_claims(article, listings, result.printed, headings)
    prose, unclaimed = prose_claims(article, blocks, result.printed, drafted, headings, listings)
    result.claims = list(drafted.values()) + prose
    result.unclaimed += unclaimed
    return result
