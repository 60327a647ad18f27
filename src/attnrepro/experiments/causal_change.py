"""000, listing 5: change only the last inputs and see which outputs move, with and without the causal mask.

Positions ``changed_from``..n-1 of the input get new random vectors; the largest
change of each output position is measured with no mask and with torch's
boolean causal mask (True = may not look).
"""

import pandas as pd

from attnrepro.core.masks import future
from attnrepro.experiments import _torch
from attnrepro.experiments._memory import BOOL, F64, term, torch_sdpa_mha
from attnrepro.experiments._prices import DICT_ROW, mha

EXPERIMENT = {
    "article": "000",
    "order": 5,
    "section": "Encoder, decoder and the causal mask",
    "torch": True,
}


def output_change(torch, mha, x, x_changed, mask):
    """max over features of |f(x) - f(x_changed)| per position: (n,)."""
    def self_attend(inputs):
        with torch.no_grad():
            return mha(inputs, inputs, inputs, attn_mask=mask, need_weights=False)[0]  # (1, n, d)

    return (self_attend(x) - self_attend(x_changed)).abs().amax(dim=-1)[0]


def run(params):
    torch = _torch.load()
    d, h, n, first = params["d"], params["h"], params["n"], params["changed_from"]
    mha, x = _torch.seeded_attention(torch, params)  # x: (1, n, d)
    causal = torch.from_numpy(future(n))  # (n, n), True above the diagonal
    x_changed = x.clone()
    x_changed[:, first:] = torch.randn(1, n - first, d, dtype=torch.float64)

    rows = []
    for mask_name, mask in (("none", None), ("causal", causal)):
        change = output_change(torch, mha, x, x_changed, mask).tolist()
        rows += [{
            "torch_seed": params["torch_seed"], "d": d, "h": h, "n": n, "changed_from": first,
            "mask": mask_name, "position": pos, "input_changed": pos >= first,
            "output_change": value,
        } for pos, value in enumerate(change)]
    return {"main": pd.DataFrame(rows)}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    n = p["n"]
    return torch_sdpa_mha(p) + [
        term(n * n * (F64 + 2 * BOOL), "causal mask (n, n) bool, its inverse and torch's float64 copy", n=2),
    ]


def work(p):
    n, d, h = p["n"], p["d"], p["h"]
    return 4 * mha(n, d, h) + 2 * n * DICT_ROW
