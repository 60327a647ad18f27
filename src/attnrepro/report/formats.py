"""Display helpers shared by the table builders: reshaping, one-row results, check tables, notes.

Formatting and selection only: every number comes from the experiments' Parquet.
"""

import pandas as pd

from attnrepro.report.render import Table

ROUND_OFF = "differences at 1e-16 are round-off; their last digits depend on the CPU and BLAS kernel"


def one(frame):
    """The single row of a one-case, one-row result table, as a Series."""
    if len(frame) != 1:
        raise ValueError(f"expected one row, got {len(frame)}")
    return frame.iloc[0]


def shape(*sizes):
    """A shape as the listings print it: ``(5, 5)``."""
    return str(tuple(int(s) for s in sizes))


def matrix(long, rows, column, value, label="{}".format):
    """A long table (one row per cell) as a matrix: ``rows`` stay columns, ``column`` spreads.

    The spread columns keep their numeric order and are named ``label(value)``.
    """
    rows = [rows] if isinstance(rows, str) else list(rows)
    wide = long.pivot(index=rows, columns=column, values=value).sort_index()
    wide = wide[sorted(wide.columns)]
    wide.columns = [label(c) for c in wide.columns]
    return wide.reset_index()


def token_labels(long, index, token):
    """A labeller for :func:`matrix`: the token of each index (``key`` -> ``key_token``)."""
    return dict(zip(long[index], long[token])).__getitem__


def columns_formats(data, skip, fmt):
    """``{column: fmt}`` for every column of ``data`` not in ``skip``."""
    return {c: fmt for c in data.columns if c not in skip}


def quantities(rows, columns, note):
    """A table of rows ``(*labels, value, format)``: each value printed at its own precision.

    The value column keeps its Python objects (numbers at full precision in the CSV).
    """
    value_column = columns[-1]
    data = pd.DataFrame([row[:-1] for row in rows], columns=columns)
    data[value_column] = pd.Series([row[-2] for row in rows], dtype=object)
    return Table(data, {value_column: [row[-1] for row in rows]}, note)


def yes_no(flags):
    """Booleans as the report prints them."""
    return ["yes" if bool(f) else "no" for f in flags]
