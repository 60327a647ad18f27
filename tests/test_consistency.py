"""Inputs combined into one product agree on their parameters, by rule and by hand.

A seed distribution of 100-step trainings must not judge a run's 60-step ones; a sweep of other
sizes must not be cited for the run's cases; by hand, `python -m attnrepro.report` checks its
inputs against a config as a rule does (attnrepro.report.ledger.consistency, attnrepro.report.cli)."""

import os
import subprocess
import sys

import pandas as pd
import pytest

from attnrepro.run import io
from attnrepro.dag import plan
from attnrepro.report.evidence_tables import numerics_evaluate, seeds_evaluate
from attnrepro.report.ledger import consistency, verdicts
from attnrepro.report.commands import ledger as ledger_command
from attnrepro.report.products.results import Loader
from conftest import REPO

TRAIN = {"task": "sort", "L": 4, "ablation": "full", "steps": 60, "lr": 0.003}


def _claim(**source):
    return verdicts.Claim.from_dict({
        "id": "t.mean", "article": "001", "section": "s", "claim": "c", "published": "0.99",
        "class": "stochastic", "location": {"line": 1, "column": 1},
        "source": {"experiment": "train", "column": "acc", "reduce": "mean",
                   "where": {"task": "sort", "L": 4, "ablation": "full"}, **source}})


def _trainings(root, seeds, **params):
    """Main tables of sort L = 4 trainings, one per seed, recording ``params`` over TRAIN."""
    paths = []
    for seed in seeds:
        case = f"sort-L4-seed{seed}"
        path = root / plan.output_path("train", case)
        frame = pd.DataFrame({"task": ["sort"], "L": [4], "ablation": ["full"], "seed": [seed],
                              "acc": [0.95 + seed / 1000]})
        io.write_parquet(frame, path, {"params": {**TRAIN, **params, "seed": seed}})
        paths.append(path)
    return paths


def _seed_csv(tmp_path, **params):
    paths = _trainings(tmp_path / "seeds", range(6), **params)
    table = seeds_evaluate.evaluate([_claim()], Loader(paths))
    out = tmp_path / "seed_distribution.csv"
    table.to_csv(out, index=False)
    return out, table


def test_the_seed_distribution_records_what_its_trainings_share_and_refuses_a_mix(tmp_path):
    _, table = _seed_csv(tmp_path)
    assert consistency.decode(table["params"].iloc[0]) == TRAIN  # the seed left out
    mixed = _trainings(tmp_path / "mixed", [0, 1]) + _trainings(tmp_path / "mixed", [2], steps=100)
    with pytest.raises(io.InconsistentInputs, match=r"sort-L4-seed2.parquet: computed with steps = 100, "
                                                    r"but .*sort-L4-seed0.parquet with steps = 60"):
        seeds_evaluate.evaluate([_claim()], Loader(mixed))


def test_the_ledger_refuses_a_seed_distribution_of_other_trainings(tmp_path):
    csv, _ = _seed_csv(tmp_path, steps=100)
    run = Loader(_trainings(tmp_path / "run", range(3)))
    published = tmp_path / "published.yaml"
    published.write_text("claims:\n  - {id: t.mean, article: '001', section: s, claim: c, published: '0.99', "
                         "class: stochastic, location: {line: 1, column: 1}, source: {experiment: train, "
                         "column: acc, reduce: mean, where: {task: sort, L: 4, ablation: full}}}\n")
    out = {"csv_path": tmp_path / "l.csv", "md_path": tmp_path / "l.md"}
    with pytest.raises(io.InconsistentInputs, match=r"seed_distribution.csv: computed with steps = 100, "
                                                    r"but .*run.*sort-L4-seed0.parquet with steps = 60"):
        ledger_command.write(published, run, seeds_csv=csv, **out)
    assert not out["csv_path"].exists()
    same, _ = _seed_csv(tmp_path / "same")
    assert ledger_command.write(published, run, seeds_csv=same, **out) == 0
    assert "lies at percentile" in pd.read_csv(out["csv_path"])["reason"].iloc[0]


def test_the_ledger_refuses_evidence_that_records_no_parameters(tmp_path):
    csv, table = _seed_csv(tmp_path)
    table.drop(columns="params").to_csv(csv, index=False)
    with pytest.raises(io.ResultError, match="records no parameters of its trainings"):
        seeds_evaluate.check_params(seeds_evaluate.read(csv), Loader([]), csv)


def test_the_ledger_refuses_a_sweep_of_other_parameters(tmp_path):
    run = Loader(_trainings(tmp_path / "run", range(3)))
    long = pd.DataFrame({"id": ["t.mean"], "params": [consistency.encode(
        {"train/sort-L4-seed1": {**TRAIN, "seed": 1, "lr": 0.01}, "train/unplanned-case": {"x": 1}})]})
    with pytest.raises(io.InconsistentInputs,
                       match=r"sweep.csv: computed with lr = 0.01, but .*seed1.parquet with lr = 0.003"):
        numerics_evaluate.check_params(long, [], run, "sweep.csv")
    long["params"] = consistency.encode({"train/sort-L4-seed1": {**TRAIN, "seed": 1}})
    numerics_evaluate.check_params(long, [], run, "sweep.csv")  # the same: nothing to say


def _by_hand(root, *args):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ATTNREPRO_RUN")}
    env["PYTHONPATH"] = str(REPO / "src")
    return subprocess.run([sys.executable, "-m", "attnrepro.report", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def test_a_table_by_hand_checks_its_inputs_against_a_config_as_its_rule_does(small_run, tmp_path):
    inputs = sorted(str(p) for p in (small_run / "results/data/001/scale_table").glob("*.parquet"))
    out = ["--md", str(tmp_path / "t.md"), "--csv", str(tmp_path / "t.csv"), "--inputs", *inputs]
    refused = _by_hand(small_run, "table", "scale_table", *out)
    assert refused.returncode == 1
    assert "written with repetitions = 20, but this run's config plans repetitions = " in refused.stderr
    assert "checked against what config/config.yaml plans" in refused.stderr
    assert not (tmp_path / "t.md").exists()
    ok = _by_hand(small_run, "--configfile", "config/small.yaml", "table", "scale_table", *out)
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert (tmp_path / "t.md").is_file()
