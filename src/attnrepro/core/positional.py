"""The sinusoidal positional encoding of Vaswani et al. (section 3.5)."""

import numpy as np


def frequencies(d):
    """omega_i = 1 / 10000^(2i/d) for the d/2 (sin, cos) pairs."""
    i = np.arange(d // 2)
    return 1 / 10000 ** (2 * i / d)


def sinusoidal(n, d):
    """(n, d) table: PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...)."""
    pos = np.arange(n)[:, None]
    i = np.arange(d // 2)[None, :]
    angles = pos / 10000 ** (2 * i / d)
    pe = np.zeros((n, d))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe


def rotation(omega, k):
    """The 2x2 matrix R_k with PE(pos + k) = R_k PE(pos) for the pair of frequency omega."""
    c, s = np.cos(omega * k), np.sin(omega * k)
    return np.array([[c, s], [-s, c]])
