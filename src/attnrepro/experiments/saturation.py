"""003, step 2: one query against a few keys; the softmax saturates without the sqrt(d) scale.

For each d (in config order, one generator) a query (d,) and keys (keys, d) are
drawn; the spread of the raw scores and the largest softmax weight with and
without scaling are recorded.
"""

import numpy as np
import pandas as pd

from attnrepro.core.attention import softmax
from attnrepro.experiments._memory import F64, largest_value, term
from attnrepro.experiments._prices import DRAW

EXPERIMENT = {
    "article": "003",
    "order": 2,
    "section": "Step 2: see softmax saturate without scaling",
}


def run(params):
    rng = np.random.default_rng(params["seed"])
    rows = []
    for d in params["d"]:
        q = rng.normal(size=d)  # (d,)
        keys = rng.normal(size=(params["keys"], d))  # (keys, d)
        raw = keys @ q  # (keys,)
        rows.append({
            "seed": params["seed"], "keys": params["keys"], "d": d,
            "raw_score_std": float(raw.std()),
            "max_weight_unscaled": float(softmax(raw).max()),
            "max_weight_scaled": float(softmax(raw / np.sqrt(d)).max()),
        })
    return {"main": pd.DataFrame(rows)}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    return [term(p["keys"] * largest_value(p["d"]) * F64, "keys (keys, d) float64; the scores are a vector",
                 keys=1, d=1)]


def work(p):
    return p["keys"] * sum(p["d"]) * DRAW
