"""001, the finite-difference check of the hand-written gradient.

A tiny decoder (default: d = 16, 4 heads, 2 layers, 3 sequences of 12 tokens,
loss on positions 6+) is initialised from default_rng(seed), which then draws
the tokens and the targets. For every tensor, the first ``coordinates``
coordinates where the analytic gradient exceeds ``threshold`` are perturbed by
+-eps, and the centred difference (L(+eps) - L(-eps)) / 2 eps is compared with
the analytic value: |numeric - analytic| / max(|numeric|, |analytic|).
"""

import numpy as np
import pandas as pd

from attnrepro.model.decoder import Arch, loss, loss_and_grads
from attnrepro.model.params import init_params
from attnrepro.experiments._memory import F64, decoder_pass, parameter_count, sizes, term
from attnrepro.experiments._prices import decoder_step

EXPERIMENT = {
    "article": "001",
    "order": 7,
    "section": "The complete block, and the count of its parameters (finite-difference gradient check)",
    "tables": ("main", "tensors"),
    "grid": ("post_ln", "eps"),
}


def setup(params):
    """Tensors, tokens, targets and loss weights of the check, in the article's draw order."""
    rng = np.random.default_rng(params["seed"])
    vocab, n, T = params["vocab"], params["sequences"], params["length"]
    p = init_params(vocab, params["d"], params["layers"], params["d_ff"], params["t_max"], rng)
    tokens = rng.integers(0, vocab, size=(n, T))
    targets = rng.integers(0, vocab, size=(n, T))
    weights = np.zeros((n, T))
    weights[:, params["weight_from"]:] = 1.0
    return p, tokens, targets, weights


def deviations(p, tokens, targets, weights, arch, eps, coordinates, threshold):
    """{tensor: [relative deviation per checked coordinate]} (p is restored afterwards)."""
    _, g = loss_and_grads(p, tokens, targets, weights, arch)
    out = {}
    for name in p:
        out[name] = []
        for i in np.argwhere(np.abs(g[name]) > threshold)[:coordinates]:  # only measurable gradients
            i = tuple(i)
            v0 = p[name][i]
            p[name][i] = v0 + eps
            plus = loss(p, tokens, targets, weights, arch)
            p[name][i] = v0 - eps
            minus = loss(p, tokens, targets, weights, arch)
            p[name][i] = v0
            numeric = (plus - minus) / (2 * eps)
            out[name].append(abs(numeric - g[name][i]) / max(abs(numeric), abs(g[name][i])))
    return out


def run(params):
    p, tokens, targets, weights = setup(params)
    arch = Arch(params["layers"], params["heads"], scale=True, post_ln=params["post_ln"])
    per_tensor = deviations(p, tokens, targets, weights, arch, params["eps"],
                            params["coordinates"], params["threshold"])
    tensors = pd.DataFrame([
        {"post_ln": params["post_ln"], "eps": params["eps"], "tensor": name, "coordinates": len(devs),
         "worst_relative_deviation": float(max(devs)) if devs else float("nan")}
        for name, devs in per_tensor.items()
    ])
    worst = tensors.loc[tensors["worst_relative_deviation"].idxmax()]
    main = pd.DataFrame([{
        "post_ln": params["post_ln"], "variant": "post-LN" if params["post_ln"] else "pre-LN",
        "eps": params["eps"], "seed": params["seed"], "d": params["d"], "heads": params["heads"],
        "layers": params["layers"], "coordinates": int(tensors["coordinates"].sum()),
        "worst_relative_deviation": float(worst["worst_relative_deviation"]),
        "worst_tensor": worst["tensor"],
    }])
    return {"main": main, "tensors": tensors}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def _largest_tensor(vocab, d, d_ff, t_max):
    """Elements of the largest tensor: E or Wout (vocab, d), W1 or W2 (d, d_ff), P, a projection."""
    return max(vocab * d, d * d_ff, t_max * d, d * d)


def check_memory(p, torch):
    """grad_check (``torch`` False) and autograd_check: the tensors and their gradients, the
    comparison of the largest tensor, one pass with its backward. autograd_check's torch graph
    comes after the NumPy pass has been freed: its attention weights (one per layer, three
    transients) land in the freed blocks or beside them, as the heap's layout falls."""
    n, T, d, h, layers, d_ff, vocab, t_max = (p[k] for k in ("sequences", "length", "d", "heads", "layers",
                                                             "d_ff", "vocab", "t_max"))
    count = parameter_count(vocab, d, layers, d_ff, t_max)
    largest_tensor = _largest_tensor(vocab, d, d_ff, t_max)
    # autograd_check: and torch's copies of both, which the heap places beside the freed NumPy
    # pass or not (measured: 4.5 to 5.5 copies in all)
    copies, what = (5, "the tensors, their gradients and torch's copies of both") if torch else (
        2, "the tensors and their gradients")
    # grad_check: |g|, its mask and np.argwhere's indices (two index arrays, their (size, 2)
    # copy); autograd_check: the perturbation's draw and |g - g_torch|
    checked = 3 if torch else 5
    return [
        term(copies * count * F64, f"{what} float64", **sizes("vocab", "t_max")),
        term(checked * largest_tensor * F64, f"the comparison of the largest tensor: {checked} x its size "
             "float64", d=2, vocab=1, d_ff=1, t_max=1),
    ] + decoder_pass(n, T, d, h, layers, d_ff, vocab, True, "sequences", "length", "vocab") + ([
        term((layers + 3) * n * h * T * T * F64, "torch's attention weights (B, h, T, T) float64: one "
             "per layer, 3 transients", sequences=1, length=2, heads=1, layers=1),
    ] if torch else [])


def peak_memory(p):
    return check_memory(p, torch=False)  # pragma: no mutate (equivalent: None is as false as False)


def work(p):
    """A loss for every checked coordinate of every tensor, twice (+eps, -eps): half a step each."""
    layers = p["layers"]
    losses = 1 + 2 * p["coordinates"] * (6 + 16 * layers)  # init_params: 6 + 16 per layer tensors
    return losses * decoder_step(p["sequences"], p["length"], p["d"], p["heads"], layers, p["d_ff"],
                                 p["vocab"]) / 2
