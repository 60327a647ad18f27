"""000, "What the n² term costs": float32 attention for growing n, mean of five runs.

One generator (seed 0) draws, for each n in turn, Q, K and V of shape (n, d) with
``standard_normal`` and casts them to float32; every input is drawn before anything is timed.
Each run times one attention with the softmax done in place on the score matrix, as in the
listing; there is no warm-up. A pass is the article's procedure over every n in its order:
``runs`` timed runs per n. The job times ``passes`` passes on the same inputs, in the allocator's
steady state (experiments._allocator); only the first pass's first run of an n is a cold one.
The cells (n²) and their MiB in float32 are exact, and so are the GiB
of the score matrices kept for training with ``heads`` heads in each of ``layers``
layers (the prose's 3 GiB at n = 4096); the mean time is machine-bound, and what
transfers is its growth per step and the log-log slope. The runs of one n in one pass are one
batch: when the timing thread was descheduled during it, the batch is timed again on the same
Q, K, V (experiments._timing.measure).

``main`` keeps, per n, the mean and the minimum over every run of every pass, and the growth and
slope of those means; its ``cpu_share``, ``attempts``, ``disturbed`` and load sum up every pass
(experiments._timing.summary: a mean is disturbed when any pass was). ``passes`` holds the same
columns per pass, so that each ratio and slope comes with its independent repeats.

Tables: ``main`` (one row per n), ``passes`` (one row per (pass, n)), ``repeats`` (one row per
(pass, n, run)), ``machine``.
"""

import numpy as np
import pandas as pd

from attnrepro.experiments._allocator import steady_state
from attnrepro.experiments._timing import loglog_slope, machine_table, measure, step_ratios, summary
from attnrepro.experiments._memory import F32, F64, largest_value, term
from attnrepro.experiments._prices import DRAW, F32_CELL, FLOP32

EXPERIMENT = {
    "article": "000",
    "order": 6,
    "section": "What the n² term costs",
    "tables": ("main", "passes", "repeats", "machine"),
    "timing": True,
    "derived": {
        "main.cells": "n^2",
        "main.kept_gib_all_heads_layers": "n^2 float32 values per head and layer, in GiB",
        "main.mib_float32": "n^2 float32 values in MiB",
    },
}

BYTES = np.dtype(np.float32).itemsize  # one score cell in float32


def attention_float32(Q, K, V):
    """softmax(Q K^T / sqrt(d)) V in float32, the score matrix normalised in place.

    Q, K, V: (n, d) float32 -> (n, d) float32. The scale is a float32 scalar, so
    nothing is promoted to float64 (the shared core divides by a float64 scalar).
    """
    S = Q @ K.T / np.sqrt(np.float32(Q.shape[1]))  # (n, n)
    S -= S.max(axis=1, keepdims=True)
    np.exp(S, out=S)
    S /= S.sum(axis=1, keepdims=True)
    return S @ V  # (n, d)


def draw_inputs(rng, n, d):
    """Q, K, V of shape (n, d), float32, drawn in that order."""
    return tuple(rng.standard_normal((n, d)).astype(np.float32) for _ in range(3))


def time_pass(inputs, runs):
    """One pass: per input, ``runs`` timed calls, no warm-up -> [Batch], in order."""
    return [measure([(attention_float32, args)] * runs, keep_result=False) for args in inputs]


def time_columns(lengths, seconds):
    """The columns that derive from the seconds of every run per n (one sequence per n)."""
    mean = np.array([np.mean(s) for s in seconds])
    return {"mean_seconds": mean,  # machine-bound
            "min_seconds": np.array([np.min(s) for s in seconds]),  # machine-bound
            "time_ratio": step_ratios(mean),  # mean time over the previous n's
            "loglog_slope": loglog_slope(lengths, mean)}  # fit over every n, same on each row


def run(params):
    machine = machine_table(steady_state())
    rng = np.random.default_rng(params["seed"])
    d, runs, lengths = params["d"], params["runs"], params["n"]
    inputs = [draw_inputs(rng, n, d) for n in lengths]  # (n, d) float32 x3 per n
    batches = [time_pass(inputs, runs) for _ in range(params["passes"])]  # [pass][n]
    repeats = pd.DataFrame([
        {"pass": p, "n": n, "run": r, "seconds": s, "cpu_seconds": c}
        for p, row in enumerate(batches) for n, batch in zip(lengths, row)
        for r, (s, c) in enumerate(zip(batch.seconds, batch.cpu_seconds))])
    passes = pd.concat([pd.DataFrame({
        "pass": p, "n": lengths, **time_columns(lengths, [b.seconds for b in row]),
        **pd.DataFrame([b.record() for b in row]).to_dict("list"),  # measured
    }) for p, row in enumerate(batches)], ignore_index=True)

    pooled = time_columns(lengths, [[s for b in per_n for s in b.seconds] for per_n in zip(*batches)])
    cells = np.array([n * n for n in lengths], dtype=np.int64)
    main = pd.DataFrame({
        "seed": params["seed"], "d": d, "runs": runs, "passes": params["passes"], "n": lengths,
        "cells": cells,
        "mib_float32": cells * BYTES / 2**20,
        "kept_gib_all_heads_layers": cells * BYTES * params["heads"] * params["layers"] / 2**30,
        "mean_seconds": pooled["mean_seconds"],  # over every run of every pass
        "min_seconds": pooled["min_seconds"],
        "cells_ratio": step_ratios(cells),
        "time_ratio": pooled["time_ratio"],
        "loglog_slope": pooled["loglog_slope"],
        **pd.DataFrame([summary(per_n) for per_n in zip(*batches)]).to_dict("list"),  # measured
    })
    return {"main": main, "passes": passes, "repeats": repeats, "machine": machine}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def float32_call(n, d):
    """One call of 000's float32 attention on (n, d), its softmax in place."""
    return n * n * (F32_CELL + 4 * d * FLOP32)


def peak_memory(p):
    n, d = largest_value(p["n"]), p["d"]
    # heads and layers only enter the formula of the kept score matrices: never allocated
    return [
        # NumPy divides the temporary product in place, then the softmax runs in place
        term(n * n * F32, "scores Q K^T / sqrt(d), normalised in place: (n, n) float32", n=2),
        term(3 * n * d * F32 + n * d * F64, "Q, K, V (n, d) float32 and one float64 draw", n=1, d=1),
    ]


def work(p):
    """The draws, then ``passes`` passes of ``runs`` calls per n."""
    d = p["d"]
    return sum(p["passes"] * p["runs"] * float32_call(n, d) + 3 * n * d * DRAW for n in p["n"])
