"""The cells of a report table that print a published number: the article's value beside each, and
the ledger's verdict on it.

A claim that a report table prints names its cell (``printed: {table, row, column}`` in
config/published.yaml, :mod:`attnrepro.report.ledger.claims`). Given the claims and the ledger
(results/ledger.csv), :func:`annotate` marks each such cell of the table's Markdown: the verdict's
symbol (:data:`SYMBOLS`, the annotated editions'), "(published X)" where the article prints
another text than the run, and, for a verdict other than "reproduced", a footnote that names it. Its
CSV gains, for each column that prints claims, the claim, its published value and its verdict, as
columns of their own. The verdicts are the ledger's, read here, never judged again.
"""

import io as text_io

import pandas as pd

from attnrepro.report.ledger import claims as published

SYMBOLS = published.SYMBOLS  # a verdict's symbol, as the annotated editions show it
OTHER = "!"  # the symbol of a verdict SYMBOLS does not name
LEDGER_COLUMNS = ("id", "published", "reproduced", "verdict")  # what annotate reads of the ledger
PARTS = ("claim", "published", "verdict")  # the CSV's columns "<column>: <part>" per printing column
LEGEND = ("Cells that print a number of the article carry the ledger's verdict on it (results/ledger.csv): "
          "{symbols}; '(published X)' gives the article's value where it prints another.")


def read_ledger(path):
    """The ledger's rows (results/ledger.csv, every cell as text), refused naming the file when it
    lacks a column that :func:`annotate` reads."""
    try:
        ledger = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        raise ValueError(f"{path}: not a ledger as `snakemake ledger` writes it ({error})") from None
    missing = [c for c in LEDGER_COLUMNS if c not in ledger.columns]
    if missing:
        raise ValueError(f"{path}: not a ledger as `snakemake ledger` writes it: "
                         f"no column {', '.join(missing)}")
    return ledger


def of_table(claims, name):
    """The claims that the report table ``name`` prints, in the claims' order."""
    return [c for c in claims if c.printed is not None and c.printed["table"] == name]


def row_index(frame, row):
    """The index of the one row of ``frame`` whose columns equal ``row`` ({column: value}, compared
    as text, as a CSV holds them), or None (no such column, no row, or several)."""
    chosen = frame
    for column, value in row.items():
        if column not in frame.columns:
            return None
        chosen = chosen[chosen[column].astype(str) == str(value)]
    return chosen.index[0] if len(chosen) == 1 else None


def _as_csv(data):
    """``data`` as its CSV reads back (the text a claim's ``row`` is compared with), rows numbered from 0."""
    return pd.read_csv(text_io.StringIO(data.to_csv(index=False)), keep_default_na=False)


def cells(table, name, claims, ledger):
    """[(row position, column, claim, ledger row)] of the cells of ``table`` (a render.Table of the
    report table ``name``) that print a claim the ledger judged, in the table's order. A claim whose
    row this run's table does not hold (another config's grid) has no cell."""
    frame = _as_csv(table.data)
    judged = {r["id"]: r for r in ledger.to_dict("records")}
    found = []
    for claim in of_table(claims, name):
        column = claim.printed["column"]
        position = row_index(frame, claim.printed["row"])
        if claim.id in judged and column in frame.columns and position is not None:
            found.append((int(position), column, claim, judged[claim.id]))
    columns = list(frame.columns)
    return sorted(found, key=lambda c: (c[0], columns.index(c[1])))


def mark(entry, footnote=None):
    """The text after a printed cell: its verdict's symbol, the published value where the run prints
    another (or the verdict is not "reproduced"), and the footnote's number, if any."""
    verdict = entry["verdict"]
    text = f" {SYMBOLS.get(verdict, OTHER)}"
    if verdict != "reproduced" or entry["reproduced"] != entry["published"]:
        text += f" (published {entry['published']})"
    return text + (f" [{footnote}]" if footnote is not None else "")


def footnote(number, claim, entry):
    """The footnote of a cell whose verdict is not "reproduced": the claim and the ledger's verdict."""
    shown = entry["reproduced"] or "none"
    return (f"[{number}] {claim.id}: {entry['verdict']} (published {entry['published']}, reproduced "
            f"{shown}); results/ledger.csv gives the reason.")


def annotate(table, name, claims, ledger):
    """``table`` (a render.Table of the report table ``name``) with the cells that print ``claims``
    marked from ``ledger`` (:func:`read_ledger`), in place; returns it. A cell that prints two claims
    (a listing's value and the prose's range) carries both marks, and its CSV parts both, joined by "; "."""
    found = cells(table, name, claims, ledger)
    if not found:
        return table
    rows = len(table.data)
    marks, notes = {c: list(m) for c, m in table.marks.items()}, []  # the builder's (products.disturbance)
    extra = {}
    for position, column, claim, entry in found:
        number = None
        if entry["verdict"] != "reproduced":
            number = len(notes) + 1
            notes.append(footnote(number, claim, entry))
        cell = marks.setdefault(column, [""] * rows)
        cell[position] = _joined(cell[position], mark(entry, number))
        for part, value in zip(PARTS, (claim.id, entry["published"], entry["verdict"])):
            joined = extra.setdefault(f"{column}: {part}", [""] * rows)
            joined[position] = f"{joined[position]}; {value}" if joined[position] else value
    printing = {column for _, column, *_ in found}
    order = [c for c in table.data.columns if c in printing]
    table.marks = marks
    table.extra = pd.DataFrame({f"{c}: {p}": extra[f"{c}: {p}"] for c in order for p in PARTS})
    shown = sorted({e["verdict"] for *_, e in found}, key=_verdict_order)
    symbols = ", ".join(f"{SYMBOLS.get(v, OTHER)} {v}" for v in shown)
    table.note = f"{table.note} {LEGEND.format(symbols=symbols)}".strip()
    table.footnotes = [*table.footnotes, *notes]
    return table


def _joined(before, text):
    """A cell's marks with a verdict's ``text`` added once (one ✓ for two reproduced claims), not
    repeating a mark it begins with (the builder's ~ of a disturbed measurement judged disturbed)."""
    if before.endswith(text):
        return before
    return text if text.startswith(before) else before + text


def _verdict_order(verdict):
    return (published.VERDICTS.index(verdict) if verdict in published.VERDICTS else len(published.VERDICTS),
            verdict)


def annotate_files(table, name, published_path, ledger_path):
    """:func:`annotate` with the claims of ``published_path`` (config/published.yaml) and the ledger
    at ``ledger_path`` (results/ledger.csv)."""
    return annotate(table, name, published.load_claims(published_path), read_ledger(ledger_path))
