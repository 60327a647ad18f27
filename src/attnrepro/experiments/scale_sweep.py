"""000, listing 2: the spread of raw scores against sqrt(d_k), and the softmax with and without scale.

For each d_k (drawn in config order from one generator) a batch of ``trials``
queries meets ``n_keys`` keys each; the raw dot products are compared with
sqrt(d_k), and the mean maximum weight and mean Jacobian norm of the softmax are
measured on the raw and on the scaled scores.
"""

import numpy as np
import pandas as pd

from attnrepro.core.attention import softmax, softmax_jacobian_norm
from attnrepro.experiments._memory import F64, largest, largest_value, term
from attnrepro.experiments._prices import JACOBIAN_ENTRY, SWEEP_VALUE

EXPERIMENT = {
    "article": "000",
    "order": 2,
    "section": "Why we divide by sqrt(d_k)",
    "derived": {
        "main.sqrt_d_k": "the square root of d_k",
    },
}


def raw_scores(rng, trials, n_keys, d_k):
    """Elementwise product summed over the feature axis: (trials, n_keys)."""
    q = rng.standard_normal((trials, 1, d_k))  # (trials, 1, d_k)
    k = rng.standard_normal((trials, n_keys, d_k))  # (trials, n_keys, d_k)
    return (q * k).sum(axis=-1)  # (trials, n_keys)


def softmax_regime(p):
    """Mean over trials of the largest weight and of the Jacobian's Frobenius norm."""
    return float(p.max(axis=1).mean()), float(softmax_jacobian_norm(p).mean())


def run(params):
    rng = np.random.default_rng(params["seed"])
    trials, n_keys = params["trials"], params["n_keys"]
    rows = []
    for d_k in params["d_k"]:
        s = raw_scores(rng, trials, n_keys, d_k)
        max_raw, jac_raw = softmax_regime(softmax(s))
        max_scaled, jac_scaled = softmax_regime(softmax(s / np.sqrt(d_k)))
        rows.append({
            "seed": params["seed"], "trials": trials, "n_keys": n_keys, "d_k": d_k,
            "std_scores": float(s.std()), "sqrt_d_k": float(np.sqrt(d_k)),
            "max_weight_unscaled": max_raw, "jacobian_norm_unscaled": jac_raw,
            "max_weight_scaled": max_scaled, "jacobian_norm_scaled": jac_scaled,
        })
    return {"main": pd.DataFrame(rows)}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    t, n, d_k = p["trials"], p["n_keys"], largest_value(p["d_k"])
    draw = [term((2 * n + 1) * t * d_k * F64, "queries (trials, 1, d_k), keys and products: "
                 "2 x (trials, n_keys, d_k) float64", trials=1, n_keys=1, d_k=1)]
    # softmax_jacobian_norm: two einsums and their difference
    jacobian = [term(3 * t * n * n * F64, "softmax Jacobians: 3 x (trials, n_keys, n_keys) float64",
                     trials=1, n_keys=2)]
    return largest(draw, jacobian)


def work(p):
    t, n = p["trials"], p["n_keys"]
    # every d_k: queries and keys drawn, their products summed, then two softmax Jacobians
    return t * (n + 1) * sum(p["d_k"]) * SWEEP_VALUE + len(p["d_k"]) * 2 * t * n * n * JACOBIAN_ENTRY
