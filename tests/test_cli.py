"""`python -m attnrepro run/list` for people: config, --config, --set and --case into parameters.

A single value works for every fan-out key (grid keys, train's tasks, lengths and seeds); a dotted
key goes into a mapping; cross-references between sections are checked when the experiment that
reads them is planned; --config goes before or after the subcommand and overrides
config/config.yaml as `snakemake --configfile` does.
"""

import argparse
import copy
import os
import subprocess
import sys

import pytest

from attnrepro import cli
from attnrepro.dag import plan
from attnrepro.dag import config as cfg

from conftest import REPO

TRAIN_LISTS = ("tasks", "lengths", "seeds")  # train's fan-out keys (plan.train_cases)


def overridden(experiment, *sets, config=None):
    """The validated config after ``--set`` of each item of ``sets`` for ``experiment``."""
    args = argparse.Namespace(set=list(sets))
    return cli._with_overrides(args, copy.deepcopy(config or cfg.resolve()), plan.EXPERIMENTS[experiment])


def attnrepro(tmp_path, *args):
    """`python -m attnrepro ARGS` from the checkout; the CompletedProcess."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-m", "attnrepro", *map(str, args)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def main_table(path):
    from attnrepro.run import io

    return io.read_parquet(path).iloc[0]


# --- a single value for a fan-out key -------------------------------------------------------

def _fan_out_keys():
    keys = [(e.id, k) for e in plan.EXPERIMENTS.values() for k in e.grid]
    return keys + [("train", k) for k in TRAIN_LISTS]


@pytest.mark.parametrize("experiment, key", _fan_out_keys(), ids=lambda v: str(v))
def test_a_single_value_for_every_fan_out_key(experiment, key):
    default = cfg.resolve()[experiment][key]
    value = default[-1]
    config = overridden(experiment, f"{key}={str(value).lower()}")
    assert config[experiment][key] == [value]
    full = [c for c in plan.cases(experiment, config).values() if c.get("ablation", "full") == "full"]
    before = [c for c in plan.cases(experiment, cfg.resolve()).values()
              if c.get("ablation", "full") == "full"]
    assert len(full) * len(default) == len(before)  # one value of this key instead of len(default)
    assert all(c[plan_key(experiment, key)] == value for c in full)


def plan_key(experiment, key):
    """The parameter a case receives for a fan-out key (train: task, L, seed)."""
    return dict(zip(TRAIN_LISTS, ("task", "L", "seed")))[key] if experiment == "train" else key


def test_train_with_single_values_writes_that_training(tmp_path):
    """The issue's command line: one training, sort, L = 5, seed 7 (shrunk to 20 steps)."""
    out = tmp_path / "x.parquet"
    proc = attnrepro(tmp_path, "run", "train", "--set", "tasks=sort", "--set", "lengths=5",
                     "--set", "seeds=7", "--set", "steps=20", "--set", "eval_sequences=20", "--out", out)
    assert proc.returncode == 0, proc.stderr
    row = main_table(out)
    assert (row.task, row.L, row.seed, row.ablation, row.steps) == ("sort", 5, 7, "full", 20)


def test_scale_table_with_single_values(tmp_path):
    out = tmp_path / "s.parquet"
    proc = attnrepro(tmp_path, "run", "scale_table", "--set", "d_k=16", "--set", "scaled=true",
                     "--set", "repetitions=20", "--out", out)
    assert proc.returncode == 0, proc.stderr
    row = main_table(out)
    assert (row.d_k, bool(row.scaled)) == (16, True)


# --- dotted keys, ablations, values ---------------------------------------------------------

def test_dotted_keys_go_into_mappings():
    config = overridden("train", "ablation_base.L=5", "ablations.no_scaling.lr=1e-3")
    cases = plan.cases("train", config)
    assert cases["ablation-no_position"]["L"] == 5
    assert cases["ablation-no_scaling"]["lr"] == 0.001 and cases["ablation-no_scaling"]["scale"] is False
    assert overridden("kv_cache", "realistic.kv_heads=8")["kv_cache"]["realistic"]["kv_heads"] == [8]


def test_ablations_replaced_then_added():
    config = overridden("train", "ablations={}", "ablations.wide.d=64", "tasks=sort", "lengths=5", "seeds=7")
    assert list(plan.cases("train", config)) == ["sort-L5-seed7", "ablation-wide"]
    assert plan.cases("train", config)["ablation-wide"]["d"] == 64


@pytest.mark.parametrize("item, message", [
    ("nope=1", "unknown parameter 'nope' of train"),
    ("steps.x=1", "train.steps is 1500, not a mapping"),
    ("steps", "--set takes KEY=VALUE"),
])
def test_bad_sets_are_refused(item, message):
    with pytest.raises(SystemExit, match=message):
        overridden("train", item)


def test_a_bad_value_names_its_key():
    with pytest.raises(cfg.ConfigError, match=r"train\.ablations\.no_scaling\.scale: 3 is not of type"):
        overridden("train", "ablations.no_scaling.scale=3")


# --- cross-references: checked when the experiment that reads them is planned ----------------

def _map_names_missing_case():
    config = cfg.resolve()
    config["attention_map"]["run"] = "copy-L7-seed0"  # not a case of train
    return config


def test_a_reference_is_checked_when_its_reader_is_planned():
    config = _map_names_missing_case()
    assert cfg.validate(copy.deepcopy(config), experiments=["scale_table", "train"])
    for experiments in (None, ["attention_map"]):  # None: the whole run, as Snakemake validates
        with pytest.raises(cfg.ConfigError) as info:
            cfg.validate(copy.deepcopy(config), experiments=experiments)
        assert "  attention_map.run: 'copy-L7-seed0' is not a case of train" in str(info.value)


def test_single_train_values_leave_out_what_other_experiments_read():
    """With train's grid cut to sort-L5-seed7, attention_map.run and numerics.cases name cases
    that are gone: a run of train accepts it, the whole run refuses it, naming both keys."""
    config = overridden("train", "tasks=sort", "lengths=5", "seeds=7")
    with pytest.raises(cfg.ConfigError) as info:
        cfg.validate(config)
    assert "attention_map.run: 'copy-L6-seed0' is not a case of train" in str(info.value)
    assert "numerics.cases.train[0]: 'sort-L4-seed0' is not a case of train" in str(info.value)


def test_a_one_off_run_ignores_a_bad_reference_elsewhere(tmp_path):
    """scale_table under a config whose attention_map.run names a missing case of train."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("attention_map:\n  run: copy-L7-seed0\n")
    out = tmp_path / "s.parquet"
    proc = attnrepro(tmp_path, "run", "scale_table", "--config", bad, "--set", "repetitions=20", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert main_table(out).d_k == 8
    refused = attnrepro(tmp_path, "run", "attention_map", "--config", bad, "--out", tmp_path / "a.parquet")
    assert refused.returncode == 2 and "attention_map.run: 'copy-L7-seed0'" in refused.stderr


# --- --config: before or after the subcommand, over config/config.yaml ----------------------

@pytest.mark.parametrize("words", [
    ["--config", "A.yaml", "run", "train", "--out", "o"],
    ["run", "train", "--out", "o", "--config", "A.yaml"],
    ["--config", "A.yaml", "list"],
    ["list", "--config", "A.yaml"],
])
def test_config_before_or_after_the_subcommand(words):
    assert cli._parser().parse_args(words).config == "A.yaml"
    assert cli._parser().parse_args([w for w in words if w not in ("--config", "A.yaml")]).config is None


def test_config_file_overrides_the_defaults_as_snakemake_does():
    from snakemake.utils import update_config

    small = cfg.load(REPO / "config" / "small.yaml")
    expected = cfg.load(REPO / "config" / "config.yaml")
    update_config(expected, small)
    assert cfg.resolve(REPO / "config" / "small.yaml") == expected
    assert cfg.resolve() == cfg.load(REPO / "config" / "config.yaml")


def test_run_with_config_after_the_subcommand(tmp_path):
    """config/small.yaml (train: lengths [6], seeds [0], eval_sequences 50) over the defaults."""
    out = tmp_path / "t.parquet"
    proc = attnrepro(tmp_path, "run", "train", "--config", "config/small.yaml", "--set", "steps=20",
                     "--out", out)
    assert proc.returncode == 0, proc.stderr
    row = main_table(out)
    assert (row.task, row.L, row.seed, row.steps, row.eval_sequences) == ("copy", 6, 0, 20, 50)


def test_a_key_given_twice_in_a_set_value_is_refused():
    from attnrepro.dag import yamlfile

    with pytest.raises(yamlfile.DuplicateKey, match=r"--set ablations, line 1: key a.lr given twice"):
        overridden("train", "ablations={a: {lr: 0.1, lr: 0.2}}")
    assert overridden("train", "ablations={a: {lr: 0.1}}")["train"]["ablations"] == {"a": {"lr": 0.1}}
