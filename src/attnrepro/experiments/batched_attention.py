"""001, listing 1: batched scaled dot-product attention, shapes and row sums.

X of shape (B, T, d) is projected by three Gaussian matrices divided by sqrt(d)
(drawn after X, in the order W_Q, W_K, W_V; the values have width d_k too), then
scores, weights and output are computed over the batch.
"""

import numpy as np
import pandas as pd

from attnrepro.core.attention import scores, softmax
from attnrepro.experiments._memory import F64, ROW, term
from attnrepro.experiments._prices import CELL, DICT_ROW, FLOP

EXPERIMENT = {
    "article": "001",
    "order": 1,
    "section": "Scaled dot-product attention, derived",
    "tables": ("main", "row_sums"),
    "derived": {
        "main.scores_shape": "(B, T, T) of the batch's sizes",
        "main.weights_shape": "(B, T, T) of the batch's sizes",
        "main.output_shape": "(B, T, d_v) of the batch's sizes",
        "row_sums.row_sum": "the sum of one softmax row: 1 by definition",
    },
}


def _projection(rng, d, d_k):
    """A (d, d_k) Gaussian matrix divided by sqrt(d): projections keep unit variance."""
    return rng.normal(size=(d, d_k)) / np.sqrt(d)


def run(params):
    rng = np.random.default_rng(params["seed"])
    B, T, d, d_k = params["B"], params["T"], params["d"], params["d_k"]
    X = rng.normal(size=(B, T, d))  # (B, T, d)
    W_Q, W_K, W_V = (_projection(rng, d, d_k) for _ in range(3))  # (d, d_k) each

    Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # (B, T, d_k) each
    S = scores(Q, K)  # (B, T, T), divided by sqrt(d_k)
    P = softmax(S, axis=-1)  # (B, T, T), over the keys
    Y = P @ V  # (B, T, d_k)

    row_sums = P.sum(axis=-1)  # (B, T)
    main = pd.DataFrame([{
        "seed": params["seed"], "B": B, "T": T, "d": d, "d_k": d_k,
        "scores_shape": str(S.shape), "weights_shape": str(P.shape), "output_shape": str(Y.shape),
        "row_sum_max_deviation": float(np.abs(row_sums - 1).max()),
    }])
    sums = pd.DataFrame(
        [{"batch": b, "query": i, "row_sum": float(row_sums[b, i])} for b in range(B) for i in range(T)]
    )
    return {"main": main, "row_sums": sums}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    B, T, d, d_k = p["B"], p["T"], p["d"], p["d_k"]
    return [
        term(4 * B * T * T * F64, "scores, shifted scores, exponentials, weights: 4 x (B, T, T) float64",
             B=1, T=2),
        term((B * T * d + 4 * B * T * d_k) * F64, "X (B, T, d), Q, K, V, output (B, T, d_k) float64",
             B=1, T=1, d=1, d_k=1),
        term(B * T * ROW, "row_sums table: B x T rows", B=1, T=1),
    ]


def work(p):
    B, T, d, d_k = p["B"], p["T"], p["d"], p["d_k"]
    return B * T * T * (CELL + 4 * d_k * FLOP) + 6 * B * T * d * d_k * FLOP + B * T * DICT_ROW
