"""Echoes by derivation (report.ledger.echoes): one stated rule, applied to every claim."""

import functools

import pytest

from attnrepro.dag import plan
from attnrepro.experiments import causal_weights, mask_before_after
from attnrepro.report.ledger import echoes, verdicts
from attnrepro.report.ledger.claims import Claim

MASK_EXPERIMENTS = {"causal_weights": causal_weights, "mask_before_after": mask_before_after}


@pytest.fixture(scope="module")
def load(default_config):
    """Results tables of the two masked experiments, run here (milliseconds each)."""
    @functools.lru_cache(maxsize=None)
    def tables(experiment):
        (params,) = plan.cases(experiment, default_config).values()
        return MASK_EXPERIMENTS[experiment].run(params)

    def loader(experiment, table):
        if experiment not in MASK_EXPERIMENTS:
            raise AssertionError(f"the rule read {experiment}: only a masked softmax needs its data")
        return tables(experiment)[table]

    return loader


def claim(source, cls="exact", why=None, id="x.y"):
    return Claim(id=id, article="003", section="s", claim="c", published="1", cls=cls, source=source, why=why)


def test_a_declared_column_is_derived_with_its_declared_reason(load):
    source = {"experiment": "causal_weights", "table": "weights", "where": {"query": 1, "key": 3},
              "column": "allowed"}
    declared = plan.EXPERIMENTS["causal_weights"].derived["weights.allowed"]
    assert echoes.derivation(claim(source), load) == declared
    ratio = {"experiment": "quadratic_cost", "where": {"n": 4096}, "column": "cells",
             "over": {"where": {"n": 512}, "column": "cells"}}
    assert echoes.derivation(claim(ratio), load) == "n^2"
    computed_over = {**ratio, "over": {"where": {"n": 512}, "column": "mean_seconds"}}
    assert echoes.derivation(claim(computed_over), load) is None
    assert echoes.derivation(claim({"experiment": "quadratic_cost", "column": "mean_seconds"}), load) is None


def test_the_sum_of_one_softmax_row_is_derived_and_no_other_reduction(load):
    row = {"experiment": "attention_vs_sdpa", "table": "weights", "where": {"query": 2}, "column": "weight",
           "reduce": "sum"}
    assert echoes.derivation(claim(row), load) == echoes.SOFTMAX_SUM
    assert echoes.derivation(claim({**row, "where": {"query": [1, 2]}}), load) is None  # two rows
    assert echoes.derivation(claim({**row, "where": {"query": 2, "key": 1}}), load) is None  # one cell
    assert echoes.derivation(claim({**row, "reduce": "max"}), load) is None
    assert echoes.derivation(claim({**row, "reduce": None, "where": {"query": 2, "key": 1}}), load) is None


@pytest.mark.parametrize("query, key, expected", [
    (0, 0, echoes.ALONE),  # the first query sees itself alone
    (0, 1, echoes.MASKED), (2, 4, echoes.MASKED), (1, 2, echoes.MASKED),
    (1, 0, None), (1, 1, None), (4, 4, None),  # weights the data decide
])
def test_a_weight_is_derived_only_where_its_mask_forces_it(load, query, key, expected):
    source = {"experiment": "causal_weights", "table": "weights", "where": {"query": query, "key": key},
              "column": "weight"}
    assert echoes.derivation(claim(source), load) == expected
    before = {"experiment": "mask_before_after", "table": "weights", "where": {"query": query, "key": key},
              "column": "before"}
    assert echoes.derivation(claim(before), load) == expected


def test_the_class_in_published_yaml_must_agree_with_the_rule():
    with pytest.raises(ValueError, match=r"claim x\.y in config/published\.yaml: class exact.*echo-derived"):
        echoes.check(claim({}), echoes.SOFTMAX_SUM)
    with pytest.raises(ValueError, match=r"claim x\.y .*why: echo-derived, but no rule"):
        echoes.check(claim({}, cls="echo", why="echo-derived"), None)
    echoes.check(claim({}, cls="echo", why="echo-derived"), echoes.MASKED)
    echoes.check(claim({}, cls="echo", why="echo-config"), None)  # a configuration value: no rule needed
    echoes.check(claim({}), None)


def test_no_mask_cell_forced_weight_or_softmax_row_sum_is_counted_as_computed(load):
    """Every claim of published.yaml against the rule: the mask cells (85), the forced weights and
    the softmax row sums are echoes, and nothing the rule does not derive is classed echo-derived."""
    claims = verdicts.load_claims("config/published.yaml")
    found = {}
    for c in claims:
        why = echoes.derivation(c, load)
        echoes.check(c, why)
        if why is not None:
            found[why] = found.get(why, 0) + 1
    masks = sum(1 for c in claims if c.source["column"] in ("allowed", "visible", "valid"))
    assert masks == 85
    assert all(c.cls == "echo" for c in claims if c.source["column"] in ("allowed", "visible", "valid"))
    assert found[echoes.SOFTMAX_SUM] == 20  # summed here, or declared (batched_attention, mask_before_after)
    assert found[echoes.MASKED] + found[echoes.ALONE] == 22


def test_the_ledger_refuses_a_claim_classed_against_the_rule(load):
    source = {"experiment": "causal_weights", "table": "weights", "where": {"query": 0, "key": 3},
              "column": "weight"}
    wrong = claim(source, id="003.causal_weights.weights.x")
    with pytest.raises(ValueError, match=r"003\.causal_weights\.weights\.x .*a weight its mask forbids"):
        verdicts.evaluate([wrong], load)
    right = claim(source, cls="echo", why="echo-derived", id="003.causal_weights.weights.x")
    right.published = "0"
    ledger = verdicts.evaluate([right], load)
    assert ledger.loc[0, ["class", "verdict"]].tolist() == ["echo", "reproduced"]


def test_only_one_cell_of_a_masked_softmax_as_it_is_can_be_forced(load):
    one = {"experiment": "causal_weights", "table": "weights", "where": {"query": 0, "key": 3},
           "column": "weight"}
    assert echoes.derivation(claim({**one, "reduce": "single"}), load) == echoes.MASKED  # one cell
    assert echoes.derivation(claim({**one, "reduce": "mean"}), load) is None  # a statistic, not the cell
    assert echoes.derivation(claim({**one, "where": {"query": 0, "key": [3, 4]}}), load) is None  # two cells


def test_a_softmax_of_a_main_table_is_read_from_main(monkeypatch):
    """A source without ``table`` reads ``main``, here as everywhere (claims.reproduced)."""
    from dataclasses import replace

    import pandas as pd

    softmax = {"main.w": {"rows": ["q"], "mask": "m"}}
    experiment = replace(plan.EXPERIMENTS["causal_weights"], softmax=softmax)
    monkeypatch.setitem(plan.EXPERIMENTS, "causal_weights", experiment)
    frame = pd.DataFrame({"q": [0, 0], "k": [0, 1], "m": [True, False], "w": [1.0, 0.0]})
    read = []

    def load(experiment, table):
        read.append(table)
        return frame

    source = {"experiment": "causal_weights", "where": {"q": 0, "k": 1}, "column": "w"}
    assert echoes.derivation(claim(source), load) == echoes.MASKED and read == ["main"]


def test_a_refusal_says_where_the_rule_is_and_what_to_do():
    with pytest.raises(ValueError) as derived:
        echoes.check(claim({}, cls="echo", why="echo-config"), echoes.MASKED)  # not the rule's why
    assert str(derived.value).endswith("class it echo, why: echo-derived (report.ledger.echoes)")
    with pytest.raises(ValueError) as undeclared:
        echoes.check(claim({}, cls="echo", why="echo-derived"), None)
    assert str(undeclared.value).endswith(
        "no rule of report.ledger.echoes derives it: declare its column in its experiment's "
        "EXPERIMENT['derived'], or class it by what it computes")


def test_exercise_1s_arithmetic_on_d_k_is_derived_and_classed_echo(load):
    """sqrt(64) = 8, 2 * 8 = 16, e^16, 16 / 8 = 2, e^2: pen-and-paper arithmetic on the configuration's
    d_k, declared derived as exercise 2's is, so echoes by the rule, not exact computed claims."""
    claims = [c for c in verdicts.load_claims("config/published.yaml") if c.id.startswith("001.exercises.1.")]
    assert [c.source["column"] for c in claims] == [
        "variance", "sd", "raw_gap", "raw_ratio", "scaled_gap", "scaled_ratio"]
    for c in claims:
        why = echoes.derivation(c, load)
        assert why == plan.EXPERIMENTS["exercises"].derived[f"main.{c.source['column']}"], c.id
        assert why.startswith("the exercise's arithmetic on d_k: ")
        assert (c.cls, c.why) == ("echo", "echo-derived")
        echoes.check(c, why)
