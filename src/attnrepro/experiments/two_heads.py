"""003, multi-head attention: two heads with their own projections, outputs concatenated."""

import numpy as np
import pandas as pd

from attnrepro.core.attention import attention
from attnrepro.experiments.self_attention_tokens import draw_projections
from attnrepro.experiments._memory import F64, ROW, term
from attnrepro.experiments._prices import CELL, DICT_ROW

EXPERIMENT = {
    "article": "003",
    "order": 6,
    "section": "Multi-head attention: two heads concatenated",
    "tables": ("main", "weights"),
    "derived": {
        "main.combined_rows": "the number of tokens",
        "main.combined_cols": "heads x d_k",
    },
}


def run(params):
    rng = np.random.default_rng(params["seed"])
    n, d_model, d_k = params["n"], params["d_model"], params["d_k"]
    X = rng.normal(size=(n, d_model))  # (n, d_model)
    outputs, rows = [], []
    for head in range(params["heads"]):
        W_q, W_k, W_v = draw_projections(rng, d_model, d_k, params["w_std"])  # drawn per head
        out, weights = attention(X @ W_q, X @ W_k, X @ W_v)  # (n, d_k), (n, n)
        outputs.append(out)
        rows += [{"head": head, "query": i, "key": j, "weight": float(weights[i, j])}
                 for i in range(n) for j in range(n)]
    combined = np.concatenate(outputs, axis=1)  # (n, heads * d_k)
    main = pd.DataFrame([{
        **params, "combined_rows": combined.shape[0], "combined_cols": combined.shape[1],
    }])
    return {"main": main, "weights": pd.DataFrame(rows)}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    n, d, d_k, heads = p["n"], p["d_model"], p["d_k"], p["heads"]
    return [
        term(heads * n * n * ROW + 4 * n * n * F64,
             "weights table: heads x n x n rows, one head's 4 x (n, n) float64",
             heads=1, n=2),
        term((n * d + heads * (3 * d * d_k + 5 * n * d_k)) * F64, "X, W and outputs of every head float64",
             n=1, d_model=1, d_k=1, heads=1),
    ]


def work(p):
    n = p["n"]
    return p["heads"] * n * n * (DICT_ROW + CELL)
