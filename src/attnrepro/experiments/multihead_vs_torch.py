"""000, listing 3: multi-head attention by hand from the weights of torch's MultiheadAttention.

The hand-written version reads the module's stacked in-projection, gives head i
the columns i*d_h..(i+1)*d_h of Q, K and V, concatenates the heads and applies
the output projection. A second table counts the module's parameters for
several head counts, against the formula 4 d^2 + 4 d.
"""

import numpy as np
import pandas as pd

from attnrepro.core.attention import attention
from attnrepro.experiments import _torch
from attnrepro.experiments._memory import F32, F64, term
from attnrepro.experiments._prices import DRAW, mha

EXPERIMENT = {
    "article": "000",
    "order": 3,
    "section": "Multiple heads",
    "tables": ("main", "params"),
    "torch": True,
    "derived": {
        "params.formula_parameters": "4 d^2 + 4 d",
        "params.parameters": "the modules' entries: a product of the sizes",
    },
}


def hand_written_heads(X, in_weight, in_bias, out_weight, out_bias, h):
    """Output (n, d) and per-head weights (h, n, n) of multi-head self-attention on X (n, d)."""
    d = X.shape[1]
    d_h = d // h
    Q = X @ in_weight[:d].T + in_bias[:d]  # (n, d)
    K = X @ in_weight[d:2 * d].T + in_bias[d:2 * d]  # (n, d)
    V = X @ in_weight[2 * d:].T + in_bias[2 * d:]  # (n, d)
    outputs, weights = [], []
    for i in range(h):
        cols = slice(i * d_h, (i + 1) * d_h)  # head i's slice of d_h columns
        out_i, w_i = attention(Q[:, cols], K[:, cols], V[:, cols])  # (n, d_h), (n, n)
        outputs.append(out_i)
        weights.append(w_i)
    out = np.concatenate(outputs, axis=1) @ out_weight.T + out_bias  # (n, d)
    return out, np.stack(weights)


def parameter_counts(torch, d, head_counts):
    """Parameters of a (float32) MultiheadAttention of width d for each head count."""
    rows = []
    for heads in head_counts:
        module = torch.nn.MultiheadAttention(d, heads)
        rows.append({
            "d": d, "heads": heads,
            "parameters": sum(p.numel() for p in module.parameters()),
            "formula_parameters": 4 * d * d + 4 * d,
        })
    return pd.DataFrame(rows)


def run(params):
    torch = _torch.load()
    d, h, n = params["d"], params["h"], params["n"]
    mha, x = _torch.seeded_attention(torch, params)  # x: (1, n, d)
    with torch.no_grad():
        ref, ref_w = mha(x, x, x, need_weights=True, average_attn_weights=False)  # (1, n, d), (1, h, n, n)

    out, weights = hand_written_heads(
        x[0].numpy(),
        mha.in_proj_weight.detach().numpy(), mha.in_proj_bias.detach().numpy(),
        mha.out_proj.weight.detach().numpy(), mha.out_proj.bias.detach().numpy(), h,
    )
    main = pd.DataFrame([{
        "torch_seed": params["torch_seed"], "d": d, "h": h, "n": n,
        "max_abs_diff_output": float(np.abs(out - ref[0].numpy()).max()),
        "max_abs_diff_weights": float(np.abs(weights - ref_w[0].numpy()).max()),
    }])
    return {"main": main, "params": parameter_counts(torch, d, params["param_heads"])}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    """float64 MultiheadAttention(d, h) on x (1, n, d) with its weights (torch's scores and
    softmax: 2 h (n, n)), then the heads by hand: torch's weights, the hand-written ones and
    their stack (3 h), one head's softmax (4); the heap keeps more (measured: up to 5 h + 1)."""
    d, n, h = p["d"], p["n"], p["h"]
    return [
        term(2 * 4 * d * d * F64, "MultiheadAttention weights and a copy: 2 x (4d, d) float64", d=2),
        term(2 * 4 * h * n * n * F64, "scores of torch and of the hand-written heads: 8 x (h, n, n) float64",
             n=2, h=1),
        term(8 * n * d * F64, "inputs, projections and outputs: 8 x (n, d) float64", n=1, d=1),
        term(2 * 4 * d * (d + 1) * F32, "a float32 MultiheadAttention per param_heads: 2 x (4d, d)", d=2),
    ]


def work(p):
    n, d, h = p["n"], p["d"], p["h"]
    # torch's module and the heads by hand, then one module per count of param_heads
    return 2 * mha(n, d, h) + (len(p["param_heads"]) + 1) * 4 * d * d * DRAW
