"""An article's listings and their published output, read from its blocks, whatever its form.

Each listing is a *code* block of the article's :class:`~attnrepro.articles.blocks.Document`, and
what it printed follows it as *output* blocks: every output block after its code and before the
next listing's code. The first comes right after it; later ones are what the article reports
further on (001's training listing prints three tables, which the article shows in three
sections). An output block whose lines match nothing the listing prints (a formula laid out by
hand between two listings) is left out when the run is compared
(:mod:`attnrepro.report.evidence_tables.listings_evaluate`). A ``>>>`` transcript is one listing per run
of prompted lines, each with the output that follows it.

An output line is the text as the listing printed it: without a ``# Output:`` mark and the
comment signs of the lines after it, and without a fence's indentation; its ``offset`` counts the
characters of the document's line before that text, so that columns count in the document's text.

A line is compared *number by number*: :func:`tokens` finds its numbers (and the words ``True``
and ``False``), each with its column (from 1, as the claims' ``location`` counts them), and
:func:`shape` is the line with every number replaced by ``#``, which pairs a printed line with its
published one. A number is found inside a repr (``np.float64(0.5)``, ``tensor([[0.1, -0.2]])``,
``array([1., 2.])``), with an exponent (``1e-05``, ``-3.2E+04``) or a unit (``95%``); digits glued
to a name (``float64``, ``d_k8``, ``W_1``) are part of it, but for a factor ``x4`` or ``×4``.

A listing's code is kept as the article prints it (the edition shows it, the seeds' record hashes
it); :func:`runnable` is what the interpreter compiles instead, the one place where IPython's lines
(magics, shell commands) become Python: :func:`attnrepro.articles.session.run_one` calls it on every
listing it runs or runs again.

Pure Python (no NumPy): the listings' interpreter loads what the listings import, nothing before.
"""

import ast
import difflib
import io
import re
import tokenize
from dataclasses import dataclass, field

from attnrepro.articles import outputs

_NUMBER = r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\.?(?!\w)"
# a number as printed: a sign where it cannot be an operator, digits not glued to a name, decimals,
# an exponent, NumPy's trailing point ("1."); a factor after " x" or "×" ("x4", not "x2 = 1");
# or a boolean as a word
TOKEN = re.compile(
    rf"(?:(?<![^\s(\[,=:])[-+])?(?<!\w){_NUMBER}"
    rf"|(?:(?<=\sx)|(?<=×)){_NUMBER}(?!\s*[=(\[])"
    r"|(?<![\w.])(?:True|False)(?!\w)"
)

# an IPython line: its indentation, then a line magic (%name), a cell magic (%%name) or a shell line (!)
_IPYTHON = re.compile(r"(?P<indent>[ \t]*)(?P<text>(?P<sign>%%|%|!)(?P<name>\w*)[ \t]*(?P<rest>.*?))\s*")
_TIMEIT_OPTIONS = re.compile(r"(?:-(?:[tcqo]|[nrp][ \t]*\d+)+[ \t]+)*")  # %timeit -n 10 -r 3 -q -o
_TIMED = ("time", "timeit")


class NotPython(ValueError):
    """A listing in another language than Python (a cell magic such as ``%%bash``): it fails, unrun."""


@dataclass(frozen=True)
class Token:
    text: str
    column: int  # in the document's line (or the printed line), from 1

    @property
    def end(self):
        return self.column + len(self.text)


@dataclass(frozen=True)
class Line:
    """One line of published output: its number in the document, its text as the listing printed
    it, and how many characters of the document's line precede it."""

    number: int
    text: str
    offset: int = 0

    def tokens(self):
        return tokens(self.text, self.offset)


@dataclass
class Listing:
    """One listing of an article: its place (index from 1, first line), its code as printed, the
    published output blocks that follow it (lists of :class:`Line`, the first block first), and how
    it shows values (:data:`attnrepro.articles.blocks.DISPLAYS`)."""

    article: str
    index: int
    first: int
    code: str
    blocks: list = field(default_factory=list)
    display: str = "print"

    @property
    def name(self):
        return f"{self.article}.listing-{self.index}"

    def lines(self):
        return [line for block in self.blocks for line in block]


def tokens(text, offset=0):
    """The numbers (and booleans) of a line, in order, each with its column from 1 (``offset``:
    the characters before ``text`` in the document's line)."""
    return [Token(m.group(), m.start() + 1 + offset) for m in TOKEN.finditer(text)]


def shape(text):
    """The line with each number replaced by ``#`` and its blanks removed: a printer pads a column
    for a sign or a wider number (``[ 0.1, -0.2]`` against ``[-0.1,  0.2]``): no change of form."""
    return "".join(TOKEN.sub("#", text).split())


def _uncommented(text):
    """How many characters open a comment line of output: its indentation, ``#`` and one space."""
    cut = len(text) - len(text.lstrip()) + 1
    return cut + 1 if text[cut:cut + 1] == " " else cut


def output_lines(block):
    """The published lines of an output block: without output marks (the text after a mark's
    colon is a line), without comment signs after a mark, without blank lines."""
    commented = bool(outputs.MARK.match(block.lines[0]))
    out = []
    for number, text in zip(block.numbers, block.lines):
        mark = outputs.MARK.match(text)
        if mark:
            if mark["rest"].strip():
                out.append(Line(number, mark["rest"], block.offset + mark.start("rest")))
        elif commented and text.lstrip().startswith("#"):
            cut = _uncommented(text)
            out.append(Line(number, text[cut:], block.offset + cut))
        elif text.strip():
            out.append(Line(number, text, block.offset))
    return out


def extract(document, article):
    """The listings of a :class:`~attnrepro.articles.blocks.Document`, in order, each with the
    output blocks after it."""
    listings = []
    for block in document.blocks:
        if block.kind == "code":
            listings.append(Listing(article, len(listings) + 1, block.first, "\n".join(block.lines) + "\n",
                                    display=block.display))
        elif block.kind == "output" and listings:
            lines = output_lines(block)
            if lines:
                listings[-1].blocks.append(lines)
    return listings


def pair_lines(published, printed):
    """[(index of a published line, index of a printed line)] of the lines paired by :func:`shape`:
    difflib's longest matching blocks, then, in a stretch that differs, line by line where both
    hold as many numbers (``published``: :class:`Line` s; ``printed``: texts). A paired line is
    compared number by number; an unpaired one differs in form, not in digits."""
    a = [shape(line.text) for line in published]
    b = [shape(text) for text in printed]
    pairs = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            pairs += list(zip(range(i1, i2), range(j1, j2)))
        elif tag == "replace":
            pairs += [(i, j) for i, j in zip(range(i1, i2), range(j1, j2))
                      if len(published[i].tokens()) == len(tokens(printed[j]))]
    return pairs


def runnable(code):
    """(the Python that runs for ``code``, [notes]): each IPython line of a listing made Python, as
    Jupyter would run it through IPython, keeping the lines' count and indentation (an error's line
    is the printed one). A line is IPython's when its first non-blank character is ``%`` or ``!`` and
    it opens a statement (not a line inside brackets, a string or after a backslash):

    - ``!cmd``: a shell command, never run from an article: ``pass  # !cmd: a shell command, not
      run here``;
    - ``%time STMT``, ``%timeit [options] STMT``: ``STMT``, run once; the timing IPython prints is not
      reproduced, and a ``%timeit`` expression gets a ``;`` (Jupyter shows no value for it). Its
      assignments bind names here, which ``%timeit`` keeps in a scope of its own;
    - any other line magic (``%matplotlib inline``): ``pass  # %matplotlib inline: an IPython magic,
      not run here``;
    - a cell magic, on the listing's first non-blank line: ``%%time`` and ``%%timeit`` run the body
      once (the magic's line becomes ``pass``, or ``%%timeit``'s setup statement after its options;
      the cell's final expression then shows, which ``%%timeit`` does not);
      any other (``%%bash``, ``%%writefile``) raises :class:`NotPython`, "cell magic %%bash: not
      Python, not run", as does a ``%%`` line further down ("... on line 3: not on the cell's first
      line, not run"): the listing fails, nothing of it runs.

    A note per line made Python: "line 1: shell command not run: !wget URL"."""
    lines, notes = code.split("\n"), []
    first = next((k for k, line in enumerate(lines) if line.strip()), 0)
    for k, line in enumerate(lines):
        found = _IPYTHON.fullmatch(line)
        if found and _opens_statement(lines[:k]):
            python, note = _python(found, k + 1, k == first)
            lines[k] = found["indent"] + python
            notes.append(note)
    return "\n".join(lines), notes


def _opens_statement(before):
    """Whether the line after ``before`` opens a statement: no bracket, string or ``\\`` left open."""
    try:
        for _ in tokenize.generate_tokens(io.StringIO("\n".join(before) + "\n").readline):
            pass
    except tokenize.TokenError:
        return False
    except SyntaxError:  # an indentation tokenize refuses: the compiler will say so
        pass
    return True


def _python(found, number, first):
    """(the Python of one IPython line, without its indentation; its note)."""
    sign, name, rest, text = found["sign"], found["name"], found["rest"], found["text"]
    if sign == "!":
        return (f"pass  # {text}: a shell command, not run here",
                f"line {number}: shell command not run: {text}")
    if sign == "%%":
        return _cell_magic(name, rest, text, number, first)
    statement = _TIMEIT_OPTIONS.sub("", rest, count=1) if name == "timeit" else rest
    if name in _TIMED and statement:
        return (_silenced(statement) if name == "timeit" else statement,
                f"line {number}: %{name} ran its statement once, its timing is not reproduced")
    return f"pass  # {text}: an IPython magic, not run here", f"line {number}: IPython magic not run: {text}"


def _cell_magic(name, rest, text, number, first):
    """(the Python of a cell magic's line, its note); :class:`NotPython` for a cell of another language."""
    if not first:
        raise NotPython(f"cell magic %%{name} on line {number}: not on the cell's first line, not run")
    if name not in _TIMED:
        raise NotPython(f"cell magic %%{name}: not Python, not run")
    setup = _TIMEIT_OPTIONS.sub("", rest, count=1) if name == "timeit" else ""
    return (setup or f"pass  # {text}: the cell runs once, its timing is not reproduced",
            f"line {number}: %%{name} ran the cell once, its timing is not reproduced")


def _silenced(statement):
    """``statement`` with a ``;`` after it when it ends with an expression (Jupyter then shows no value)."""
    try:
        body = ast.parse(statement).body
    except SyntaxError:
        return statement  # the compiler says why
    if not body or not isinstance(body[-1], ast.Expr):
        return statement
    end = len(statement.encode()[:body[-1].end_col_offset].decode())
    return statement[:end] + ";" + statement[end:]
