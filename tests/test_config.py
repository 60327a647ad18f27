"""Configuration validation: every problem is refused with a message naming its key."""

import copy
import subprocess
import sys

import pytest

from attnrepro import config as cfg

from conftest import REPO


def errors_of(config):
    with pytest.raises(cfg.ConfigError) as info:
        cfg.validate(config)
    return str(info.value)


def test_default_config_is_valid(default_config):
    assert cfg.validate(copy.deepcopy(default_config))


@pytest.mark.parametrize(
    "section, key, value, expected",
    [
        ("scale_sweep", "trials", -5, "scale_sweep.trials: -5 is less than the minimum of 1"),
        ("scale_sweep", "trials", 2.5, "scale_sweep.trials: 2.5 is not of type 'integer'"),
        ("scale_table", "d_k", [], "scale_table.d_k"),
        ("attention_vs_sdpa", "seed", "zero", "attention_vs_sdpa.seed: 'zero' is not of type 'integer'"),
        ("multihead_vs_torch", "h", 5,
         "multihead_vs_torch.d: 16 is not divisible by multihead_vs_torch.h = 5"),
        ("permutation_position", "d", 15, "permutation_position.d"),
    ],
)
def test_bad_values_name_their_key(default_config, section, key, value, expected):
    config = copy.deepcopy(default_config)
    config[section][key] = value
    assert expected in errors_of(config)


def test_unknown_keys_are_refused(default_config):
    config = copy.deepcopy(default_config)
    config["scale_sweep"]["trails"] = 10
    config["no_such_experiment"] = {}
    message = errors_of(config)
    assert "scale_sweep: Additional properties are not allowed ('trails' was unexpected)" in message
    assert "'no_such_experiment' was unexpected" in message


def test_missing_config_file_is_named(tmp_path):
    with pytest.raises(cfg.ConfigError, match="config file not found: .*nope.yaml"):
        cfg.load(tmp_path / "nope.yaml")


def test_snakemake_refuses_bad_config_before_any_job(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("multihead_vs_torch:\n  h: 3\n")
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", str(bad)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode != 0
    assert ("multihead_vs_torch.d: 16 is not divisible by multihead_vs_torch.h = 3"
            in proc.stdout + proc.stderr)
    assert "Job stats" not in proc.stdout + proc.stderr
