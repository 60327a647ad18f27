"""Impossible sizes stop Snakemake before any job: schema bounds and the memory pre-flight."""

import copy
import os
import subprocess
import sys

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


@pytest.mark.parametrize("params, named", [
    ({"B": 1000, "T": 30}, "B"),  # 30^2 = 900 < 1000
    ({"B": 1000, "T": 40}, "T"),  # 40^2 = 1600 > 1000
    ({"B": [2, 1000], "T": 40}, "T"),  # a list: its largest value
    ({"B": [2, 2000], "T": 40}, "B"),
    ({"B": "many", "T": 2}, "T"),  # a value that is no size weighs nothing
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
    assert set(estimates.ESTIMATES) == set(plan.EXPERIMENTS)


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
