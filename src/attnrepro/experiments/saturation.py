"""003, step 2: one query against a few keys; the softmax saturates without the sqrt(d) scale.

For each d (in config order, one generator) a query (d,) and keys (keys, d) are
drawn; the spread of the raw scores and the largest softmax weight with and
without scaling are recorded.
"""

import numpy as np
import pandas as pd

from attnrepro.core.attention import softmax


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
