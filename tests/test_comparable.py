"""A run under another config says what it compares: a claim computed with other parameters than
the article's, or whose row the config left out, is "other parameters", naming its keys
(attnrepro.report.ledger.comparable); never "differs" or "missing"."""

import types

import pandas as pd
import pytest

from attnrepro.dag import config as cfg
from attnrepro.report.ledger import comparable, verdicts
from conftest import REPO, copy_run, snakemake
from report_helpers import FrameLoad


def _claim(id, source, published="0.5", **classed):
    return verdicts.Claim.from_dict({"id": id, "article": "000", "section": "s", "claim": "c",
                                   "published": published, "class": "exact", "source": source,
                                   "location": {"line": 1, "column": 1}, **classed})


SWEEP = _claim("000.sweep.std", {"experiment": "scale_sweep", "where": {"d_k": 4}, "column": "std"})
COST = _claim("000.cost.n-2048", {"experiment": "quadratic_cost", "where": {"n": 2048}, "column": "cells"},
              "4194304", **{"class": "echo", "why": "echo-derived"})  # n^2 (ledger.echoes)
LOAD = FrameLoad({("scale_sweep", "main"): pd.DataFrame({"d_k": [4, 16], "std": [0.5, 0.25]}),
                  ("quadratic_cost", "main"): pd.DataFrame({"n": [64, 128], "cells": [4096, 16384]})},
                 params={"default": {"seed": 1, "trials": 200}})
ARTICLE = comparable.Article(params={"scale_sweep": {"default": {"seed": 1, "trials": 4000}},
                                     "quadratic_cost": {"default": {"seed": 1, "trials": 200}}},
                             grid={"quadratic_cost": {"n": ["quadratic_cost.n", [64, 128]]}},
                             sections={"scale_sweep": ["trials"], "quadratic_cost": ["n"]})


def test_other_parameters_name_each_key_with_both_values_and_a_left_out_row_its_key():
    table = verdicts.evaluate([SWEEP, COST], LOAD, article=ARTICLE).set_index("id")
    assert table.loc[SWEEP.id, "verdict"] == "other parameters"
    assert table.loc[SWEEP.id, "reproduced"] == "0.5"  # shown, not compared
    assert table.loc[SWEEP.id, "reason"] == ("computed with other parameters than the article's: "
                                             "scale_sweep.trials = 200; the article: 4000")
    assert (table.loc[COST.id, "verdict"], table.loc[COST.id, "reproduced"]) == ("other parameters", "")
    assert table.loc[COST.id, "reason"] == ("not computed: quadratic_cost.n = [64, 128] has no 2048 (this "
                                            "run's config left out the article's row)")


def test_a_claim_with_the_articles_parameters_is_judged_as_ever():
    same = comparable.Article(params={"scale_sweep": {"default": {"seed": 1, "trials": 200}}})
    assert verdicts.evaluate([SWEEP], LOAD, article=same)["verdict"].tolist() == ["reproduced"]
    assert verdicts.evaluate([SWEEP], LOAD)["verdict"].tolist() == ["reproduced"]  # no article: as before
    assert verdicts.evaluate([COST], LOAD, article=same)["verdict"].tolist() == ["missing"]  # no key names it
    unplanned = comparable.Article(params={})
    assert ("scale_sweep case default is not one of the article's"
            in verdicts.evaluate([SWEEP], LOAD, article=unplanned)["reason"].iloc[0])


def test_a_value_of_other_parameters_is_shown_as_the_article_prints_it():
    """A range row by row shows its rows' span, a NumPy-printed value its printer's decimals."""
    load = FrameLoad({("train", "main"): pd.DataFrame({"L": [4, 4, 6], "seed": [0, 1, 0],
                                                       "acc": [0.99, 0.97, 0.9449]})},
                     params={"default": {"steps": 400}})
    article = comparable.Article(params={"train": {"default": {"steps": 2500}}})
    rows = verdicts.Claim.from_dict({"id": "rows", "article": "000", "section": "s", "claim": "c",
                                   "published": "95-99%", "class": "stochastic",
                                   "source": {"experiment": "train", "column": "acc", "reduce": "mean",
                                              "per": "L"}})
    printed = _claim("printed", {"experiment": "train", "where": {"L": 6}, "column": "acc"}, "0.54")
    printed.decimals = 3
    table = verdicts.evaluate([rows, printed], load, article=article).set_index("id")
    assert table["reproduced"].to_dict() == {"rows": "94-98%", "printed": "0.945"}
    assert table["verdict"].eq("other parameters").all()
    assert table["reason"].eq("computed with other parameters than the article's: train.steps = 400; "
                              "the article: 2500").all()


def test_the_gate_refuses_a_claim_that_is_not_comparable():
    from attnrepro.report.ledger import golden

    table = verdicts.evaluate([SWEEP], LOAD, article=ARTICLE).assign(numerics="canonical")
    assert golden.ledger_problems(table) == [
        "claim 000.sweep.std: not comparable with the article (computed with other parameters than the "
        "article's: scale_sweep.trials = 200; the article: 4000)"]


def _upstream(experiment):
    """The experiments whose results ``experiment`` reads (the attention map: train's model)."""
    from attnrepro.dag import plan

    paths = plan.input_paths(experiment, cfg.load(REPO / "config/config.yaml")).values()
    return {plan.output_case(p)[0] for p in paths}


def _sections():
    """The experiments whose sections config/small.yaml changes, and those reading their results."""
    small, article = cfg.load(REPO / "config/small.yaml"), cfg.load(REPO / "config/config.yaml")
    from attnrepro.dag import plan

    changed = {s for s in plan.EXPERIMENTS
               if s in small and any(article[s].get(k) != v for k, v in small[s].items())}
    return changed | {e for e in plan.EXPERIMENTS if _upstream(e) & changed}


def _ledger(root):
    return pd.read_csv(root / "results/ledger.csv", dtype=str, keep_default_na=False).set_index("id")


def test_the_small_run_judges_no_claim_of_other_parameters_as_differs_or_missing(small_run):
    claims = {c.id: c for c in verdicts.load_claims(REPO / "config/published.yaml")}
    table = _ledger(small_run)
    changed = _sections()
    assert changed >= {"scale_sweep", "train", "quadratic_cost", "attention_map"}
    for claim_id, row in table.iterrows():
        experiment = claims[claim_id].source["experiment"]
        if experiment in changed:
            assert row["verdict"] in ("other parameters", "reproduced", "within tolerance") or \
                claims[claim_id].cls == "machine-bound", (claim_id, row.to_dict())
        if row["verdict"] == "other parameters":
            named = {experiment, *_upstream(experiment)}
            assert any(f"{e}." in row["reason"] for e in named), (claim_id, row["reason"])
    assert not (table["verdict"] == "missing").any(), table[table["verdict"] == "missing"].index.tolist()
    others = table[table["verdict"] == "other parameters"]
    assert len(others) > 50 and "scale_sweep.trials = 200; the article: 4000" in " ".join(others["reason"])
    text = (small_run / "results/LEDGER.md").read_text()
    assert "**This run's config is not the article's** (config/config.yaml) in:" in text
    assert "scale_sweep (trials)" in text


def test_claims_of_experiments_the_small_config_leaves_alone_are_judged_as_in_the_default_run(small_run):
    claims = {c.id: c for c in verdicts.load_claims(REPO / "config/published.yaml")}
    golden = pd.read_csv(REPO / "tests/golden/ledger.csv", dtype=str, keep_default_na=False).set_index("id")
    table = _ledger(small_run)
    changed = _sections()
    alone = [i for i in golden.index
             if claims[i].source["experiment"] not in changed and not claims[i].source.get("over")]
    assert len(alone) > 150
    assert {i: table.loc[i, "reproduced"] for i in alone} == {i: golden.loc[i, "reproduced"] for i in alone}
    assert not table.loc[alone, "verdict"].eq("other parameters").any()


@pytest.mark.full
def test_an_override_of_one_key_turns_exactly_its_experiments_claims_into_other_parameters(
        small_run, tmp_path):
    root = tmp_path / "copy"
    copy_run(small_run, root)  # only what the key feeds reruns
    before = _ledger(root)
    (root / "one.yaml").write_text("self_attention_tokens:\n  seed: 1\n")
    proc = snakemake(root, "results/ledger.csv", configfile="config/small.yaml one.yaml")
    assert proc.returncode == 0, proc.stderr[-3000:]
    after = _ledger(root)
    claims = {c.id: c for c in verdicts.load_claims(REPO / "config/published.yaml")}
    moved = after.index[after["verdict"] != before["verdict"]]
    mine = [i for i in after.index if claims[i].source["experiment"] == "self_attention_tokens"]
    assert set(moved) <= set(mine) and len(moved) > 10
    assert after.loc[mine, "verdict"].eq("other parameters").all()
    assert after.loc[mine, "reason"].str.contains("self_attention_tokens.seed = 1; the article: 0").all()


def test_a_claim_whose_upstream_model_was_trained_otherwise_is_other_parameters():
    """The attention map reads a trained model: its own parameters equal, the model's not."""
    class Load:
        def __call__(self, experiment, table="main"):
            return pd.DataFrame({"case": ["default"], "layer": [1]})

        def params(self, experiment, table="main"):
            return {"attention_map": {"default": ({"run": "copy-L6-seed0"}, "a.parquet")},
                    "train": {"copy-L6-seed0": ({"steps": 400, "seed": 0}, "t.parquet")}}[experiment]

    claim = types.SimpleNamespace(source={"experiment": "attention_map", "column": "layer"})
    article = comparable.Article(params={"attention_map": {"default": {"run": "copy-L6-seed0"}},
                                         "train": {"copy-L6-seed0": {"steps": 2500, "seed": 0}}})
    assert comparable.differing(claim, Load(), article) == ""  # no upstream declared: itself only
    article.upstream = {"attention_map": [["train", "copy-L6-seed0"]]}
    assert comparable.differing(claim, Load(), article) == "train.steps = 400; the article: 2500"
    article.params["train"]["copy-L6-seed0"]["steps"] = 400
    assert comparable.differing(claim, Load(), article) == ""
