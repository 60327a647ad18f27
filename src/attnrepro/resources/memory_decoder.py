"""Peak memory of the jobs of article 001's NumPy decoder: its tensors, its passes, its tables.

The same kind of estimate as :mod:`attnrepro.resources.memory` (which dispatches to these functions):
the terms alive together at the job's peak, measured as the resident memory ``run(params)``
adds. A decoder job's peak is either a pass over its tokens (the caches of every layer and
the attention weights) or a few copies of its tensors: the training's copies (Adam, the
gradients), or the long ``parameters`` table that ``train`` writes and ``attention_map``
reads back, whose rows cost far more than the tensor's own 8 bytes.
"""

from attnrepro.resources.memory_terms import F64, largest, largest_value, term

# bytes per parameter while train builds its long parameters table: np.full(..., name,
# dtype=object) makes one str object per element (62 bytes with its slot), then the
# concatenated columns and the DataFrame (pandas' str column goes through Arrow)
TABLE_BUILT = 192  # (measured: 152 to 167, the tensors aside)
# bytes per parameter while attention_map reads that table back: Arrow's table, pandas'
# columns, the content hash's, groupby's sorted copies and the rebuilt tensors
TABLE_READ = 144  # (measured: 111, plus 12 MiB of Arrow's pool)


def sizes(vocab, length):
    """{key: power} of the keys a decoder's tensor count grows with (:func:`parameter_count`):
    ``vocab`` and ``length``, the case's keys its vocabulary and its positions come from."""
    return {"d": 2, "layers": 1, "d_ff": 1, vocab: 1, length: 1}


def parameter_count(vocab, d, layers, d_ff, t_max):
    """The decoder's tensors (attnrepro.model.params.init_params): embedding, positions,
    per layer four projections, two layer norms and the feed-forward network, final layer
    norm and output projection."""
    return (vocab + t_max) * d + layers * (4 * d * d + 2 * d * d_ff + 9 * d + d_ff) + (d + 1) * vocab + 2 * d


def _largest_tensor(vocab, d, d_ff, t_max):
    """Elements of the largest tensor: E or Wout (vocab, d), W1 or W2 (d, d_ff), P, a projection."""
    return max(vocab * d, d * d_ff, t_max * d, d * d)


def _pass(B, T, d, heads, layers, d_ff, vocab, with_backward, batch_key, length_key, vocab_key):
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


def train(p):
    """Three phases: the training steps, the evaluation by generation, the parameters table."""
    L, d, h, layers, d_ff = p["L"], p["d"], p["heads"], p["layers"], p["d_ff"]
    vocab, T = p["alphabet"] + 1, 2 * L
    count = parameter_count(vocab, d, layers, d_ff, T + 1)
    training = [term(12 * count * F64, "the decoder's tensors, their packed copy, the gradients, Adam's "
                     "moments and its update's temporaries: 12 copies float64", **sizes("alphabet", "L"))]
    training += _pass(p["batch"], T, d, h, layers, d_ff, vocab, True, "batch", "L", "alphabet")
    # generation keeps the previous step's caches (one token shorter) beside the current ones
    evaluation = [term(2 * count * F64, "the trained tensors and their packed copy float64",
                       **sizes("alphabet", "L"))]
    evaluation += _pass(p["eval_sequences"], T, d, h, layers, d_ff, vocab,
                        False,  # pragma: no mutate (equivalent: None is as false as False)
                        "eval_sequences", "L", "alphabet")
    table = [term(count * (F64 + TABLE_BUILT), "the trained tensors float64 and their long parameters "
                  "table: one row per parameter", **sizes("alphabet", "L"))]
    return largest(training, evaluation, table)


def _check(p, torch):
    """grad_check (``torch`` False) and autograd_check: the tensors and their gradients, the
    comparison of the largest tensor, one pass with its backward. autograd_check's torch graph
    comes after the NumPy pass has been freed: its attention weights (one per layer, three
    transients) land in the freed blocks or beside them, as the heap's layout falls."""
    n, T, d, h, layers, d_ff, vocab, t_max = (p[k] for k in ("sequences", "length", "d", "heads", "layers",
                                                             "d_ff", "vocab", "t_max"))
    count = parameter_count(vocab, d, layers, d_ff, t_max)
    largest_tensor = _largest_tensor(vocab, d, d_ff, t_max)
    # autograd_check: and torch's copies of both, which the heap places beside the freed NumPy
    # pass or not (measured: 4.5 to 5.5 copies in all)
    copies, what = (5, "the tensors, their gradients and torch's copies of both") if torch else (
        2, "the tensors and their gradients")
    # grad_check: |g|, its mask and np.argwhere's indices (two index arrays, their (size, 2)
    # copy); autograd_check: the perturbation's draw and |g - g_torch|
    checked = 3 if torch else 5
    return [
        term(copies * count * F64, f"{what} float64", **sizes("vocab", "t_max")),
        term(checked * largest_tensor * F64, f"the comparison of the largest tensor: {checked} x its size "
             "float64", d=2, vocab=1, d_ff=1, t_max=1),
    ] + _pass(n, T, d, h, layers, d_ff, vocab, True, "sequences", "length", "vocab") + ([
        term((layers + 3) * n * h * T * T * F64, "torch's attention weights (B, h, T, T) float64: one "
             "per layer, 3 transients", sequences=1, length=2, heads=1, layers=1),
    ] if torch else [])


def grad_check(p):
    return _check(p, torch=False)  # pragma: no mutate (equivalent: None is as false as False)


def autograd_check(p):
    return _check(p, torch=True)


def block_params(p):
    d = largest_value(p["widths"])
    count = parameter_count(p["vocab"], d, p["layers"], p["ff_factor"] * d, p["t_max"])
    return [
        term(count * F64, "one width's decoder tensors float64", widths=2, layers=1, ff_factor=1, vocab=1,
             t_max=1),
        # NumPy scales the temporary draw in place
        term(p["ff_factor"] * d * d * F64, "a draw: (d, d_ff) float64", widths=2, ff_factor=1),
    ]


def attention_map(p):
    """The trained decoder of the train case ``run``, read back from its parameters table, and
    one sequence through it. ``p["trained"]`` holds that case's parameters (the pre-flight adds
    them: :func:`attnrepro.dag.preflight.estimated_cases`); without them (a config without train, as
    ``python -m attnrepro run attention_map`` checks it), nothing: the model's sizes are unknown."""
    T, trained = len(p["sequence"]), p.get("trained")
    if not trained:
        return []
    layers, heads = trained["layers"], trained["heads"]
    count = parameter_count(trained["alphabet"] + 1, trained["d"], layers, trained["d_ff"],
                            2 * trained["L"] + 1)
    return [
        term(count * TABLE_READ, f"train case {p['run']}'s parameters table read back: one row per "
             "parameter", run=1),
        # np.meshgrid's three index arrays and the DataFrame of five columns
        term(layers * heads * T * T * 8 * F64, "the weights table: layers x heads x T x T rows",
             sequence=2),
    ]
