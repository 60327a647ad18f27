"""001, listing 4: the causal mask applied before the softmax (right) or after it (wrong),
then the padding mask of a batch and its combination with the causal one.

Scores (T, T) are standard Gaussians from default_rng(seed). "before" sets the
future to -inf and then normalizes; "after" normalizes all keys and then zeroes
the future, so its rows no longer sum to one.
"""

import numpy as np
import pandas as pd

from attnrepro.core import masks
from attnrepro.core.attention import apply_mask, softmax
from attnrepro.experiments._memory import BOOL, F64, ROW, term
from attnrepro.experiments._prices import LONG_ROW

EXPERIMENT = {
    "article": "001",
    "order": 4,
    "section": "The causal mask: minus infinity before the softmax",
    "tables": ("main", "weights", "row_sums", "padding", "combined"),
    "derived": {
        "weights.visible": "the causal mask: True where key <= query, of T alone",
        "padding.valid": "the padding mask of the lengths",
        "combined.allowed": "the causal and padding masks of T and the lengths",
        "row_sums.before": "the sum of one softmax row: 1 by definition",
    },
    "softmax": {
        "weights.before": {"rows": ["query"], "mask": "visible"},
    },
}


def _long(matrix, names, value):
    """A long table of an n-dimensional array: one row per cell, one column per axis."""
    return pd.DataFrame(
        [{**dict(zip(names, (int(i) for i in index))), value: matrix[index].item()}
         for index in np.ndindex(matrix.shape)]
    )


def run(params):
    rng = np.random.default_rng(params["seed"])
    T, lengths = params["T"], params["lengths"]
    s = rng.normal(size=(T, T))  # (T, T) scores
    visible = masks.causal(T)  # (T, T), True = may look

    before = softmax(apply_mask(s, visible), axis=-1)  # (T, T), -inf BEFORE the softmax
    after = softmax(s, axis=-1) * visible  # (T, T), zeroed AFTER the softmax
    sums_before, sums_after = before.sum(axis=-1), after.sum(axis=-1)  # (T,)

    main = pd.DataFrame([{
        "seed": params["seed"], "T": T, "lengths": str(list(lengths)),
        "max_deviation": float(np.abs(before - after).max()),
        "row_sum_max_deviation_before": float(np.abs(sums_before - 1).max()),
        "row_sum_min_after": float(sums_after.min()),
        "masked_weight_max_before": float(before[~visible].max()),
    }])
    weights = _long(visible, ["query", "key"], "visible")
    weights["before"] = before.ravel()
    weights["after"] = after.ravel()
    # what zeroing after the softmax throws away: the weight the row gave to the future
    row_sums = pd.DataFrame({"query": np.arange(T), "before": sums_before, "after": sums_after,
                             "future_weight_after": 1 - sums_after})
    padding = _long(masks.padding(lengths, T), ["sequence", "key"], "valid")  # (B, T)
    combined = _long(masks.causal_and_padding(lengths, T), ["sequence", "query", "key"],
                     "allowed")  # (B, T, T)
    return {"main": main, "weights": weights, "row_sums": row_sums, "padding": padding, "combined": combined}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    T, B = p["T"], len(p["lengths"])
    # the long tables are built one at a time; the weights table (5 columns) stays
    return [
        term(B * T * T * ROW, "the rows of the combined table: len(lengths) x T x T", T=2),
        term(T * T * (3 * F64 + BOOL + 5 * 8), "scores, before, after (T, T) float64, the mask and "
             "the weights table", T=2),
    ]


def work(p):
    T, B = p["T"], len(p["lengths"])
    return (T * T + B * T + B * T * T) * LONG_ROW
