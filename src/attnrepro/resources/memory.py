"""Each job's peak memory, estimated from its parameters: one small function per experiment.

Pure Python, no numerical import (read by :mod:`attnrepro.dag.preflight` while Snakemake builds
the DAG). One function per experiment lists the arrays that are alive together at the
job's peak, each as a *term*: its bytes, what it is (``scores (B, T, T) float64``) and
the keys it grows with. The estimate of a job is the sum of its terms (the largest
phase, when the job has phases that free each other's arrays), plus a fixed
:data:`ALLOWANCE` for what no term counts.

What is estimated is the resident memory that ``run(params)`` adds to the process:
NumPy's and torch's buffers, Python rows and tables, and the freed blocks the heap keeps
where a job measurably leaves holes in it (tests/test_estimates.py measures every
experiment's peak resident memory and checks each estimate against it). Not counted: the
interpreter and the libraries (a few hundred MiB), and the writing of the tables to
Parquet after ``run`` (Arrow's buffers: 10 to 90 MiB measured, for tables of 10 thousand
to a million rows; per row, less than the run spent building the table), which the default
limit, 80% of the machine's memory, leaves room for.
"""

from attnrepro.resources import memory_decoder as decoder
from attnrepro.resources.memory_terms import (  # noqa: F401  (GIB, MIB, total: the module's interface)
    BOOL, F32, F64, GIB, MIB, ROW, largest, largest_value, term, total,
)

# what no term counts: small arrays and objects, the allocator's granularity, torch's kernel
# buffers (a few MiB in the measured peaks beyond the counted arrays)
ALLOWANCE = 8 * MIB


# --- one function per experiment: params of one case -> [term] --------------------------

def _attention_vs_sdpa(p):
    n, d_k, d_v = p["n"], p["d_k"], p["d_v"]
    return [
        term((2 * n * d_k + 2 * n * d_v) * F64, "Q, K (n, d_k), V and the output (n, d_v) float64",
             n=1, d_k=1, d_v=1),
        # then one dict per (query, key), while the weights stay: more than the attention's four
        # (n, n) float64 (scores, shifted scores, exponentials, weights), freed before
        term(n * n * (ROW + F64), "weights (n, n) float64 and their table: n x n rows", n=2),
    ]


def _scale_sweep(p):
    t, n, d_k = p["trials"], p["n_keys"], largest_value(p["d_k"])
    draw = [term((2 * n + 1) * t * d_k * F64, "queries (trials, 1, d_k), keys and products: "
                 "2 x (trials, n_keys, d_k) float64", trials=1, n_keys=1, d_k=1)]
    # softmax_jacobian_norm: two einsums and their difference
    jacobian = [term(3 * t * n * n * F64, "softmax Jacobians: 3 x (trials, n_keys, n_keys) float64",
                     trials=1, n_keys=2)]
    return largest(draw, jacobian)


def _multihead_vs_torch(p):
    """float64 MultiheadAttention(d, h) on x (1, n, d) with its weights (torch's scores and
    softmax: 2 h (n, n)), then the heads by hand: torch's weights, the hand-written ones and
    their stack (3 h), one head's softmax (4); the heap keeps more (measured: up to 5 h + 1)."""
    d, n, h = p["d"], p["n"], p["h"]
    return [
        term(2 * 4 * d * d * F64, "MultiheadAttention weights and a copy: 2 x (4d, d) float64", d=2),
        term(2 * 4 * h * n * n * F64, "scores of torch and of the hand-written heads: 8 x (h, n, n) float64",
             n=2, h=1),
        term(8 * n * d * F64, "inputs, projections and outputs: 8 x (n, d) float64", n=1, d=1),
        term(2 * 4 * d * (d + 1) * F32, "a float32 MultiheadAttention per param_heads: 2 x (4d, d)", d=2),
    ]


def _torch_sdpa_mha(p):
    """float64 MultiheadAttention(d, h) on x (1, n, d) without weights: torch's fused
    scaled_dot_product_attention keeps no (n, n) scores; inputs, packed projections, their
    contiguous copy and the outputs of two calls stay (measured: 14 to 24 (n, d) float64 at
    n = 1000 to 4000, d = 64 to 256)."""
    d, n = p["d"], p["n"]
    return [
        term(2 * 4 * d * d * F64, "MultiheadAttention weights and a copy: 2 x (4d, d) float64", d=2),
        term(24 * n * d * F64, "inputs, projections and outputs: 24 x (n, d) float64", n=1, d=1),
    ]


def _permutation_position(p):
    d, length = p["d"], p["table_length"]
    return _torch_sdpa_mha(p) + [
        term(length * d * (2 * F64 + ROW), "encoding (table_length, d) float64, its angles and its "
             "table: table_length x d rows", table_length=1, d=1),
    ]


def _causal_change(p):
    n = p["n"]
    return _torch_sdpa_mha(p) + [
        term(n * n * (F64 + 2 * BOOL), "causal mask (n, n) bool, its inverse and torch's float64 copy", n=2),
    ]


def _causal_float64(rows, d_k, row_key, d_key):
    """causal_timing's attention on (rows, d_k): 4 score-sized float64 arrays and the mask
    (np.tril makes it from two more)."""
    return [
        term(4 * rows * rows * F64 + 3 * rows * rows * BOOL,
             f"causal attention: 4 x ({row_key}, {row_key}) float64 and its mask", **{row_key: 2}),
        term(4 * rows * d_k * F64, f"Q, K, V and the output ({row_key}, {d_key}) float64",
             **{row_key: 1, d_key: 1}),
    ]


def _quadratic_cost(p):
    n, d = largest_value(p["n"]), p["d"]
    # heads and layers only enter the formula of the kept score matrices: never allocated
    return [
        # NumPy divides the temporary product in place, then the softmax runs in place
        term(n * n * F32, "scores Q K^T / sqrt(d), normalised in place: (n, n) float32", n=2),
        term(3 * n * d * F32 + n * d * F64, "Q, K, V (n, d) float32 and one float64 draw", n=1, d=1),
    ]


def _score_memory(p):
    n, d = largest_value(p["n"]), p["d"]
    return _causal_float64(n, d, "n", "d") + [
        term(6 * n * d * F64 + 3 * n * d * F32, "Q, K, V drawn and cast: 6 x (n, d) float64, 3 float32",
             n=1, d=1),
    ]


def _batched_attention(p):
    B, T, d, d_k = p["B"], p["T"], p["d"], p["d_k"]
    return [
        term(4 * B * T * T * F64, "scores, shifted scores, exponentials, weights: 4 x (B, T, T) float64",
             B=1, T=2),
        term((B * T * d + 4 * B * T * d_k) * F64, "X (B, T, d), Q, K, V, output (B, T, d_k) float64",
             B=1, T=1, d=1, d_k=1),
        term(B * T * ROW, "row_sums table: B x T rows", B=1, T=1),
    ]


def _sdpa_causal(p):
    B, T, d_k = p["B"], p["T"], p["d_k"]
    # two NumPy attentions, each 4 (B, T, T) at its softmax, then torch's SDPA, which needs
    # fewer; the heap may keep the first one's blocks, too fragmented for the second (measured:
    # 5 to 7 in all, as the heap's layout falls)
    return [
        term(8 * B * T * T * F64 + 3 * T * T * BOOL,
             "scores, masked scores, exponentials, weights of two attentions: 8 x (B, T, T) float64",
             B=1, T=2),
        term(6 * B * T * d_k * F64, "Q, K, V and two outputs (B, T, d_k) float64", B=1, T=1, d_k=1),
    ]


def _scale_table(p):
    r, T, d_k = p["repetitions"], p["T"], p["d_k"]
    # at the softmax: the raw scores, the scaled ones (scaled cases), shifted, exponentials, weights
    kept = 5 if p["scaled"] else 4
    return [
        term(kept * r * T * T * F64, f"scores: {kept} x (repetitions, T, T) float64", repetitions=1, T=2),
        term(2 * r * T * d_k * F64, "Q, K (repetitions, T, d_k) float64", repetitions=1, T=1, d_k=1),
    ]


def _mask_before_after(p):
    T, B = p["T"], len(p["lengths"])
    # the long tables are built one at a time; the weights table (5 columns) stays
    return [
        term(B * T * T * ROW, "the rows of the combined table: len(lengths) x T x T", T=2),
        term(T * T * (3 * F64 + BOOL + 5 * 8), "scores, before, after (T, T) float64, the mask and "
             "the weights table", T=2),
    ]


def _multihead_shapes(p):
    B, T, d = p["B"], p["T"], p["d"]
    h = max(largest_value(p["heads"]), p["permutation_heads"])
    return [
        # the previous head count's weights stay alive while the next one's are computed
        term(5 * B * h * T * T * F64, "scores, shifted scores, exponentials, weights and the previous "
             "weights: 5 x (B, h, T, T) float64", B=1, T=2, heads=1, permutation_heads=1),
        term(10 * B * T * d * F64, "X, Q, K, V, contexts, outputs: 10 x (B, T, d) float64", B=1, T=1, d=1),
        term(4 * d * d * F64, "W_Q, W_K, W_V, W_O (d, d) float64", d=2),
    ]


def _timing_of_causal(p):
    T, d_k, trials = largest_value(p["T"]), p["d_k"], p["trials"]
    return _causal_float64(T, d_k, "T", "d_k") + [
        term(sum(trials) * ROW, "repeats table: one row per trial", trials=1),
    ]


def _timing_exponent(p):
    lengths, d_k, repeats, draws = p["n"], p["d_k"], p["repeats"], p["bootstrap"]
    inputs = [term(3 * sum(lengths) * d_k * F64, "Q, K, V of every n: 3 x (n, d_k) float64", n=1, d_k=1)]
    timing = _causal_float64(max(lengths), d_k, "n", "d_k")
    bootstrap = [
        term(3 * draws * repeats * len(lengths) * F64,
             "resampled sweeps: 3 x (bootstrap, repeats, len(n)) float64", bootstrap=1, repeats=1),
        term(repeats * len(lengths) * ROW, "repeats table: repeats x len(n) rows", repeats=1),
    ]
    return inputs + largest(timing, bootstrap)


def _kv(p):
    layers, h, d = p["layers"], p["heads"], p["d"]
    T = p["prompt"] + largest_value(p["generated"])
    # the softmax of the prefix's attention: 4 (heads, T, T); from 2 layers on, the previous
    # layer's weights too (``out, _ = attention(...)`` keeps them), and up to two more that the
    # heap keeps: the generation with cache, between two without, fragments it (measured)
    kept = 4 if layers == 1 else 7
    return [
        term(4 * layers * d * d * F64, "W_Q, W_K, W_V, W_O per layer: 4 x layers x (d, d) float64",
             layers=1, d=2),
        term(kept * h * T * T * F64 + 3 * T * T * BOOL,
             f"attention over the prefix without cache: {kept} x (heads, T, T) float64, "
             "T = prompt + generated", heads=1, prompt=2, generated=2),
        term((4 * layers + 8) * T * d * F64,
             "cache (with a copy) and prefix: (4 layers + 8) x (T, d) float64",
             layers=1, d=1, prompt=1, generated=1),
    ]


def _tokens(p):
    n, d, d_k = len(p["tokens"]), p["d_model"], p["d_k"]
    return [
        term(n * n * (4 * F64 + ROW), "weights: 4 x (n, n) float64 and a table of n x n rows", tokens=2),
        term((n * d + 3 * d * d_k + 4 * n * d_k) * F64, "X (n, d_model), W, Q, K, V (n, d_k) float64",
             tokens=1, d_model=1, d_k=1),
    ]


def _saturation(p):
    return [term(p["keys"] * largest_value(p["d"]) * F64, "keys (keys, d) float64; the scores are a vector",
                 keys=1, d=1)]


def _order_blindness(p):
    n, d, d_k = p["n"], p["d"], p["d_k"]
    return [
        term(4 * n * n * F64, "scores, shifted scores, exponentials, weights: 4 x (n, n) float64", n=2),
        term(n * d * (4 * F64 + ROW), "X, X + PE, encoding (n, d) float64 and its table", n=1, d=1),
        term((3 * d * d_k + 8 * n * d_k) * F64, "W (d, d_k), Q, K, V, outputs (n, d_k) float64",
             n=1, d=1, d_k=1),
    ]


def _torch_modules(p):
    n, d_k, B, T, d, h, d_ff = (p[k] for k in ("n", "d_k", "batch", "tokens", "d_model", "heads", "d_ff"))
    return [
        # the formula, then SDPA twice: on 2-D inputs it takes its math path (no fused kernel), up
        # to 3 (n, n) float32 and the causal mask at once; the heap may keep the earlier ones
        # (measured: 4 to 6)
        term(8 * n * n * F32 + 2 * n * n * BOOL, "the formula's and SDPA's scores, scaled and softmax: "
             "8 x (n, n) float32 and a mask", n=2),
        term(8 * B * h * T * T * F32,
             "MultiheadAttention scores: 8 x (batch, heads, tokens, tokens) float32",
             batch=1, heads=1, tokens=2),
        term(2 * (4 * d * d + 2 * d * d_ff) * F32, "module weights and gradients float32",
             d_model=2, d_ff=1),
        term(8 * B * T * (d + d_ff) * F32, "activations: 8 x (batch, tokens, d_model + d_ff) float32",
             batch=1, tokens=1, d_model=1, d_ff=1),
    ]


def _two_heads(p):
    n, d, d_k, heads = p["n"], p["d_model"], p["d_k"], p["heads"]
    return [
        term(heads * n * n * ROW + 4 * n * n * F64,
             "weights table: heads x n x n rows, one head's 4 x (n, n) float64",
             heads=1, n=2),
        term((n * d + heads * (3 * d * d_k + 5 * n * d_k)) * F64, "X, W and outputs of every head float64",
             n=1, d_model=1, d_k=1, heads=1),
    ]


def _nothing(p):
    """Closed-form counts: the sizes are a formula's inputs, never allocated."""
    return []


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
    "exercises": _nothing,
    "block_params": decoder.block_params,
    "grad_check": decoder.grad_check,
    "autograd_check": decoder.autograd_check,
    "train": decoder.train,
    "attention_map": decoder.attention_map,
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
    """[(bytes, what, {key: power})] of one case: the arrays alive at its peak, then the
    :data:`ALLOWANCE` (a term that no key drives)."""
    return ESTIMATES[experiment_id](params) + [
        term(ALLOWANCE, "small arrays and objects, the allocator's and the libraries' buffers")]


def estimate(experiment_id, params):
    """Estimated peak bytes of one job (one case's parameters)."""
    return total(terms(experiment_id, params))
