"""The decoder's tensors: initialisation in the article's draw order, packing, counting.

Names follow the article: ``E`` (token embedding), ``P`` (learned positions),
per block ``b{l}.Wq``/``bq`` ... ``Wo``/``bo`` (projections and biases),
``g1``/``be1`` and ``g2``/``be2`` (the two layer norms), ``W1``/``b1`` and
``W2``/``b2`` (the feed-forward network), then ``gf``/``bef`` (final layer
norm) and ``Wout``/``bout`` (projection onto the vocabulary).

The draws come from one generator in this order: E, P, then per block Wq, Wk,
Wv, Wo, W1, W2, then Wout. Matrices are Gaussians divided by the square root of
their number of rows; biases start at 0, gains at 1.
"""

import numpy as np

PROJECTIONS = ("Wq", "Wk", "Wv", "Wo")


def bias_name(weight):
    """The bias that goes with a projection: Wq -> bq, ..., Wo -> bo."""
    return "b" + weight[1].lower()


def _scaled_normal(rng, rows, cols):
    """A (rows, cols) Gaussian divided by sqrt(rows): the product keeps unit variance."""
    return rng.normal(size=(rows, cols)) / np.sqrt(rows)


def init_params(vocab, d, layers, d_ff, t_max, rng):
    """All the decoder's tensors, name -> array, drawn from ``rng`` in the article's order."""
    p = {
        "E": 0.1 * rng.normal(size=(vocab, d)),  # (vocab, d) token embedding
        "P": 0.1 * rng.normal(size=(t_max, d)),  # (t_max, d) learned positions
    }
    for layer in range(layers):
        q = f"b{layer}."
        for w in PROJECTIONS:
            p[q + w] = _scaled_normal(rng, d, d)  # (d, d)
            p[q + bias_name(w)] = np.zeros(d)
        p[q + "g1"], p[q + "be1"] = np.ones(d), np.zeros(d)
        p[q + "g2"], p[q + "be2"] = np.ones(d), np.zeros(d)
        p[q + "W1"], p[q + "b1"] = _scaled_normal(rng, d, d_ff), np.zeros(d_ff)  # (d, d_ff)
        p[q + "W2"], p[q + "b2"] = _scaled_normal(rng, d_ff, d), np.zeros(d)  # (d_ff, d)
    p["gf"], p["bef"] = np.ones(d), np.zeros(d)
    p["Wout"], p["bout"] = _scaled_normal(rng, d, vocab), np.zeros(vocab)  # (d, vocab)
    return p


def packed(params):
    """The same tensors, copied into one contiguous vector: (vector, {name: view of it}).

    Element-wise updates (Adam) then run once over the vector instead of once per
    tensor; each element gets exactly the same operations, so the same bits.
    """
    flat = np.empty(count(params))
    views, start = {}, 0
    for name, value in params.items():
        view = flat[start:start + value.size].reshape(value.shape)
        view[...] = value
        views[name] = view
        start += value.size
    return flat, views


def count(params, prefix=""):
    """Sum of the actual sizes of the tensors whose name starts with ``prefix``."""
    return sum(v.size for k, v in params.items() if k.startswith(prefix))


def block_count(params, layer):
    """Parameters of block ``layer``, counted on the tensors."""
    return count(params, f"b{layer}.")


def block_formula(d):
    """The closed form of one block with d_ff = 4d: 12 d^2 + 13 d."""
    return 12 * d * d + 13 * d


# The article's breakdown of one block (d_ff = 4d): entry, tensors of block l, formula in d.
BLOCK_ROLES = (
    ("W_Q, W_K, W_V, W_O", ("Wq", "Wk", "Wv", "Wo"), "4d^2", lambda d: 4 * d * d),
    ("biases of the four projections", ("bq", "bk", "bv", "bo"), "4d", lambda d: 4 * d),
    ("W_1 (d -> 4d)", ("W1",), "4d^2", lambda d: 4 * d * d),
    ("b_1", ("b1",), "4d", lambda d: 4 * d),
    ("W_2 (4d -> d)", ("W2",), "4d^2", lambda d: 4 * d * d),
    ("b_2", ("b2",), "d", lambda d: d),
    ("two layer norms (gamma and beta)", ("g1", "be1", "g2", "be2"), "4d", lambda d: 4 * d),
)


def block_breakdown(params, layer, d):
    """[(entry, tensors, formula, formula value, actual count)] for block ``layer``."""
    q = f"b{layer}."
    return [
        (entry, names, formula, value(d), sum(params[q + n].size for n in names))
        for entry, names, formula, value in BLOCK_ROLES
    ]
