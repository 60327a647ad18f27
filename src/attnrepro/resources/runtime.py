"""Each job's wall time, estimated from its parameters: one small function per experiment.

Pure Python, no numerical import (workflow/rules/common.smk reads it while Snakemake builds the
DAG, as it reads :mod:`attnrepro.resources.memory`). A job's seconds are a start-up (the interpreter, the
imports, the writing of the tables) plus its work: one function per experiment counts what its
``run(params)`` does (matrix products, attention cells, random draws, table rows, training
steps) and prices each with a coefficient below. Each coefficient was measured on the machine
kind the project runs on (2 cores, AMD EPYC; NumPy on one BLAS thread, under the load of other
jobs) and is checked against the wall times of a default run's jobs, two of them at a time on
the two cores (tests/test_runtime_resources.py checks the small run's and a few medium cases).

What a job asks of a cluster (``resources: runtime``, minutes: :func:`job_runtime_min`) is these
seconds, plus the job step's own Snakemake, times :data:`MARGIN` and the config's runtime_factor.
"""

import math

from attnrepro.resources.memory_decoder import parameter_count

# What a job asks for: MARGIN x (its seconds + JOB_STEP) x runtime_factor, in whole minutes, at
# least one. MARGIN: under load, wall times spread 2.6-fold around the estimates (the default run's
# jobs: 0.66 to 1.7 times their estimate; the same training, 21 to 32 s), and a job beside three
# busy processes per core takes twice its CPU time
MARGIN = 3
# on a cluster, the job step runs Snakemake again, which parses the workflow and builds the job's
# DAG before the job's command starts (`snakemake -n` of one target: 3.6 to 3.9 s of CPU)
JOB_STEP = 4.0

# --- start-up: the interpreter, the imports, the writing of the tables --------------------
# `python -c "import attnrepro.experiments.job, numpy, pandas, pyarrow.parquet"`: 0.9 to 1.2 s of CPU; the
# default run's numpy jobs whose work is milliseconds: 1.0 to 2.0 s wall, median 1.3
START = 1.2
# the same imports and torch: 3.8 to 4.3 s of CPU; the default run's torch jobs: 3.8 to 6.8 s
# wall, median 4.8
START_TORCH = 4.8
TORCH = frozenset({"attention_vs_sdpa", "multihead_vs_torch", "permutation_position", "causal_change",
                   "sdpa_causal", "autograd_check", "torch_modules"})  # they call experiments._torch.load

# --- the price of each kind of work ---------------------------------------------------------
FLOP = 0.025e-9  # a float64 multiply or add in a large matrix product (40 GFLOP/s, n = 256 to 2048)
DRAW = 20e-9  # a normal draw of default_rng (10^7 draws: 17 to 20 ns each)
CELL = 25e-9  # an attention cell (score, softmax, weight) of small arrays (16 to 27 ns measured)
# a cell of the causal float64 attention of 001 at n = 512 to 4096, fresh arrays every call (30 to 60
# ns measured alone; the default run's timing_exponent: 42 ns with its d_k = 64 products, 23.6 s)
CAUSAL_CELL = 36e-9
F32_CELL = 9e-9  # a cell of 000's float32 attention, softmax in place (5 to 15 ns at n = 256 to 4096)
FLOP32 = 0.015e-9  # a float32 multiply or add of its products
SWEEP_VALUE = 35e-9  # scale_sweep: a drawn value of its queries and keys, its product and sum (d_k 1024)
JACOBIAN_ENTRY = 12e-9  # an entry of its softmax Jacobians, trials x n_keys^2 (9.5 to 15 ns measured)
STAT_CELL = 70e-9  # a score through scale_table's softmax and five statistics (entropy's log: 60 to 80)
ROW = 1.5e-6  # a table row built as a Python dict (attention_vs_sdpa, two_heads: 1.5 us at 10^5 rows)
LONG_ROW = 6e-6  # a row of mask_before_after's tables, through np.ndindex (6 us at 10^5 rows)
PY_STEP = 17e-6  # one (position, frequency) of permutation_position's rotation check, a 2 x 2 product
WEIGHT_BYTE = 0.09e-9  # a byte of a weight matrix read by a vector-matrix product (11 GB/s, d = 256)
# kv_cache's toy decoder: one layer's calls around its products, on the prefix without the cache
# and on one token with it (fitted on 7 generations: 1 to 4 layers, d = 64 to 512, 8 to 128 rows)
PREFIX_LAYER = 0.2e-3
TOKEN_LAYER = 40e-6
# the NumPy decoder, fitted on 13 trainings of 60 steps (L = 2 to 16, batch 8 to 128, d = 16 to 128,
# 1 to 4 layers; every prediction within 25% of its measurement)
LAYER_STEP = 1.0e-3  # one layer's forward and backward calls in one step
ACTIVATION = 40e-9  # a value of a layer's activations, B x T x (d + d_ff), in one step
SCORE = 13e-9  # an attention weight, B x heads x T x T per layer, in one step
DECODER_FLOP = 0.036e-9  # a multiply or add of its small matrix products (27 GFLOP/s)
PARAM_ROW = 1.5e-6  # a parameter of the long parameters table, read back (attention_map: 27253 in 40 ms)


def _sums(first, count):
    """(sum of T, sum of T^2) for T = first .. first + count - 1, in closed form."""
    last = first + count
    squares = (last - 1) * last * (2 * last - 1) // 6 - (first - 1) * first * (2 * first - 1) // 6
    return (last * (last - 1) - first * (first - 1)) // 2, squares


def _causal_call(n, d_k):
    """One call of 001's causal float64 attention on (n, d_k)."""
    return n * n * (CAUSAL_CELL + 4 * d_k * FLOP)


def _float32_call(n, d):
    """One call of 000's float32 attention on (n, d), its softmax in place."""
    return n * n * (F32_CELL + 4 * d * FLOP32)


def _mha(n, d, h):
    """One MultiheadAttention(d, h) on (1, n, d): projections and h (n, n) attentions."""
    return 8 * n * d * d * FLOP + h * n * n * CELL + 4 * n * n * d * FLOP


def _step(B, T, d, heads, layers, d_ff, vocab):
    """One training step of the NumPy decoder on (B, T) tokens: forward, backward and Adam."""
    per_layer = LAYER_STEP + ACTIVATION * B * T * (d + d_ff) + SCORE * B * heads * T * T
    flops = 3 * layers * B * T * (8 * d * d + 4 * d * d_ff + 4 * T * d) + 6 * B * T * vocab * d
    return layers * per_layer + DECODER_FLOP * flops


# --- one function per experiment: params of one case -> seconds of work ----------------------

def _attention_vs_sdpa(p):
    n = p["n"]
    return n * n * (ROW + 2 * CELL) + 4 * n * n * (p["d_k"] + p["d_v"]) * FLOP  # NumPy's and torch's


def _scale_sweep(p):
    t, n = p["trials"], p["n_keys"]
    # every d_k: queries and keys drawn, their products summed, then two softmax Jacobians
    return t * (n + 1) * sum(p["d_k"]) * SWEEP_VALUE + len(p["d_k"]) * 2 * t * n * n * JACOBIAN_ENTRY


def _multihead_vs_torch(p):
    n, d, h = p["n"], p["d"], p["h"]
    # torch's module and the heads by hand, then one module per count of param_heads
    return 2 * _mha(n, d, h) + (len(p["param_heads"]) + 1) * 4 * d * d * DRAW


def _permutation_position(p):
    n, d, h = p["n"], p["d"], p["h"]
    return 4 * _mha(n, d, h) + p["positions"] * (d // 2) * PY_STEP + p["table_length"] * d * ROW


def _causal_change(p):
    n, d, h = p["n"], p["d"], p["h"]
    return 4 * _mha(n, d, h) + 2 * n * ROW


def _quadratic_cost(p):
    d = p["d"]
    return sum(p["runs"] * _float32_call(n, d) + 3 * n * d * DRAW for n in p["n"])


def _score_memory(p):
    d = p["d"]
    return sum(_float32_call(n, d) + _causal_call(n, d) + 3 * n * d * DRAW for n in p["n"])


def _batched_attention(p):
    B, T, d, d_k = p["B"], p["T"], p["d"], p["d_k"]
    return B * T * T * (CELL + 4 * d_k * FLOP) + 6 * B * T * d * d_k * FLOP + B * T * ROW


def _sdpa_causal(p):
    B, T, d_k = p["B"], p["T"], p["d_k"]
    return 4 * B * T * T * (CELL + 4 * d_k * FLOP)  # two NumPy attentions and torch's two


def _scale_table(p):
    r, T, d_k = p["repetitions"], p["T"], p["d_k"]
    return 2 * r * T * d_k * DRAW + r * T * T * (STAT_CELL + 2 * d_k * FLOP)


def _mask_before_after(p):
    T, B = p["T"], len(p["lengths"])
    return (T * T + B * T + B * T * T) * LONG_ROW  # the weights, padding and combined tables


def _multihead_shapes(p):
    B, T, d = p["B"], p["T"], p["d"]
    calls = [(h, 1) for h in p["heads"]] + [(p["permutation_heads"], 2)]
    return sum(k * (B * h * T * T * CELL + 8 * B * T * d * d * FLOP) for h, k in calls)


def _nothing(p):
    """Closed-form counts: the sizes are a formula's inputs, never allocated."""
    return 0.0


def _block_params(p):
    vocab, layers, f, t_max = p["vocab"], p["layers"], p["ff_factor"], p["t_max"]
    return sum(parameter_count(vocab, d, layers, f * d, t_max) for d in p["widths"]) * DRAW


def _grad_check(p):
    """A loss for every checked coordinate of every tensor, twice (+eps, -eps): half a step each."""
    layers = p["layers"]
    losses = 1 + 2 * p["coordinates"] * (6 + 16 * layers)  # init_params: 6 + 16 per layer tensors
    return losses * _step(p["sequences"], p["length"], p["d"], p["heads"], layers, p["d_ff"], p["vocab"]) / 2


def _autograd_check(p):
    """One NumPy pass and its backward, then torch's."""
    return 2 * _step(p["sequences"], p["length"], p["d"], p["heads"], p["layers"], p["d_ff"], p["vocab"])


def _train(p):
    """The steps, then the evaluation: L generation steps, each a forward pass (half a step) of
    every question (the long parameters table, built by whole arrays, takes milliseconds)."""
    L, d, h, layers, d_ff, vocab = p["L"], p["d"], p["heads"], p["layers"], p["d_ff"], p["alphabet"] + 1
    training = p["steps"] * _step(p["batch"], 2 * L, d, h, layers, d_ff, vocab)
    return training + L * _step(p["eval_sequences"], 2 * L, d, h, layers, d_ff, vocab) / 2


def _attention_map(p):
    """The trained model's parameters table read back (none known without ``trained``: the
    pre-flight's estimated_cases adds it), then one sequence through it."""
    t = p.get("trained")
    if not t:
        return 0.0
    count = parameter_count(t["alphabet"] + 1, t["d"], t["layers"], t["d_ff"], 2 * t["L"] + 1)
    return count * PARAM_ROW + _step(1, len(p["sequence"]), t["d"], t["heads"], t["layers"], t["d_ff"],
                                     t["alphabet"] + 1)


def _causal_timing(p):
    return sum((trials + 1) * _causal_call(T, p["d_k"]) + 3 * T * p["d_k"] * DRAW
               for T, trials in zip(p["T"], p["trials"]))


def _timing_exponent(p):
    """A warm-up sweep and ``repeats`` sweeps over n, then the bootstrap of the sweeps' minima."""
    lengths, d_k, repeats = p["n"], p["d_k"], p["repeats"]
    sweeps = (repeats + 1) * sum(_causal_call(n, d_k) for n in lengths)
    return sweeps + 3 * sum(lengths) * d_k * DRAW + p["bootstrap"] * repeats * len(lengths) * CELL


def _generation(p, steps):
    """One generation of ``steps`` rows without the cache (every step reruns the prefix) and one
    with it (every step one row through each layer, reading its four (d, d) weights)."""
    layers, h, d, P = p["layers"], p["heads"], p["d"], p["prompt"]
    total, squares = _sums(P, steps)  # the prefix lengths T of the steps without cache
    without = layers * (steps * PREFIX_LAYER + (8 * total * d * d + 4 * squares * d) * FLOP
                        + (h + 2) * squares * CELL)  # h heads' cells and the mask's
    with_cache = (P - 1 + steps) * layers * (TOKEN_LAYER + 32 * d * d * WEIGHT_BYTE)
    return without + with_cache


def _kv_cache(p):
    return 2 * _generation(p, p["generated"])  # timed, then again on one thread for the deviation


def _kv_speedup(p):
    return p["repeats"] * sum(_generation(p, g) for g in p["generated"])


def _tokens(p):
    n = len(p["tokens"])
    return n * n * (ROW + CELL)


def _saturation(p):
    return p["keys"] * sum(p["d"]) * DRAW


def _order_blindness(p):
    n, d = p["n"], p["d"]
    return n * d * ROW + 4 * n * n * CELL


def _torch_modules(p):
    n, B, T, d, h, d_ff = (p[k] for k in ("n", "batch", "tokens", "d_model", "heads", "d_ff"))
    return 3 * n * n * CELL + 2 * B * _mha(T, d, h) + 4 * B * T * d * d_ff * FLOP


def _two_heads(p):
    n = p["n"]
    return p["heads"] * n * n * (ROW + CELL)


WORK = {
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
    "block_params": _block_params,
    "grad_check": _grad_check,
    "autograd_check": _autograd_check,
    "train": _train,
    "attention_map": _attention_map,
    "causal_timing": _causal_timing,
    "timing_exponent": _timing_exponent,
    "kv_cache": _kv_cache,
    "kv_speedup": _kv_speedup,
    "self_attention_tokens": _tokens,
    "causal_weights": _tokens,
    "saturation": _saturation,
    "order_blindness": _order_blindness,
    "torch_modules": _torch_modules,
    "two_heads": _two_heads,
}


def start(experiment_id):
    """Seconds before and after the work: the interpreter, the imports, the tables written."""
    return START_TORCH if experiment_id in TORCH else START


def work(experiment_id, params):
    """Estimated seconds of ``run(params)`` of one case (``params`` as
    :func:`attnrepro.dag.preflight.estimated_cases` gives them)."""
    return WORK[experiment_id](params)


def seconds(experiment_id, params):
    """Estimated wall seconds of the job of one case: its start-up and its work."""
    return start(experiment_id) + work(experiment_id, params)


def job_runtime_min(experiment_id, params, factor=1.0):
    """``runtime`` of the job of one case, in minutes: :data:`MARGIN` x (its seconds +
    :data:`JOB_STEP`) x ``factor`` (the config's runtime_factor), rounded up, at least 1."""
    return max(1, math.ceil(MARGIN * (seconds(experiment_id, params) + JOB_STEP) * factor / 60))
