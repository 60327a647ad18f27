"""Impossible sizes stop Snakemake before any job: schema bounds and the memory pre-flight."""

import copy
import importlib
import os
import subprocess
import sys
import tracemalloc

import pytest

from attnrepro import config as cfg
from attnrepro import estimates, plan, preflight

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


def test_a_training_ablation_names_its_own_key(default_config):
    config = copy.deepcopy(default_config)
    config["train"]["ablations"]["huge"] = {"batch": 1000000}
    config["memory"] = {"limit_gib": 16}
    assert "train.ablations.huge.batch: 1000000 needs about" in errors_of(config)


def test_formula_inputs_are_not_bounded_by_memory(default_config):
    """exercises and kv_cache.realistic compute with their sizes, never allocate them."""
    config = copy.deepcopy(default_config)
    config["exercises"].update(T=10**8, d=10**5, batch=1000)
    config["kv_cache"]["realistic"]["T"] = 10**8
    config["memory"] = {"limit_gib": 1}
    assert cfg.validate(config)


def test_default_and_small_configs_fit_in_2_gib(default_config):
    """The run's own jobs need at most a GiB, so the defaults pass on any machine with 2 GiB."""
    for config in (copy.deepcopy(default_config), small_config()):
        config["memory"] = {"limit_gib": 2}
        assert cfg.validate(config)
    assert preflight.errors(default_config, 1 * GIB) == []  # 1 GiB, given directly


def test_every_experiment_has_an_estimate_of_its_own():
    assert set(estimates.ESTIMATES) == set(plan.EXPERIMENTS)


def test_the_default_limit_is_80_percent_of_this_machine():
    total = preflight.machine_bytes()
    assert total and total > 2**28
    limit, source = preflight.limit({"memory": {"limit_gib": None}})
    assert limit == pytest.approx(0.8 * total)
    assert source.startswith("80% of this machine's")
    assert preflight.limit({"memory": {"limit_gib": 3}}) == (3 * GIB, "memory.limit_gib")


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


# --- the estimate against a measured peak -------------------------------------------------

def measured_peak(experiment_id, params):
    """Largest extra memory tracemalloc (NumPy reports its buffers to it) sees during run()."""
    module = importlib.import_module(plan.EXPERIMENTS[experiment_id].module)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        module.run(params)
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("experiment_id, case, overrides, low, high", [
    # 4 (B, T, T) float64 arrays at the softmax: measured 61.7 MiB against 62.5 MiB estimated
    ("batched_attention", None, {"T": 1000}, 1.0, 1.25),
    # the causal float64 attention of the timing experiments: 35.0 MiB against 36.0 MiB
    ("causal_timing", None, {"T": [128, 1024], "trials": [2, 2]}, 1.0, 1.25),
    # the decoder: every layer's cache and Adam's copies, counted generously (x1.7 here)
    ("train", "copy-L6-seed0", {"steps": 5, "eval_sequences": 2000}, 1.0, 2.0),
])
def test_the_estimate_is_within_a_stated_factor_of_the_measured_peak(
        default_config, experiment_id, case, overrides, low, high):
    """estimate / measured peak lies in [low, high]: never below the peak, at most ``high`` above."""
    cases = plan.cases(experiment_id, default_config)
    params = {**cases[case or next(iter(cases))], **overrides}
    ratio = estimates.estimate(experiment_id, params) / measured_peak(experiment_id, params)
    assert low <= ratio <= high, ratio


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
