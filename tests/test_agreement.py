"""One number, one value: a claim's table cell reads as the ledger's reproduced value.

The statistics over seeds are computed once (attnrepro.report.products.statistics) with the article's
arithmetic; every claim that a table prints names its cell (``printed`` in published.yaml), and
attnrepro.report.ledger.agreement compares the two (the CI gate on the default run, here on the small run)."""

import pandas as pd
import pytest

from attnrepro.report.ledger import agreement, verdicts
from attnrepro.report.products import render, statistics, tables_decoder
from conftest import REPO
from report_helpers import FrameLoad

# sort, L = 4, seeds 0, 1, 2: the per-token accuracies of the default run
TOKEN = [0.998, 0.992, 0.9965]


def _runs():
    return pd.DataFrame({"task": "sort", "L": 4, "seed": [0, 1, 2], "ablation": "full",
                         "token_accuracy": TOKEN,
                         "sequence_accuracy": [0.97, 0.99, 0.98], "n_parameters": 27125,
                         "d": 32, "heads": 4, "layers": 2, "d_ff": 128, "batch": 32, "lr": 0.003,
                         "steps": 1500, "alphabet": 20, "scale": True, "post_ln": False, "position": True,
                         "eval_sequences": 500, "eval_seed": 999})


CLAIM = verdicts.Claim.from_dict({
    "id": "001.train.sort-L4.token-mean", "article": "001", "section": "s", "claim": "c",
    "published": "0.995", "class": "stochastic", "location": {"line": 1, "column": 1},
    "source": {"experiment": "train", "where": {"task": "sort", "L": 4, "ablation": "full"},
               "column": "token_accuracy", "reduce": "mean"},
    "printed": {"table": "train_accuracy", "row": {"task": "sort", "L": 4}, "column": "per-token mean"}})


def test_the_mean_over_seeds_is_the_articles_numpy_mean_in_seed_order():
    assert statistics.mean(TOKEN) == 0.9954999999999999  # np.mean([...]) of the listing: prints 0.995
    grouped = pd.DataFrame({"g": 1, "v": TOKEN}).groupby("g")["v"].mean().iloc[0]
    assert grouped == 0.9955000000000002  # pandas' own: prints 0.996, what the table printed before
    summary = statistics.over_seeds(_runs(), ["task", "L"], ["token_accuracy"])
    assert summary["token_accuracy_mean"].tolist() == [0.9954999999999999]
    assert summary["token_accuracy_min"].tolist() == [0.992] and summary["runs"].tolist() == [3]
    # in the order the article's loop visits the seeds, whatever the order of the files
    shuffled = pd.DataFrame({"task": "sort", "L": 4, "seed": [2, 1, 0], "x": [0.3, 0.2, 0.1]})
    assert statistics.mean(shuffled["x"]) == 0.19999999999999998  # in the files' order
    assert statistics.over_seeds(shuffled, ["task", "L"], ["x"])["x_mean"].tolist() == [0.20000000000000004]
    assert verdicts.reproduced({"experiment": "e", "column": "x", "reduce": "mean"},
                             FrameLoad({("e", "main"): shuffled}))[0] == 0.20000000000000004


def test_the_trainings_table_prints_the_ledgers_digit(tmp_path):
    load = FrameLoad({("train", "main"): _runs()})
    table = tables_decoder.build_train_accuracy(load)
    render.write_table(table, tmp_path / "train_accuracy.md", tmp_path / "train_accuracy.csv")
    row = verdicts.evaluate([CLAIM], load)
    assert row["reproduced"].tolist() == ["0.995"]
    assert "| 0.995 " in (tmp_path / "train_accuracy.md").read_text()
    assert agreement.disagreements([CLAIM], row, tmp_path) == []
    stale = pd.read_csv(tmp_path / "train_accuracy.csv")
    stale.loc[0, "per-token mean"] = 0.9955000000000002  # a builder with pandas' mean
    stale.to_csv(tmp_path / "train_accuracy.csv", index=False)
    assert agreement.disagreements([CLAIM], row, tmp_path) == [
        "claim 001.train.sort-L4.token-mean: table train_accuracy {'task': 'sort', 'L': 4} 'per-token mean' "
        "prints 0.996 at the article's precision (np.float64(0.9955000000000002)), the ledger 0.995"]


def test_a_printed_cell_that_is_not_there_is_a_disagreement_and_a_row_of_another_grid_is_not(tmp_path):
    pd.DataFrame({"task": ["sort"], "L": [6], "per-token mean": [0.99]}).to_csv(
        tmp_path / "train_accuracy.csv", index=False)
    row = pd.DataFrame({"id": [CLAIM.id], "reproduced": ["0.995"]})
    assert agreement.disagreements([CLAIM], row, tmp_path) == []  # the run's grid holds no L = 4
    moved = verdicts.Claim.from_dict(_as_dict(CLAIM, column="per-token average"))
    assert agreement.disagreements([moved], row, tmp_path) == [
        f"claim {CLAIM.id}: {tmp_path}/train_accuracy.csv has no column 'per-token average'"]
    gone = verdicts.Claim.from_dict(_as_dict(CLAIM, table="no_such_table"))
    assert agreement.disagreements([gone], row, tmp_path) == [
        f"claim {CLAIM.id}: no table {tmp_path}/no_such_table.csv"]


def _as_dict(claim, **printed):
    return {"id": claim.id, "article": claim.article, "section": claim.section, "claim": claim.claim,
            "published": claim.published, "class": claim.cls, "source": claim.source,
            "location": claim.location, "printed": {**claim.printed, **printed}}


def test_a_printed_entry_names_table_row_and_column():
    with pytest.raises(ValueError, match="printed must be"):
        verdicts.Claim.from_dict({**_as_dict(CLAIM), "printed": {"table": "t", "column": "c"}})


def test_every_printed_claim_names_a_table_of_the_catalog():
    from attnrepro.report.products import catalog

    claims = verdicts.load_claims(REPO / "config/published.yaml")
    printed = [c for c in claims if c.printed]
    assert len(printed) >= 390
    tables = {n for n, p in catalog.PRODUCTS.items() if p.kind == "table"}
    assert {c.printed["table"] for c in printed} <= tables
    assert all(c.source["experiment"] in catalog.PRODUCTS[c.printed["table"]].experiments for c in printed)


def test_every_printed_claim_of_the_small_run_reads_as_its_ledger(small_run):
    claims = verdicts.load_claims(REPO / "config/published.yaml")
    table = pd.read_csv(small_run / "results/ledger.csv", dtype=str, keep_default_na=False)
    assert agreement.disagreements(claims, table, small_run / "results/tables") == []
    checked = [c for c in claims if c.printed and agreement.cell(small_run / "results/tables", c.printed)[0]
               is not None]
    assert len(checked) > 150


def test_a_printed_time_reads_at_the_digits_the_ledger_shows(tmp_path):
    """A raw time is written with the digits that were judged (0.00151 s, not the article's 0.002):
    its cell must read as that text, and a cell with another value at those digits disagrees."""
    timing = verdicts.Claim.from_dict({
        "id": "000.quadratic_cost.n-512.mean-seconds", "article": "000", "section": "s", "claim": "c",
        "published": "0.001", "class": "machine-bound", "raw_time": True, "why": "raw-order",
        "source": {"experiment": "quadratic_cost", "where": {"n": 512}, "column": "mean_seconds"},
        "location": {"line": 1, "column": 1},
        "printed": {"table": "quadratic_cost", "row": {"n": 512}, "column": "mean time (s, machine-bound)"}})
    pd.DataFrame({"n": [512], "mean time (s, machine-bound)": [0.0015089]}).to_csv(
        tmp_path / "quadratic_cost.csv", index=False)
    row = pd.DataFrame({"id": [timing.id], "reproduced": ["0.00151"]})
    assert agreement.disagreements([timing], row, tmp_path) == []  # at the article's 0.001 it reads 0.002
    row.loc[0, "reproduced"] = "0.00152"
    assert agreement.disagreements([timing], row, tmp_path) == [
        f"claim {timing.id}: table quadratic_cost {{'n': 512}} 'mean time (s, machine-bound)' prints 0.00151 "
        "at the ledger's digits (np.float64(0.0015089)), the ledger 0.00152"]


def test_a_cell_of_a_mixed_column_reads_as_its_value(tmp_path):
    """A CSV column of mixed cells keeps text: "True" and "False" are booleans, "4.0" a number, "NA"
    (a row label, never a missing value) and other words stay text."""
    assert [agreement._typed(v) for v in ("True", "False", "4.0", "NA", "[0 1]", 2.5)] == [
        True, False, 4.0, "NA", "[0 1]", 2.5]
    pd.DataFrame({"check": ["NA", "b"], "value": ["True", "0.5"]}).to_csv(tmp_path / "t.csv", index=False)
    assert agreement.cell(tmp_path, {"table": "t", "row": {"check": "NA"}, "column": "value"}) == (True, None)


def test_a_numpy_printed_claim_reads_at_its_printers_decimals(tmp_path):
    """A value the article's NumPy printer rounded to 3 decimals and printed without trailing zeros
    ("0.54" for 0.5404) reads at those decimals: 0.5404 agrees with "0.54", 0.5414 does not."""
    printed = verdicts.Claim.from_dict({**_as_dict(CLAIM), "published": "0.54", "decimals": 3})
    pd.DataFrame({"task": ["sort"], "L": [4], "per-token mean": [0.5404]}).to_csv(
        tmp_path / "train_accuracy.csv", index=False)
    row = pd.DataFrame({"id": [CLAIM.id], "reproduced": ["0.54"]})
    assert agreement.disagreements([printed], row, tmp_path) == []
    pd.DataFrame({"task": ["sort"], "L": [4], "per-token mean": [0.5414]}).to_csv(
        tmp_path / "train_accuracy.csv", index=False)
    assert agreement.disagreements([printed], row, tmp_path) == [
        f"claim {CLAIM.id}: table train_accuracy {{'task': 'sort', 'L': 4}} 'per-token mean' prints 0.541 "
        "at the article's precision (np.float64(0.5414)), the ledger 0.54"]


def test_every_claim_is_compared_past_one_without_a_cell_or_a_value(tmp_path):
    """A claim printed nowhere, or that the ledger could not reproduce, is skipped, not the end."""
    pd.DataFrame({"task": ["sort"], "L": [4], "per-token mean": [0.9]}).to_csv(
        tmp_path / "train_accuracy.csv", index=False)
    unprinted = verdicts.Claim.from_dict({k: v for k, v in _as_dict(CLAIM).items() if k != "printed"})
    row = pd.DataFrame({"id": [CLAIM.id], "reproduced": ["0.995"]})
    assert len(agreement.disagreements([unprinted, CLAIM], row, tmp_path)) == 1
    missing = pd.DataFrame({"id": ["other", CLAIM.id], "reproduced": ["", "0.995"]})
    other = verdicts.Claim.from_dict({**_as_dict(CLAIM), "id": "other"})
    assert len(agreement.disagreements([other, CLAIM], missing, tmp_path)) == 1


def test_a_one_row_tables_cell_is_named_by_its_table_and_column(tmp_path):
    one_row = verdicts.Claim.from_dict({**_as_dict(CLAIM), "printed": {
        "table": "attention_check", "row": {}, "column": "max diff"}})
    pd.DataFrame({"max diff": [0.9]}).to_csv(tmp_path / "attention_check.csv", index=False)
    row = pd.DataFrame({"id": [CLAIM.id], "reproduced": ["0.995"]})
    assert agreement.disagreements([one_row], row, tmp_path) == [
        f"claim {CLAIM.id}: table attention_check 'max diff' prints 0.900 at the article's precision "
        "(np.float64(0.9)), the ledger 0.995"]
