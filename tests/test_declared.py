"""What a rule hands its job (attnrepro.dag.declared): its name and every input file, compacted
into one variable of the environment, or a refusal at DAG time when they cannot fit."""

import os

import pytest

from conftest import small_config

from attnrepro.dag import declared, plan
from attnrepro.run import reads


def _seeds(n):
    """A config whose seed distribution trains both tasks over three lengths and ``n`` seeds."""
    config = {**small_config(), "seed_distribution": {"build": True, "tasks": ["copy", "sort"],
                                                      "seeds": list(range(n))}}
    config["train"] = {**config["train"], "lengths": [4, 6, 8]}
    return config


def test_a_rule_hands_down_its_inputs_whole_and_a_thousand_seeds_fit():
    """The seeds job at the schema's largest (1000 seeds): its main tables fit one variable of the
    environment, compacted (plain, they would not); the shell word gives them back whole."""
    import shlex

    config = _seeds(1000)
    files = [*plan.seed_training_paths(config), "config/published.yaml", "src/attnrepro/jobs/seeds.py"]
    assert len(files) == 6002 and len(os.pathsep.join(files)) > reads.DECLARED_MAX
    words = declared.handed_down("seeds", files, config)
    assert len(words) < reads.DECLARED_MAX
    assert words.startswith("ATTNREPRO_RULE=seeds ATTNREPRO_DECLARED='0 config/published.yaml:0 results/")
    rule, assignment = shlex.split(words)
    name, _, value = assignment.partition("=")
    assert name == reads.DECLARED_ENV and reads.expand(value) == sorted(files)
    quoted = declared.handed_down("a b", [], config)
    assert shlex.split(quoted) == ["ATTNREPRO_RULE=a b", "ATTNREPRO_DECLARED="]


def test_a_job_with_more_inputs_than_its_environment_holds_is_refused_naming_the_keys():
    config = _seeds(1000)
    files = plan.seed_training_paths(config, plan.EXPERIMENTS["train"].tables)  # the archive's share
    size = len(reads.compact(files))
    assert size > reads.DECLARED_MAX
    with pytest.raises(ValueError) as refused:
        declared.handed_down("archive", files, config)
    assert str(refused.value) == (
        f"rule archive: {len(files)} input files take {size} bytes in ATTNREPRO_DECLARED, over the 120000 "
        "one variable of a job's environment may hold: fewer values of seed_distribution.seeds, "
        "seed_distribution.tasks")
    longest = "a" * (reads.DECLARED_MAX - 2)  # "0 " and the name: the bound exactly
    fits = declared.handed_down("r", [longest], config)
    assert fits == f"ATTNREPRO_RULE=r ATTNREPRO_DECLARED='0 {longest}'"
    with pytest.raises(ValueError, match=r"^rule r: 1 input files take 120001 bytes "):
        declared.handed_down("r", [longest + "a"], config)
    train = plan.all_outputs(_seeds(4))  # the run's own data: its experiments' keys, the most files'
    assert declared.fan_out(train + ["config/published.yaml"], config) == (
        "train.lengths, train.seeds, train.tasks")
    assert declared.fan_out(["config/published.yaml", "results/ledger.csv"], config) == (
        "the config lists that make its inputs")
    assert declared.fan_out([plan.output_path("attention_vs_sdpa", "default")], config) == (
        "the cases of attention_vs_sdpa")
