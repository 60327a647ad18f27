"""The articles' listings and their published output, read from the articles' text at build time.

An article is plain text (:mod:`attnrepro.evidence.articles` splits it into blocks): each
listing is a *code* block, and what it printed follows it as *output* blocks, in 000 as ``#
Output:`` comments, elsewhere as plain lines. A listing's published output is every output block
after its code and before the next listing's code: the first right after it, and the later ones
that the article reports further on (001's training listing prints three tables, which the article
shows in three sections). An output block whose lines match nothing the listing prints (a formula
laid out by hand between two listings) is left out when the run is compared
(:mod:`attnrepro.report.evidence.listings_evaluate`).

A line is compared *number by number*: :func:`tokens` finds its numbers (and the words ``True``
and ``False``), each with its column in the article's line (from 1, as the claims' ``location``
counts them), and :func:`shape` is the line with every number replaced by ``#``, which pairs a
printed line with its published one.

Pure Python (no NumPy): the listings' interpreter loads what the listings import, nothing before.
"""

import re
from dataclasses import dataclass, field

from attnrepro.evidence import articles

OUTPUT_MARK = "# Output:"  # 000 prints its output as comments after this line
_COMMENT = "#"
# a number as printed: sign where it cannot be an operator, digits, decimals, exponent, a NumPy
# trailing point ("1."); or a boolean as a word
TOKEN = re.compile(
    r"(?:(?<![^\s(\[,=:])[-+])?\d+(?:\.\d+)?(?:e[-+]?\d+)?\.?(?![\w])|(?<![\w.])(?:True|False)(?![\w])"
)


@dataclass(frozen=True)
class Token:
    text: str
    column: int  # in the article's line (or the printed line), from 1

    @property
    def end(self):
        return self.column + len(self.text)


@dataclass(frozen=True)
class Line:
    """One line of published output: its number in the article, its text as the listing printed
    it (a comment's ``# `` removed), and how many characters of the article's line precede it."""

    number: int
    text: str
    offset: int = 0

    def tokens(self):
        return tokens(self.text, self.offset)


@dataclass
class Listing:
    """One listing of an article: its place (index from 1, first line), its code as printed, and
    the published output blocks that follow it (lists of :class:`Line`, the first block first)."""

    article: str
    index: int
    first: int
    code: str
    blocks: list = field(default_factory=list)

    @property
    def name(self):
        return f"{self.article}.listing-{self.index}"

    def lines(self):
        return [line for block in self.blocks for line in block]


def tokens(text, offset=0):
    """The numbers (and booleans) of a line, in order, each with its column from 1 (``offset``:
    the characters before ``text`` in the article's line)."""
    return [Token(m.group(), m.start() + 1 + offset) for m in TOKEN.finditer(text)]


def shape(text):
    """The line with each number replaced by ``#`` and its runs of blanks by one space."""
    return " ".join(TOKEN.sub("#", text).split())


def _output_lines(block):
    """The published lines of an output block, without 000's ``# Output:`` mark and comment signs."""
    out = []
    for number, text in zip(block.numbers, block.lines):
        if text.strip() == OUTPUT_MARK or not text.strip():
            continue
        if text.startswith(_COMMENT) and block.lines[0].strip() == OUTPUT_MARK:
            cut = 2 if text.startswith(_COMMENT + " ") else 1
            out.append(Line(number, text[cut:], cut))
        else:
            out.append(Line(number, text))
    return out


def extract(text, article):
    """The listings of an article's ``text``, in order, each with the output blocks after it."""
    listings = []
    for block in articles.parse(text):
        if block.kind == "code":
            listings.append(Listing(article, len(listings) + 1, block.first, "\n".join(block.lines) + "\n"))
        elif block.kind == "output" and listings:
            lines = _output_lines(block)
            if lines:
                listings[-1].blocks.append(lines)
    return listings
