"""One number, one value: the table cell that prints a claim against the ledger's reproduced value.

A claim that a report table prints names its cell where it is declared (``printed: {table, row,
column}`` in config/published.yaml). The table and the ledger compute the value in one place
(:mod:`attnrepro.report.products.statistics`), so the cell, written at the article's precision, must read
as the ledger's reproduced text: otherwise a reader who compares the table with the article sees
a digit the ledger says is reproduced (a pandas mean printing 0.996 where the ledger's NumPy mean,
the article's, prints 0.995). :func:`disagreements` lists every cell of a finished run that does
not (a machine-bound cell: at the digits the ledger shows); the CI gate (``python -m
attnrepro.report gate --tables``) fails on any, and the tests check it on the small run. A claim
whose row the run's table does not hold (another config's grid) and a claim the ledger could not
reproduce are left out; a missing table or column is a disagreement.
"""

from pathlib import Path

import pandas as pd

from attnrepro.report.ledger import printed as printed_cells, verdicts


def cell(tables, printed):
    """(value, None) of the cell ``printed`` names in the run's ``tables`` folder (the CSV, at full
    precision), (None, None) when the table has no such row, or (None, problem)."""
    path = Path(tables) / f"{printed['table']}.csv"
    if not path.is_file():
        return None, f"no table {path}"
    frame = pd.read_csv(path, keep_default_na=False)
    if printed["column"] not in frame.columns:
        return None, f"{path} has no column {printed['column']!r}"
    index = printed_cells.row_index(frame, printed["row"])
    return (None, None) if index is None else (_typed(frame.at[index, printed["column"]]), None)


def _typed(value):
    """A CSV cell as its value: text that a column of mixed cells kept ("False", "4.0") parsed."""
    if not isinstance(value, str):
        return value
    if value in ("True", "False"):
        return value == "True"
    try:
        return float(value)
    except ValueError:
        return value


def _written_as_ledger(value, claim, ledger_text):
    """The cell's ``value`` written as the ledger writes the claim: at the article's precision, and a
    machine-bound one with the digits its ledger text shows (a time is written with the digits that
    were judged, never the article's rounding: verdicts.timing_text)."""
    if claim.cls == "machine-bound":
        return verdicts.format_like(value, ledger_text)
    return verdicts.format_like(value, claim.published, claim.decimals)


def disagreements(claims, ledger_table, tables):
    """One sentence per claim whose table cell, written at the article's precision, is not the
    ledger's reproduced text (``ledger_table``: the ledger, text cells; ``tables``: results/tables)."""
    reproduced = dict(zip(ledger_table["id"], ledger_table["reproduced"]))
    out = []
    for claim in claims:
        if claim.printed is None or not reproduced.get(claim.id):
            continue
        value, problem = cell(tables, claim.printed)
        row = f" {claim.printed['row']}" if claim.printed["row"] else ""
        where = f"{claim.printed['table']}{row} {claim.printed['column']!r}"
        if problem:
            out.append(f"claim {claim.id}: {problem}")
        elif value is not None:
            shown = _written_as_ledger(value, claim, reproduced[claim.id])
            if shown != reproduced[claim.id]:
                how = "the ledger's digits" if claim.cls == "machine-bound" else "the article's precision"
                out.append(f"claim {claim.id}: table {where} prints {shown} at {how} "
                           f"({value!r}), the ledger {reproduced[claim.id]}")
    return out
