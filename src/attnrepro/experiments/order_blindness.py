"""003, step 4: self-attention is blind to order until a sinusoidal encoding is added.

Reordering the tokens only reorders the outputs; with the positional encoding
added at fixed positions, the same reordering changes the outputs.
"""

import numpy as np
import pandas as pd

from attnrepro.core.attention import attention
from attnrepro.core.positional import sinusoidal


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
