"""What each kind of work costs in seconds, and the work that several experiments share.

Each experiment module estimates the seconds of its ``run(params)`` in ``work(params)``: it
counts what its run does (matrix products, attention cells, random draws, table rows, training
steps) and prices each with a coefficient below. Each coefficient was measured on the machine
kind the project runs on (2 cores, AMD EPYC; NumPy on one BLAS thread, under the load of other
jobs) and is checked against the wall times of a default run's jobs, two of them at a time on
the two cores (tests/test_runtime_resources.py checks the small run's and a few medium cases).
:mod:`attnrepro.resources.runtime` adds the start-up and the margin. Pure Python: Snakemake runs
these functions while it builds the DAG (:mod:`attnrepro.experiments.declared` reads them
without importing NumPy).
"""

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
DICT_ROW = 1.5e-6  # a table row built as a Python dict (attention_vs_sdpa, two_heads: 1.5 us at 10^5 rows)
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


def mha(n, d, h):
    """One MultiheadAttention(d, h) on (1, n, d): projections and h (n, n) attentions
    (multihead_vs_torch, permutation_position, causal_change, torch_modules)."""
    return 8 * n * d * d * FLOP + h * n * n * CELL + 4 * n * n * d * FLOP


def decoder_step(B, T, d, heads, layers, d_ff, vocab):
    """One training step of the NumPy decoder on (B, T) tokens: forward, backward and Adam
    (grad_check, autograd_check, train, attention_map)."""
    per_layer = LAYER_STEP + ACTIVATION * B * T * (d + d_ff) + SCORE * B * heads * T * T
    flops = 3 * layers * B * T * (8 * d * d + 4 * d * d_ff + 4 * T * d) + 6 * B * T * vocab * d
    return layers * per_layer + DECODER_FLOP * flops
