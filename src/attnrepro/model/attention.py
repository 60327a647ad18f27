"""Causal multi-head self-attention of one block, forward and backward.

The forward pass projects x into Q, K, V (each split into h heads of d/h), takes
the scores Q K^T, divides them by sqrt(d_h) when ``scale``, sets the future to
-inf before the softmax, and merges the heads of P V before the output
projection. It keeps what the backward pass needs: x, Q, K, V, P and the merged
context C.
"""

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from attnrepro.core import heads, masks
from attnrepro.core.attention import apply_mask, scores, softmax
from attnrepro.model.layers import flat
from attnrepro.model.params import bias_name


class AttentionCache(NamedTuple):
    """What :func:`attention_backward` needs."""

    x: np.ndarray  # (B, T, d): the input
    Q: np.ndarray  # (B, h, T, d_h)
    K: np.ndarray  # (B, h, T, d_h)
    V: np.ndarray  # (B, h, T, d_h)
    P: np.ndarray  # (B, h, T, T): the attention weights
    C: np.ndarray  # (B, T, d): the merged context P V


@lru_cache(maxsize=64)
def _causal(T):
    """The (T, T) causal mask, built once per length (read-only)."""
    allowed = masks.causal(T)
    allowed.flags.writeable = False
    return allowed


def attention(x, p, prefix, n_heads, scale=True):
    """Causal self-attention of block ``prefix`` ("b0.") on x: (B, T, d) -> (B, T, d), cache."""
    Q, K, V = (
        heads.split(x @ p[prefix + w] + p[prefix + bias_name(w)], n_heads)  # (B, h, T, d_h)
        for w in ("Wq", "Wk", "Wv")
    )
    S = scores(Q, K, scale)  # (B, h, T, T), divided by sqrt(d_h) after the product
    S = apply_mask(S, _causal(x.shape[1]))  # -inf BEFORE the softmax
    P = softmax(S, axis=-1)  # (B, h, T, T), over the keys
    C = heads.merge(P @ V)  # (B, T, d)
    return C @ p[prefix + "Wo"] + p[prefix + "bo"], AttentionCache(x, Q, K, V, P, C)


def attention_backward(dy, cache, p, prefix, n_heads, grads, scale=True):
    """Gradient of the input x from the gradient dy of the output; writes the weight gradients.

    The softmax is differentiated row by row: dS = P * (dP - sum(dP * P)); where the
    mask put P = 0 the gradient is 0 with no extra work.
    """
    x, Q, K, V, P, C = cache
    grads[prefix + "Wo"] = flat(C).T @ flat(dy)
    grads[prefix + "bo"] = dy.sum((0, 1))
    dC = heads.split(dy @ p[prefix + "Wo"].T, n_heads)  # (B, h, T, d_h)
    dP = dC @ np.swapaxes(V, -1, -2)  # (B, h, T, T)
    dV = np.swapaxes(P, -1, -2) @ dC  # (B, h, T, d_h)
    dS = P * (dP - (dP * P).sum(-1, keepdims=True))  # (B, h, T, T)
    if scale:
        dS = dS / np.sqrt(Q.shape[-1])
    dQ, dK = dS @ K, np.swapaxes(dS, -1, -2) @ Q  # (B, h, T, d_h) each
    dx = 0
    for w, dM in (("Wq", dQ), ("Wk", dK), ("Wv", dV)):
        dM = heads.merge(dM)  # (B, T, d)
        grads[prefix + w] = flat(x).T @ flat(dM)
        grads[prefix + bias_name(w)] = dM.sum((0, 1))
        dx = dx + dM @ p[prefix + w].T
    return dx
