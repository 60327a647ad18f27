"""Article 001's trainings: the jobs of the grid, one short training end to end, the map, config rules."""

import copy
import logging

import numpy as np
import pytest

from attnrepro.dag import config as cfg
from attnrepro.dag import plan
from attnrepro.experiments import attention_map
from attnrepro.run.io import write_parquet


@pytest.fixture(scope="module")
def short_run(run_case):
    """copy, L = 6, seed 0 for 60 steps, evaluated on 50 questions."""
    return run_case("train", "copy-L6-seed0", steps=60, eval_sequences=50)


def test_default_grid_is_the_articles_23_runs(default_config):
    cases = plan.cases("train", default_config)
    assert len(cases) == 23
    assert list(cases)[:2] == ["copy-L4-seed0", "copy-L4-seed1"] and "sort-L8-seed2" in cases
    ablation = cases["ablation-post_ln_high_lr"]
    assert (ablation["task"], ablation["L"], ablation["seed"], ablation["lr"], ablation["post_ln"]) == \
        ("copy", 6, 0, 0.01, True)
    assert cases["ablation-no_position"]["position"] is False and cases["copy-L6-seed0"]["position"] is True
    assert plan.input_paths("attention_map", default_config)["parameters"] == \
        "results/data/001/train/copy-L6-seed0.parameters.parquet"


def test_widening_the_grid_is_a_config_edit(default_config):
    config = copy.deepcopy(default_config)
    config["train"].update(seeds=list(range(10)), lengths=list(range(2, 11)))
    cfg.validate(config)
    assert len(plan.cases("train", config)) == 2 * 9 * 10 + 5


def test_short_training_end_to_end(short_run, caplog):
    main, curve = short_run["main"], short_run["curve"]
    sequences, parameters = short_run["sequences"], short_run["parameters"]
    row = main.iloc[0]
    assert len(main) == 1
    assert (row.task, row.L, row.seed, row.ablation, row.steps) == ("copy", 6, 0, "full", 60)
    assert row.n_parameters == 27253 == len(parameters)
    assert 0 <= row.token_accuracy <= 1 and 0 <= row.sequence_accuracy <= row.token_accuracy
    assert curve["step"].tolist() == [1, 10, 20, 30, 40, 50, 60]
    assert curve["loss"].iloc[-1] < 0.5 * curve["loss"].iloc[0]  # ln 20 ~ 3.0 at the start
    assert curve["loss"].iloc[-1] == row.final_loss
    assert len(sequences) == 50 and sequences["index"].tolist() == list(range(50))
    assert sequences["correct"].mean() == row.sequence_accuracy
    assert sequences["n_correct_tokens"].sum() / (50 * 6) == row.token_accuracy
    distinct = sequences["question"].map(lambda q: len(set(q.split())) == 6)
    assert (sequences["all_distinct"] == distinct).all()
    assert parameters.groupby("tensor").size()["b1.W1"] == 32 * 128
    # the sizes the prose derives: 60 steps of 32 questions out of 20^6, a guess scores 1/20
    assert (row.sequences_seen, row.sequence_space) == (60 * 32, 20**6)
    assert row.seen_share == 1920 / 64e6 and row.chance_token_accuracy == 0.05


def test_training_logs_its_progress(run_case, caplog):
    with caplog.at_level(logging.INFO, logger="attnrepro"):
        run_case("train", "sort-L4-seed1", steps=100, eval_sequences=10)
    assert any(r.getMessage().startswith("step 100/100 loss ") for r in caplog.records)


def test_without_position_the_table_stays_zero(run_case):
    tables = run_case("train", "ablation-no_position", steps=20, eval_sequences=10)
    params = tables["parameters"]
    assert not tables["main"].iloc[0].position
    assert (params.loc[params.tensor == "P", "value"] == 0).all()
    assert (params.loc[params.tensor == "E", "value"] != 0).all()


def test_attention_map_of_a_trained_model(short_run, default_config, tmp_path):
    inputs = {}
    for table in ("main", "parameters"):
        inputs[table] = tmp_path / f"{table}.parquet"
        write_parquet(short_run[table], inputs[table], {})
    tables = attention_map.run(default_config["attention_map"], inputs)
    main, weights = tables["main"], tables["weights"]
    assert list(zip(main["layer"], main["head"])) == [(layer, h) for layer in (1, 2) for h in range(4)]
    assert len(weights) == 2 * 4 * 12 * 12
    sums = weights.groupby(["layer", "head", "query"])["weight"].sum()
    np.testing.assert_allclose(sums, 1.0, atol=1e-12)
    assert (weights.loc[weights["key"] > weights["query"], "weight"] == 0).all()  # causal
    answer = weights[weights["query"] >= 6]
    top = answer.loc[answer.groupby(["layer", "head", "query"])["weight"].idxmax()]
    first = main.iloc[0]
    assert list(first.argmax_list) == top[(top["layer"] == 1) & (top["head"] == 0)]["key"].tolist()
    assert (main["constant"] == main["offset"].notna()).all()


# --- configuration rules ---------------------------------------------------------------------

def _errors(default_config, edit):
    config = copy.deepcopy(default_config)
    edit(config)
    return cfg.schema_errors(config) or cfg.semantic_errors(config)


@pytest.mark.parametrize("edit, key", [
    (lambda c: c["train"].update(tasks=["copy", "reverse"]), "train.tasks[1]"),
    (lambda c: c["train"]["ablations"].update(no_scaling={"scaling": False}), "train.ablations.no_scaling"),
    (lambda c: c["train"].update(lengths=[4, 0]), "train.lengths[1]"),
    (lambda c: c["train"].update(heads=5), "train.d"),
    (lambda c: c["train"]["ablations"].update(wide={"heads": 3}), "train.ablations.wide"),
    (lambda c: c["train"].update(steps=-10), "train.steps"),
    (lambda c: c["train"].update(lr=-0.003), "train.lr"),
    (lambda c: c["train"]["ablations"]["pre_ln_high_lr"].update(lr=0), "train.ablations.pre_ln_high_lr.lr"),
    (lambda c: c["train"].update(seeds=[0, 1.5]), "train.seeds[1]"),
    (lambda c: c["train"].update(seeds=[]), "train.seeds"),
    (lambda c: c["train"].update(tasks=[]), "train.tasks"),
    (lambda c: c["attention_map"].update(run="copy-L7-seed0"), "attention_map.run"),
    (lambda c: c["attention_map"].update(sequence=[1, 2, 3]), "attention_map.sequence"),
    (lambda c: c["attention_map"].update(sequence=[21, "SEP", 1]), "attention_map.sequence[0]"),
    (lambda c: c["block_params"].update(breakdown_width=128), "block_params.breakdown_width"),
    (lambda c: c["grad_check"].update(length=14), "grad_check.length"),
    (lambda c: c["autograd_check"].update(position=[]), "autograd_check.position"),
])
def test_config_errors_name_their_key(default_config, edit, key):
    errors = _errors(default_config, edit)
    assert errors, "the invalid config was accepted"
    assert any(e.startswith(key + ":") for e in errors), errors
