"""Softmax and scaled dot-product attention, in the arithmetic order of the articles.

Every listing computes ``scores = Q @ K^T``, then divides by ``sqrt(d_k)``, then
masks with ``-inf`` *before* the softmax, and the softmax subtracts the row
maximum before exponentiating. The functions below keep exactly that order, so
that the same inputs give the same bits as the articles' code.
"""

import numpy as np


def softmax(z, axis=-1):
    """Numerically stable softmax over ``axis`` (the keys axis by default)."""
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def scores(Q, K, scale=True):
    """Dot-product scores ``Q K^T``, divided by ``sqrt(d_k)`` when ``scale``.

    Q: (..., T_q, d_k), K: (..., T_k, d_k) -> (..., T_q, T_k)
    """
    s = Q @ np.swapaxes(K, -1, -2)
    if scale:
        s = s / np.sqrt(Q.shape[-1])
    return s


def apply_mask(s, allowed):
    """Set the scores of forbidden pairs to -inf (``allowed`` is True where a query may look)."""
    return np.where(allowed, s, -np.inf)


def attention(Q, K, V, allowed=None, scale=True):
    """softmax(Q K^T / sqrt(d_k)) V, with an optional boolean mask of allowed pairs.

    Q: (..., T_q, d_k), K: (..., T_k, d_k), V: (..., T_k, d_v)
    Returns the output (..., T_q, d_v) and the weights (..., T_q, T_k).
    """
    s = scores(Q, K, scale)
    if allowed is not None:
        s = apply_mask(s, allowed)
    w = softmax(s, axis=-1)  # over the KEYS
    return w @ V, w


def softmax_jacobian_norm(p):
    """Frobenius norm of diag(p) - p p^T for each row of p: (N, n) -> (N,)."""
    eye = np.eye(p.shape[1])
    J = np.einsum("ti,ij->tij", p, eye) - np.einsum("ti,tj->tij", p, p)
    return np.sqrt((J**2).sum(axis=(1, 2)))


def softmax_sensitivity(p):
    """Trace of the softmax Jacobian, sum_j p_j (1 - p_j), per row."""
    return (p * (1.0 - p)).sum(axis=-1)


def entropy(p):
    """Shannon entropy of each row, in nats (0 log 0 taken as 0)."""
    return -(p * np.log(p + 1e-300)).sum(axis=-1)
