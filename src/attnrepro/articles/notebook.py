"""A Jupyter notebook (.ipynb): its cells and their saved outputs, as a text view and its blocks.

A notebook is JSON; its blocks need lines and columns to count, so :func:`view` writes a text
view of it, the cells in order, one blank line between two:

- a markdown cell: its source as is (parsed by :func:`attnrepro.articles.markdown.parse`);
- a code cell: its source (one code block, display "last": a cell shows the value of its final
  bare expression), then what it showed, when it showed something: its standard output and the
  ``text/plain`` of its result (NumPy's ``np.float64(0.5)``), one output block, whole across its
  blank lines. Standard error, errors and images are left out;
- a raw cell: its source, as lines broken by hand.

Blank lines at either end of a cell's source or output are left out. A file that is not a
notebook (not JSON, no list of cells) or above :data:`MAX_BYTES` is refused in one line naming it.
The :mod:`json` module only, no nbformat.
"""

import json

from attnrepro.articles import markdown
from attnrepro.articles.blocks import Block, Document

MAX_BYTES = 50 * 2**20  # a notebook above this is refused: 50 MiB


def check_size(size, name):
    """Refuse an article of ``size`` bytes above :data:`MAX_BYTES`."""
    if size > MAX_BYTES:
        raise ValueError(f"{name}: {size / 2**20:.1f} MiB, above the limit of {MAX_BYTES // 2**20} MiB "
                         "for an article")


def _text(value, name, where):
    """A notebook's multi-line string: a string, or a list of strings to join."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return "".join(value)
    raise ValueError(f"{name}: not a notebook ({where} is neither a string nor a list of strings)")


def _trim(text):
    """The text without carriage returns, and without blank lines at either end."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def _shown(outputs, name, where):
    """What a code cell showed: its standard output and its result's ``text/plain``, in order."""
    text = ""
    for k, output in enumerate(outputs if isinstance(outputs, list) else []):
        kind = output.get("output_type") if isinstance(output, dict) else None
        if kind == "stream" and output.get("name") == "stdout":
            text += _text(output.get("text", ""), name, f"{where}, output {k + 1}")
        elif kind == "execute_result" and "text/plain" in (output.get("data") or {}):
            if text and not text.endswith("\n"):
                text += "\n"
            text += _text(output["data"]["text/plain"], name, f"{where}, output {k + 1}") + "\n"
    return _trim(text)


def _cells(raw, name):
    """[(kind, text)] of a notebook's pieces in order: markdown, code, output, raw."""
    small = isinstance(raw, str) and len(raw) <= MAX_BYTES // 4  # at most 4 bytes a character
    check_size(0 if small else len(raw.encode("utf-8") if isinstance(raw, str) else raw), name)
    try:
        notebook = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{name}: not a notebook (not JSON: {error})") from None
    except RecursionError:  # JSON nested deeper than Python's stack: no notebook is
        raise ValueError(f"{name}: not a notebook (JSON nested too deep to read)") from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise ValueError(f"{name}: not a notebook (no list of cells)")
    pieces = []
    for k, cell in enumerate(cells):
        kind = cell.get("cell_type") if isinstance(cell, dict) else None
        where = f"cell {k + 1}"
        if kind not in ("markdown", "code", "raw"):
            raise ValueError(f"{name}: not a notebook ({where} has no cell_type markdown, code or raw)")
        source = _trim(_text(cell.get("source", ""), name, f"{where}'s source"))
        if not source:
            continue
        pieces.append((kind, source))
        if kind == "code":
            shown = _shown(cell.get("outputs"), name, where)
            if shown:
                pieces.append(("output", shown))
    return pieces


def view(raw, name="notebook"):
    """The text view of a notebook's JSON text ``raw``: its cells, one blank line between two."""
    return "\n\n".join(text for _, text in _cells(raw, name))


def parse(raw, name="notebook"):
    """A notebook's :class:`~attnrepro.articles.blocks.Document`: the blocks of its text view."""
    pieces = _cells(raw, name)
    blocks, line = [], 1
    for kind, text in pieces:
        lines = text.split("\n")
        if kind == "markdown":
            blocks += markdown.parse(text, first=line)
        elif kind == "code":
            blocks.append(Block("code", line, lines, display="last"))
        else:
            blocks.append(Block("output" if kind == "output" else "lines", line, lines))
        line += len(lines) + 1
    return Document("notebook", "\n\n".join(text for _, text in pieces), blocks)
