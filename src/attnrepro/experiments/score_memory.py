"""Beyond 000's "What the n² term costs": peak memory measured beside the n²·bytes formula.

For each n of the grid, one generator (``seed``) draws Q, K, V of shape (n, d)
with ``standard_normal``; two procedures are measured on them:

- ``000 float32 in place``: the listing of 000 (inputs cast to float32, softmax in place);
- ``001 causal float64``: the causal attention of 001 (mask, then the shared softmax).

The peak is the largest extra memory that ``tracemalloc`` (which NumPy reports its
array buffers to) sees during one call, above what was allocated before it.
Memory is not a time: it is the same on any machine with the same NumPy, and the
ratio peak / (n²·bytes) says how many score-sized matrices are alive at once.

Tables: ``main`` (one row per (procedure, n)), ``machine``.
"""

import tracemalloc

import numpy as np
import pandas as pd

from attnrepro.experiments._allocator import steady_state
from attnrepro.experiments._timing import machine_table
from attnrepro.experiments.causal_timing import causal_attention, causal_call, causal_float64
from attnrepro.experiments.quadratic_cost import attention_float32, float32_call
from attnrepro.experiments._memory import F32, F64, largest_value, term
from attnrepro.experiments._prices import DRAW

EXPERIMENT = {
    "article": "000",
    "order": 7,
    "section": "What the n² term costs (peak memory, beyond the article)",
    "tables": ("main", "machine"),
    "timing": True,
}

PROCEDURES = {
    "000 float32 in place": (attention_float32, np.float32),
    "001 causal float64": (causal_attention, np.float64),
}


def peak_bytes(fn, *args):
    """Largest extra traced memory during one call ``fn(*args)``, in bytes."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        fn(*args)
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def run(params):
    machine = machine_table(steady_state())
    rng = np.random.default_rng(params["seed"])
    d, rows = params["d"], []
    for n in params["n"]:
        drawn = [rng.standard_normal((n, d)) for _ in range(3)]  # Q, K, V: (n, d)
        for name, (fn, dtype) in PROCEDURES.items():
            Q, K, V = (M.astype(dtype) for M in drawn)
            size = np.dtype(dtype).itemsize
            peak = peak_bytes(fn, Q, K, V)
            rows.append({
                "procedure": name, "dtype": np.dtype(dtype).name, "seed": params["seed"],
                "d": d, "n": n, "cells": n * n, "bytes_per_value": size,
                "formula_bytes": n * n * size, "formula_mib": n * n * size / 2**20,
                "peak_bytes": peak, "peak_mib": peak / 2**20,
                "peak_over_formula": peak / (n * n * size),
            })
    return {"main": pd.DataFrame(rows), "machine": machine}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    n, d = largest_value(p["n"]), p["d"]
    return causal_float64(n, d, "n", "d") + [
        term(6 * n * d * F64 + 3 * n * d * F32, "Q, K, V drawn and cast: 6 x (n, d) float64, 3 float32",
             n=1, d=1),
    ]


def work(p):
    d = p["d"]
    return sum(float32_call(n, d) + causal_call(n, d) + 3 * n * d * DRAW for n in p["n"])
