"""The toy decoder of 001's key-value cache listing: attention and residual only.

Each layer has four random (d, d) matrices (W_Q, W_K, W_V, W_O), Gaussian divided
by sqrt(d). Generation feeds the last output row back as the next input, after a
renormalisation to norm sqrt(d) that keeps the residual sums from growing (it is
not part of the cache mechanism). Two generations must agree to round-off:

- without cache, every step recomputes K and V of the whole prefix under a causal mask;
- with cache, every step computes q, k, v of the new row only and appends k, v.
"""

import numpy as np

from attnrepro.core.attention import attention
from attnrepro.core.heads import merge, split
from attnrepro.core.masks import causal


def draw_weights(rng, layers, d):
    """[(W_Q, W_K, W_V, W_O)] per layer, each (d, d), drawn in that order, layer by layer."""
    return [tuple(rng.normal(size=(d, d)) / np.sqrt(d) for _ in range(4)) for _ in range(layers)]


def heads_of(M, h):
    """(T, d) -> (h, T, d/h)."""
    return split(M[None], h)[0]


def forward_prefix(X, weights, h):
    """No cache: all layers over the whole prefix X (T, d) -> (T, d)."""
    for W_Q, W_K, W_V, W_O in weights:
        Q, K, V = (heads_of(X @ W, h) for W in (W_Q, W_K, W_V))  # (h, T, d/h) each
        out, _ = attention(Q, K, V, allowed=causal(X.shape[0]))  # (h, T, d/h)
        X = X + merge(out[None])[0] @ W_O  # (T, d)
    return X


def forward_token(x, cache, weights, h):
    """With cache: one new row x ((d,) or (1, d)) through all layers -> (1, d).

    ``cache[l]`` holds the keys and values of layer l, (h, t, d/h) each, or None
    before the first row; the new row's k and v are appended to it.
    """
    d = x.shape[-1]
    for layer, (W_Q, W_K, W_V, W_O) in enumerate(weights):
        q, k, v = ((x @ W).reshape(h, 1, d // h) for W in (W_Q, W_K, W_V))
        K_old, V_old = cache[layer]
        K = k if K_old is None else np.concatenate([K_old, k], axis=1)  # (h, t, d/h)
        V = v if V_old is None else np.concatenate([V_old, v], axis=1)
        cache[layer] = [K, V]
        out, _ = attention(q, K, V)  # (h, 1, d/h): the newest row may see every key
        x = x + out.reshape(1, d) @ W_O
    return x


def renormalise(x):
    """Rescale each row to norm sqrt(d)."""
    return x / np.linalg.norm(x, axis=-1, keepdims=True) * np.sqrt(x.shape[-1])


def generate_without_cache(prompt, steps, weights, h):
    """(P, d) prompt -> (P + steps, d): each new row from a full forward pass."""
    X = prompt.copy()
    for _ in range(steps):
        X = np.vstack([X, renormalise(forward_prefix(X, weights, h)[-1])])
    return X


def generate_with_cache(prompt, steps, weights, h):
    """(P, d) prompt -> (P + steps, d): the prompt but its last row fills the cache first."""
    cache = [[None, None] for _ in weights]
    for row in prompt[:-1]:
        forward_token(row, cache, weights, h)
    x, rows = prompt[-1], list(prompt)
    for _ in range(steps):
        x = renormalise(forward_token(x, cache, weights, h)[0])
        rows.append(x)
    return np.array(rows)


def cache_bytes(layers, kv_heads, d_head, T, batch, bytes_per_value):
    """Memory of the key-value cache: K and V, per layer, per key-value head, d_head values
    for each of T positions, per sequence of the batch, times the bytes of the type."""
    return 2 * layers * kv_heads * d_head * T * batch * bytes_per_value
