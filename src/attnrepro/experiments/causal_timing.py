"""001, "The count that decides everything: O(T²)": causal float64 attention against T.

One generator (seed 0) draws, for each T in turn, Q, K and V of shape (T, d_k) with
``rng.normal``. Each T gets one untimed warm-up call, then ``trials`` timed calls
(the article's 400, 60, 12); the minimum is kept, because load can lengthen a time,
never shorten it. The causal mask is built inside each call, as in the listing.
A batch (warm-up and trials) during which the timing thread was descheduled is timed again on
the same Q, K, V (experiments._timing.measure); ``main`` records per T its ``cpu_share``,
``attempts``, ``disturbed`` and the load before and after.

Transferable: the slope of log(min time) against log(T) (2 for a T² law) and the
time ratio per step of the grid beside the length and matrix ratios. The memory
columns (T² and 3·T·d_k float64 values, in MiB) are exact; the times are machine-bound.

Tables: ``main`` (one row per T), ``repeats`` (one row per (T, trial)), ``machine``.
"""

import numpy as np
import pandas as pd

from attnrepro.core.attention import attention
from attnrepro.core.masks import causal
from attnrepro.experiments._timing import loglog_slope, machine_table, measure, step_ratios
from attnrepro.experiments._memory import BOOL, F64, ROW, largest_value, term
from attnrepro.experiments._prices import CAUSAL_CELL, DRAW, FLOP

EXPERIMENT = {
    "article": "001",
    "order": 12,
    "section": "The count that decides everything: O(T²)",
    "tables": ("main", "repeats", "machine"),
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


def run(params):
    machine = machine_table()
    rng = np.random.default_rng(params["seed"])
    d_k, lengths, trials = params["d_k"], params["T"], params["trials"]
    repeats, records = [], []
    for T, n_trials in zip(lengths, trials):
        Q, K, V = (rng.normal(size=(T, d_k)) for _ in range(3))  # (T, d_k) each
        call = (causal_attention, (Q, K, V))
        batch = measure([call] * n_trials, warmup=[call])
        repeats += [{"T": T, "trial": i, "seconds": s, "cpu_seconds": c}
                    for i, (s, c) in enumerate(zip(batch.seconds, batch.cpu_seconds))]
        records.append(batch.record())
    repeats = pd.DataFrame(repeats)

    fastest = repeats.groupby("T", sort=False)["seconds"].min().to_numpy()
    T = np.asarray(lengths, dtype=np.int64)
    main = pd.DataFrame({
        "seed": params["seed"], "d_k": d_k, "T": T, "trials": trials,
        "min_ms": fastest * 1000,  # machine-bound
        "matrix_mib": T * T * BYTES / 2**20,
        "qkv_mib": 3 * T * d_k * BYTES / 2**20,
        "length_ratio": step_ratios(T),
        "time_ratio": step_ratios(fastest),
        "matrix_ratio": step_ratios(T * T),
        "loglog_slope": loglog_slope(T, fastest),  # fit over every T, same on each row
        **pd.DataFrame(records).to_dict("list"),  # cpu_share, attempts, disturbed, load: measured
    })
    return {"main": main, "repeats": repeats, "machine": machine}


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
        term(sum(trials) * ROW, "repeats table: one row per trial", trials=1),
    ]


def work(p):
    return sum((trials + 1) * causal_call(T, p["d_k"]) + 3 * T * p["d_k"] * DRAW
               for T, trials in zip(p["T"], p["trials"]))
