"""001, listing 5: multi-head attention, shapes for several h, and permutation equivariance.

From default_rng(seed): X (B, T, d), then W_Q, W_K, W_V, W_O (d, d) divided by
sqrt(d), then (after the shapes) a permutation of the T positions. Without mask
and without position, attn(PX) = P attn(X) up to round-off, while attn(PX)
differs from attn(X).
"""

import numpy as np
import pandas as pd

from attnrepro.core import heads
from attnrepro.core.attention import attention
from attnrepro.experiments._memory import F64, largest_value, term
from attnrepro.experiments._prices import CELL, FLOP

EXPERIMENT = {
    "article": "001",
    "order": 5,
    "section": "Multiple heads: why h heads of d/h",
    "tables": ("main", "permutation"),
    "derived": {
        "main.d_head": "d / h",
        "main.four_d_squared": "4 d^2",
        "main.output_shape": "the input's shape",
        "main.weights_shape": "(h, T, T) of the sizes",
    },
}


def multi_head(X, W_Q, W_K, W_V, W_O, h):
    """h heads of width d/h on (B, T, d); returns the output (B, T, d) and weights (B, h, T, T)."""
    Q, K, V = (heads.split(X @ W, h) for W in (W_Q, W_K, W_V))  # (B, h, T, d/h) each
    context, weights = attention(Q, K, V)  # (B, h, T, d/h), (B, h, T, T)
    return heads.merge(context) @ W_O, weights  # (B, T, d)


def run(params):
    rng = np.random.default_rng(params["seed"])
    B, T, d = params["B"], params["T"], params["d"]
    X = rng.normal(size=(B, T, d))  # (B, T, d)
    W = [rng.normal(size=(d, d)) / np.sqrt(d) for _ in range(4)]  # W_Q, W_K, W_V, W_O

    rows = []
    for h in params["heads"]:
        Y, weights = multi_head(X, *W, h=h)
        rows.append({
            "seed": params["seed"], "B": B, "T": T, "d": d, "h": h, "d_head": d // h,
            "weights_shape": str(weights.shape), "output_shape": str(Y.shape),
            "four_d_squared": 4 * d * d, "weight_params": sum(w.size for w in W),
        })

    h = params["permutation_heads"]
    perm = rng.permutation(T)  # drawn after X and W
    Y, _ = multi_head(X, *W, h=h)
    Y_perm, _ = multi_head(X[:, perm, :], *W, h=h)
    permutation = pd.DataFrame([{
        "seed": params["seed"], "T": T, "d": d, "h": h, "permutation": " ".join(map(str, perm)),
        "max_equivariance_error": float(np.abs(Y_perm - Y[:, perm, :]).max()),  # |attn(PX) - P attn(X)|
        "max_change": float(np.abs(Y_perm - Y).max()),  # |attn(PX) - attn(X)|
    }])
    return {"main": pd.DataFrame(rows), "permutation": permutation}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    B, T, d = p["B"], p["T"], p["d"]
    h = max(largest_value(p["heads"]), p["permutation_heads"])
    return [
        # the previous head count's weights stay alive while the next one's are computed
        term(5 * B * h * T * T * F64, "scores, shifted scores, exponentials, weights and the previous "
             "weights: 5 x (B, h, T, T) float64", B=1, T=2, heads=1, permutation_heads=1),
        term(10 * B * T * d * F64, "X, Q, K, V, contexts, outputs: 10 x (B, T, d) float64", B=1, T=1, d=1),
        term(4 * d * d * F64, "W_Q, W_K, W_V, W_O (d, d) float64", d=2),
    ]


def work(p):
    B, T, d = p["B"], p["T"], p["d"]
    calls = [(h, 1) for h in p["heads"]] + [(p["permutation_heads"], 2)]
    return sum(k * (B * h * T * T * CELL + 8 * B * T * d * d * FLOP) for h, k in calls)
