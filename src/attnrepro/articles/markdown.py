"""Markdown with fenced code: its blocks, each with its place in the text.

The blocks: ATX headings (``#`` to ``######``), paragraphs (lines up to a blank one), lists (items
opening with ``-``, ``*``, ``+`` or a number, with their continuation lines), tables (``|`` lines,
as lines broken by hand) and fenced blocks (``` or ~~~). A fence's own lines belong to no block,
nor does a thematic break. What a fence holds depends on its language (its info string's first
word) and on what precedes it:

- after a paragraph reading only ``Output:`` (or ``Out:``, ``Out[3]:``, ``Outputs:``, any case,
  bold or not): output, whatever its language;
- a Python language (:data:`PYTHON`): code; a ``>>>`` transcript in it is split into its
  statements and their output, and ``# Output:`` comments in it are output
  (:func:`attnrepro.articles.outputs.split`, which guesses nothing here: no comment, no prompt,
  all code);
- no language, or an output's (:data:`OUTPUT`), right after a code fence (or after another output
  of it): output, and the listing before it shows its final expression's value as a notebook does
  (display "last");
- no language elsewhere: a transcript when it holds ``>>>`` prompts, else code when it compiles as
  Python and is more than one bare value or name; otherwise lines, as is any other language.

A fence's content keeps its columns: the indentation of a fence inside a list item is the block's
offset. An unclosed fence runs to the end of the text. Pure Python.
"""

import ast
import re

from attnrepro.articles import outputs
from attnrepro.articles.blocks import Block, Document

PYTHON = frozenset({"python", "py", "python3", "ipython", "ipython3", "pycon", "python-repl", "pyodide"})
OUTPUT = frozenset({"", "text", "txt", "plaintext", "plain", "console", "output", "out", "stdout", "none"})
# a fence: its indentation, its marker, its language (a backtick fence's line holds no other backtick)
_FENCE = re.compile(r"^(?P<indent>\s*)(?P<marker>`{3,}(?!.*`)|~{3,})\s*\{?\.?(?P<info>[^`\s{}]*)")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
_BREAK = re.compile(r"^ {0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$")
_LABEL = re.compile(r"^\s*(?:\*\*|__|\*|_)?(?:outputs?|out(?:\[\d*\])?)\s*:?\s*(?:\*\*|__|\*|_)?\s*:?\s*$",
                    re.IGNORECASE)


def _closing(lines, start, marker):
    """The index of the line closing the fence opened with ``marker`` before line ``start``."""
    close = re.compile(rf"^\s*{re.escape(marker[0])}{{{len(marker)},}}\s*$")
    return next((k for k in range(start, len(lines)) if close.match(lines[k])), len(lines))


def _dedent(lines, indent):
    """The content of a fence indented by ``indent`` characters, that many left out of each line."""
    return [line[indent:] if line[:indent].strip() == "" else line.lstrip() for line in lines]


def _bare(lines):
    """Python that is no more than one bare value or name: a word, a number, a list of numbers."""
    body = ast.parse("\n".join(lines) + "\n").body
    return len(body) <= 1 and all(isinstance(s, ast.Expr) and not isinstance(s.value, ast.Call) for s in body)


def _code(first, lines, indent, display="print"):
    """The blocks of a Python fence: code, a transcript or ``# Output:`` comments split off. Code
    followed by an output comment shows its last value, as the prompt the author copied it from
    (``f(x)`` then ``# outputs: [0.28, 0.63]``: display "last")."""
    if any(outputs.MARK.match(line) for line in lines):
        display = "last"
    return outputs.split(first, lines, offset=indent, display=display, guess=False)


def _fenced(first, lines, indent, language, before):
    """The blocks of a fence's content (line ``first`` on), given the blocks before it."""
    if not any(line.strip() for line in lines):
        return []
    content = _dedent(lines, indent)
    previous = before[-1] if before else None
    labelled = previous is not None and previous.kind == "paragraph"
    labelled = labelled and _LABEL.match(" ".join(previous.lines))
    after_code = previous is not None and previous.kind in ("code", "output")
    if labelled or (language in OUTPUT and after_code):
        _shows_last(before)
        return [Block("output", first, content, offset=indent)]
    if language in PYTHON:
        return _code(first, content, indent)
    if not language:
        if any(outputs.PROMPT.match(line) for line in content):
            return _code(first, content, indent)
        if outputs.compiles(content) and not _bare(content):
            return _code(first, content, indent)
    return [Block("lines", first, content, offset=indent)]


def _shows_last(before):
    """The code an output fence follows (right before it, or before its label) shows its final
    expression's value as a notebook does; a transcript, or code whose output is marked inside its
    fence, is not followed directly by its code."""
    k = len(before) - 1
    if k >= 0 and before[k].kind == "paragraph":
        k -= 1
    if k >= 0 and before[k].kind == "code" and before[k].display == "print":
        before[k].display = "last"


def _paragraph_end(lines, k):
    """The index after the paragraph that opens at line ``k``: at a blank line, a heading, a fence,
    a list item or a thematic break."""
    end = k + 1
    while end < len(lines) and lines[end].strip() and not (
            _HEADING.match(lines[end]) or _FENCE.match(lines[end]) or _ITEM.match(lines[end])
            or _BREAK.match(lines[end])):
        end += 1
    return end


def _list_end(lines, k):
    """The index after the list that opens at line ``k``: its items, their continuation lines and
    the blank lines between them, up to a fence, a heading or a line back at the margin."""
    end = k + 1
    while end < len(lines):
        line = lines[end]
        if _FENCE.match(line) or _HEADING.match(line) or _BREAK.match(line):
            break
        if not line.strip():
            nxt = next((j for j in range(end, len(lines)) if lines[j].strip()), len(lines))
            if nxt == len(lines) or not (_ITEM.match(lines[nxt]) or lines[nxt][0].isspace()):
                break
            if _FENCE.match(lines[nxt]):
                break
        end += 1
    while not lines[end - 1].strip():
        end -= 1
    return end


def parse(text, first=1):
    """The blocks of a Markdown text, in order; ``first`` is the number of its first line (a
    notebook's cell starts further down its text view)."""
    lines = text.split("\n")
    blocks, k = [], 0
    while k < len(lines):
        line = lines[k]
        fence = _FENCE.match(line)
        if not line.strip() or _BREAK.match(line):
            k += 1
        elif fence:
            end = _closing(lines, k + 1, fence["marker"])
            language = fence["info"].lower()
            blocks += _fenced(first + k + 1, lines[k + 1:end], len(fence["indent"]), language, blocks)
            k = end + 1
        elif _HEADING.match(line):
            blocks.append(Block("heading", first + k, [line]))
            k += 1
        elif _ITEM.match(line):
            end = _list_end(lines, k)
            blocks.append(Block("list", first + k, lines[k:end]))
            k = end
        else:
            end = _paragraph_end(lines, k)
            kind = "lines" if all(row.lstrip().startswith("|") for row in lines[k:end]) else "paragraph"
            blocks.append(Block(kind, first + k, lines[k:end]))
            k = end
    return blocks


def document(text):
    """A Markdown text as a :class:`~attnrepro.articles.blocks.Document`."""
    return Document("markdown", text, parse(text))
