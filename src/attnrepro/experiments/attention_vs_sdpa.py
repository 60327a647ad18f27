"""000, listing 1: hand-written attention against torch's scaled_dot_product_attention."""

import numpy as np
import pandas as pd

from attnrepro.core.attention import attention
from attnrepro.experiments import _torch


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
