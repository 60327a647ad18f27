"""003, step 3: the sentence of step 1 under a causal mask (-inf before the softmax)."""

import numpy as np
import pandas as pd

from attnrepro.core.attention import apply_mask, scores, softmax
from attnrepro.core.masks import causal
from attnrepro.experiments.self_attention_tokens import draw_sentence, weights_table
from attnrepro.experiments.self_attention_tokens import peak_memory, work  # noqa: F401 (its estimates)

EXPERIMENT = {
    "article": "003",
    "order": 3,
    "section": "Step 3: add a causal mask",
    "tables": ("main", "weights"),
    "derived": {
        "weights.allowed": "the causal mask: True where key <= query, of n alone",
    },
    "softmax": {
        "weights.weight": {"rows": ["query"], "mask": "allowed"},
    },
}


def run(params):
    tokens = params["tokens"]
    n = len(tokens)
    X, (W_q, W_k, W_v) = draw_sentence(params)
    Q, K = X @ W_q, X @ W_k  # (n, d_k) each; W_v is drawn, but the listing shows only weights
    allowed = causal(n)  # (n, n), True on and below the diagonal
    weights = softmax(apply_mask(scores(Q, K), allowed))  # (n, n)

    table = weights_table(weights, tokens)
    table.insert(4, "allowed", allowed.ravel())
    main = pd.DataFrame([{
        "seed": params["seed"], "n_tokens": n, "d_model": params["d_model"],
        "d_k": params["d_k"], "w_std": params["w_std"],
        "masked_weight_max": float(weights[~allowed].max()),
        "row_sum_max_deviation": float(np.abs(weights.sum(axis=1) - 1).max()),
    }])
    return {"main": main, "weights": table}
