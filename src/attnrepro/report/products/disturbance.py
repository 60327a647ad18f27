"""Marks of disturbed measurements in the timing tables and figures.

Each timing experiment records per row whether its measurement stayed disturbed: another process
took the timing process's core however often it was timed again (column ``disturbed``,
:mod:`attnrepro.experiments._timing`). A table cell or figure point read from such a row carries
:data:`MARK`, the ledger's symbol for the verdict "disturbed" (claims.SYMBOLS takes it from here),
explained by :func:`legend`; a value computed with the previous row too (a ratio, a local slope)
carries it when either row is disturbed (:func:`with_previous`); a fit or interval over partly
disturbed points says how many (:func:`counted`).
"""

import numpy as np

MARK = "~"  # a value read from a disturbed measurement; the ledger's symbol for "disturbed"
MEANING = ("a value read from a disturbed measurement (another process held the core while it was timed: "
           "the experiment's `disturbed` column)")


def flags(frame):
    """Whether each row of ``frame`` was disturbed (its ``disturbed`` column; none: no row), shape (rows,)."""
    if "disturbed" not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    return frame["disturbed"].astype("boolean").fillna(False).to_numpy(dtype=bool)


def with_previous(disturbed):
    """The flags of values computed from a row and the one before it (a ratio to the previous row, a
    local slope): disturbed when either is; the first row has no such value. Shape (rows,)."""
    disturbed = np.asarray(disturbed, dtype=bool)
    return np.concatenate([[False], disturbed[1:] | disturbed[:-1]])[:len(disturbed)]


def marks(disturbed):
    """The text after each cell of a column: " ~" where its row is disturbed, else ""."""
    return [f" {MARK}" if d else "" for d in np.asarray(disturbed, dtype=bool)]


def count(disturbed):
    """"3 of 4 points disturbed", or "" when none is."""
    disturbed = np.asarray(disturbed, dtype=bool)
    return f"{int(disturbed.sum())} of {len(disturbed)} points disturbed" if disturbed.any() else ""


def counted(label, disturbed):
    """A fit's or interval's label with how many of its points were disturbed: "fitted slope 2.51 (3 of
    4 points disturbed)"; the label alone when none was."""
    found = count(disturbed)
    return f"{label} ({found})" if found else label


def legend(disturbed, fits=""):
    """The table note's sentence on its marks: what :data:`MARK` means and, for ``fits`` (the slope, its
    interval), over how many disturbed points; "" when no row is disturbed."""
    if not np.asarray(disturbed, dtype=bool).any():
        return ""
    over = f"; {fits}: {count(disturbed)}" if fits else ""
    return f"{MARK} marks {MEANING}{over}."


def mark_columns(table, columns):
    """``table`` (a render.Table) with ``columns`` ({column: flags}) marked where disturbed, in place;
    returns it. The marks go before any the ledger adds (report.ledger.printed)."""
    found = {c: marks(f) for c, f in columns.items() if np.asarray(f, dtype=bool).any()}
    table.marks = {**table.marks, **found}
    return table


def noted(note, sentence):
    """``note`` with ``sentence`` after it (none: the note as it was)."""
    return f"{note} {sentence}" if sentence else note


def any_rows(disturbed, rows):
    """``rows`` flags, each the same: whether any of ``disturbed`` is (a value fitted over every row)."""
    return np.full(rows, bool(np.asarray(disturbed, dtype=bool).any()))

