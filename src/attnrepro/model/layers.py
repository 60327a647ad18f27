"""Layer norm and the position-wise ReLU feed-forward network, forward and backward.

Shapes: activations are (B, T, d); parameter gradients are summed over batch and time.
"""

from typing import NamedTuple

import numpy as np


class LayerNormCache(NamedTuple):
    """What :func:`layer_norm_backward` needs."""

    xh: np.ndarray  # (B, T, d): the normalised input
    inv: np.ndarray  # (B, T, 1): 1 / sqrt(var + eps)
    gamma: np.ndarray  # (d,)


class FeedForwardCache(NamedTuple):
    """What :func:`feed_forward_backward` needs."""

    x: np.ndarray  # (B, T, d): the input
    z: np.ndarray  # (B, T, d_ff): x W1 + b1, before the ReLU
    hidden: np.ndarray  # (B, T, d_ff): relu(z)


def flat(a):
    """(..., n) -> (N, n): the batch and time axes folded into rows, for weight gradients."""
    return a.reshape(-1, a.shape[-1])


def _mean_var(x):
    """Mean and (biased) variance over the last axis, in the arithmetic of ``x.mean``/``x.var``.

    NumPy computes both as sum / n, the variance from the same mean: computing the
    mean once gives the same bits as calling the two methods.
    """
    n = x.shape[-1]
    mean = x.sum(-1, keepdims=True) / n  # (B, T, 1)
    centred = x - mean  # (B, T, d)
    var = np.square(centred).sum(-1, keepdims=True) / n  # (B, T, 1)
    return centred, var


def layer_norm(x, gamma, beta, eps=1e-5):
    """gamma * (x - mean) / sqrt(var + eps) + beta over the last axis; returns (y, cache)."""
    centred, var = _mean_var(x)
    inv = 1.0 / np.sqrt(var + eps)  # (B, T, 1)
    xh = centred * inv  # (B, T, d)
    return gamma * xh + beta, LayerNormCache(xh, inv, gamma)


def layer_norm_backward(dy, cache):
    """Closed form: dx = inv * (dxh - mean(dxh) - xh * mean(dxh * xh)); returns (dx, dgamma, dbeta)."""
    xh, inv, gamma = cache
    dxh = dy * gamma  # (B, T, d)
    dx = inv * (dxh - dxh.mean(-1, keepdims=True) - xh * (dxh * xh).mean(-1, keepdims=True))
    return dx, (dy * xh).sum((0, 1)), dy.sum((0, 1))


def feed_forward(x, W1, b1, W2, b2):
    """relu(x W1 + b1) W2 + b2, position by position; returns (y, cache)."""
    z = x @ W1 + b1  # (B, T, d_ff)
    hidden = np.maximum(z, 0)  # (B, T, d_ff)
    return hidden @ W2 + b2, FeedForwardCache(x, z, hidden)  # (B, T, d)


def feed_forward_backward(dy, cache, W1, W2):
    """Gradient of the input and (dW1, db1, dW2, db2) from the gradient of the output."""
    x, z, hidden = cache
    dW2, db2 = flat(hidden).T @ flat(dy), dy.sum((0, 1))
    dz = (dy @ W2.T) * (z > 0)  # (B, T, d_ff): no gradient through the ReLU's flat side
    dW1, db1 = flat(x).T @ flat(dz), dz.sum((0, 1))
    return dz @ W1.T, (dW1, db1, dW2, db2)
