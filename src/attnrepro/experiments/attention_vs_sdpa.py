"""000, listing 1: hand-written attention against torch's scaled_dot_product_attention."""

import numpy as np
import pandas as pd

from attnrepro.core.attention import attention
from attnrepro.experiments import _torch
from attnrepro.experiments._memory import F64, ROW, term
from attnrepro.experiments._prices import CELL, DICT_ROW, FLOP

EXPERIMENT = {
    "article": "000",
    "order": 1,
    "section": "Attention as a soft lookup in a dictionary",
    "tables": ("main", "weights"),
    "torch": True,
    "derived": {
        "main.weights_rows": "the number of queries",
        "main.weights_cols": "the number of keys",
    },
    "softmax": {
        "weights.weight": {"rows": ["query"], "mask": None},
    },
}


def run(params):
    torch = _torch.load()
    rng = np.random.default_rng(params["seed"])
    n, d_k, d_v = params["n"], params["d_k"], params["d_v"]
    Q = rng.standard_normal((n, d_k))  # (n, d_k)
    K = rng.standard_normal((n, d_k))  # (n, d_k)
    V = rng.standard_normal((n, d_v))  # (n, d_v)

    out, w = attention(Q, K, V)  # (n, d_v), (n, n)
    ref = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(Q)[None], torch.from_numpy(K)[None], torch.from_numpy(V)[None]
    )[0].numpy()

    row_sums = w.sum(axis=1)
    main = pd.DataFrame([{
        "seed": params["seed"], "n": n, "d_k": d_k, "d_v": d_v,
        "weights_rows": w.shape[0], "weights_cols": w.shape[1],
        "row_sum_max_deviation": float(np.abs(row_sums - 1).max()),
        "max_abs_diff_torch": float(np.abs(out - ref).max()),
    }])
    weights = pd.DataFrame(
        [{"query": i, "key": j, "weight": float(w[i, j])} for i in range(n) for j in range(n)]
    )
    return {"main": main, "weights": weights}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    n, d_k, d_v = p["n"], p["d_k"], p["d_v"]
    return [
        term((2 * n * d_k + 2 * n * d_v) * F64, "Q, K (n, d_k), V and the output (n, d_v) float64",
             n=1, d_k=1, d_v=1),
        # then one dict per (query, key), while the weights stay: more than the attention's four
        # (n, n) float64 (scores, shifted scores, exponentials, weights), freed before
        term(n * n * (ROW + F64), "weights (n, n) float64 and their table: n x n rows", n=2),
    ]


def work(p):
    n = p["n"]
    return n * n * (DICT_ROW + 2 * CELL) + 4 * n * n * (p["d_k"] + p["d_v"]) * FLOP
