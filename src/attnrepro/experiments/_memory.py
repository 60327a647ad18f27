"""The terms of a memory estimate, the sizes they are made of, and the ones that several
experiments share (torch's MultiheadAttention, the NumPy decoder of article 001).

Each experiment module estimates its job's peak memory in ``peak_memory(params)``: the arrays
alive together at the peak, as a list of *terms*. A term is ``(bytes, what, drivers)``: arrays
(or rows) alive together, what they are (``scores (B, T, T) float64``) and ``drivers``, {key:
power} of the case's keys it grows with (``{"B": 1, "T": 2}``), from which
:mod:`attnrepro.dag.preflight` names the key to blame. :mod:`attnrepro.resources.memory` adds the
allowance and says what is estimated. Pure Python: Snakemake runs these functions while it builds
the DAG (:mod:`attnrepro.experiments.declared` reads them without importing NumPy).
"""

F64, F32, BOOL = 8, 4, 1
# bytes per row of a table built from Python dicts of up to 5 keys, while the DataFrame is built:
# the list's slot, the dict (192), its float and large int objects, the object and typed columns
ROW = 400  # (measured: 300-400)
MIB, GIB = 2**20, 2**30


def term(nbytes, what, **drivers):
    """Arrays alive together: ``nbytes`` in all; ``drivers`` {key: power} of the case's keys."""
    return (nbytes, what, drivers)


def total(terms):
    """Bytes of a list of terms."""
    return sum(t[0] for t in terms)


def largest(*phases):
    """The phase (list of terms) with the most bytes: phases whose arrays do not coexist."""
    return max(phases, key=total)


def largest_value(value):
    """The largest of a list key's values (a size swept over), or the value itself."""
    return max(value) if isinstance(value, list) else value


# --- torch's MultiheadAttention (permutation_position, causal_change) -------------------------

def torch_sdpa_mha(p):
    """float64 MultiheadAttention(d, h) on x (1, n, d) without weights: torch's fused
    scaled_dot_product_attention keeps no (n, n) scores; inputs, packed projections, their
    contiguous copy and the outputs of two calls stay (measured: 14 to 24 (n, d) float64 at
    n = 1000 to 4000, d = 64 to 256)."""
    d, n = p["d"], p["n"]
    return [
        term(2 * 4 * d * d * F64, "MultiheadAttention weights and a copy: 2 x (4d, d) float64", d=2),
        term(24 * n * d * F64, "inputs, projections and outputs: 24 x (n, d) float64", n=1, d=1),
    ]


# --- article 001's NumPy decoder (block_params, grad_check, autograd_check, train, attention_map) --
# A decoder job's peak is either a pass over its tokens (the caches of every layer and the attention
# weights) or a few copies of its tensors: the training's copies (Adam, the gradients), or the long
# ``parameters`` table that ``train`` writes and ``attention_map`` reads back, whose rows cost far
# more than the tensor's own 8 bytes.

def sizes(vocab, length):
    """{key: power} of the keys a decoder's tensor count grows with (:func:`parameter_count`):
    ``vocab`` and ``length``, the case's keys its vocabulary and its positions come from."""
    return {"d": 2, "layers": 1, "d_ff": 1, vocab: 1, length: 1}


def parameter_count(vocab, d, layers, d_ff, t_max):
    """The decoder's tensors (attnrepro.model.params.init_params): embedding, positions,
    per layer four projections, two layer norms and the feed-forward network, final layer
    norm and output projection."""
    return (vocab + t_max) * d + layers * (4 * d * d + 2 * d * d_ff + 9 * d + d_ff) + (d + 1) * vocab + 2 * d


def decoder_pass(B, T, d, heads, layers, d_ff, vocab, with_backward, batch_key, length_key, vocab_key):
    """One forward pass of the decoder on (B, T) tokens, keeping every layer's cache, and the
    transients of one layer's attention: the softmax's four (B, h, T, T) arrays, and in the
    backward pass dP, dP * P and dS beside every layer's weights (measured: 5 with backward)."""
    transients = 5 if with_backward else 4
    return [
        term((layers + transients) * B * heads * T * T * F64,
             f"attention weights (B, h, T, T) float64: one per layer, {transients} transients",
             **{batch_key: 1, length_key: 2, "heads": 1, "layers": 1}),
        term(layers * (12 * B * T * d + 4 * B * T * d_ff) * F64,
             "each layer's cache: 12 x (B, T, d) and 4 x (B, T, d_ff) float64",
             **{batch_key: 1, length_key: 1, "layers": 1, "d": 1, "d_ff": 1}),
        term(5 * B * T * vocab * F64, "logits, softmax and gradient: 5 x (B, T, vocab) float64",
             **{batch_key: 1, length_key: 1, vocab_key: 1}),
    ]
