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
