"""What every form of article gives: blocks of lines with their places, in one document.

A parser (:mod:`~attnrepro.articles.plain`, :mod:`~attnrepro.articles.markdown`,
:mod:`~attnrepro.articles.notebook`) turns an article into :class:`Block` s, in order: a heading,
a paragraph, a list, lines broken by hand, a listing's code, or what a listing printed. A block
names its first line (from 1) in the document's text; the claims' locations and the listings'
numbers count lines and columns of that text, so a block also says how many characters of each of
its lines it leaves out (a ``>>>`` prompt, the indentation of a fence inside a list item).

A code block says how its listing shows values (:data:`DISPLAYS`): an article written as a script
shows only what the code prints; a notebook cell, or a Markdown listing followed by its output,
also shows the value of a bare expression ending it, as Jupyter does; a ``>>>`` transcript shows
the value of every expression statement, as the Python prompt does.

Pure Python, no I/O.
"""

from dataclasses import dataclass, field

KINDS = ("heading", "paragraph", "list", "lines", "code", "output")
# how a listing shows values: only what it prints; also its final bare expression's repr (a
# notebook cell); also every expression statement's repr (a >>> transcript)
DISPLAYS = ("print", "last", "each")


@dataclass
class Block:
    """Consecutive lines of one kind; ``first`` is the number (from 1) of its first line in the
    document's text, ``offset`` how many characters of each of those lines precede ``lines``
    (0 but for a transcript's code and a fence's indented content), and ``display``, for a code
    block only, one of :data:`DISPLAYS`."""

    kind: str
    first: int
    lines: list
    display: str = ""
    offset: int = 0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"block kind {self.kind!r}: not one of {', '.join(KINDS)}")
        if self.kind == "code" and not self.display:
            self.display = "print"
        if self.display and (self.kind != "code" or self.display not in DISPLAYS):
            raise ValueError(f"display {self.display!r} of a {self.kind} block: only a code block has one, "
                             f"one of {', '.join(DISPLAYS)}")

    @property
    def numbers(self):
        """The numbers of its lines in the document's text."""
        return range(self.first, self.first + len(self.lines))


@dataclass
class Document:
    """An article as read: its form (:data:`attnrepro.articles.forms.FORMS`), the text whose lines
    and columns its blocks count (the file itself, or a notebook's text view), and its blocks."""

    form: str
    text: str
    blocks: list = field(default_factory=list)
