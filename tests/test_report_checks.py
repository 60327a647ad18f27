"""The report's tables and figures of the verification listings, built from real experiment outputs."""

import re

import pandas as pd
import pytest

from attnrepro.dag import plan
from attnrepro.report.products import catalog, formats, render

from conftest import REPO
from report_helpers import assert_csv_at_full_precision, build, labelled, loader, markdown, row

MODULES = {f"attnrepro.report.products.{m}"
           for m in ("tables_checks", "figures_checks")}
PRODUCTS = sorted(p.name for p in catalog.PRODUCTS.values() if p.module in MODULES)
FIGURES = sorted(p.name for p in catalog.PRODUCTS.values() if p.module in MODULES and p.kind == "figure")


@pytest.fixture(scope="session")
def load(tmp_path_factory, run_case, default_config):
    """A Loader over the Parquet of every experiment these products read, all cases, default config."""
    needed = sorted({e for name in PRODUCTS for e in catalog.PRODUCTS[name].experiments})
    return loader(tmp_path_factory.mktemp("report_checks"), {
        (experiment, case): run_case(experiment, case)
        for experiment in needed for case in plan.cases(experiment, default_config)})


def test_products_are_registered_with_captions():
    assert len(PRODUCTS) >= 20 and len(FIGURES) == 6
    for name in PRODUCTS:
        assert (REPO / "workflow" / "report" / f"{name}.rst").is_file(), name


@pytest.mark.parametrize("name", [n for n in PRODUCTS if n not in FIGURES])
def test_every_table_builds_with_a_note_and_no_missing_value(name, load, tmp_path):
    table = build(name, load)
    assert isinstance(table, render.Table) and len(table.data) and table.note
    render.write_table(table, tmp_path / "t.md", tmp_path / "t.csv")
    text = (tmp_path / "t.md").read_text()
    assert not re.search(r"\bnan\b|<NA>|None", text), text
    assert_csv_at_full_precision(table, tmp_path / "t.csv")


def test_the_csv_keeps_the_digits_the_markdown_rounds(load, tmp_path):
    """Markdown at the printed precision, CSV at full precision: a round-off figure and a printed
    statistic read back from the CSV as the very doubles of the Parquet files, not as printed."""
    for name, column, experiment, source in (
        ("attention_check", "max |numpy - torch|", "attention_vs_sdpa", "max_abs_diff_torch"),  # 3.33e-16
        ("scale_sweep", "|J| without", "scale_sweep", "jacobian_norm_unscaled"),  # 0.3221 for d_k = 4
    ):
        table = build(name, load)
        render.write_table(table, tmp_path / f"{name}.md", tmp_path / f"{name}.csv")
        assert column in assert_csv_at_full_precision(table, tmp_path / f"{name}.csv")
        stored = load(experiment).sort_values("case" if "d_k" not in table.data else "d_k")[source].tolist()
        csv = pd.read_csv(tmp_path / f"{name}.csv")[column].tolist()
        assert csv == stored  # the Parquet's doubles, bit for bit
        printed = [table.formats[column].format(v) for v in stored]
        md = (tmp_path / f"{name}.md").read_text()
        for text, value in zip(printed, csv):
            assert f"| {text} " in md and float(text) != value, (text, value)  # the Markdown rounds


def test_scale_sweep_prints_the_published_digits(load):
    text = markdown("scale_sweep", load)
    assert row(text, "1024")[1:] == ["31.927", "32.000", "0.963", "0.0504", "0.248", "0.3053"]
    assert row(text, "4")[1:] == ["1.986", "2.000", "0.426", "0.3221", "0.234", "0.2967"]


def test_pipes_in_headers_do_not_split_markdown_columns(load):
    header = row(markdown("scale_sweep", load), "d_k")
    assert header[-1] == "\\|J\\| with" and len(header) == 7


def test_mask_table_prints_the_published_digits(load):
    text = markdown("mask_before_after", load)
    assert row(text, "query")[-2:] == ["row sum before", "row sum after"]
    assert row(text, "1")[1:] == ["0.859", "0.141", "0.000", "0.000", "0.000", "1.000", "0.031"]
    assert "0.8317" in text
    patterns = markdown("mask_patterns", load)  # the listing's "sequence 2", last query
    assert row(patterns, "causal AND padding", "1", "4")[3:] == ["1", "1", "1", "0", "0"]


def test_causal_change_keeps_exact_zeros_before_the_change(load):
    text = markdown("causal_change", load)
    assert row(text, "0")[1:] == ["no", "2.3e-01", "0.0e+00"]
    assert row(text, "5")[1:] == ["yes", "3.4e-01", "4.1e-01"]


def test_exercises_print_the_solution_figures(load):
    text = markdown("exercises", load)
    for printed in ("8.9e+06", "7.39", "3,152,384", "75,657,216", "144.3", "1,610,612,736", "10.6", "0.188"):
        assert f"| {printed} " in text, printed


def test_article_003_tables_print_the_published_rows(load):
    meera = row(markdown("self_attention_weights", load), "Meera")
    assert meera[1:] == ["0.03", "0.32", "0.12", "0.51", "0.02"]
    assert row(markdown("causal_weights", load), "a")[1:] == ["0.57", "0.40", "0.03", "0.00", "0.00"]
    assert row(markdown("saturation", load), "64")[1:] == ["5.73", "0.94", "0.38"]
    assert row(markdown("positional_encoding", load), "1")[1:4] == ["0.841", "0.540", "0.100"]
    assert row(markdown("torch_modules", load), "block parameters")[1] == "8544"


def test_scale_table_prints_the_published_digits_under_the_listings_headers(load):
    text = markdown("scale_table", load)
    assert row(text, "d_k")[:7] == ["d_k", "divided", "Var(q.k)", "sd scores", "max weight", "entropy",
                                    "sensitivity"]
    assert row(text, "8", "no")[2:] == ["7.98", "2.825", "0.4240", "2.0727", "0.7203"]
    assert row(text, "512", "yes")[2:] == ["512.59", "1.001", "0.1075", "3.6848", "0.9611"]


def test_scale_table_note_reads_the_stored_maxima(load):
    def edited(experiment, table="main"):
        frame = load(experiment, table)
        if experiment == "scale_table":
            return frame.assign(max_entropy=9.87654, max_sensitivity=0.12345)
        return frame

    note = build("scale_table", edited).note
    assert "= 9.8765" in note and "= 0.1235" in note  # the stored columns, not ln(T) and 1 - 1/T again


def test_position_check_heatmap_draws_the_rotation_table(load, default_config):
    section = default_config["permutation_position"]
    image = build("position_check_heatmap", load).axes[0].get_images()[0].get_array()
    assert image.shape == (section["table_length"], section["d"])
    stored = load("permutation_position", "encoding").set_index(["position", "dimension"])["value"]
    last = (section["table_length"] - 1, section["d"] - 1)
    assert image[1, 0] == stored[(1, 0)] and image[-1, -1] == stored[last]


def test_round_off_tables_say_so(load):
    names = ("attention_check", "multihead_check", "position_check", "sdpa_check", "multihead_permutation")
    for name in names:
        assert "round-off" in build(name, load).note, name


def test_matrix_keeps_the_numeric_order_of_rows_and_columns():
    long = pd.DataFrame([{"query": i, "key": j, "w": 100 * i + j} for i in (10, 2) for j in range(12)])
    wide = formats.matrix(long, "query", "key", "w", "key {}".format)
    assert list(wide.columns) == ["query"] + [f"key {j}" for j in range(12)]
    assert wide["query"].tolist() == [2, 10] and wide["key 11"].tolist() == [211, 1011]


def test_per_row_formats():
    data = pd.DataFrame({"q": ["a", "b"], "v": [3152384, 0.1875]})
    table = render.Table(data, {"v": ["{:,.0f}", "{:.3f}"]})
    assert table.formatted()["v"].tolist() == ["3,152,384", "0.188"]
    with pytest.raises(ValueError):
        render.Table(table.data, {"v": ["{}"]}).formatted()


@pytest.mark.parametrize("name", FIGURES)
def test_figures_have_titles_and_labelled_axes(name, load):
    assert labelled(build(name, load)), name


def test_scale_curves_plot_the_measured_columns(load):
    fig = build("scale_sweep_curves", load)
    unscaled = fig.axes[0].get_lines()[0].get_ydata()
    expected = load("scale_sweep").sort_values("d_k")["max_weight_unscaled"].to_numpy()
    assert list(unscaled) == list(expected)
    assert fig.axes[0].get_xscale() == "log"


def test_mask_bars_show_the_row_sums(load):
    bars = build("mask_before_after_heatmaps", load).axes[0]
    heights = [round(p.get_height(), 3) for p in bars.patches]
    assert 0.031 in heights and heights.count(1.0) >= len(heights) // 2


def test_svg_writing_is_deterministic(load, tmp_path):
    for name in ("scale_table_curves", "mask_before_after_heatmaps"):
        render.write_figure(build(name, load), tmp_path / "a.svg")
        render.write_figure(build(name, load), tmp_path / "b.svg")
        first = (tmp_path / "a.svg").read_bytes()
        assert first.startswith(b"<?xml") and first == (tmp_path / "b.svg").read_bytes(), name
