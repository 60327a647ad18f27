"""Impossible sizes stop Snakemake before any job: schema bounds and the memory pre-flight."""

import copy
import math
import os
import subprocess
import sys

import pytest

from attnrepro.dag import config as cfg
from attnrepro.resources import memory
from attnrepro.dag import plan, preflight

from conftest import REPO, copy_repo, small_config, snakemake

GIB = 2**30


def errors_of(config):
    with pytest.raises(cfg.ConfigError) as info:
        cfg.validate(config)
    return str(info.value)


def with_value(config, section, key, value):
    config = copy.deepcopy(config)
    config[section][key] = value
    return config


# --- the two scenarios, refused by config.validate with the key named -----------

def test_a_127_year_training_is_refused(default_config):
    message = errors_of(with_value(default_config, "train", "steps", 10**12))
    assert "train.steps: 1000000000000 is greater than the maximum of 1000000" in message


def test_a_238_gib_attention_is_refused(default_config):
    message = errors_of(with_value(default_config, "batched_attention", "T", 10**9))
    assert "batched_attention.T: 1000000000 is greater than the maximum of 1000000" in message


def test_a_size_the_schema_allows_but_memory_does_not_is_refused_with_its_estimate(default_config):
    config = with_value(default_config, "batched_attention", "T", 10**5)
    config["memory"] = {"limit_gib": 16}
    message = errors_of(config)
    # 4 score-sized (B, T, T) float64 arrays: 4 * 2 * 1e10 * 8 bytes
    assert ("batched_attention.T: 100000 needs about 6.4e+11 bytes = 596 GiB (scores, shifted scores, "
            "exponentials, weights: 4 x (B, T, T) float64) in one job; the limit is 16 GiB "
            "(memory.limit_gib)") in message


@pytest.mark.parametrize("section, key, value, named", [
    ("score_memory", "n", [256, 100000], "score_memory.n[1]: 100000 needs about"),
    ("scale_table", "d_k", [8, 100000], "scale_table.d_k[1]: 100000 needs about"),
    ("multihead_shapes", "B", 1000000, "multihead_shapes.B: 1000000 needs about"),  # B, not T, drives it
    ("mask_before_after", "T", 100000, "mask_before_after.T: 100000 needs about"),
    ("kv_cache", "generated", 200000, "kv_cache.generated: 200000 needs about"),
])
def test_the_key_that_drives_the_estimate_is_named(default_config, section, key, value, named):
    config = with_value(default_config, section, key, value)
    config["memory"] = {"limit_gib": 16}
    message = errors_of(config)
    assert named in message, message
    assert message.count("needs about") == 1  # one message per experiment, at its largest job


TOKENS = [f"w{i}" for i in range(10**4)]

# (section, its change, the message's start and its end): the key named, the bytes (by hand, from
# the arrays the code allocates at the largest job, with the other terms and the allowance) and
# the largest term's arrays, their shape and dtype; at a limit of 1 GiB
REFUSED = [
    ("attention_vs_sdpa", {"n": 10**5}, "attention_vs_sdpa.n: 100000 needs about 4.1e+12 bytes",
     "n x n rows"),  # 10^10 rows of (400 + 8) bytes
    ("attention_vs_sdpa", {"d_v": 10**9}, "attention_vs_sdpa.d_v: 1000000000 needs about 8e+10 bytes",
     "V and the output (n, d_v) float64"),  # 2 x 5 x 10^9 x 8
    ("attention_vs_sdpa", {"d_k": 10**9}, "attention_vs_sdpa.d_k: 1000000000 needs about 8e+10 bytes",
     "V and the output (n, d_v) float64"),  # Q and K: 2 x 5 x 10^9 x 8
    ("scale_sweep", {"n_keys": 10**4}, "scale_sweep.n_keys: 10000 needs about 9.6e+12 bytes",
     "3 x (trials, n_keys, n_keys) float64"),  # 3 x 4000 x 10^8 x 8
    ("scale_sweep", {"d_k": [10**6, 4]}, "scale_sweep.d_k[0]: 1000000 needs about 1.1e+12 bytes",
     "2 x (trials, n_keys, d_k) float64"),  # (2 x 16 + 1) x 4000 x 10^6 x 8
    ("multihead_vs_torch", {"n": 10**4}, "multihead_vs_torch.n: 10000 needs about 2.6e+10 bytes",
     "8 x (h, n, n) float64"),  # 8 x 4 x 10^8 x 8
    ("multihead_vs_torch", {"d": 10**4}, "multihead_vs_torch.d: 10000 needs about 9.6e+09 bytes",
     "2 x (4d, d) float64"),  # 2 x 4 x 10^8 x 8, and 2 x 4 x 10^8 x 4 (float32)
    ("multihead_vs_torch", {"n": 10**4, "d": 10**4}, "multihead_vs_torch.n: 10000 needs about 4.2e+10 bytes",
     "8 x (h, n, n) float64"),  # 10^8 x (8 x 4 x 8 + 2 x 4 x 8 + 2 x 4 x 4 + 8 x 8: 8 x (n, d))
    ("permutation_position", {"table_length": 10**7}, "permutation_position.table_length: 10000000 needs "
     "about 6.7e+10 bytes", "table_length x d rows"),  # 10^7 x 16 x (2 x 8 + 400)
    ("permutation_position", {"n": 10**8}, "permutation_position.n: 100000000 needs about 3.1e+11 bytes",
     "24 x (n, d) float64"),  # 24 x 10^8 x 16 x 8
    ("causal_change", {"n": 10**5}, "causal_change.n: 100000 needs about 1e+11 bytes",
     "(n, n) bool, its inverse and torch's float64 copy"),  # 10^10 x (8 + 2)
    ("causal_change", {"d": 10**5}, "causal_change.d: 100000 needs about 6.4e+11 bytes",
     "2 x (4d, d) float64"),  # 2 x 4 x 10^10 x 8
    ("quadratic_cost", {"n": [10**5, 512]}, "quadratic_cost.n[0]: 100000 needs about 4e+10 bytes",
     "(n, n) float32"),  # 10^10 x 4
    ("quadratic_cost", {"d": 10**7}, "quadratic_cost.d: 10000000 needs about 8.2e+11 bytes",
     "Q, K, V (n, d) float32 and one float64 draw"),  # (3 x 4 + 8) x 4096 x 10^7
    ("score_memory", {"n": [10**5]}, "score_memory.n[0]: 100000 needs about 3.5e+11 bytes",
     "4 x (n, n) float64 and its mask"),  # 10^10 x (4 x 8 + 3)
    ("score_memory", {"d": 10**7}, "score_memory.d: 10000000 needs about 3.8e+12 bytes",
     "6 x (n, d) float64, 3 float32"),  # (6 x 8 + 3 x 4 + 4 x 8) x 4096 x 10^7
    ("batched_attention", {"B": 10**9}, "batched_attention.B: 1000000000 needs about 4.7e+12 bytes",
     "B x T rows"),  # 10^9 x (5 x 5 x 4 x 8 + 5 x (16 + 4 x 8) x 8 + 5 x 400)
    ("sdpa_causal", {"T": 10**5}, "sdpa_causal.T: 100000 needs about 1.3e+12 bytes",
     "8 x (B, T, T) float64"),  # 10^10 x (8 x 2 x 8 + 3)
    ("sdpa_causal", {"d_k": 10**9}, "sdpa_causal.d_k: 1000000000 needs about 4.8e+11 bytes",
     "Q, K, V and two outputs (B, T, d_k) float64"),  # 6 x 2 x 5 x 10^9 x 8
    ("scale_table", {"T": 10**4}, "scale_table.T: 10000 needs about 1.6e+12 bytes",
     "5 x (repetitions, T, T) float64"),  # 5 x 400 x 10^8 x 8 (scaled), Q and K at d_k 512
    ("scale_table", {"repetitions": 10**7}, "scale_table.repetitions: 10000000 needs about 6.9e+12 bytes",
     "Q, K (repetitions, T, d_k) float64"),  # 10^7 x (5 x 64 x 64 + 2 x 64 x 512) x 8
    ("mask_before_after", {"T": 10**4, "lengths": [100]}, "mask_before_after.T: 10000 needs about 4.7e+10 "
     "bytes", "len(lengths) x T x T"),  # 10^8 x (400 + 3 x 8 + 1 + 5 x 8)
    ("multihead_shapes", {"T": 10**4}, "multihead_shapes.T: 10000 needs about 3.2e+10 bytes",
     "5 x (B, h, T, T) float64"),  # 5 x 8 x 10^8 x 8
    ("multihead_shapes", {"permutation_heads": 10**6}, "multihead_shapes.permutation_heads: 1000000 needs "
     "about 1.4e+09 bytes", "5 x (B, h, T, T) float64"),  # 5 x 10^6 x 6 x 6 x 8
    ("multihead_shapes", {"d": 10**5}, "multihead_shapes.d: 100000 needs about 3.2e+11 bytes",
     "W_Q, W_K, W_V, W_O (d, d) float64"),  # 4 x 10^10 x 8
    ("multihead_shapes", {"T": 10**4, "d": 10**4}, "multihead_shapes.T: 10000 needs about 4.3e+10 bytes",
     "5 x (B, h, T, T) float64"),  # 10^8 x (5 x 8 + 10: 10 x (B, T, d) + 4: W) x 8
    ("block_params", {"widths": [64, 10**5, 256]}, "block_params.widths[1]: 100000 needs about 1.3e+12 "
     "bytes", "decoder tensors float64"),  # (4 d^2 + 2 d x 4d) x 8, and a draw (d, 4d): 4 x 10^10 x 8
    ("grad_check", {"length": 10**4}, "grad_check.length: 10000 needs about 6.7e+10 bytes",
     "(B, h, T, T) float64: one per layer, 5 transients"),  # (2 + 5) x 3 x 4 x 10^8 x 8
    ("grad_check", {"vocab": 10**8}, "grad_check.vocab: 100000000 needs about 2.6e+11 bytes",
     "logits, softmax and gradient: 5 x (B, T, vocab) float64"),  # 5 x 3 x 12 x 10^8 x 8, and tensors:
    # 2 x 33 x 10^8 x 8 (E, Wout and their gradients), the largest's comparison 5 x 16 x 10^8 x 8
    ("autograd_check", {"length": 10**4}, "autograd_check.length: 10000 needs about 1.2e+11 bytes",
     "(B, h, T, T) float64: one per layer, 5 transients"),  # and torch's: (2 + 3) x 3 x 4 x 10^8 x 8
    ("autograd_check", {"vocab": 10**8}, "autograd_check.vocab: 100000000 needs about 3.1e+11 bytes",
     "5 x (B, T, vocab) float64"),  # with 5 copies of the tensors and 3 of the largest
    ("train", {"batch": 10**5}, "train.batch: 100000 needs about 3e+10 bytes",
     "12 x (B, T, d) and 4 x (B, T, d_ff) float64"),  # L 8: T 16, 2 layers
    ("train", {"lengths": [4, 6, 1000]}, "train.lengths[2]: 1000 needs about 4e+11 bytes",
     "(B, h, T, T) float64: one per layer, 4 transients"),  # evaluation: (2 + 4) x 500 x 4 x 2000^2 x 8
    ("train", {"d": 10**4}, "train.d: 10000 needs about 1.6e+11 bytes",
     "their long parameters table: one row per parameter"),  # 8 x 10^8 parameters of 8 + 192 bytes
    ("train", {"alphabet": 10**6}, "train.alphabet: 1000000 needs about 3.2e+11 bytes",
     "5 x (B, T, vocab) float64"),  # evaluation: 5 x 500 x 16 x 10^6 x 8
    ("attention_map", {"sequence": TOKENS}, "attention_map.sequence: 10000 values needs about 5.1e+10 bytes",
     "the weights table: layers x heads x T x T rows"),  # 2 x 4 x 10^8 rows of 8 x 8 bytes
    ("causal_timing", {"T": [10**5, 128, 512]}, "causal_timing.T[0]: 100000 needs about 3.5e+11 bytes",
     "4 x (T, T) float64 and its mask"),  # 10^10 x (4 x 8 + 3)
    ("causal_timing", {"trials": [10**9, 60, 12]}, "causal_timing.trials[0]: 1000000000 needs about 2e+12 "
     "bytes", "repeats table: one row per pass and trial"),  # 5 passes x 10^9 rows of 400 bytes
    ("timing_exponent", {"bootstrap": 10**8}, "timing_exponent.bootstrap: 100000000 needs about 4.7e+11 "
     "bytes", "3 x (bootstrap, repeats, len(n)) float64"),  # 3 x 10^8 x 15 x 13 x 8
    ("timing_exponent", {"repeats": 10**8}, "timing_exponent.repeats: 100000000 needs about 6.3e+13 "
     "bytes", "3 x (bootstrap, repeats, len(n)) float64"),  # 3 x 2000 x 10^8 x 13 x 8, and 13 x 10^8 rows
    ("kv_cache", {"prompt": 10**5}, "kv_cache.prompt: 100000 needs about 4.5e+12 bytes",
     "7 x (heads, T, T) float64, T = prompt + generated"),  # T = 100128: T^2 x (7 x 8 x 8 + 3)
    ("kv_cache", {"prompt": 10**5, "layers": 1}, "kv_cache.prompt: 100000 needs about 2.6e+12 bytes",
     "4 x (heads, T, T) float64, T = prompt + generated"),  # T^2 x (4 x 8 x 8 + 3)
    ("kv_cache", {"d": 10**5}, "kv_cache.d: 100000 needs about 1.3e+12 bytes",
     "4 x layers x (d, d) float64"),  # 4 x 4 x 10^10 x 8
    ("kv_speedup", {"layers": 10**6, "d": 2}, "kv_speedup.layers: 1000000 needs about 1e+10 bytes",
     "(4 layers + 8) x (T, d) float64"),  # 4 x 10^6 x 160 x 2 x 8
    ("self_attention_tokens", {"tokens": TOKENS}, "self_attention_tokens.tokens: 10000 values needs about "
     "4.3e+10 bytes", "4 x (n, n) float64 and a table of n x n rows"),  # 10^8 x (4 x 8 + 400)
    ("causal_weights", {"d_model": 10**9}, "causal_weights.d_model: 1000000000 needs about 1.4e+11 bytes",
     "X (n, d_model), W, Q, K, V (n, d_k) float64"),  # X and W_Q, W_K, W_V: (5 + 3 x 4) x 10^9 x 8
    ("saturation", {"keys": 10**9}, "saturation.keys: 1000000000 needs about 4.1e+12 bytes",
     "keys (keys, d) float64; the scores are a vector"),  # 10^9 x 512 x 8
    ("order_blindness", {"n": 10**5}, "order_blindness.n: 100000 needs about 3.2e+11 bytes",
     "4 x (n, n) float64"),  # 4 x 10^10 x 8
    ("order_blindness", {"d": 10**8}, "order_blindness.d: 100000000 needs about 1.8e+11 bytes",
     "X, X + PE, encoding (n, d) float64 and its table"),  # 4 x 10^8 x (4 x 8 + 400), W (d, 4) 9.6e9
    ("order_blindness", {"d_k": 10**9}, "order_blindness.d_k: 1000000000 needs about 4.5e+11 bytes",
     "W (d, d_k), Q, K, V, outputs (n, d_k) float64"),  # (3 x 8 + 8 x 4) x 10^9 x 8
    ("torch_modules", {"n": 10**5}, "torch_modules.n: 100000 needs about 3.4e+11 bytes",
     "8 x (n, n) float32 and a mask"),  # 10^10 x (8 x 4 + 2)
    ("torch_modules", {"tokens": 10**5}, "torch_modules.tokens: 100000 needs about 2.6e+12 bytes",
     "8 x (batch, heads, tokens, tokens) float32"),  # 8 x 2 x 4 x 10^10 x 4
    ("torch_modules", {"d_ff": 10**9}, "torch_modules.d_ff: 1000000000 needs about 1.2e+12 bytes",
     "8 x (batch, tokens, d_model + d_ff) float32"),  # 8 x 2 x 10 x 10^9 x 4, weights 2 x 2 x 32 x 10^9 x 4
    ("two_heads", {"n": 10**5}, "two_heads.n: 100000 needs about 8.3e+12 bytes",
     "one head's 4 x (n, n) float64"),  # 10^10 x (2 x 400 + 4 x 8)
    ("two_heads", {"d_k": 10**9}, "two_heads.d_k: 1000000000 needs about 7.8e+11 bytes",
     "X, W and outputs of every head float64"),  # 2 heads x (3 x 8 + 5 x 5) x 10^9 x 8
    ("two_heads", {"d_model": 10**9}, "two_heads.d_model: 1000000000 needs about 2.3e+11 bytes",
     "X, W and outputs of every head float64"),  # (5 + 2 x 3 x 4) x 10^9 x 8
]


@pytest.mark.parametrize("section, change, start, end", REFUSED,
                         ids=[f"{section}-{'-'.join(change)}" for section, change, _, _ in REFUSED])
def test_each_refusal_names_the_key_the_bytes_and_the_largest_arrays(default_config, section, change, start,
                                                                     end):
    """What a user reads to fix a config: the key to change (the largest factor of the largest
    term), about how many bytes, and which arrays (their shape and dtype) need them."""
    config = copy.deepcopy(default_config)
    config[section].update(change)
    [message] = [m for m in preflight.errors(config, 1 * GIB) if m.startswith((f"{section}.", f"{section}:"))]
    assert message.startswith(start + " = "), message
    assert f"{end}) in one job" in message, message


def test_a_training_ablation_names_its_own_key(default_config):
    config = copy.deepcopy(default_config)
    config["train"]["ablations"]["huge"] = {"batch": 1000000}
    config["memory"] = {"limit_gib": 16}
    assert "train.ablations.huge.batch: 1000000 needs about" in errors_of(config)


@pytest.mark.parametrize("change, named", [
    # an ablation's own override, a key of the ablations' base run, a shared key, a grid key
    (lambda t: t["ablations"].update(huge={"batch": 10**6}), "train.ablations.huge.batch: 1000000 needs"),
    (lambda t: t["ablation_base"].update(L=300), "train.ablation_base.L: 300 needs"),
    (lambda t: t.update(eval_sequences=10**6), "train.eval_sequences: 1000000 needs"),
    (lambda t: t.update(lengths=[4, 6, 300]), "train.lengths[2]: 300 needs"),
], ids=["ablation", "ablation_base", "shared", "grid"])
def test_a_training_names_the_config_key_its_size_comes_from(default_config, change, named):
    config = copy.deepcopy(default_config)
    change(config["train"])
    message = "\n".join(preflight.errors(config, 1 * GIB))
    assert named in message, message


def test_several_cases_over_the_limit_name_the_largest_and_count_the_others(default_config):
    """scale_table at T = 2000: 4 (400, T, T) float64 arrays (51 GB) in the unscaled cases,
    5 (64 GB) in the scaled ones, 3 of 6 cases over 55 GiB; the largest has the largest d_k
    (Q and K (400, T, d_k): 6.6 GB more)."""
    config = with_value(default_config, "scale_table", "T", 2000)
    [message] = [m for m in preflight.errors(config, 55 * GIB) if m.startswith("scale_table")]
    assert message.startswith("scale_table.T: 2000 needs about 7.1e+10 bytes"), message
    assert "(case d_k-512_scaled-true; 2 more cases over the limit)" in message, message


@pytest.mark.parametrize("limit_gib, where", [
    (1510, "(case d_k-512_scaled-true)"),  # alone over the limit
    (1493, "(case d_k-512_scaled-true; 1 more cases over the limit)"),  # and d_k-64_scaled-true
])
def test_the_cases_over_the_limit_are_the_largest_and_the_others_counted(default_config, limit_gib, where):
    """scale_table at T = 10^4, scaled: 5 (400, T, T) float64 (1.6e12 bytes = 1490 GiB) and Q, K
    (400, T, d_k): 6.6e9 more bytes at d_k 64 (1496 GiB), 3.3e10 at d_k 512 (1521 GiB)."""
    config = with_value(default_config, "scale_table", "T", 10**4)
    [message] = [m for m in preflight.errors(config, limit_gib * GIB) if m.startswith("scale_table")]
    assert f"float64) in one job {where}; the limit is {limit_gib:.3g} GiB (the limit given)" in message


def test_a_training_counts_every_job_its_rule_can_build(default_config):
    """The run's trainings (tasks x lengths x seeds, the ablations) and the seed distribution's:
    74 jobs, all over the limit at batch 10^5; of equal ones, the first is named."""
    config = with_value(default_config, "train", "batch", 10**5)
    [message] = [m for m in preflight.errors(config, 1 * GIB) if m.startswith("train")]
    assert len(plan.runnable_cases("train", config)) == 74
    assert "in one job (case sort-L8-seed0; 73 more cases over the limit)" in message, message


def test_of_two_equal_terms_the_first_is_named(default_config):
    """batched_attention at d = 2, d_k = 12: X, Q, K, V and the output, 5 (d + 4 d_k) x 8 = 2000
    bytes per (b, t), as many as the row_sums table's row: the arrays listed first are named."""
    config = copy.deepcopy(default_config)
    config["batched_attention"].update(B=10**9, d=2, d_k=12)
    [message] = [m for m in preflight.errors(config, 1 * GIB) if m.startswith("batched_attention")]
    assert message.startswith("batched_attention.B: 1000000000 needs about 4.8e+12 bytes"), message
    assert "(X (B, T, d), Q, K, V, output (B, T, d_k) float64) in one job" in message, message


def test_a_job_that_needs_exactly_the_limit_fits(default_config):
    """The largest job of the default run, scale_sweep's, at its estimate: it fits; a byte less: refused."""
    needed = memory.estimate("scale_sweep", plan.cases("scale_sweep", default_config)["default"])
    assert preflight.errors(default_config, needed) == []
    [message] = preflight.errors(default_config, needed - 1)
    assert message.startswith("scale_sweep.trials: 4000 needs about"), message


def test_each_experiment_of_the_config_is_checked_whatever_it_lacks(default_config):
    """A config of some experiments (``python -m attnrepro run`` checks its own alone): each one
    is checked, the others skipped; attention_map without train: its model's sizes unknown."""
    config = {k: v for k, v in with_value(default_config, "batched_attention", "T", 10**5).items()
              if k not in ("attention_vs_sdpa", "train")}
    assert [m.split(":")[0] for m in preflight.errors(config, 2 * GIB)] == ["batched_attention.T"]
    assert preflight.estimated_cases("attention_map", config) == {"default": config["attention_map"]}


@pytest.mark.parametrize("params, named", [
    ({"B": 1000, "T": 30}, "B"),  # 30^2 = 900 < 1000
    ({"B": 1000, "T": 40}, "T"),  # 40^2 = 1600 > 1000
    ({"B": [2, 1000], "T": 40}, "T"),  # a list: its largest value
    ({"B": [2, 2000], "T": 40}, "B"),
    ({"B": "many", "T": 2}, "T"),  # a value that is no size weighs nothing ...
    ({"B": 2, "T": "many"}, "B"),  # ... even against a small size
    ({"B": 1, "T": 1}, "B"),  # equal factors (of 1: no factor): the first key
])
def test_the_driver_is_the_key_whose_value_to_its_power_is_largest(params, named):
    assert preflight._driver(params, {"B": 1, "T": 2}) == named


def test_the_attention_map_needs_the_memory_of_the_model_it_reads(default_config):
    """attention_map's estimate reads the train case it maps (preflight.estimated_cases)."""
    config = with_value(default_config, "train", "d", 4096)
    [message] = [m for m in preflight.errors(config, 16 * GIB) if m.startswith("attention_map")]
    assert message.startswith("attention_map.run: copy-L6-seed0 needs about 2e+10 bytes"), message


def test_a_job_that_only_needs_the_allowance_is_named_without_a_key(default_config):
    """Below a few MiB no key drives the estimate: the message names the experiment."""
    [message] = [m for m in preflight.errors(default_config, 2**20) if m.startswith("exercises")]
    assert message.startswith("exercises: every case needs about 8.4e+06 bytes"), message


def test_formula_inputs_are_not_bounded_by_memory(default_config):
    """exercises and kv_cache.realistic compute with their sizes, never allocate them."""
    config = copy.deepcopy(default_config)
    config["exercises"].update(T=10**8, d=10**5, batch=1000)
    config["kv_cache"]["realistic"]["T"] = 10**8
    config["memory"] = {"limit_gib": 2}
    assert cfg.validate(config)


def test_default_and_small_configs_fit_in_2_gib(default_config):
    """The run's own jobs need about a GiB at most (scale_sweep's 4000 trials of 16 keys of 1024
    dimensions: 1.01 GiB), so the defaults pass on any machine with 2 GiB."""
    for config in (copy.deepcopy(default_config), small_config()):
        config["memory"] = {"limit_gib": 2}
        assert cfg.validate(config)
    assert preflight.errors(default_config, 1.1 * GIB) == []  # given directly
    [message] = preflight.errors(default_config, 1 * GIB)
    assert message.startswith("scale_sweep.trials: 4000 needs about 1.1e+09 bytes = 1.01 GiB"), message


def test_every_experiment_has_an_estimate_of_its_own():
    assert set(memory.ESTIMATES) == set(plan.EXPERIMENTS)


def machine_bytes(tmp_path, mem_total_kib=None, cgroup_v2=None, cgroup_v1=None):
    """preflight.machine_bytes over fake files: MemTotal (KiB) of a meminfo, the contents of a
    cgroup v2 memory.max and of a cgroup v1 memory.limit_in_bytes (None: no such file)."""
    meminfo, v2, v1 = (tmp_path / name for name in ("meminfo", "memory.max", "memory.limit_in_bytes"))
    for path, text in ((meminfo, mem_total_kib), (v2, cgroup_v2), (v1, cgroup_v1)):
        if text is not None:
            path.write_text(f"MemFree: 1000 kB\nMemTotal: {text} kB\n" if path is meminfo else f"{text}\n")
    return preflight.machine_bytes(str(meminfo), (str(v2), str(v1)))


SYSCONF = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")  # what meminfo's absence falls back to


@pytest.mark.parametrize("mem_total_kib, cgroup_v2, cgroup_v1, expected", [
    (16 * 2**20, None, None, 16 * GIB),  # MemTotal alone
    (16 * 2**20, 4 * GIB, None, 4 * GIB),  # a smaller cgroup v2 limit wins
    (16 * 2**20, "max", None, 16 * GIB),  # "max": no limit
    (16 * 2**20, None, 3 * GIB, 3 * GIB),  # cgroup v1
    (16 * 2**20, None, 9223372036854771712, 16 * GIB),  # v1's "no limit": a page short of 2^63
    (16 * 2**20, 4 * GIB, 3 * GIB, 3 * GIB),  # the smaller of both
    (16 * 2**20, 64 * GIB, 64 * GIB, 16 * GIB),  # a larger limit does not raise the total
    (16 * 2**20, "0", "garbage", 16 * GIB),  # unreadable limits are ignored
    (16 * 2**20, 1, None, 1),  # the smallest limit counts
    (None, None, None, SYSCONF),  # no meminfo: os.sysconf
    ("lots", 2 * GIB, None, 2 * GIB),  # an unreadable MemTotal: os.sysconf, then the cgroup
])
def test_the_machine_is_its_memtotal_or_its_cgroup_limit_when_smaller(
        tmp_path, mem_total_kib, cgroup_v2, cgroup_v1, expected):
    assert machine_bytes(tmp_path, mem_total_kib, cgroup_v2, cgroup_v1) == expected


def test_a_cgroup_file_that_cannot_be_read_is_no_limit(tmp_path):
    (tmp_path / "memory.max").mkdir()  # open() fails: IsADirectoryError
    assert machine_bytes(tmp_path, 16 * 2**20, cgroup_v1=2 * GIB) == 2 * GIB


def test_the_machine_files_are_linux_ones():
    assert preflight.MEMINFO == "/proc/meminfo"
    assert preflight.CGROUP_LIMITS == ("/sys/fs/cgroup/memory.max",
                                       "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def test_the_default_limit_is_80_percent_of_this_machine():
    total = preflight.machine_bytes()
    assert total and total > 2**28
    for config in ({"memory": {"limit_gib": None}}, {}):  # memory.limit_gib null, or no memory section
        limit, source = preflight.limit(config)
        assert limit == pytest.approx(0.8 * total)
        assert source == f"80% of this machine's {total / GIB:.1f} GiB; memory.limit_gib sets another"
    assert preflight.limit({"memory": {"limit_gib": 3}}) == (3 * GIB, "memory.limit_gib")


def test_a_machine_of_unknown_memory_refuses_nothing_without_a_limit(default_config, monkeypatch):
    """Neither /proc/meminfo nor os.sysconf: no limit to refuse by, unless memory.limit_gib sets one."""
    monkeypatch.setattr(preflight, "machine_bytes", lambda: None)
    config = with_value(default_config, "batched_attention", "T", 10**5)
    unknown = "this machine's memory is unknown; memory.limit_gib sets a limit"
    assert preflight.limit(config) == (None, unknown)
    assert preflight.errors(config) == []
    config["memory"] = {"limit_gib": 16}
    [message] = preflight.errors(config)
    assert message.endswith("in one job; the limit is 16 GiB (memory.limit_gib)"), message


def test_the_command_line_refuses_it_too(tmp_path):
    out = tmp_path / "x.parquet"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.run(
        [sys.executable, "-m", "attnrepro", "run", "batched_attention", "--set", "T=100000",
         "--out", str(out), "--config", str(REPO / "config" / "config.yaml")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    assert "batched_attention.T: 100000 needs about" in proc.stderr
    assert not out.exists()


# --- Snakemake stops before any job, and the previous output survives --------------------

@pytest.mark.parametrize("setting, named", [
    ("batched_attention:\n  T: 1000000000\n", "batched_attention.T: 1000000000 is greater than the maximum"),
    ("batched_attention:\n  T: 100000\nmemory:\n  limit_gib: 16\n",
     "batched_attention.T: 100000 needs about"),
    ("train:\n  steps: 1000000000000\n", "train.steps: 1000000000000 is greater than the maximum"),
])
def test_snakemake_stops_before_any_job_and_keeps_the_previous_output(tmp_path, setting, named):
    root = copy_repo(tmp_path / "repo")
    previous = root / plan.output_path("batched_attention", "default")
    previous.parent.mkdir(parents=True)
    previous.write_bytes(b"the previous run's table")
    (root / "bad.yaml").write_text(setting)
    # a real run (not -n) of the experiment's target: its rule would rebuild the file
    proc = snakemake(root, "batched_attention", "--forceall",
                     configfile="config/small.yaml bad.yaml", timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert named in out, out[-3000:]
    assert "Job stats" not in out and "rule batched_attention_case" not in out
    assert previous.read_bytes() == b"the previous run's table"


def test_a_job_asks_for_its_estimate_with_the_margin_and_the_overhead_in_megabytes():
    params = {"d": 8, "n": [64, 4096]}
    estimate = memory.estimate("score_memory", params)
    assert estimate > 100 * 2**20  # the (4096, 4096) float32 scores: the margin is not lost in the rounding
    expected = -(-(1.25 * estimate + 400 * 2**20) // 10**6)
    assert preflight.job_mem_mb("score_memory", params) == expected
    assert (preflight.MARGIN, preflight.OVERHEAD, preflight.MB) == (1.25, 400 * 2**20, 10**6)


def test_the_local_budget_is_the_limit_in_megabytes_rounded_down(monkeypatch):
    assert preflight.budget_mb({"memory": {"limit_gib": 1.5}}) == 1610  # 1.5 GiB = 1610.6 MB
    monkeypatch.setattr(preflight, "machine_bytes", lambda: 10 * GIB + 123)
    assert preflight.budget_mb({"memory": {"limit_gib": None}}) == int(0.8 * (10 * GIB + 123)) // 10**6
    monkeypatch.setattr(preflight, "machine_bytes", lambda: None)  # this machine's memory is unknown
    assert preflight.budget_mb({}) is None


def test_a_list_of_names_weighs_by_its_length_and_a_list_of_sizes_by_its_largest():
    import math

    assert preflight._weight(["Meera", "bought", "a"], 2) == 2 * math.log(3)  # tokens: their count
    assert preflight._weight([64, 4096, 512], 1) == math.log(4096)
    assert preflight._weight("copy", 1) == 0.0 and preflight._weight(0, 1) == 0.0


def test_an_article_s_memory_limit_above_the_limit_is_refused_naming_its_key(default_config):
    """An article checked from its text: its listings' interpreter up to its memory limit, beside
    the check's own process (preflight.check_bytes), must fit; exactly the limit fits, a byte less not."""
    config = copy.deepcopy(default_config)
    config["articles"] = [*config["articles"], {"id": "post", "text": "post.md", "sha256": "0" * 64,
                                                "title": "A post", "memory_limit_mib": 6144}]
    needed = preflight.check_bytes(6144)
    assert needed == 6144 * 2**20 + preflight.OVERHEAD
    assert preflight.article_errors(config, needed, "the limit given") == []
    [message] = preflight.article_errors(config, needed - 1, "the limit given")
    assert message == (f"articles[3].memory_limit_mib: 6144 MiB lets its check need {needed / GIB:.3g} GiB "
                       "(its listings' interpreter and the check itself); the limit is "
                       f"{(needed - 1) / GIB:.3g} GiB (the limit given)")
    config["memory"] = {"limit_gib": 4}
    assert ("articles[3].memory_limit_mib: 6144 MiB lets its check need 6.39 GiB (its listings' interpreter "
            "and the check itself); the limit is 4 GiB (memory.limit_gib)") in errors_of(config)
    assert preflight.check_mem_mb(None) == math.ceil(preflight.check_bytes(4096) / 10**6)
    assert preflight.check_mem_mb(6144) == math.ceil((6144 * 2**20 + preflight.OVERHEAD) / 10**6)
    # an entry that is no mapping is the schema's to refuse, not the pre-flight's to crash on
    assert preflight.article_errors({"articles": ["post.md"]}, 1, "the limit given") == []
