"""001, "The count that decides everything: O(T²)": causal float64 attention against T.

A pass is the article's procedure over every T in its order: one generator (seed 0) draws, for
each T in turn, Q, K and V of shape (T, d_k) with ``rng.normal``, then one untimed warm-up call and
``trials`` timed calls (the article's 400, 60, 12). The job times ``passes`` passes, each drawing
its inputs afresh from a new generator of the same seed (the same values), in the allocator's
steady state (experiments._allocator); with ``article_code`` the article's own listing runs after
each of ours, in this process (experiments._article_code). The causal mask is built inside each
call, as in the listing. A batch (warm-up and trials) during which the process was descheduled
is timed again on the same Q, K, V (experiments._timing.measure).

``main`` keeps, per T, the minimum over every trial of every pass (load can lengthen a time, never
shorten it), and the ratios and slope of those minima; its ``cpu_share``, ``attempts``,
``disturbed`` and load are the quietest pass's (experiments._timing.quietest). ``passes`` holds the
same columns per pass, so that each ratio and slope comes with its independent repeats.

Transferable: the slope of log(min time) against log(T) (2 for a T² law) and the
time ratio per step of the grid beside the length and matrix ratios. The memory
columns (T² and 3·T·d_k float64 values, in MiB) are exact; the times are machine-bound.

``article_main`` and ``article_passes`` hold the same time columns for the article's code (empty
without ``article_code``), ``article_repeats`` each of its timed trials.

Tables: ``main`` (one row per T), ``passes`` (one row per (pass, T)), ``repeats`` (one row per
(pass, T, trial)), ``machine``, ``article_main``, ``article_passes``, ``article_repeats``.
"""

import numpy as np
import pandas as pd

from attnrepro.core.attention import apply_mask, scores, softmax
from attnrepro.core.masks import causal
from attnrepro.experiments import _article_code
from attnrepro.experiments._allocator import steady_state
from attnrepro.experiments._timing import (
    loglog_slope, machine_table, measure, quietest, repeat_table, step_ratios,
)
from attnrepro.experiments._memory import BOOL, F64, ROW, largest_value, term
from attnrepro.experiments._prices import CAUSAL_CELL, DRAW, FLOP

EXPERIMENT = {
    "article": "001",
    "order": 12,
    "section": "The count that decides everything: O(T²)",
    "tables": ("main", "passes", "repeats", "machine", "article_main", "article_passes", "article_repeats"),
    "timing": True,
    "article_code": 12,  # the article's listing that times the same computation (experiments._article_code)
    "derived": {
        "main.length_ratio": "a ratio of the configured lengths",
        "main.matrix_mib": "T^2 float64 values in MiB",
        "main.matrix_ratio": "a ratio of T^2",
        "main.qkv_mib": "3 T d_k float64 values in MiB",
    },
}

BYTES = np.dtype(np.float64).itemsize


def causal_attention(Q, K, V):
    """softmax(mask(Q K^T / sqrt(d_k))) V with the causal mask: (T, d_k) x3 -> (T, d_k), its arrays
    made and freed in the listing's order (the scores, then the mask, the weights kept no longer
    than their product with V): a timing compared with the listing's own (experiments._article_code)."""
    S = scores(Q, K)  # (T, T)
    return softmax(apply_mask(S, causal(Q.shape[0])), axis=-1) @ V  # (T, d_k)


def draw_inputs(rng, T, d_k):
    """(Q, K, V), each (T, d_k), drawn in that order."""
    return tuple(rng.normal(size=(T, d_k)) for _ in range(3))


def time_pass(params):
    """One pass, the article's procedure: per T, its inputs drawn, one warm-up call and its count
    of timed calls -> [Batch], in the order of T."""
    rng = np.random.default_rng(params["seed"])
    batches = []
    for T, n_trials in zip(params["T"], params["trials"]):
        args = draw_inputs(rng, T, params["d_k"])  # (T, d_k) x3
        batches.append(measure([(causal_attention, args)] * n_trials, warmup=[(causal_attention, args)],
                               keep_result=False))
    return batches


def minima_columns(lengths, fastest):
    """The columns that derive from the minimum seconds per T (one value per T)."""
    return {"min_ms": fastest * 1000,  # machine-bound
            "time_ratio": step_ratios(fastest),
            "loglog_slope": loglog_slope(lengths, fastest)}  # fit over every T, same on each row


def pass_columns(lengths, batches):
    """``passes``: per pass and T, the columns of that pass's minima and its measurement's record."""
    return pd.concat([pd.DataFrame({
        "pass": p, "T": lengths, **minima_columns(lengths, np.array([min(b.seconds) for b in row])),
        **pd.DataFrame([b.record() for b in row]).to_dict("list"),  # measured
    }) for p, row in enumerate(batches)], ignore_index=True)


def repeat_rows(lengths, batches):
    """``repeats``: one row per (pass, T, trial) with its wall and CPU seconds."""
    return repeat_table(lengths, batches, "T", "trial")


def pooled_columns(lengths, batches):
    """The columns of the minima over every trial of every pass, and the quietest pass's record."""
    if not batches:
        return {name: [] for name in ("min_ms", "time_ratio", "loglog_slope")}
    fastest = np.array([[min(b.seconds) for b in row] for row in batches]).min(axis=0)  # (T,)
    return {**minima_columns(lengths, fastest),
            **pd.DataFrame([quietest(per_T) for per_T in zip(*batches)]).to_dict("list")}  # measured


def article_tables(lengths, batches):
    """``article_main``, ``article_passes``, ``article_repeats``: the article's code's times, as ours."""
    main = pd.DataFrame({"T": lengths if batches else [], **pooled_columns(lengths, batches)})
    passes = pass_columns(lengths, batches) if batches else pd.DataFrame(columns=["pass", "T"])
    return {"article_main": main, "article_passes": passes, "article_repeats": repeat_rows(lengths, batches)}


def run(params, article_code=None):
    """The case's tables; ``article_code``: the article's listing (an _article_code.Program), timed
    after each of our passes when ``params["article_code"]``."""
    machine = machine_table(steady_state())
    d_k, lengths, trials = params["d_k"], params["T"], params["trials"]
    ours, theirs = [], []
    for _ in range(params["passes"]):
        ours.append(time_pass(params))  # [T]
        if params.get("article_code"):
            theirs.append(_article_code.batches(article_code, trials))
    T = np.asarray(lengths, dtype=np.int64)
    pooled = pooled_columns(lengths, ours)  # over every trial of every pass
    main = pd.DataFrame({
        "seed": params["seed"], "d_k": d_k, "T": T, "trials": trials, "passes": params["passes"],
        "min_ms": pooled.pop("min_ms"),
        "matrix_mib": T * T * BYTES / 2**20,
        "qkv_mib": 3 * T * d_k * BYTES / 2**20,
        "length_ratio": step_ratios(T),
        "time_ratio": pooled.pop("time_ratio"),
        "matrix_ratio": step_ratios(T * T),
        **pooled,  # loglog_slope, then the record: measured
    })
    return {"main": main, "passes": pass_columns(lengths, ours), "repeats": repeat_rows(lengths, ours),
            "machine": machine, **article_tables(lengths, theirs)}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def causal_float64(rows, d_k, row_key, d_key):
    """causal_timing's attention on (rows, d_k): 4 score-sized float64 arrays and the mask
    (np.tril makes it from two more)."""
    return [
        term(4 * rows * rows * F64 + 3 * rows * rows * BOOL,
             f"causal attention: 4 x ({row_key}, {row_key}) float64 and its mask", **{row_key: 2}),
        term(4 * rows * d_k * F64, f"Q, K, V and the output ({row_key}, {d_key}) float64",
             **{row_key: 1, d_key: 1}),
    ]


def causal_call(n, d_k):
    """One call of 001's causal float64 attention on (n, d_k)."""
    return n * n * (CAUSAL_CELL + 4 * d_k * FLOP)


def peak_memory(p):
    T, d_k, trials = largest_value(p["T"]), p["d_k"], p["trials"]
    return causal_float64(T, d_k, "T", "d_k") + [
        term(p["passes"] * sum(trials) * ROW, "repeats table: one row per pass and trial",
             passes=1, trials=1),
    ]


def work(p):
    """``passes`` passes of the draws, a warm-up call and the trials per T; as many of the article's code."""
    one_pass = sum((trials + 1) * causal_call(T, p["d_k"]) + 3 * T * p["d_k"] * DRAW
                   for T, trials in zip(p["T"], p["trials"]))
    return (2 if p.get("article_code") else 1) * p["passes"] * one_pass
