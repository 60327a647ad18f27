"""The report's tables and figures of article 001's decoder, built from real (short) experiment outputs.

The trainings are cut to a few steps: their accuracies are not the article's, so the
tests check formatting, selection and aggregation against the runs' own tables. The
article's digits are asserted where they are exact here (parameter counts, the gradient
check at eps = 1e-4, the expected share of distinct questions) and, for the attention
map, on a hand-made weight tensor passed through the experiment's own code.
"""

import numpy as np
import pytest

from attnrepro.dag import plan
from attnrepro.experiments import attention_map
from attnrepro.report.products import catalog, render

from conftest import REPO
from report_helpers import assert_table_complete, build, labelled, loader, markdown, row

MODULES = {"attnrepro.report.products.tables_decoder", "attnrepro.report.products.figures_decoder"}
PRODUCTS = sorted(p.name for p in catalog.PRODUCTS.values() if p.module in MODULES)
TABLES = [n for n in PRODUCTS if catalog.PRODUCTS[n].kind == "table"]
FIGURES = [n for n in PRODUCTS if catalog.PRODUCTS[n].kind == "figure"]
TRAIN_CASES = ("copy-L4-seed0", "copy-L6-seed0", "copy-L6-seed1", "sort-L6-seed0",
               "ablation-no_position", "ablation-post_ln")
SHORT = {"steps": 20, "eval_sequences": 40}  # a few steps: real tables, not the article's accuracies


def sharp_weights(T, first_query, back):
    """Hand-made causal weights (2 layers of 4 heads, (1, h, T, T) each) whose argmaxes are known.

    Layer 1, head 2 puts 0.996 on the key ``back`` positions before each answer query;
    heads 0 and 3 of layer 1 point there too, less sharply; head 1 and layer 2 point
    elsewhere (variable offsets). Rows before the answer are uniform over the visible keys.
    """
    w = np.zeros((2, 4, T, T))
    for q in range(T):
        w[:, :, q, :q + 1] = 1.0 / (q + 1)
    answers = range(first_query, T)
    for head, top in ((0, 0.835), (2, 0.996), (3, 0.767)):
        for q in answers:
            w[0, head, q, :q + 1] = (1 - top) / q
            w[0, head, q, q - back] = top
    for layer, head, keys in ((0, 1, [0, 3, 6, 6, 6, 5]), (1, 0, [0, 1, 0, 4, 10, 11])):
        for q, k in zip(answers, keys):
            w[layer, head, q, :q + 1] = 0.2 / q
            w[layer, head, q, k] = 0.8
    return [layer[None] for layer in w]


@pytest.fixture(scope="module")
def decoder(tmp_path_factory, run_case, default_config):
    """A Loader over block_params, grad_check, autograd_check (all cases), six short trainings and a map."""
    results = {("block_params", "default"): run_case("block_params")}
    for experiment in ("grad_check", "autograd_check"):
        results.update({(experiment, case): run_case(experiment, case)
                        for case in plan.cases(experiment, default_config)})
    results.update({("train", case): run_case("train", case, **SHORT) for case in TRAIN_CASES})
    root = tmp_path_factory.mktemp("report_decoder")
    loader(root, results)  # the trained model on disk, where the map reads it
    section = default_config["attention_map"]
    inputs = {t: root / plan.output_path("train", section["run"], t) for t in ("main", "parameters")}
    T, first = len(section["sequence"]), section["sequence"].index("SEP")
    with pytest.MonkeyPatch.context() as patch:  # the experiment's code, on known weights
        patch.setattr(attention_map, "attention_weights", lambda cache: sharp_weights(T, first, first))
        results[("attention_map", "default")] = attention_map.run(section, inputs)
    return loader(root, results)


def test_products_are_registered_with_captions():
    assert len(TABLES) == 9 and len(FIGURES) == 6
    for name in PRODUCTS:
        assert (REPO / "workflow" / "report" / f"{name}.rst").is_file(), name


@pytest.mark.parametrize("name", TABLES)
def test_every_table_builds_with_a_note_and_no_missing_value(name, decoder, tmp_path):
    table = build(name, decoder)
    assert_table_complete(table, tmp_path)


def test_block_tables_print_the_published_counts(decoder):
    text = markdown("block_params", decoder)
    assert row(text, "64")[1:] == ["256", "49984", "49984"]
    assert row(text, "256")[1:] == ["1024", "789760", "789760"]
    assert row(text, "512")[1:] == ["2048", "3152384", "3152384"]
    breakdown = markdown("block_breakdown", decoder)
    assert row(breakdown, "W_1 (d -> 4d)")[3:] == ["1048576", "1048576", "33.26%"]
    assert row(breakdown, "b_2")[3:5] == ["512", "512"]
    assert row(breakdown, "TOTAL")[3:] == ["3152384", "3152384", "100.00%"]


def test_gradient_check_prints_the_exact_rows_in_the_listing_order(decoder):
    text = markdown("grad_check", decoder)
    rows = [line.split("|")[1:3] for line in text.splitlines() if line.startswith("| p")]
    assert [[c.strip() for c in r] for r in rows] == [
        ["pre-LN", "1e-06"], ["pre-LN", "1e-04"], ["post-LN", "1e-06"], ["post-LN", "1e-04"]]
    assert row(text, "pre-LN", "1e-04")[2] == "9.94e-02"  # the published digits, exact here
    assert row(text, "post-LN", "1e-04")[2] == "6.60e-03"
    assert "round-off" in build("grad_check", decoder).note


def test_autograd_tables_give_the_worst_and_every_tensor(decoder):
    worst = build("autograd_check", decoder).data
    assert len(worst) == 8 and (worst["gradients: worst relative difference"] < 1e-12).all()
    tensors = build("autograd_tensors", decoder).data
    assert list(tensors.columns[2:]) == list(worst["variant"])
    assert tensors["tensor"].iloc[0] == "E"
    assert tensors.set_index("tensor").loc["b0.bk", "relative to"] == "model"
    assert list(tensors[worst["variant"]].max()) == list(worst["gradients: worst relative difference"])


def test_training_table_aggregates_the_seeds(decoder):
    runs = decoder("train").query("ablation == 'full'")
    table = build("train_accuracy", decoder)
    text = render.markdown(table)
    L6 = runs[(runs["task"] == "copy") & (runs["L"] == 6)]
    assert row(text, "copy", "6")[2:] == [
        "2", f"{L6['token_accuracy'].mean():.3f}", f"{L6['token_accuracy'].min():.3f}",
        f"{L6['sequence_accuracy'].mean():.3f}", f"{L6['sequence_accuracy'].min():.3f}"]
    assert row(text, "sort", "6")[2] == "1" and [c for c in table.data.columns][:2] == ["task", "L"]
    assert "27253 at L = 6" in table.note and "d_head=8" in table.note  # the article's model


def test_ablation_table_names_what_changed(decoder):
    text = markdown("ablations", decoder)
    runs = decoder("train").set_index("case")
    assert row(text, "full")[1:] == ["-", f"{runs.loc['copy-L6-seed0', 'final_loss']:.4f}",
                                     f"{runs.loc['copy-L6-seed0', 'token_accuracy']:.3f}",
                                     f"{runs.loc['copy-L6-seed0', 'sequence_accuracy']:.3f}"]
    assert row(text, "no position")[1] == "position = False"
    assert row(text, "post-LN")[1] == "post_ln = True"


def test_copy_without_position_split(decoder):
    text = markdown("copy_without_position", decoder)
    questions = decoder("train", "sequences").query("case == 'ablation-no_position'")
    distinct = questions["question"].map(lambda q: len(set(q.split())) == 6)
    cells = row(text, "no position", "False")
    assert cells[2:6] == [f"{questions.loc[distinct, 'correct'].mean():.3f}", str(distinct.sum()),
                          f"{questions.loc[~distinct, 'correct'].mean():.3f}", str((~distinct).sum())]
    assert cells[6:] == [f"{distinct.mean():.3f}", "0.436"]  # the article's expected share, exact
    assert "20*19*18*17*16*15/20^6" in build("copy_without_position", decoder).note


def test_attention_map_table_prints_the_article_rows(decoder):
    text = markdown("attention_map", decoder)
    assert row(text, "layer")[2] == "most-weighted key for outputs 6..11"
    assert row(text, "1", "2")[2:] == ["[0 1 2 3 4 5]", "-6 constant", "0.996"]
    assert row(text, "1", "0")[2:] == ["[0 1 2 3 4 5]", "-6 constant", "0.835"]
    assert row(text, "1", "1")[2:4] == ["[0 3 6 6 6 5]", "variable"]
    assert row(text, "2", "0")[2:4] == ["[ 0  1  0  4 10 11]", "variable"]


@pytest.mark.parametrize("name", FIGURES)
def test_figures_have_titles_and_labelled_axes(name, decoder):
    assert labelled(build(name, decoder)), name


def test_heatmap_draws_the_sharpest_head_with_sequence_labels(decoder):
    fig = build("attention_heatmap", decoder)
    ax = fig.axes[0]
    assert "layer 1, head 2" in fig._suptitle.get_text()
    keys = [t.get_text() for t in ax.get_xticklabels()]
    assert keys[:2] == ["0 (17)", "1 (3)"] and keys[6] == "6 (SEP)"
    assert ax.get_yticklabels()[6].get_text() == "6 (SEP)"
    image = ax.get_images()[0].get_array()
    assert image.shape == (12, 12) and image[11, 5] == pytest.approx(0.996)
    assert "separator (SEP)" in [t.get_text() for t in fig.legends[0].get_texts()]


def test_small_multiples_show_every_head(decoder):
    fig = build("attention_heads", decoder)
    panels = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    assert len(panels) == 8 and all(ax.get_images() for ax in panels)
    assert panels[2].get_title().startswith("layer 1, head 2: -6 constant")


def test_training_figure_shows_every_seed_and_the_means(decoder):
    ax = build("train_accuracy_points", decoder).axes[0]
    runs = decoder("train").query("ablation == 'full'")
    seeds = [line for line in ax.get_lines() if line.get_label().endswith("one seed")]
    assert sorted(np.concatenate([line.get_ydata() for line in seeds])) == sorted(runs["sequence_accuracy"])
    copy_mean = next(line for line in ax.get_lines() if line.get_label() == "copy: mean over seeds")
    copy = runs[runs["task"] == "copy"]
    assert list(copy_mean.get_ydata()) == list(copy.groupby("L")["sequence_accuracy"].mean())


def test_loss_curves_one_line_per_run_on_a_log_scale(decoder):
    fig = build("loss_curves", decoder)
    assert all(ax.get_yscale() == "log" for ax in fig.axes)
    lines = sum(len(ax.get_lines()) for ax in fig.axes)
    assert lines == len(TRAIN_CASES) + 1  # the ablations' panel repeats their base run
    assert fig.axes[0].get_lines()[0].get_ydata().tolist() == \
        decoder("train", "curve").query("case == 'copy-L4-seed0'")["loss"].tolist()


def test_ablation_bars_and_block_breakdown(decoder):
    accuracy, loss = build("ablation_bars", decoder).axes
    runs = decoder("train").set_index("case")
    heights = [p.get_height() for p in accuracy.patches]
    assert heights[:3] == [runs.loc[c, "sequence_accuracy"] for c in
                           ("copy-L6-seed0", "ablation-no_position", "ablation-post_ln")]
    assert loss.get_yscale() == "log"
    bars = build("block_breakdown_bars", decoder).axes[0].patches
    assert [p.get_width() for p in bars] == [1048576, 1048576, 1048576, 6656]  # 0.21% of 3152384
