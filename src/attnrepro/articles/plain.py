"""Plain text, as a browser copies a web page (the seeds' form): its blocks, found by their look.

One paragraph per line, headings on lines of their own, list items opening with a bullet or a
number, and listings written out with their output after them. Nothing marks a listing, so the
parser reads the text's chunks (runs of non-blank lines) by what they look like:

- a list: every line opens with a bullet or a number; lines: a paragraph broken by hand (no
  character of code in them); a display formula in LaTeX (``$$ a = b $$``) is prose too;
- preformatted: several lines with code or aligned columns in them, a line of code (a keyword
  statement, an assignment, a call, a ``>>>`` prompt), an aligned line or a formula laid out by
  hand (``a = b`` in a short line);
- a heading: one short line not ending in punctuation; a paragraph: any other line, and every long
  line of prose inside a chunk.

Consecutive preformatted chunks form one listing region, its blank lines kept, and a chunk right
after a region that continues it joins it: an indented line (a function's ``return`` after a blank
line), a printed value (``42``, ``tensor(0.5000)``), lines the region's code prints (a sentence, a
bulleted line, even a long one). :func:`attnrepro.articles.outputs.split` splits a region into its
code and output blocks (output marks, a transcript, or the longest run that compiles).

Pure Python (no pandas): the editions, the coverage scan and the listings call it.
"""

import ast
import re

from attnrepro.articles import outputs
from attnrepro.articles.blocks import Block, Document

_ITEM = re.compile(r"\s*(?:•|\d+\.)\s")
# a LaTeX formula: display delimiters, or a command of the usual ones
_LATEX = re.compile(r"\$\$|\\[\[\]()]|\\(?:begin|end|frac|sqrt|sum|prod|cdot|times|left|right|mathbf|mathrm|"
                    r"operatorname|text|top|approx|leq?|geq?|alpha|beta|sigma|mu|partial|infty)(?![A-Za-z])")
# a string literal of a line of code, and the format fields of an f-string inside it
_STRING = re.compile(r"""(?:[rRbBuUfF]{0,2})("|')((?:\\.|(?!\1).)*)\1""")
_FIELD = re.compile(r"\{[^{}]*\}|\\n|\\t")
_BULLETS = "•-*·"  # a bulleted line as a print opens it: "•" alone, or "- " and the rest


def _chunks(lines):
    """(first line number, lines) of every run of non-blank lines."""
    start = None
    for i, line in enumerate([*lines, ""]):
        if line.strip() and start is None:
            start = i
        elif not line.strip() and start is not None:
            yield start + 1, lines[start:i]
            start = None


def _aligned(line):
    """Columns aligned with runs of spaces: a table, an output, a formula laid out by hand."""
    return re.search(r"\S {2,}\S", line.strip()) is not None


def _prose(line):
    """A paragraph: a long line of words, neither indented, nor aligned, nor code."""
    return (len(line) >= 120 and not line[0].isspace() and not line.startswith("#") and not _ITEM.match(line)
            and not _aligned(line) and not outputs.compiles([line]))


def _plain(chunk):
    """Lines of words broken by hand (a byline): nothing of a listing or an output in them."""
    return not any(_aligned(line) or outputs.compiles([line]) or re.search(r"[=(\[{]", line)
                   for line in chunk)


def _latex(chunk):
    """A formula in LaTeX: a display (``$$ ... $$``, ``\\[ ... \\]``) or a line of its commands."""
    return all(_LATEX.search(line) for line in chunk) or (
        len(chunk) > 1 and _LATEX.search(chunk[0]) is not None and _LATEX.search(chunk[-1]) is not None)


def _statement(line):
    """One line of code: a call of a function or method (``np.random.seed(0)``, ``model.eval()``)."""
    try:
        body = ast.parse(line).body
    except (SyntaxError, ValueError):
        return False
    call = body[0].value if len(body) == 1 and isinstance(body[0], ast.Expr) else None
    return (isinstance(call, ast.Call) and not outputs.printed_value(call)
            and re.match(r"[\w.]+\(", line) is not None)


def _compound(chunk):
    """Lines that compile together, the later ones indented: a statement with its body."""
    return all(line[:1].isspace() for line in chunk[1:]) and outputs.compiles(chunk)


def _kind(chunk):
    """heading, paragraph, list, lines (a paragraph broken by hand) or pre (a listing, its output,
    or a formula laid out by hand)."""
    if any(outputs.PROMPT.match(line) for line in chunk):
        return "pre"
    if all(_ITEM.match(line) for line in chunk):
        return "list"
    if _latex(chunk):
        return "lines" if len(chunk) > 1 else "paragraph"
    if len(chunk) > 1:  # a compound statement (``while True:`` and its body) is code, as a whole
        return "lines" if _plain(chunk) and not _compound(chunk) else "pre"
    line = chunk[0]
    code_like = re.match(r"(import|from|def|class|for|with|if|print)\b", line) and outputs.compiles(chunk)
    formula = "=" in line and len(line) < 100 and not line.rstrip().endswith(".")
    if code_like or _statement(line) or _aligned(line) or formula:
        return "pre"
    if len(line) <= 90 and not re.search(r"[.:;,]$", line.strip()):
        return "heading"
    return "paragraph"


def _fragments(code):
    """The constant pieces of the string literals of ``code`` (an f-string's fields cut out): what
    its prints can open a line with."""
    pieces = (piece for match in _STRING.finditer(code) for piece in _FIELD.split(match.group(2)))
    return {piece.lstrip() for piece in pieces if piece.strip()}


def _bullet(fragment):
    """A string that opens a bulleted line: a bullet alone, or followed by a space."""
    return fragment[:1] in _BULLETS and fragment[1:2] in ("", " ")


def _printed(line, fragments):
    """The line opens as a string the code prints: a bullet, at least eight characters, or a label
    of three or more followed by a number (``first: 1.4142``)."""
    text = line.strip()
    return any(text.startswith(f) and (len(f.strip()) >= 8 or _bullet(f.strip())
                                       or (len(f.strip()) >= 3 and re.search(r"\d", text[len(f):])))
               for f in fragments)


def _pieces(first, chunk, fragments):
    """A chunk with its paragraphs (long lines of prose the region's code does not print) split
    off: (first, lines) pieces."""
    piece = []
    for number, line in enumerate(chunk, start=first):
        if len(chunk) > 1 and _prose(line) and not _printed(line, fragments):
            if piece:
                yield number - len(piece), piece
            yield number, [line]
            piece = []
        else:
            piece.append(line)
    if piece:
        yield first + len(chunk) - len(piece), piece


def _continues(chunk, fragments):
    """A chunk after a listing region belongs to it: indented lines (a function's body after a
    blank line), a printed value, or lines the region's code prints."""
    if all(line[0].isspace() for line in chunk) and not all(_ITEM.match(line) for line in chunk):
        return True
    if len(chunk) == 1 and outputs.value_line(chunk[0]):
        return True
    return all(_printed(line, fragments) for line in chunk)


def parse(text):
    """The blocks of a plain text, in order; consecutive preformatted chunks (a listing with its
    blank lines) form one region, split into code and output blocks."""
    lines = text.split("\n")
    blocks, region = [], None
    for start, whole in _chunks(lines):
        fragments = _fragments("\n".join(region[1])) if region is not None else set()
        for first, chunk in _pieces(start, whole, fragments):
            kind = _kind(chunk)
            if kind != "pre" and region is not None and _continues(chunk, fragments):
                kind = "pre"
            if kind == "pre":
                if region is None:
                    region = [first, []]
                else:  # keep the blank lines inside a listing
                    region[1] += [""] * (first - region[0] - len(region[1]))
                region[1] += chunk
                continue
            if region is not None:
                blocks += outputs.split(*region)
                region = None
            blocks.append(Block(kind, first, chunk))
    if region is not None:
        blocks += outputs.split(*region)
    return blocks


def document(text):
    """A plain text as a :class:`~attnrepro.articles.blocks.Document`."""
    return Document("plain", text, parse(text))
