"""001, listing 3: why divide by sqrt(d_k), measured (one row of the table per job).

Each case (d_k, scaled) draws Q then K, of shape (repetitions, T, d_k), from
default_rng(seed_offset + d_k): the two rows of one d_k see the same scores.
The statistics are the listing's: variance of the raw dot products, deviation
of the scores used, mean row maximum, entropy and Jacobian trace of the weights.
The reference values ln(T) and 1 - 1/T (maximum entropy and sensitivity over T
keys) are columns.
"""

import numpy as np
import pandas as pd

from attnrepro.core.attention import entropy, scores, softmax, softmax_sensitivity
from attnrepro.experiments._memory import F64, term
from attnrepro.experiments._prices import DRAW, FLOP, STAT_CELL

EXPERIMENT = {
    "article": "001",
    "order": 3,
    "section": "Why you divide by the square root of d_k, measured",
    "grid": ("d_k", "scaled"),
    "derived": {
        "main.sqrt_d_k": "the square root of d_k",
    },
}


def measure(d_k, scaled, seed, T, repetitions):
    """Statistics of the scores and weights over ``repetitions`` independent (T, T) problems."""
    rng = np.random.default_rng(seed)
    Q = rng.normal(size=(repetitions, T, d_k))  # (r, T, d_k), unit-variance components
    K = rng.normal(size=(repetitions, T, d_k))  # (r, T, d_k)
    raw = scores(Q, K, scale=False)  # (r, T, T): the dot products
    s = raw / np.sqrt(d_k) if scaled else raw  # (r, T, T)
    P = softmax(s, axis=-1)  # (r, T, T), over the keys
    return {
        "var_dot": float(raw.var()),
        "sd_scores": float(s.std()),
        "max_weight": float(P.max(axis=-1).mean()),
        "entropy": float(entropy(P).mean()),
        "sensitivity": float(softmax_sensitivity(P).mean()),
    }


def run(params):
    d_k, scaled, T, reps = params["d_k"], params["scaled"], params["T"], params["repetitions"]
    seed = params["seed_offset"] + d_k
    row = {"d_k": d_k, "scaled": scaled, "seed": seed, "T": T, "repetitions": reps}
    row.update(measure(d_k, scaled, seed, T, reps))
    row["max_entropy"] = float(np.log(T))  # uniform weights over T keys
    row["max_sensitivity"] = 1 - 1 / T
    row["sqrt_d_k"] = float(np.sqrt(d_k))  # sd of q.k for unit-variance components (the prose's "√8 ≈ 2.83")
    return {"main": pd.DataFrame([row])}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    r, T, d_k = p["repetitions"], p["T"], p["d_k"]
    # at the softmax: the raw scores, the scaled ones (scaled cases), shifted, exponentials, weights
    kept = 5 if p["scaled"] else 4
    return [
        term(kept * r * T * T * F64, f"scores: {kept} x (repetitions, T, T) float64", repetitions=1, T=2),
        term(2 * r * T * d_k * F64, "Q, K (repetitions, T, d_k) float64", repetitions=1, T=1, d_k=1),
    ]


def work(p):
    r, T, d_k = p["repetitions"], p["T"], p["d_k"]
    return 2 * r * T * d_k * DRAW + r * T * T * (STAT_CELL + 2 * d_k * FLOP)
