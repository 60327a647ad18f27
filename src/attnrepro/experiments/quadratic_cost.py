"""000, "What the n² term costs": float32 attention for growing n, mean of five runs.

A pass is the article's procedure: one generator (seed 0) draws, for each n in turn, Q, K and V of
shape (n, d) with ``standard_normal``, cast to float32, then times ``runs`` attentions on them with
the softmax done in place on the score matrix, as in the listing; there is no warm-up. The job times
``passes`` passes, each drawing its inputs afresh from a new generator of the same seed (the same
values), in the allocator's steady state (experiments._allocator). With ``article_code`` the
article's own listing runs after each of our passes, in this process
(experiments._article_code): ours, theirs, ours, theirs ... The cells (n²) and their MiB in
float32 are exact, and so are the GiB of the score matrices kept for training with ``heads`` heads
in each of ``layers`` layers (the prose's 3 GiB at n = 4096); the mean time is machine-bound, and
what transfers is its growth per step and the log-log slope. The runs of one n in one pass are one
batch: when the process was descheduled during it, the batch is timed again on the same Q, K, V
(experiments._timing.measure).

``main`` keeps, per n, the mean and the minimum over every run of every pass, and the growth and
slope of those means; its ``cpu_share``, ``attempts``, ``disturbed`` and load sum up every pass
(experiments._timing.summary: a mean is disturbed when any pass was). ``passes`` holds the same
columns per pass, so that each ratio and slope comes with its independent repeats.
``article_main`` and ``article_passes`` hold the same time columns for the article's code
(empty without ``article_code``), ``article_repeats`` each of its timed intervals.

Tables: ``main`` (one row per n), ``passes`` (one row per (pass, n)), ``repeats`` (one row per
(pass, n, run)), ``machine``, ``article_main``, ``article_passes``, ``article_repeats``.
"""

import numpy as np
import pandas as pd

from attnrepro.experiments import _article_code
from attnrepro.experiments._allocator import steady_state
from attnrepro.experiments._timing import (
    loglog_slope, machine_table, measure, repeat_table, step_ratios, summary,
)
from attnrepro.experiments._memory import F32, F64, largest_value, term
from attnrepro.experiments._prices import DRAW, F32_CELL, FLOP32

EXPERIMENT = {
    "article": "000",
    "order": 6,
    "section": "What the n² term costs",
    "tables": ("main", "passes", "repeats", "machine", "article_main", "article_passes", "article_repeats"),
    "timing": True,
    "article_code": 6,  # the article's listing that times the same computation (experiments._article_code)
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


def time_pass(params):
    """One pass, the article's procedure: per n, its inputs drawn, then ``runs`` timed calls, no
    warm-up -> [Batch], in the order of n."""
    rng = np.random.default_rng(params["seed"])
    batches = []
    for n in params["n"]:
        args = draw_inputs(rng, n, params["d"])  # (n, d) float32 x3
        batches.append(measure([(attention_float32, args)] * params["runs"], keep_result=False))
    return batches


def time_columns(lengths, seconds):
    """The columns that derive from the seconds of every run per n (one sequence per n)."""
    mean = np.array([np.mean(s) for s in seconds])
    return {"mean_seconds": mean,  # machine-bound
            "min_seconds": np.array([np.min(s) for s in seconds]),  # machine-bound
            "time_ratio": step_ratios(mean),  # mean time over the previous n's
            "loglog_slope": loglog_slope(lengths, mean)}  # fit over every n, same on each row


def pass_columns(lengths, batches):
    """``passes``: per pass and n, the time columns of that pass and its measurement's record."""
    return pd.concat([pd.DataFrame({
        "pass": p, "n": lengths, **time_columns(lengths, [b.seconds for b in row]),
        **pd.DataFrame([b.record() for b in row]).to_dict("list"),  # measured
    }) for p, row in enumerate(batches)], ignore_index=True)


def repeat_rows(lengths, batches):
    """``repeats``: one row per (pass, n, run) with its wall and CPU seconds."""
    return repeat_table(lengths, batches, "n", "run")


def pooled_columns(lengths, batches):
    """The time columns over every run of every pass, and the record that sums the passes up."""
    if not batches:
        return {name: [] for name in ("mean_seconds", "min_seconds", "time_ratio", "loglog_slope")}
    return {**time_columns(lengths, [[s for b in per_n for s in b.seconds] for per_n in zip(*batches)]),
            **pd.DataFrame([summary(per_n) for per_n in zip(*batches)]).to_dict("list")}  # measured


def article_tables(lengths, batches):
    """``article_main``, ``article_passes``, ``article_repeats``: the article's code's times, as ours."""
    main = pd.DataFrame({"n": lengths if batches else [], **pooled_columns(lengths, batches)})
    passes = pass_columns(lengths, batches) if batches else pd.DataFrame(columns=["pass", "n"])
    return {"article_main": main, "article_passes": passes, "article_repeats": repeat_rows(lengths, batches)}


def run(params, article_code=None):
    """The case's tables; ``article_code``: the article's listing (an _article_code.Program), timed
    after each of our passes when ``params["article_code"]``."""
    machine = machine_table(steady_state())
    lengths, runs = params["n"], params["runs"]
    ours, theirs = [], []
    for _ in range(params["passes"]):
        ours.append(time_pass(params))  # [n]
        if params.get("article_code"):
            theirs.append(_article_code.batches(article_code, [runs] * len(lengths)))
    cells = np.array([n * n for n in lengths], dtype=np.int64)
    main = pd.DataFrame({
        "seed": params["seed"], "d": params["d"], "runs": runs, "passes": params["passes"], "n": lengths,
        "cells": cells,
        "mib_float32": cells * BYTES / 2**20,
        "kept_gib_all_heads_layers": cells * BYTES * params["heads"] * params["layers"] / 2**30,
        "cells_ratio": step_ratios(cells),
        **pooled_columns(lengths, ours),  # mean over every run of every pass; measured
    })
    return {"main": main, "passes": pass_columns(lengths, ours), "repeats": repeat_rows(lengths, ours),
            "machine": machine, **article_tables(lengths, theirs)}


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
    """``passes`` passes of the draws and ``runs`` calls per n; as many of the article's code."""
    d, codes = p["d"], 2 if p.get("article_code") else 1
    return codes * p["passes"] * sum(p["runs"] * float32_call(n, d) + 3 * n * d * DRAW for n in p["n"])
