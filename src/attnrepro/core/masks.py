"""Boolean masks, True where a query may look at a key."""

import numpy as np


def causal(T):
    """(T, T) lower triangle: query i sees keys 0..i."""
    return np.tril(np.ones((T, T), dtype=bool))


def future(T):
    """(T, T) strict upper triangle: True where a query must NOT look (PyTorch's convention)."""
    return ~causal(T)


def padding(lengths, T):
    """(B, T) valid keys: key j of sequence b is real when j < lengths[b]."""
    return np.arange(T)[None, :] < np.asarray(lengths)[:, None]


def causal_and_padding(lengths, T):
    """(B, T, T) combination: causal AND valid key."""
    return causal(T)[None, :, :] & padding(lengths, T)[:, None, :]
