"""The report layer's plumbing: result loading, table rendering, the catalog."""

import pandas as pd
import pytest

from attnrepro import io, plan
from attnrepro.report import catalog, render
from attnrepro.report.results import Loader, parse


def test_parse_results_paths():
    assert parse("results/data/001/scale_table/d_k-8_scaled-true.parquet") == ("scale_table", "main", "d_k-8_scaled-true")
    assert parse("x/data/000/attention_vs_sdpa/default.weights.parquet") == ("attention_vs_sdpa", "weights", "default")
    with pytest.raises(ValueError):
        parse("results/data/000/not_an_experiment/default.parquet")


def test_parse_case_names_with_dots():
    assert parse("results/data/001/grad_check/post_ln-false_eps-0.0001.parquet") == \
        ("grad_check", "main", "post_ln-false_eps-0.0001")
    assert parse("results/data/001/grad_check/post_ln-true_eps-0.0001.tensors.parquet") == \
        ("grad_check", "tensors", "post_ln-true_eps-0.0001")


def test_loader_reads_exactly_its_inputs(tmp_path):
    paths = []
    for case, value in (("a", 1.0), ("b", 2.0)):
        path = tmp_path / "data" / "001" / "scale_table" / f"{case}.parquet"
        io.write_parquet(pd.DataFrame({"v": [value]}), path, {})
        paths.append(path)
    io.write_parquet(pd.DataFrame({"v": [9.0]}), tmp_path / "data/001/scale_table/stale.parquet", {})
    frame = Loader(paths)("scale_table")
    assert frame.sort_values("case")[["case", "v"]].values.tolist() == [["a", 1.0], ["b", 2.0]]
    with pytest.raises(FileNotFoundError):
        Loader(paths)("scale_table", "weights")


def test_markdown_keeps_the_printed_digits(tmp_path):
    table = render.Table(pd.DataFrame({"d_k": [8], "w": [0.4240]}), {"w": "{:.4f}"}, "a note")
    text = render.markdown(table, "Title", "001")
    assert "0.4240" in text and text.startswith("# Title") and "Article 001. a note" in text
    render.write_table(table, tmp_path / "t.md", tmp_path / "t.csv")
    assert pd.read_csv(tmp_path / "t.csv")["w"].tolist() == [0.424]


def test_every_product_reads_registered_experiments(default_config):
    for product in catalog.PRODUCTS.values():
        assert product.kind in ("table", "figure")
        assert set(product.needs) <= set(plan.EXPERIMENTS), product.name
        assert catalog.input_files(product, default_config)
    names = [p.name for p in catalog.PRODUCTS.values()]
    assert len(names) == len(set(names))
