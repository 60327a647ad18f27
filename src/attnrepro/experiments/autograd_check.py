"""001, beyond the article: the hand-written backward pass against PyTorch autograd.

The same decoder is written a second time with torch operations in float64
(``F.layer_norm``, ``masked_fill`` with -inf, ``softmax``, ``F.cross_entropy``)
and differentiated by autograd. Both are loaded with identical tensors: the
tiny model of the finite-difference check, with every tensor then shifted by
``perturb`` times a Gaussian (drawn after the tokens), so that gains, biases and
positions are not at their trivial initial values. Without position the table
is zeroed and its gradient dropped, as in training; the torch model has no
position term at all.

For each tensor: max |g_numpy - g_torch| / max |g_torch|. The key biases have a
gradient that is zero in exact arithmetic (a constant added to every score of a
row leaves the softmax unchanged), and so has the position table without
position: both sides give round-off, and their difference is taken relative to
the largest gradient entry of the whole model instead (column ``relative_to``).
For the loss: |L_numpy - L_torch| / |L_torch|; the guard log(p + 1e-12) of the
NumPy loss contributes about 1e-12 / p to it.
"""

import math

import numpy as np
import pandas as pd

from attnrepro.experiments import _torch
from attnrepro.experiments.grad_check import setup
from attnrepro.model.decoder import Arch, loss_and_grads
from attnrepro.experiments.grad_check import check_memory
from attnrepro.experiments._prices import decoder_step

EXPERIMENT = {
    "article": "001",
    "order": 8,
    "section": "The complete block, and the count of its parameters "
               "(PyTorch autograd check, beyond the article)",
    "tables": ("main", "tensors"),
    "grid": ("post_ln", "scale", "position"),
    "torch": True,
}


def torch_loss(torch, t, tokens, targets, weights, arch, position):
    """The decoder's weighted cross-entropy, in torch operations, from tensors ``t`` (name -> tensor)."""
    F = torch.nn.functional
    B, T = tokens.shape
    d = t["E"].shape[1]
    h, d_h = arch.heads, d // arch.heads
    allowed = torch.ones(T, T, dtype=torch.bool).tril()

    def ln(x, name_g, name_b):
        return F.layer_norm(x, (d,), t[name_g], t[name_b], eps=1e-5)

    def attention(x, q):
        def split(M):  # (B, T, d) -> (B, h, T, d_h)
            return M.view(B, T, h, d_h).transpose(1, 2)

        Q, K, V = (split(x @ t[q + "W" + c] + t[q + "b" + c]) for c in "qkv")
        S = Q @ K.transpose(-1, -2)
        if arch.scale:
            S = S / math.sqrt(d_h)
        A = S.masked_fill(~allowed, float("-inf")).softmax(-1)
        C = (A @ V).transpose(1, 2).reshape(B, T, d)
        return C @ t[q + "Wo"] + t[q + "bo"]

    def ffn(x, q):
        return F.relu(x @ t[q + "W1"] + t[q + "b1"]) @ t[q + "W2"] + t[q + "b2"]

    x = t["E"][tokens]
    if position:
        x = x + t["P"][:T]
    for layer in range(arch.layers):
        q = f"b{layer}."
        if arch.post_ln:
            x = ln(x + attention(x, q), q + "g1", q + "be1")
            x = ln(x + ffn(x, q), q + "g2", q + "be2")
        else:
            x = x + attention(ln(x, q + "g1", q + "be1"), q)
            x = x + ffn(ln(x, q + "g2", q + "be2"), q)
    logits = ln(x, "gf", "bef") @ t["Wout"] + t["bout"]
    nll = F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(-1), reduction="none")
    return (weights.reshape(-1) * nll).sum() / weights.sum()


def zero_by_construction(name, position):
    """Tensors whose exact gradient is 0: the key biases, and the positions when switched off."""
    return name.endswith(".bk") or (name == "P" and not position)


def run(params):
    torch = _torch.load()
    p, tokens, targets, weights = setup(params)
    rng = np.random.default_rng(params["perturb_seed"])
    for v in p.values():
        v += params["perturb"] * rng.normal(size=v.shape)
    if not params["position"]:
        p["P"][:] = 0.0
    arch = Arch(params["layers"], params["heads"], params["scale"], params["post_ln"])

    loss_np, g = loss_and_grads(p, tokens, targets, weights, arch)
    if not params["position"]:
        g["P"][:] = 0.0
    t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in p.items()}
    loss_t = torch_loss(torch, t, torch.from_numpy(tokens), torch.from_numpy(targets),
                        torch.from_numpy(weights), arch, params["position"])
    loss_t.backward()
    variant = {"post_ln": params["post_ln"], "scale": params["scale"], "position": params["position"]}
    ref = {k: v.grad.numpy() if v.grad is not None else np.zeros_like(p[k]) for k, v in t.items()}
    largest = max(float(np.abs(v).max()) for v in ref.values())
    rows = []
    for name in p:
        diff, own = float(np.abs(g[name] - ref[name]).max()), float(np.abs(ref[name]).max())
        zero = zero_by_construction(name, params["position"])
        rows.append({**variant, "tensor": name, "max_abs_diff": diff, "max_abs_grad": own,
                     "max_abs_grad_numpy": float(np.abs(g[name]).max()),
                     "relative_to": "model" if zero else "tensor",
                     "relative_difference": diff / (largest if zero else own)})
    tensors = pd.DataFrame(rows)
    worst = tensors.loc[tensors["relative_difference"].idxmax()]
    main = pd.DataFrame([{
        **variant, "variant": ", ".join([
            "post-LN" if params["post_ln"] else "pre-LN", "scaled" if params["scale"] else "unscaled",
            "position" if params["position"] else "no position"]),
        "loss_numpy": float(loss_np), "loss_torch": float(loss_t.item()),
        "loss_relative_difference": abs(float(loss_np) - loss_t.item()) / abs(loss_t.item()),
        "worst_relative_difference": float(worst["relative_difference"]), "worst_tensor": worst["tensor"],
        "torch_version": torch.__version__,
    }])
    return {"main": main, "tensors": tensors}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    return check_memory(p, torch=True)


def work(p):
    """One NumPy pass and its backward, then torch's."""
    return 2 * decoder_step(p["sequences"], p["length"], p["d"], p["heads"], p["layers"], p["d_ff"],
                            p["vocab"])
