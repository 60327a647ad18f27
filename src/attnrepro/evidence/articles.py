"""The articles' text: its blocks (which text is an article's: :mod:`attnrepro.articles.catalog`).

The articles are plain text as a browser copies a web page: one paragraph per line, headings
on lines of their own, list items opening with a bullet or a number, and listings written out
with their output after them (in 000 as ``# Output:`` comments, elsewhere as plain lines). This
module splits a text into :class:`Block` s (heading, paragraph, list, code, output) for the
annotated editions (:mod:`attnrepro.report.editions.edition`); the lines keep their numbers, the
columns of ``config/published.yaml``'s locations count characters of those lines.
"""

import re
from dataclasses import dataclass


@dataclass
class Block:
    """Consecutive lines of one kind; ``first`` is the number (1-based) of its first line."""

    kind: str  # heading, paragraph, list, code, output
    first: int
    lines: list

    @property
    def numbers(self):
        return range(self.first, self.first + len(self.lines))


_ITEM = re.compile(r"\s*(?:•|\d+\.)\s")
_OUTPUT_MARK = "# Output:"


def _chunks(lines):
    """(first line number, lines) of every run of non-blank lines."""
    start = None
    for i, line in enumerate([*lines, ""]):
        if line.strip() and start is None:
            start = i
        elif not line.strip() and start is not None:
            yield start + 1, lines[start:i]
            start = None


def _compiles(lines):
    try:
        compile("\n".join(lines) + "\n", "<listing>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def _aligned(line):
    """Columns aligned with runs of spaces: a table, an output, a formula laid out by hand."""
    return re.search(r"\S {2,}\S", line.strip()) is not None


def _prose(line):
    """A paragraph: a long line of words, neither indented, nor aligned, nor code."""
    return (len(line) >= 120 and not line[0].isspace() and not line.startswith("#") and not _ITEM.match(line)
            and not _aligned(line) and not _compiles([line]))


def _plain(chunk):
    """Lines of words broken by hand (a byline): nothing of a listing or an output in them."""
    return not any(_aligned(line) or _compiles([line]) or re.search(r"[=(\[{]", line) for line in chunk)


def _kind(chunk):
    """heading, paragraph, list, lines (a paragraph broken by hand) or pre (a listing, its output,
    or a formula laid out by hand)."""
    if all(_ITEM.match(line) for line in chunk):
        return "list"
    if len(chunk) > 1:
        return "lines" if _plain(chunk) else "pre"
    line = chunk[0]
    code_like = re.match(r"(import|from|def|class|for|with|if|print)\b", line) and _compiles(chunk)
    formula = "=" in line and len(line) < 100 and not line.rstrip().endswith(".")
    if code_like or _aligned(line) or formula:
        return "pre"
    if len(line) <= 90 and not re.search(r"[.:;,]$", line.strip()):
        return "heading"
    return "paragraph"


def _pieces(first, chunk):
    """A chunk with its paragraphs (long lines of prose) split off: (first, lines) pieces."""
    piece = []
    for number, line in enumerate(chunk, start=first):
        if len(chunk) > 1 and _prose(line):
            if piece:
                yield number - len(piece), piece
            yield number, [line]
            piece = []
        else:
            piece.append(line)
    if piece:
        yield first + len(chunk) - len(piece), piece


def _split_listing(first, lines):
    """A listing region as code then output: the code is the longest leading run of lines that
    compiles as Python, up to a ``# Output:`` comment (000 prints its output as comments)."""
    marked = [i for i, line in enumerate(lines) if line.strip() == _OUTPUT_MARK]
    end = marked[0] if marked else next(k for k in range(len(lines), -1, -1) if _compiles(lines[:k]))
    while end and not lines[end - 1].strip():  # blank lines between code and output go to neither
        end -= 1
    code = Block("code", first, lines[:end]) if any(line.strip() for line in lines[:end]) else None
    rest = end
    while rest < len(lines) and not lines[rest].strip():
        rest += 1
    output = Block("output", first + rest, lines[rest:]) if rest < len(lines) else None
    return [b for b in (code, output) if b is not None]


def parse(text):
    """The blocks of an article's ``text``, in order; consecutive preformatted chunks (a listing
    with its blank lines) form one region, split into code and output."""
    lines = text.split("\n")
    blocks, region = [], None
    for first, chunk in (piece for run in _chunks(lines) for piece in _pieces(*run)):
        kind = _kind(chunk)
        if kind == "pre":
            if region is None:
                region = [first, []]
            else:  # keep the blank lines inside a listing
                region[1] += [""] * (first - region[0] - len(region[1]))
            region[1] += chunk
            continue
        if region is not None:
            blocks += _split_listing(*region)
            region = None
        blocks.append(Block(kind, first, chunk))
    if region is not None:
        blocks += _split_listing(*region)
    return blocks

