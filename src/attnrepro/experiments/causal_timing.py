"""001, "The count that decides everything: O(T²)": causal float64 attention against T.

One generator (seed 0) draws, for each T in turn, Q, K and V of shape (T, d_k) with
``rng.normal``; every input is drawn before anything is timed. A pass is the article's procedure
over every T in its order: per T one untimed warm-up call, then ``trials`` timed calls (the
article's 400, 60, 12). The job times ``passes`` passes on the same inputs, in the allocator's
steady state (experiments._allocator). The causal mask is built inside each call, as in the listing.
A batch (warm-up and trials) during which the timing thread was descheduled is timed again on
the same Q, K, V (experiments._timing.measure).

``main`` keeps, per T, the minimum over every trial of every pass (load can lengthen a time, never
shorten it), and the ratios and slope of those minima; its ``cpu_share``, ``attempts``,
``disturbed`` and load are the quietest pass's (experiments._timing.quietest). ``passes`` holds the
same columns per pass, so that each ratio and slope comes with its independent repeats.

Transferable: the slope of log(min time) against log(T) (2 for a T² law) and the
time ratio per step of the grid beside the length and matrix ratios. The memory
columns (T² and 3·T·d_k float64 values, in MiB) are exact; the times are machine-bound.

Tables: ``main`` (one row per T), ``passes`` (one row per (pass, T)), ``repeats`` (one row per
(pass, T, trial)), ``machine``.
"""

import numpy as np
import pandas as pd

from attnrepro.core.attention import attention
from attnrepro.core.masks import causal
from attnrepro.experiments._allocator import steady_state
from attnrepro.experiments._timing import loglog_slope, machine_table, measure, quietest, step_ratios
from attnrepro.experiments._memory import BOOL, F64, ROW, largest_value, term
from attnrepro.experiments._prices import CAUSAL_CELL, DRAW, FLOP

EXPERIMENT = {
    "article": "001",
    "order": 12,
    "section": "The count that decides everything: O(T²)",
    "tables": ("main", "passes", "repeats", "machine"),
    "timing": True,
    "derived": {
        "main.length_ratio": "a ratio of the configured lengths",
        "main.matrix_mib": "T^2 float64 values in MiB",
        "main.matrix_ratio": "a ratio of T^2",
        "main.qkv_mib": "3 T d_k float64 values in MiB",
    },
}

BYTES = np.dtype(np.float64).itemsize


def causal_attention(Q, K, V):
    """softmax(mask(Q K^T / sqrt(d_k))) V with the causal mask: (T, d_k) x3 -> (T, d_k)."""
    out, _ = attention(Q, K, V, allowed=causal(Q.shape[0]))
    return out


def draw_inputs(rng, lengths, d_k):
    """[(Q, K, V)] per T of ``lengths``, each (T, d_k), drawn in that order."""
    return [tuple(rng.normal(size=(T, d_k)) for _ in range(3)) for T in lengths]


def time_pass(inputs, trials):
    """One pass: per input, one warm-up call and its count of timed calls -> [Batch], in order."""
    return [measure([(causal_attention, args)] * n_trials, warmup=[(causal_attention, args)],
                    keep_result=False) for args, n_trials in zip(inputs, trials)]


def minima_columns(lengths, fastest):
    """The columns that derive from the minimum seconds per T (one value per T)."""
    return {"min_ms": fastest * 1000,  # machine-bound
            "time_ratio": step_ratios(fastest),
            "loglog_slope": loglog_slope(lengths, fastest)}  # fit over every T, same on each row


def run(params):
    machine = machine_table(steady_state())
    rng = np.random.default_rng(params["seed"])
    d_k, lengths, trials = params["d_k"], params["T"], params["trials"]
    inputs = draw_inputs(rng, lengths, d_k)  # (T, d_k) x3 per T
    batches = [time_pass(inputs, trials) for _ in range(params["passes"])]  # [pass][T]
    per_pass = np.array([[min(b.seconds) for b in row] for row in batches])  # (passes, T)
    repeats = pd.DataFrame([
        {"pass": p, "T": T, "trial": i, "seconds": s, "cpu_seconds": c}
        for p, row in enumerate(batches) for T, batch in zip(lengths, row)
        for i, (s, c) in enumerate(zip(batch.seconds, batch.cpu_seconds))])
    passes = pd.concat([pd.DataFrame({
        "pass": p, "T": lengths, **minima_columns(lengths, per_pass[p]),
        **pd.DataFrame([b.record() for b in row]).to_dict("list"),  # measured
    }) for p, row in enumerate(batches)], ignore_index=True)

    minima = minima_columns(lengths, per_pass.min(axis=0))  # over every trial of every pass
    T = np.asarray(lengths, dtype=np.int64)
    main = pd.DataFrame({
        "seed": params["seed"], "d_k": d_k, "T": T, "trials": trials, "passes": params["passes"],
        "min_ms": minima["min_ms"],
        "matrix_mib": T * T * BYTES / 2**20,
        "qkv_mib": 3 * T * d_k * BYTES / 2**20,
        "length_ratio": step_ratios(T),
        "time_ratio": minima["time_ratio"],
        "matrix_ratio": step_ratios(T * T),
        "loglog_slope": minima["loglog_slope"],
        **pd.DataFrame([quietest(per_T) for per_T in zip(*batches)]).to_dict("list"),  # measured
    })
    return {"main": main, "passes": passes, "repeats": repeats, "machine": machine}


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
    """The draws, then ``passes`` passes of a warm-up call and the trials per T."""
    one_pass = sum((trials + 1) * causal_call(T, p["d_k"]) for T, trials in zip(p["T"], p["trials"]))
    return p["passes"] * one_pass + sum(3 * T * p["d_k"] * DRAW for T in p["T"])
