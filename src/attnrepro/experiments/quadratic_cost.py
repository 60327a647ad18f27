"""000, "What the n² term costs": float32 attention for growing n, mean of five runs.

One generator (seed 0) draws, for each n in turn, Q, K and V of shape (n, d) with
``standard_normal`` and casts them to float32. Each run times one attention with
the softmax done in place on the score matrix, as in the listing; there is no
warm-up. The cells (n²) and their MiB in float32 are exact, and so are the GiB
of the score matrices kept for training with ``heads`` heads in each of ``layers``
layers (the prose's 3 GiB at n = 4096); the mean time is machine-bound, and what
transfers is its growth per step and the log-log slope. The runs of one n are one batch: when
the timing thread was descheduled during it, the batch is timed again on the same Q, K, V
(experiments._timing.measure; a re-measured first run is no longer a cold one); ``main``
records per n its ``cpu_share``, ``attempts``, ``disturbed`` and the load before and after.

Tables: ``main`` (one row per n), ``repeats`` (one row per (n, run)), ``machine``.
"""

import numpy as np
import pandas as pd

from attnrepro.experiments._timing import loglog_slope, machine_table, measure, step_ratios
from attnrepro.experiments._memory import F32, F64, largest_value, term
from attnrepro.experiments._prices import DRAW, F32_CELL, FLOP32

EXPERIMENT = {
    "article": "000",
    "order": 6,
    "section": "What the n² term costs",
    "tables": ("main", "repeats", "machine"),
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


def run(params):
    machine = machine_table()
    rng = np.random.default_rng(params["seed"])
    d, runs, lengths = params["d"], params["runs"], params["n"]
    repeats, records = [], []
    for n in lengths:
        Q, K, V = draw_inputs(rng, n, d)
        batch = measure([(attention_float32, (Q, K, V))] * runs)
        repeats += [{"n": n, "run": r, "seconds": s, "cpu_seconds": c}
                    for r, (s, c) in enumerate(zip(batch.seconds, batch.cpu_seconds))]
        records.append(batch.record())
    repeats = pd.DataFrame(repeats)

    per_n = repeats.groupby("n", sort=False)["seconds"]
    mean, fastest = per_n.mean().to_numpy(), per_n.min().to_numpy()
    cells = np.array([n * n for n in lengths], dtype=np.int64)
    main = pd.DataFrame({
        "seed": params["seed"], "d": d, "runs": runs, "n": lengths,
        "cells": cells,
        "mib_float32": cells * BYTES / 2**20,
        "kept_gib_all_heads_layers": cells * BYTES * params["heads"] * params["layers"] / 2**30,
        "mean_seconds": mean,  # machine-bound
        "min_seconds": fastest,  # machine-bound
        "cells_ratio": step_ratios(cells),
        "time_ratio": step_ratios(mean),  # mean time over the previous n's
        "loglog_slope": loglog_slope(lengths, mean),  # fit over every n, same on each row
        **pd.DataFrame(records).to_dict("list"),  # cpu_share, attempts, disturbed, load: measured
    })
    return {"main": main, "repeats": repeats, "machine": machine}


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
    d = p["d"]
    return sum(p["runs"] * float32_call(n, d) + 3 * n * d * DRAW for n in p["n"])
