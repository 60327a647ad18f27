"""003, step 1: self-attention on a five-token sentence with random embeddings and projections."""

import numpy as np
import pandas as pd

from attnrepro.core.attention import attention
from attnrepro.experiments._memory import F64, ROW, term
from attnrepro.experiments._prices import CELL, DICT_ROW

EXPERIMENT = {
    "article": "003",
    "order": 1,
    "section": "Step 1: self-attention on a five-token sentence",
    "tables": ("main", "weights"),
    "derived": {
        "main.output_rows": "the number of tokens",
        "main.output_cols": "d_k",
        "main.weights_rows": "the number of tokens",
        "main.weights_cols": "the number of tokens",
    },
    "softmax": {
        "weights.weight": {"rows": ["query"], "mask": None},
    },
}


def draw_projections(rng, d_model, d_k, w_std):
    """W_q, W_k, W_v, each (d_model, d_k), drawn one after the other."""
    return tuple(rng.normal(0, w_std, (d_model, d_k)) for _ in range(3))


def draw_sentence(params):
    """Embeddings X (n, d_model) first, then W_q, W_k, W_v, from one generator."""
    rng = np.random.default_rng(params["seed"])
    X = rng.normal(size=(len(params["tokens"]), params["d_model"]))  # (n, d_model)
    return X, draw_projections(rng, params["d_model"], params["d_k"], params["w_std"])


def weights_table(weights, tokens):
    """Long table (query, query_token, key, key_token, weight) of an (n, n) weight matrix."""
    return pd.DataFrame([
        {"query": i, "query_token": tokens[i], "key": j, "key_token": tokens[j],
         "weight": float(weights[i, j])}
        for i in range(len(tokens)) for j in range(len(tokens))
    ])


def run(params):
    tokens = params["tokens"]
    X, (W_q, W_k, W_v) = draw_sentence(params)
    out, weights = attention(X @ W_q, X @ W_k, X @ W_v)  # (n, d_k), (n, n)
    main = pd.DataFrame([{
        "seed": params["seed"], "n_tokens": len(tokens), "d_model": params["d_model"],
        "d_k": params["d_k"], "w_std": params["w_std"],
        "output_rows": out.shape[0], "output_cols": out.shape[1],
        "weights_rows": weights.shape[0], "weights_cols": weights.shape[1],
        "row_sum_max_deviation": float(np.abs(weights.sum(axis=1) - 1).max()),
    }])
    return {"main": main, "weights": weights_table(weights, tokens)}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    n, d, d_k = len(p["tokens"]), p["d_model"], p["d_k"]
    return [
        term(n * n * (4 * F64 + ROW), "weights: 4 x (n, n) float64 and a table of n x n rows", tokens=2),
        term((n * d + 3 * d * d_k + 4 * n * d_k) * F64, "X (n, d_model), W, Q, K, V (n, d_k) float64",
             tokens=1, d_model=1, d_k=1),
    ]


def work(p):
    n = len(p["tokens"])
    return n * n * (DICT_ROW + CELL)
