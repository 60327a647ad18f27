"""003, multi-head attention: two heads with their own projections, outputs concatenated."""

import numpy as np
import pandas as pd

from attnrepro.core.attention import attention
from attnrepro.experiments.self_attention_tokens import draw_projections


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
