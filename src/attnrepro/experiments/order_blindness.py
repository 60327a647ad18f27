"""003, step 4: self-attention is blind to order until a sinusoidal encoding is added.

Reordering the tokens only reorders the outputs; with the positional encoding
added at fixed positions, the same reordering changes the outputs.
"""

import numpy as np
import pandas as pd

from attnrepro.core.attention import attention
from attnrepro.core.positional import sinusoidal
from attnrepro.experiments._memory import F64, ROW, term
from attnrepro.experiments._prices import CELL, DICT_ROW

EXPERIMENT = {
    "article": "003",
    "order": 4,
    "section": "Step 4: order-blindness and the sinusoidal fix",
    "tables": ("main", "encoding"),
}


def self_attention(X, W):
    """softmax(Q K^T / sqrt(d_k)) V with Q, K, V = X W[0], X W[1], X W[2]: (n, d_k)."""
    return attention(X @ W[0], X @ W[1], X @ W[2])[0]


def run(params):
    rng = np.random.default_rng(params["seed"])
    n, d, d_k = params["n"], params["d"], params["d_k"]
    X = rng.normal(size=(n, d))  # (n, d)
    W = [rng.normal(0, params["w_std"], (d, d_k)) for _ in range(3)]  # 3 x (d, d_k)
    order = params["order"]

    plain = self_attention(X, W)
    reordered = self_attention(X[order], W)
    pe = sinusoidal(n, d)  # (n, d)
    with_pos = self_attention(X + pe, W)
    reordered_pos = self_attention(X[order] + pe, W)

    main = pd.DataFrame([{
        "seed": params["seed"], "n": n, "d": d, "d_k": d_k, "w_std": params["w_std"],
        "order": " ".join(map(str, order)),
        "outputs_move_with_tokens": bool(np.allclose(plain[order], reordered)),
        "error_without_positions": float(np.abs(plain[order] - reordered).max()),
        "order_changes_result_with_positions": not np.allclose(with_pos[order], reordered_pos),
        "difference_with_positions": float(np.abs(with_pos[order] - reordered_pos).max()),
    }])
    encoding = pd.DataFrame([
        {"position": pos, "dimension": j, "value": float(pe[pos, j])}
        for pos in range(n) for j in range(d)
    ])
    return {"main": main, "encoding": encoding}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    n, d, d_k = p["n"], p["d"], p["d_k"]
    return [
        term(4 * n * n * F64, "scores, shifted scores, exponentials, weights: 4 x (n, n) float64", n=2),
        term(n * d * (4 * F64 + ROW), "X, X + PE, encoding (n, d) float64 and its table", n=1, d=1),
        term((3 * d * d_k + 8 * n * d_k) * F64, "W (d, d_k), Q, K, V, outputs (n, d_k) float64",
             n=1, d=1, d_k=1),
    ]


def work(p):
    n, d = p["n"], p["d"]
    return n * d * DICT_ROW + 4 * n * n * CELL
