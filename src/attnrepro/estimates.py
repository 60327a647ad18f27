"""Each job's peak memory, estimated from its parameters: one small function per experiment.

Pure Python, no numerical import (read by :mod:`attnrepro.preflight` while Snakemake builds
the DAG). One function per experiment lists the arrays that are alive together at the
job's peak, each as a *term*: its bytes, what it is (``scores (B, T, T) float64``) and
the keys it grows with. The estimate of a job is the sum of its terms (the largest
phase, when the job has phases that free each other's arrays).

The estimates count NumPy buffers and Python rows, as ``tracemalloc`` sees them
(tests/test_preflight.py checks one against a measured peak), plus torch's own
buffers where a job calls torch; not the interpreter and the libraries (a few hundred
MiB), which the default limit, 80% of the machine's memory, leaves room for.
"""

F64, F32, BOOL = 8, 4, 1
ROW = 400  # bytes per row of a table built from Python dicts, DataFrame included (measured: 270-350)
GIB = 2**30


def _term(nbytes, what, **drivers):
    """Arrays alive together: ``nbytes`` in all; ``drivers`` {key: power} of the case's keys."""
    return (nbytes, what, drivers)


def total(terms):
    """Bytes of a list of terms."""
    return sum(t[0] for t in terms)


def _largest(*phases):
    """The phase (list of terms) with the most bytes: phases whose arrays do not coexist."""
    return max(phases, key=total)


def _max(value):
    return max(value) if isinstance(value, list) else value


# --- one function per experiment: params of one case -> [term] --------------------------

def _attention_vs_sdpa(p):
    n, d_k, d_v = p["n"], p["d_k"], p["d_v"]
    return [
        _term(4 * n * n * F64, "scores, shifted scores, exponentials, weights: 4 x (n, n) float64", n=2),
        _term(n * n * ROW, "weights table: n x n rows", n=2),  # one dict per (query, key)
        _term((2 * n * d_k + 2 * n * d_v) * F64, "Q, K (n, d_k), V and the output (n, d_v) float64",
              n=1, d_k=1, d_v=1),
    ]


def _scale_sweep(p):
    t, n, d_k = p["trials"], p["n_keys"], _max(p["d_k"])
    draw = [_term(2 * t * n * d_k * F64, "keys and products: 2 x (trials, n_keys, d_k) float64",
                  trials=1, n_keys=1, d_k=1)]
    # softmax_jacobian_norm: two einsums, their difference and its square
    jacobian = [_term(4 * t * n * n * F64, "softmax Jacobians: 4 x (trials, n_keys, n_keys) float64",
                      trials=1, n_keys=2)]
    return _largest(draw, jacobian)


def _torch_mha(p, d_key="d", n_key="n", h_key="h"):
    """float64 MultiheadAttention(d, h) on x (1, n, d): weights, inputs, per-head scores."""
    d, n, h = p[d_key], p[n_key], p[h_key]
    return [
        _term(2 * 4 * d * d * F64, "MultiheadAttention weights and a copy: 2 x (4d, d) float64",
              **{d_key: 2}),
        _term(2 * 4 * h * n * n * F64, "scores of torch and of the hand-written heads: 8 x (h, n, n) float64",
              **{n_key: 2, h_key: 1}),
        _term(8 * n * d * F64, "inputs, projections and outputs: 8 x (n, d) float64", **{n_key: 1, d_key: 1}),
    ]


def _multihead_vs_torch(p):
    d = p["d"]
    return _torch_mha(p) + [
        _term(2 * 4 * d * (d + 1) * F32, "a float32 MultiheadAttention per param_heads: 2 x (4d, d)", d=2),
    ]


def _permutation_position(p):
    d, length = p["d"], p["table_length"]
    return _torch_mha(p) + [
        _term(length * d * (F64 + ROW), "encoding table: table_length x d rows", table_length=1, d=1),
    ]


def _causal_change(p):
    return _torch_mha(p)


def _causal_float64(rows, d_k, row_key, d_key):
    """causal_timing's attention on (rows, d_k): 4 score-sized float64 arrays and the mask."""
    return [
        _term(4 * rows * rows * F64 + 2 * rows * rows * BOOL,
              f"causal attention: 4 x ({row_key}, {row_key}) float64 and its mask", **{row_key: 2}),
        _term(4 * rows * d_k * F64, f"Q, K, V and the output ({row_key}, {d_key}) float64",
              **{row_key: 1, d_key: 1}),
    ]


def _quadratic_cost(p):
    n, d = _max(p["n"]), p["d"]
    # heads and layers only enter the formula of the kept score matrices: never allocated
    return [
        _term(2 * n * n * F32, "scores Q K^T and scores / sqrt(d): 2 x (n, n) float32", n=2),
        _term(3 * n * d * F32 + n * d * F64, "Q, K, V (n, d) float32 and one float64 draw", n=1, d=1),
    ]


def _score_memory(p):
    n, d = _max(p["n"]), p["d"]
    return _causal_float64(n, d, "n", "d") + [
        _term(6 * n * d * F64, "Q, K, V drawn and cast: 6 x (n, d) float64", n=1, d=1),
    ]


def _batched_attention(p):
    B, T, d, d_k = p["B"], p["T"], p["d"], p["d_k"]
    return [
        _term(4 * B * T * T * F64, "scores, shifted scores, exponentials, weights: 4 x (B, T, T) float64",
              B=1, T=2),
        _term((B * T * d + 4 * B * T * d_k) * F64, "X (B, T, d), Q, K, V, output (B, T, d_k) float64",
              B=1, T=1, d=1, d_k=1),
        _term(B * T * ROW, "row_sums table: B x T rows", B=1, T=1),
    ]


def _sdpa_causal(p):
    B, T, d_k = p["B"], p["T"], p["d_k"]
    # the NumPy attention's arrays are freed before torch computes its own (B, T, T) scores
    return [
        _term(4 * B * T * T * F64 + 2 * T * T * BOOL,
              "scores, masked scores, exponentials, weights: 4 x (B, T, T) float64", B=1, T=2),
        _term(6 * B * T * d_k * F64, "Q, K, V and two outputs (B, T, d_k) float64", B=1, T=1, d_k=1),
    ]


def _scale_table(p):
    r, T, d_k = p["repetitions"], p["T"], p["d_k"]
    return [
        # raw, scaled and weights stay; the softmax, var and entropy add up to three temporaries
        _term(6 * r * T * T * F64, "scores: 6 x (repetitions, T, T) float64", repetitions=1, T=2),
        _term(2 * r * T * d_k * F64, "Q, K (repetitions, T, d_k) float64", repetitions=1, T=1, d_k=1),
    ]


def _mask_before_after(p):
    T, B = p["T"], len(p["lengths"])
    return [
        _term((1 + B) * T * T * ROW, "weights and combined tables: (1 + len(lengths)) x T x T rows", T=2),
        _term(8 * T * T * F64, "scores, before, after and their temporaries: 8 x (T, T) float64", T=2),
    ]


def _multihead_shapes(p):
    B, T, d = p["B"], p["T"], p["d"]
    h = max(_max(p["heads"]), p["permutation_heads"])
    return [
        # the previous head count's weights stay alive while the next one's are computed
        _term(5 * B * h * T * T * F64, "scores, shifted scores, exponentials, weights and the previous "
              "weights: 5 x (B, h, T, T) float64", B=1, T=2, heads=1),
        _term(10 * B * T * d * F64, "X, Q, K, V, contexts, outputs: 10 x (B, T, d) float64", B=1, T=1, d=1),
        _term(4 * d * d * F64, "W_Q, W_K, W_V, W_O (d, d) float64", d=2),
    ]


def _decoder_parameters(sizes, copies, what, drivers):
    """``copies`` copies of the tensors of a decoder of ``sizes`` (vocab, d, layers, d_ff, t_max), float64."""
    vocab, d, layers, d_ff, t_max = sizes
    count = (vocab + t_max) * d + layers * (4 * d * d + 2 * d * d_ff + 11 * d + d_ff) + d * vocab + 3 * d
    return _term(copies * count * F64, what, **drivers)


def _decoder_pass(B, T, d, heads, layers, d_ff, vocab, with_backward, batch_key, length_key, vocab_key):
    """One forward pass of the decoder on (B, T) tokens, keeping every layer's cache, and
    the transients of one layer's attention (and of its backward pass)."""
    transients = 8 if with_backward else 4
    drivers = {batch_key: 1, length_key: 2, "heads": 1}
    return [
        _term((layers + transients) * B * heads * T * T * F64,
              f"attention weights (B, h, T, T) float64: one per layer, {transients} transients",
              **drivers, layers=1),
        _term(layers * (12 * B * T * d + 4 * B * T * d_ff) * F64,
              "each layer's cache: 12 x (B, T, d) and 4 x (B, T, d_ff) float64",
              **{batch_key: 1, length_key: 1, "layers": 1, "d": 1, "d_ff": 1}),
        _term(5 * B * T * vocab * F64, "logits, softmax and gradient: 5 x (B, T, vocab) float64",
              **{batch_key: 1, length_key: 1, vocab_key: 1}),
    ]


def _train(p):
    L, d, h, layers, d_ff = p["L"], p["d"], p["heads"], p["layers"], p["d_ff"]
    vocab, T = p["alphabet"] + 1, 2 * L
    # tensors, packed tensors, gradients, Adam's two moments and its temporaries; the long table
    params = [_decoder_parameters((vocab, d, layers, d_ff, T + 1), 12,
                                  "the decoder's tensors: 12 copies float64 (Adam, gradients, table)",
                                  {"d": 2, "layers": 1, "d_ff": 1})]
    step = _decoder_pass(p["batch"], T, d, h, layers, d_ff, vocab, True, "batch", "L", "alphabet")
    evaluation = _decoder_pass(p["eval_sequences"], T, d, h, layers, d_ff, vocab, False,
                               "eval_sequences", "L", "alphabet")
    return params + _largest(step, evaluation)


def _decoder_check(p, torch_copies):
    n, T, d, h, layers, d_ff, vocab = (p[k] for k in ("sequences", "length", "d", "heads", "layers",
                                                       "d_ff", "vocab"))
    params = [_decoder_parameters((vocab, d, layers, d_ff, p["t_max"]), 4 + torch_copies,
                                  "the decoder's tensors and gradients float64",
                                  {"d": 2, "layers": 1, "d_ff": 1})]
    one = _decoder_pass(n, T, d, h, layers, d_ff, vocab, True, "sequences", "length", "vocab")
    return params + [(b * (1 + torch_copies), what, drivers) for b, what, drivers in one]


def _grad_check(p):
    return _decoder_check(p, 0)


def _autograd_check(p):
    return _decoder_check(p, 2)  # torch's graph keeps about as much again, and its gradients


def _block_params(p):
    d = _max(p["widths"])
    return [
        _decoder_parameters((p["vocab"], d, p["layers"], p["ff_factor"] * d, p["t_max"]), 1,
                            "one width's decoder tensors float64", {"widths": 2, "layers": 1}),
        _term(2 * p["ff_factor"] * d * d * F64, "a draw and its scaled copy: 2 x (d, d_ff) float64",
              widths=2),
    ]


def _timing_of_causal(p):
    T, d_k, trials = _max(p["T"]), p["d_k"], p["trials"]
    return _causal_float64(T, d_k, "T", "d_k") + [
        _term(sum(trials) * ROW, "repeats table: one row per trial", trials=1),
    ]


def _timing_exponent(p):
    lengths, d_k, repeats, draws = p["n"], p["d_k"], p["repeats"], p["bootstrap"]
    inputs = [_term(3 * sum(lengths) * d_k * F64, "Q, K, V of every n: 3 x (n, d_k) float64", n=1, d_k=1)]
    timing = _causal_float64(max(lengths), d_k, "n", "d_k")
    bootstrap = [
        _term(3 * draws * repeats * len(lengths) * F64,
              "resampled sweeps: 3 x (bootstrap, repeats, len(n)) float64", bootstrap=1, repeats=1),
        _term(repeats * len(lengths) * ROW, "repeats table: repeats x len(n) rows", repeats=1),
    ]
    return inputs + _largest(timing, bootstrap)


def _kv(p):
    layers, h, d = p["layers"], p["heads"], p["d"]
    T = p["prompt"] + _max(p["generated"])
    return [
        _term(4 * layers * d * d * F64, "W_Q, W_K, W_V, W_O per layer: 4 x layers x (d, d) float64",
              layers=1, d=2),
        _term(4 * h * T * T * F64 + 2 * T * T * BOOL,
              "attention over the prefix without cache: 4 x (heads, T, T) float64, T = prompt + generated",
              heads=1, prompt=2, generated=2),
        _term((4 * layers + 8) * T * d * F64,
              "cache (with a copy) and prefix: (4 layers + 8) x (T, d) float64",
              layers=1, d=1, prompt=1, generated=1),
    ]


def _tokens(p):
    n, d, d_k = len(p["tokens"]), p["d_model"], p["d_k"]
    return [
        _term(n * n * (4 * F64 + ROW), "weights: 4 x (n, n) float64 and a table of n x n rows", tokens=2),
        _term((n * d + 3 * d * d_k + 4 * n * d_k) * F64, "X (n, d_model), W, Q, K, V (n, d_k) float64",
              tokens=1, d_model=1, d_k=1),
    ]


def _saturation(p):
    return [_term(2 * p["keys"] * _max(p["d"]) * F64, "keys and products (keys, d) float64", keys=1, d=1)]


def _order_blindness(p):
    n, d, d_k = p["n"], p["d"], p["d_k"]
    return [
        _term(4 * n * n * F64, "scores, shifted scores, exponentials, weights: 4 x (n, n) float64", n=2),
        _term(n * d * (4 * F64 + ROW), "X, X + PE, encoding (n, d) float64 and its table", n=1, d=1),
        _term((3 * d * d_k + 8 * n * d_k) * F64, "W (d, d_k), Q, K, V, outputs (n, d_k) float64",
              n=1, d=1, d_k=1),
    ]


def _torch_modules(p):
    n, d_k, B, T, d, h, d_ff = (p[k] for k in ("n", "d_k", "batch", "tokens", "d_model", "heads", "d_ff"))
    return [
        _term(8 * n * n * F32, "SDPA and the formula: 8 x (n, n) float32", n=2),
        _term(8 * B * h * T * T * F32,
              "MultiheadAttention scores: 8 x (batch, heads, tokens, tokens) float32",
              batch=1, heads=1, tokens=2),
        _term(2 * (4 * d * d + 2 * d * d_ff) * F32, "module weights and gradients float32",
              d_model=2, d_ff=1),
        _term(8 * B * T * (d + d_ff) * F32, "activations: 8 x (batch, tokens, d_model + d_ff) float32",
              batch=1, tokens=1, d_model=1, d_ff=1),
    ]


def _two_heads(p):
    n, d, d_k, heads = p["n"], p["d_model"], p["d_k"], p["heads"]
    return [
        _term(heads * n * n * ROW + 4 * n * n * F64,
              "weights table: heads x n x n rows, one head's 4 x (n, n) float64",
              heads=1, n=2),
        _term((n * d + heads * (3 * d * d_k + 5 * n * d_k)) * F64, "X, W and outputs of every head float64",
              n=1, d_model=1, d_k=1, heads=1),
    ]


def _nothing(p):
    return []


def _default(p):
    """An experiment without a function of its own: four (m, m) float64 arrays, m its largest size."""
    sizes = {k: _max(v) for k, v in p.items() if "seed" not in k and isinstance(_max(v), int)
             and not isinstance(_max(v), bool)}
    if not sizes:
        return []
    key = max(sizes, key=sizes.get)
    return [_term(4 * sizes[key] ** 2 * F64, f"4 x ({key}, {key}) float64 (no estimate of its own)",
                  **{key: 2})]


ESTIMATES = {
    "attention_vs_sdpa": _attention_vs_sdpa,
    "scale_sweep": _scale_sweep,
    "multihead_vs_torch": _multihead_vs_torch,
    "permutation_position": _permutation_position,
    "causal_change": _causal_change,
    "quadratic_cost": _quadratic_cost,
    "score_memory": _score_memory,
    "batched_attention": _batched_attention,
    "sdpa_causal": _sdpa_causal,
    "scale_table": _scale_table,
    "mask_before_after": _mask_before_after,
    "multihead_shapes": _multihead_shapes,
    "exercises": _nothing,  # closed-form counts: its T, d, batch are formula inputs, never allocated
    "block_params": _block_params,
    "grad_check": _grad_check,
    "autograd_check": _autograd_check,
    "train": _train,
    "attention_map": _nothing,  # one sequence of at most 2L + 1 tokens through a trained model of train
    "causal_timing": _timing_of_causal,
    "timing_exponent": _timing_exponent,
    "kv_cache": _kv,  # the realistic block is a formula, never allocated
    "kv_speedup": _kv,
    "self_attention_tokens": _tokens,
    "causal_weights": _tokens,
    "saturation": _saturation,
    "order_blindness": _order_blindness,
    "torch_modules": _torch_modules,
    "two_heads": _two_heads,
}


def terms(experiment_id, params):
    """[(bytes, what, {key: power})] of one case: the arrays alive at its peak."""
    return ESTIMATES.get(experiment_id, _default)(params)


def estimate(experiment_id, params):
    """Estimated peak bytes of one job (one case's parameters)."""
    return total(terms(experiment_id, params))
