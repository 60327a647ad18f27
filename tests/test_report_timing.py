"""The report's timing tables and figures, built from real runs of the timing experiments at small sizes.

Times are never asserted: only that they are labelled machine-bound, that the exact
columns (cells, MiB, the cache formula) print the article's digits, and that ratios,
slopes and curves are the experiments' own columns.
"""

import numpy as np
import pytest

from attnrepro.report.ledger import claims as published, printed, verdicts
from attnrepro.report.products import catalog, disturbance, figures_timing, formats, render

from conftest import REPO
from report_helpers import assert_table_complete, build, labelled, loader, markdown, row

PUBLISHED = REPO / "config/published.yaml"
MODULES = {"attnrepro.report.products.tables_timing", "attnrepro.report.products.figures_timing"}
PRODUCTS = sorted(p.name for p in catalog.PRODUCTS.values() if p.module in MODULES)
TABLES = [n for n in PRODUCTS if catalog.PRODUCTS[n].kind == "table"]
FIGURES = [n for n in PRODUCTS if catalog.PRODUCTS[n].kind == "figure"]
SMALL = {  # the article's grids where they are cheap (exact columns), tiny sizes elsewhere
    "quadratic_cost": {"runs": 1, "passes": 1},
    "causal_timing": {"trials": [1, 1, 1], "passes": 1},
    "timing_exponent": {"n": [16, 32, 64, 128], "repeats": 3, "bootstrap": 50},
    "kv_cache": {"layers": 2, "heads": 2, "d": 8, "prompt": 4, "generated": 5},
    "kv_speedup": {"layers": 2, "heads": 2, "d": 8, "prompt": 4, "generated": [1, 2, 4], "repeats": 2},
    "score_memory": {"d": 8, "n": [64, 128]},
}


def quiet(tables):
    """A run's tables with no row disturbed (the machine's load decides it; the marks are tested apart)."""
    return {name: frame.assign(disturbed=False) if "disturbed" in frame.columns else frame
            for name, frame in tables.items()}


@pytest.fixture(scope="module")
def timing(tmp_path_factory, run_case):
    return loader(tmp_path_factory.mktemp("report_timing"),
                  {(e, "default"): quiet(run_case(e, **overrides)) for e, overrides in SMALL.items()})


def test_products_are_registered_with_captions():
    assert len(TABLES) == 7 and len(FIGURES) == 3
    needs = {e for name in PRODUCTS for e in catalog.PRODUCTS[name].experiments}
    assert needs == set(SMALL)
    for name in PRODUCTS:
        assert (REPO / "workflow" / "report" / f"{name}.rst").is_file(), name


@pytest.mark.parametrize("name", TABLES)
def test_every_table_builds_with_a_note_and_no_missing_value(name, timing, tmp_path):
    table = build(name, timing)
    assert_table_complete(table, tmp_path)


@pytest.mark.parametrize("name", [n for n in TABLES if n != "score_memory"])
def test_timing_tables_label_their_times_machine_bound(name, timing):
    table = build(name, timing)
    assert "machine-bound" in table.note and "transfer" in table.note
    cpu = timing("causal_timing", "machine")["cpu"].iloc[0]
    assert cpu in table.note  # the machine that measured them
    labels = list(table.data.columns) + (list(table.data["quantity"]) if "quantity" in table.data else [])
    times = [c for c in labels if "(s," in c or "(ms," in c]
    assert all("machine-bound" in c for c in times), labels
    assert times or name == "timing_exponent", labels  # the only timing table without a time: slopes


def test_no_built_note_or_subtitle_asserts_that_a_quantity_transfers(timing):
    """The notes and subtitles as built say what can transfer, and that the ledger judges whether it
    does (tests/test_transfers.py scans the source texts)."""
    from test_transfers import asserted_transfers

    built = {name: build(name, timing) for name in PRODUCTS}
    texts = {name: p.note if hasattr(p, "note") else p._suptitle.get_text() for name, p in built.items()}
    assert all("can transfer" in texts[name] for name in ("kv_cache", "kv_speedup", "causal_timing",
                                                           "quadratic_cost", "kv_speedup_curve"))
    assert {name: found for name, t in texts.items() if (found := asserted_transfers(t))} == {}


def test_memory_table_is_not_labelled_as_a_time(timing):
    note = build("score_memory", timing).note
    assert "machine-bound" not in note and "same on any machine" in note


def test_quadratic_cost_prints_the_exact_columns(timing):
    text = markdown("quadratic_cost", timing)
    assert row(text, "512")[1:3] == ["262144", "1.0"] and row(text, "512")[4:6] == ["-", "-"]
    assert row(text, "4096")[1:3] == ["16777216", "64.0"] and row(text, "4096")[4] == "4"
    slope = timing("quadratic_cost")["loglog_slope"].iloc[0]
    assert {row(text, n)[-1] for n in ("512", "1024", "2048", "4096")} == {f"{slope:.2f}"}


def test_causal_timing_prints_the_exact_columns_and_ratios(timing):
    text = markdown("causal_timing", timing)
    assert row(text, "128")[1] == str(SMALL["causal_timing"]["trials"][0])
    assert row(text, "128")[3:5] == ["0.12", "0.19"]
    assert row(text, "2048")[3:6] == ["32.00", "3.00", "4"] and row(text, "2048")[7] == "16"
    ratio = timing("causal_timing").set_index("T").loc[2048, "time_ratio"]
    assert row(text, "2048")[6] == f"{ratio:.1f}"


def test_kv_cache_prints_the_formula_rows(timing):
    text = markdown("kv_cache", timing)
    assert row(text, "ratio")[1].endswith("x")
    realistic = [line for line in text.splitlines() if "realistic" in line]
    assert [line.split("|")[-2].strip() for line in realistic] == ["2.000", "0.062"]
    assert "32 K,V pairs" in realistic[0] and "1 K,V pairs" in realistic[1]


def test_exponent_table_gives_the_slope_and_its_interval(timing):
    fit = timing("timing_exponent").iloc[0]
    cells = row(markdown("timing_exponent", timing), "16")
    assert cells[4:7] == [f"{fit['slope']:.2f}", f"{fit['ci_low']:.2f}", f"{fit['ci_high']:.2f}"]
    points = build("timing_exponent_points", timing).formatted()
    assert points["local slope"].iloc[0] == "-" and list(points["n"]) == [16, 32, 64, 128]


@pytest.mark.parametrize("name", FIGURES)
def test_figures_have_titles_and_labelled_axes(name, timing):
    assert labelled(build(name, timing)), name


def test_loglog_figure_draws_the_stored_slopes(timing):
    fig = build("attention_cost_loglog", timing)
    stored = [timing("quadratic_cost")["loglog_slope"].iloc[0],
              timing("causal_timing")["loglog_slope"].iloc[0], timing("timing_exponent")["slope"].iloc[0]]
    for ax, slope in zip(fig.axes, stored):
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        fit = next(line for line in ax.get_lines() if line.get_label().startswith("fitted slope"))
        x, y = fit.get_data()
        assert np.log(y[1] / y[0]) / np.log(x[1] / x[0]) == pytest.approx(slope, rel=1e-12)
        assert fit.get_label() == f"fitted slope {slope:.2f}"
    assert "machine-bound" in fig._suptitle.get_text()


def test_speedup_and_memory_curves_plot_the_columns(timing):
    ratio = build("kv_speedup_curve", timing).axes[1]
    speedup = timing("kv_speedup").sort_values("generated")["speedup"]
    assert list(ratio.get_lines()[0].get_ydata()) == list(speedup)
    peak = build("score_memory_curve", timing).axes[0]
    formula = [line for line in peak.get_lines() if "bytes" in line.get_label()]
    assert len(formula) == 2 and peak.get_yscale() == "log"
    assert sorted(np.concatenate([line.get_ydata() for line in formula])) == \
        sorted(timing("score_memory")["formula_mib"])


# --- a time's digits: one rule in the tables and the ledger -----------------------------------------

@pytest.mark.parametrize("value, band, shown", [
    (0.156, (), "0.156"), (0.0421, (), "0.0421"), (0.00132, (), "0.00132"),  # never "0.16", "0.04", "0.001"
    (0.001, (), "0.00100"), (85.21, (), "85.2"), (1102.4, (), "1102"),  # every integer digit kept
    (9.996, (), "10.0"), (2.5e-06, (), "2.50e-06"),  # rounded up a decade; below 1e-4 scientific
    (0.09004, (0.07, 0.09), "0.09004"),  # "0.0900" would read inside the band the value lies outside
    (0.0704, (0.07, 0.09), "0.0704"), (0.0, (), "0"),
])
def test_a_time_has_three_significant_digits_and_more_only_to_keep_its_side_of_a_band(value, band, shown):
    assert formats.time_text(value, *band) == shown


def test_each_time_a_table_prints_for_a_claim_reads_as_the_ledger_writes_it(timing):
    """The cell of every raw time that published.yaml places in a timing table prints the ledger's
    reproduced text (the prose's unit after it in the ledger), both built from one run."""
    claims = [c for c in published.load_claims(PUBLISHED) if c.raw_time and c.printed]
    ledger = verdicts.evaluate(claims, timing, rule=published.load_speed(PUBLISHED))
    checked = {}
    for name in sorted({c.printed["table"] for c in claims}):
        table = build(name, timing)
        cells = table.formatted()
        for position, column, claim, entry in printed.cells(table, name, claims, ledger):
            checked[claim.id] = (cells[column].iloc[position], entry["reproduced"].split(" ")[0])
    assert len(checked) == len(claims) >= 15
    assert {claim: shown for claim, (shown, _) in checked.items()} == {
        claim: ledger_text for claim, (_, ledger_text) in checked.items()}


# --- marks of disturbed measurements -----------------------------------------------------------------

def disturbed(load, chosen):
    """``load`` with the rows of ``chosen`` ({(experiment, table): (column, values)}) disturbed, the
    others not."""
    def read(experiment, table="main"):
        frame = load(experiment, table)
        if (experiment, table) not in chosen:
            return frame
        column, values = chosen[(experiment, table)]
        return frame.assign(disturbed=frame[column].isin(values))
    return read


CHOSEN = {("quadratic_cost", "main"): ("n", [1024, 2048]), ("timing_exponent", "points"): ("n", [16, 64]),
          ("kv_cache", "main"): ("generated", [SMALL["kv_cache"]["generated"]])}


def test_a_fits_label_says_how_many_of_its_points_were_disturbed():
    assert figures_timing.fit_label(2.514, [True, True, True, False]) == (
        "fitted slope 2.51 (3 of 4 points disturbed)")
    assert figures_timing.fit_label(2.514, [False] * 4) == "fitted slope 2.51"
    assert figures_timing.interval_label(1.831, 1.844, [True] * 8 + [False] * 5) == (
        "95% interval [1.83, 1.84] (8 of 13 points disturbed)")
    assert disturbance.with_previous([True, False, False, True]).tolist() == [False, True, False, True]
    assert printed.SYMBOLS["disturbed"] == disturbance.MARK == "~"  # the ledger's symbol


def test_a_cell_read_from_a_disturbed_measurement_is_marked_and_the_note_counts_them(timing):
    load = disturbed(timing, CHOSEN)
    table = build("quadratic_cost", load)
    text = render.markdown(table)
    times = {n: row(text, n)[3] for n in ("512", "1024", "2048", "4096")}
    assert [t.endswith(" ~") for t in times.values()] == [False, True, True, False]
    assert [row(text, n)[5].endswith(" ~") for n in times] == [False, True, True, True]  # x the previous
    assert row(text, "512")[5] == "-" and all(row(text, n)[6].endswith(" ~") for n in times)  # the slope
    assert "~ marks a value read from a disturbed measurement" in table.note
    assert table.note.endswith("the slope: 2 of 4 points disturbed.")
    assert "~" not in "".join(row(text, n)[1] + row(text, n)[2] for n in times)  # exact columns unmarked
    exponent = build("timing_exponent", load)
    cells = row(render.markdown(exponent), "16")
    assert all(c.endswith(" ~") for c in cells[4:8]) and "2 of 4 points disturbed" in exponent.note
    kv = render.markdown(build("kv_cache", load))
    assert [row(kv, q)[1].endswith(" ~") for q in ("maximum deviation between the two generations",
                                                   "without cache (s, machine-bound)",
                                                   "with cache (s, machine-bound)", "ratio")] == [
        False, True, True, True]
    assert "~" not in "".join(line for line in kv.splitlines() if "cache formula" in line)
    quiet = build("quadratic_cost", timing)
    assert quiet.marks == {} and "disturbed" not in quiet.note


def test_the_loglog_figure_marks_disturbed_points_and_counts_them_in_its_fits(timing):
    load = disturbed(timing, CHOSEN)
    a, _, c = build("attention_cost_loglog", load).axes
    cost = load("quadratic_cost").sort_values("n")
    labels = [line.get_label() for line in a.get_lines()]
    assert figures_timing.fit_label(cost["loglog_slope"].iloc[0], cost["disturbed"]) in labels
    assert labels[[label.startswith("fitted slope") for label in labels].index(True)].endswith(
        "(2 of 4 points disturbed)")
    assert [t.get_text() for t in a.texts] == ["~", "~"]  # above the two disturbed points
    legend = [t.get_text() for t in c.get_legend().get_texts()]
    assert any(t.startswith("95% interval") and t.endswith("(2 of 4 points disturbed)") for t in legend)
    assert figures_timing.MARKED_LABEL in legend
