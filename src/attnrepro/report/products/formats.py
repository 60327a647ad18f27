"""Display helpers shared by the table builders: reshaping, one-row results, check tables, notes.

Formatting and selection only: every number comes from the experiments' Parquet.
"""

import math

import numpy as np
import pandas as pd

from attnrepro.report.products.render import Table

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


MACHINE_BOUND = "times are machine-bound"


def machine(frame):
    """The machine of a timing job, from its ``machine`` table: CPU, cores, BLAS and the threads its
    pool ran (as the library reports them), with the threads asked when the job's CPUs capped them."""
    r = frame.iloc[0]
    seen = pd.notna(r.get("blas_internal_api"))
    ran = r["blas_num_threads"] if seen and pd.notna(r.get("blas_num_threads")) else r["threads_limit"]
    blas = f"{r['blas_internal_api']} {r['blas_version']}" if seen else "no BLAS seen"
    asked = r.get("threads_asked")
    capped = (f" ({int(asked)} asked, {int(r['cpus_available'])} CPU(s) available)"
              if pd.notna(asked) and int(asked) != int(ran) else "")
    return f"{r['cpu']}, {r['cores']} cores, {blas}, {int(ran)} thread(s){capped}"


def timing_note(what, machine_frame, transfers, verdicts=None):
    """The note of a timing table: what it shows, where the times come from, and what can transfer
    between machines (:func:`transfer_sentence`; ``verdicts``: the ledger's, when the table reads it)."""
    return f"{what}; {MACHINE_BOUND} ({machine(machine_frame)}); {transfer_sentence(transfers, verdicts)}."


LEDGER_SAYS = "whether it does here is the ledger's verdict (results/LEDGER.md)"


def transfer_sentence(quantities, verdicts=None):
    """What a product says of ``quantities`` (ratios, slopes, memory) between machines: that they are
    what can transfer, never that they do, which only the ledger judges. ``verdicts`` ({claim id:
    verdict}, read from results/ledger.csv by :func:`ledger_verdicts`) are then quoted as the
    ledger gives them; without them the sentence points to the ledger."""
    said = f"what can transfer between machines: {quantities}"
    if not verdicts:
        return f"{said}; {LEDGER_SAYS}"
    judged = ", ".join(f"{claim} {verdict!r}" for claim, verdict in verdicts.items())
    return f"{said}; the ledger judges {judged}"


def ledger_verdicts(ledger_csv, ids):
    """{claim id: verdict} of ``ids`` in the ledger's CSV (results/ledger.csv), in the order of ``ids``;
    a claim the ledger does not hold is left out."""
    table = pd.read_csv(ledger_csv, usecols=["id", "verdict"], dtype=str, keep_default_na=False)
    found = dict(zip(table["id"], table["verdict"]))
    return {claim: found[claim] for claim in ids if claim in found}


SIGNIFICANT = 3  # a time's significant digits, in the timing tables and the ledger alike
SCIENTIFIC = 1e-4  # below it a time is written in scientific notation ("2.50e-06", as Python's "g")
MORE = 8  # the most digits added to put a time on its side of a band


def time_format(value, low=None, high=None):
    """The format string ("{:.3f}", "{:.2e}") that writes a time ``value`` with :data:`SIGNIFICANT`
    significant digits, every integer digit kept ("85.2", "0.000970", "1102"), and, beside a band
    [low, high], with as many more as put the text on the value's side of it (0.09004 against 0.07 to
    0.09 reads "0.09004", not "0.0900"): the one rule for a time's digits, in the tables and the ledger."""
    value = float(value)
    for extra in range(MORE + 1):
        fmt = _digits(value, SIGNIFICANT + extra)
        if low is None or not math.isfinite(value) or (
                (low <= float(fmt.format(value)) <= high) == (low <= value <= high)):
            return fmt
    return fmt


def _digits(value, significant):
    """The format of ``value`` with ``significant`` significant digits (fixed, or below SCIENTIFIC sci)."""
    if not math.isfinite(value) or value == 0:
        return "{:.0f}" if value == 0 else "{}"
    if abs(value) < SCIENTIFIC:
        return f"{{:.{significant - 1}e}}"
    rounded = float(f"{value:.{significant}g}")  # 9.996 is 10.0: its digits count from the rounded value
    return f"{{:.{max(0, significant - 1 - math.floor(math.log10(abs(rounded))))}f}}"


def time_text(value, low=None, high=None):
    """A time written by :func:`time_format`."""
    return time_format(value, low, high).format(float(value))


def time_formats(values):
    """Per-row formats of a column of times (:func:`time_format`), "-" where there is no value."""
    return ["-" if pd.isna(v) else time_format(v) for v in values]


def or_dash(values, fmt):
    """Per-row formats: ``fmt``, or "-" where there is no value (the first row of a ratio to the previous)."""
    return ["-" if pd.isna(v) else fmt for v in values]


def shared(frame, column):
    """The one value of ``column`` that every row of ``frame`` has (a setting common to the runs)."""
    values = frame[column].drop_duplicates()
    if len(values) != 1:
        raise ValueError(f"{column!r} differs between the rows: {values.tolist()}" if len(values)
                         else f"no rows to read {column!r} from")
    return values.iloc[0]


def grid_runs(runs):
    """The trainings of the grid (task x L x seed) among the rows of train's ``main``."""
    return runs[runs["ablation"] == "full"]


# the runs of article 001's ablation listing, in its order: name in train.ablations -> the article's words
# (a run the article does not list comes after them, by name, under its own name)
ABLATIONS = {"full": "full", "no_scaling": "no scaling", "no_position": "no position", "post_ln": "post-LN",
             "pre_ln_high_lr": "pre-LN, high lr", "post_ln_high_lr": "post-LN, high lr"}


def ablation_label(name):
    """An ablation's name (``train.ablations``, "full" for the base run) as article 001 prints it."""
    return ABLATIONS.get(name, name)


def _ablation_rank(names):
    """The sort key of ablation names: the article's order, then the others by name."""
    order = {name: i for i, name in enumerate(ABLATIONS)}
    return names.map(lambda name: (order.get(name, len(order)), name))


def ablation_runs(runs):
    """(the ablations' base run as a one-row frame, the ablations in the article's order), from train's
    ``main`` (:data:`ABLATIONS`; the others after them, by name).

    The base is the grid's run with the task, L and seed that every ablation shares.
    """
    ablations = runs[runs["ablation"] != "full"].sort_values("ablation", key=_ablation_rank)
    task, L, seed = (shared(ablations, k) for k in ("task", "L", "seed"))
    base = grid_runs(runs)
    base = base[(base["task"] == task) & (base["L"] == L) & (base["seed"] == seed)]
    if len(base) != 1:
        raise ValueError(f"the ablations' base run ({task}, L = {L}, seed {seed}) is not among the inputs")
    return base, ablations


def distinct_split(correct, distinct):
    """Per-sequence accuracy split by whether the question's symbols are all distinct.

    Returns n_distinct, n_repeated, accuracy on each subset (NaN when empty) and the
    measured share of distinct questions.
    """
    correct, distinct = np.asarray(correct, bool), np.asarray(distinct, bool)
    n = len(correct)

    def mean(mask):
        return float(correct[mask].mean()) if mask.any() else float("nan")

    return {
        "n_distinct": int(distinct.sum()),
        "n_repeated": int(n - distinct.sum()),
        "accuracy_distinct": mean(distinct),
        "accuracy_repeated": mean(~distinct),
        "share_distinct": float(distinct.sum() / n),
    }
