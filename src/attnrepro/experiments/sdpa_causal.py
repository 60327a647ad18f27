"""001, listing 2: NumPy attention against torch's scaled_dot_product_attention.

Q, K, V of shape (B, T, d_k) are drawn in that order from one generator; the
NumPy side masks with -inf before the softmax, torch uses ``is_causal=True``.
Both deviations are round-off (published 2.22e-16 each).
"""

import numpy as np
import pandas as pd

from attnrepro.core import masks
from attnrepro.core.attention import attention
from attnrepro.experiments import _torch
from attnrepro.experiments._memory import BOOL, F64, term
from attnrepro.experiments._prices import CELL, FLOP

EXPERIMENT = {
    "article": "001",
    "order": 2,
    "section": "Scaled dot-product attention, derived (PyTorch check)",
    "torch": True,
}


def _max_deviation(torch, Q, K, V, causal):
    """max |numpy - torch| of the attention outputs, with or without the causal mask."""
    T = Q.shape[-2]
    mine, _ = attention(Q, K, V, allowed=masks.causal(T) if causal else None)  # (B, T, d_k)
    Qt, Kt, Vt = (torch.from_numpy(a) for a in (Q, K, V))
    library = torch.nn.functional.scaled_dot_product_attention(Qt, Kt, Vt, is_causal=causal).numpy()
    return float(np.abs(mine - library).max())


def run(params):
    torch = _torch.load()
    torch.manual_seed(params["torch_seed"])
    rng = np.random.default_rng(params["seed"])
    B, T, d_k = params["B"], params["T"], params["d_k"]
    Q, K, V = (rng.normal(size=(B, T, d_k)) for _ in range(3))  # (B, T, d_k) each

    rows = [
        {"seed": params["seed"], "B": B, "T": T, "d_k": d_k, "mask": "causal" if causal else "none",
         "max_abs_diff_torch": _max_deviation(torch, Q, K, V, causal)}
        for causal in (False, True)
    ]
    return {"main": pd.DataFrame(rows)}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    B, T, d_k = p["B"], p["T"], p["d_k"]
    # two NumPy attentions, each 4 (B, T, T) at its softmax, then torch's SDPA, which needs
    # fewer; the heap may keep the first one's blocks, too fragmented for the second (measured:
    # 5 to 7 in all, as the heap's layout falls)
    return [
        term(8 * B * T * T * F64 + 3 * T * T * BOOL,
             "scores, masked scores, exponentials, weights of two attentions: 8 x (B, T, T) float64",
             B=1, T=2),
        term(6 * B * T * d_k * F64, "Q, K, V and two outputs (B, T, d_k) float64", B=1, T=1, d_k=1),
    ]


def work(p):
    B, T, d_k = p["B"], p["T"], p["d_k"]
    return 4 * B * T * T * (CELL + 4 * d_k * FLOP)
