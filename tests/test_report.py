"""The report layer's plumbing: result loading, table rendering, the catalog."""

import copy
import re

import pandas as pd
import pytest

from attnrepro import evidence as evidence_products
from attnrepro.run import io
from attnrepro.dag import plan
from attnrepro.dag.plan import output_of as parse
from attnrepro.report.products import catalog, render
from attnrepro.report import index
from attnrepro.report.products.results import Loader

from conftest import copy_repo, planned_jobs, small_config, snakemake


def test_parse_results_paths():
    assert parse("results/data/001/scale_table/d_k-8_scaled-true.parquet") == (
        "scale_table", "main", "d_k-8_scaled-true")
    assert parse("x/data/000/attention_vs_sdpa/default.weights.parquet") == (
        "attention_vs_sdpa", "weights", "default")
    with pytest.raises(ValueError):
        parse("results/data/000/not_an_experiment/default.parquet")


def test_parse_case_names_with_dots():
    assert parse("results/data/001/grad_check/post_ln-false_eps-0.0001.parquet") == \
        ("grad_check", "main", "post_ln-false_eps-0.0001")
    assert parse("results/data/001/grad_check/post_ln-true_eps-0.0001.tensors.parquet") == \
        ("grad_check", "tensors", "post_ln-true_eps-0.0001")


def _two_cases(tmp_path):
    """Two cases of scale_table, a (v = 1.0) and b (v = 2.0), as a run writes them: their paths."""
    paths = []
    for case, value in (("a", 1.0), ("b", 2.0)):
        path = tmp_path / "data" / "001" / "scale_table" / f"{case}.parquet"
        io.write_parquet(pd.DataFrame({"v": [value]}), path, {})
        paths.append(path)
    return paths


def test_loader_reads_exactly_its_inputs(tmp_path):
    paths = _two_cases(tmp_path)
    io.write_parquet(pd.DataFrame({"v": [9.0]}), tmp_path / "data/001/scale_table/stale.parquet", {})
    frame = Loader(paths)("scale_table")
    assert frame.sort_values("case")[["case", "v"]].values.tolist() == [["a", 1.0], ["b", 2.0]]
    with pytest.raises(FileNotFoundError):
        Loader(paths)("scale_table", "weights")


def test_loader_reads_each_file_once_and_hands_out_copies(tmp_path, monkeypatch):
    paths = _two_cases(tmp_path)
    reads = []
    read = io.read_parquet
    monkeypatch.setattr(io, "read_parquet", lambda path: reads.append(path) or read(path))
    load = Loader(paths)
    first = load("scale_table")
    first.loc[:, "v"] = -1.0  # a caller that edits its table in place
    second = load("scale_table")
    assert sorted(second["v"]) == [1.0, 2.0]
    assert sorted(map(str, reads)) == sorted(map(str, paths))  # two calls, one read per file
    with pytest.raises(FileNotFoundError):  # a missing table is not cached as an empty one
        load("scale_table", "weights")
    with pytest.raises(FileNotFoundError):
        load("scale_table", "weights")


def test_markdown_keeps_the_printed_digits(tmp_path):
    table = render.Table(pd.DataFrame({"d_k": [8], "w": [0.4240]}), {"w": "{:.4f}"}, "a note")
    text = render.markdown(table, "Title", "001")
    assert "0.4240" in text and text.startswith("# Title") and "Article 001. a note" in text
    render.write_table(table, tmp_path / "t.md", tmp_path / "t.csv")
    assert pd.read_csv(tmp_path / "t.csv")["w"].tolist() == [0.424]


def test_every_product_reads_registered_experiments(default_config):
    for product in catalog.PRODUCTS.values():
        assert product.kind in ("table", "figure")
        assert set(product.experiments) <= set(plan.EXPERIMENTS), product.name
        assert catalog.input_files(product, default_config)
    names = [p.name for p in catalog.PRODUCTS.values()]
    assert len(names) == len(set(names))


# --- products that read train's ablation cases ----------------------------------------------------

ABLATION_PRODUCTS = {"ablations", "copy_without_position", "ablation_bars"}


def _with_ablations(ablations):
    """The small config with ``train.ablations`` replaced (None: the key removed)."""
    config = copy.deepcopy(small_config())
    if ablations is None:
        del config["train"]["ablations"]
    else:
        config["train"]["ablations"] = ablations
    return config


def _names(config):
    return {p.name for p in catalog.enabled(config)}


@pytest.mark.parametrize("ablations", [{}, None], ids=["empty", "absent"])
def test_ablation_products_leave_the_run_without_ablations(ablations):
    config = _with_ablations(ablations)
    assert ABLATION_PRODUCTS <= _names(small_config())
    assert _names(small_config()) - _names(config) == ABLATION_PRODUCTS
    outputs = set(catalog.all_outputs(config))
    dropped = {path for name in ABLATION_PRODUCTS for path in catalog.PRODUCTS[name].outputs.values()}
    assert not dropped & outputs
    assert catalog.PRODUCTS["train_accuracy"].outputs["md"] in outputs  # the grid's products stay


def test_copy_without_position_needs_an_ablation_without_position():
    # it reads the ablations whose position table is off (no_position in config.yaml), whatever their name
    scaling = _names(_with_ablations({"no_scaling": {"scale": False}}))
    assert {"ablations", "ablation_bars"} <= scaling and "copy_without_position" not in scaling
    assert "copy_without_position" in _names(_with_ablations({"blind": {"position": False}}))


def test_ablation_products_need_their_base_run_in_the_grid():
    config = copy.deepcopy(small_config())
    config["train"]["ablation_base"] = {**config["train"]["ablation_base"], "L": 5}  # small grid: L = 6 only
    assert not ABLATION_PRODUCTS & _names(config)


@pytest.mark.full
def test_dry_run_without_ablations_plans_no_ablation_product(tmp_path):
    root = copy_repo(tmp_path / "repo")
    path = root / "config" / "config.yaml"
    text = path.read_text()
    block = re.search(r"^  ablations:.*\n(?:    .*\n)*", text, re.M)
    path.write_text(text[:block.start()] + "  ablations: {}\n" + text[block.end():])
    proc = snakemake(root, "-n")
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = planned_jobs(proc)
    assert jobs.get("table_train_accuracy") == 1
    assert not {"table_ablations", "table_copy_without_position", "figure_ablation_bars"} & set(jobs)
    # the run's trainings, and apart the seed distribution's others (on by default)
    assert jobs["train_case"] == len(plan.cases("train", _with_ablations({})))
    assert jobs["seed_training_case"] == len(plan.seed_extra_cases(_with_ablations({})))


# --- results/README.md ----------------------------------------------------------------------------


@pytest.mark.parametrize("sweep", [False, True])
@pytest.mark.parametrize("build", [False, True])
def test_index_lists_the_evidence_under_each_switch(sweep, build):
    # plain dicts: seed_distribution.build need not be in the schema for the index to read it
    config = copy.deepcopy(small_config())
    config["numerics"] = {**(config.get("numerics") or {}), "sweep": sweep}
    config["seed_distribution"] = {**(config.get("seed_distribution") or {}), "build": build}
    text = index.lines(config)
    evidence = text[text.index("## Evidence for the ledger"):text.index("## Logs")]
    rows = evidence.splitlines()

    def row(start):
        found = [r for r in rows if r.startswith(start)]
        assert len(found) == 1, (start, rows)
        return found[0]

    for key in ("csv", "md"):
        if sweep:
            assert "Numerics sweep, claim by claim" in row(f"- `numerics/ledger_numerics.{key}`:")
        if build:
            assert "Seed distributions of article 001" in row(f"- `seeds/seed_distribution.{key}`:")
    if sweep:
        assert "Numerics sweep as a grid" in row("- `numerics/ledger_numerics.svg`:")
        row("- `numerics/<setting>/data/<article>/<experiment>/<case>")
        assert "Numerics sweep (" not in evidence
    else:
        assert "`numerics/ledger_numerics." not in evidence.replace("`numerics/ledger_numerics.{", "")
        off = row("- Numerics sweep (")
        assert "`snakemake --cores 2 numerics`" in off and "`numerics.sweep: true`" in off
    if build:
        assert "Per-token and per-sequence accuracy by L" in row("- `seeds/seed_distribution.svg`:")
        assert "Seed distributions (" not in evidence
    else:
        off = row("- Seed distributions (")
        assert "`snakemake --cores 2 seeds`" in off and "`seed_distribution.build: true`" in off
    for product in evidence_products.enabled(config).values():  # every switched-on file, under results/
        for path in product.paths.values():
            assert f"`{path.removeprefix('results/')}`" in evidence
