"""No verdict that contradicts its own numbers (report.ledger.contradictions): every row of a ledger
built by the ledger's own functions, re-judged from its printed value and bounds alone, agrees."""

import math

import pandas as pd
import pytest

from attnrepro.report.ledger import contradictions, verdicts
from attnrepro.report.ledger.claims import Claim


def row(reproduced, verdict, low, high, id="x"):
    return {"id": id, "reproduced": reproduced, "verdict": verdict,
            "accepted_low": low, "accepted_high": high}


@pytest.mark.parametrize("reproduced, verdict, low, high", [
    ("2.01", "within tolerance", 1.8, 2.3),
    ("2.3", "reproduced", 1.8, 2.3),  # an end of the window is inside it
    ("2.31", "differs", 1.8, 2.3),
    ("0.148 ms", "within tolerance", "0.0456", "0.41"),  # as ledger.csv's text: the unit stripped
    ("94-98%", "differs", 0.95, 0.98),  # a range: one end outside
    ("96-98%", "within tolerance", 0.95, 0.98),  # both ends inside
    ("12", "reproduced", 10.0, math.inf),  # an open side
    ("2.5", "differs", "", ""),  # no window decided: nothing to check
    ("2.5", "within tolerance", math.nan, math.nan),
    ("True", "differs", 0.0, 1.0),  # no number
    ("", "missing", 0.0, 1.0),
    ("2.5", "inconclusive", 1.8, 2.3),  # claims no side of its window
    ("2.5", "disturbed", 1.8, 2.3),
])
def test_a_row_agreeing_with_its_numbers_passes(reproduced, verdict, low, high):
    assert contradictions.contradiction(row(reproduced, verdict, low, high)) == ""


@pytest.mark.parametrize("reproduced, verdict, low, high, said", [
    ("13.3", "within tolerance", 17.8, 20.2, "within tolerance, but the value it prints, 13.3, lies outside "
                                             "its bounds 17.8 to 20.2"),
    ("2.01", "differs", 1.8, 2.3,
     "differs, but the value it prints, 2.01, lies inside its bounds 1.8 to 2.3"),
    ("94-98%", "within tolerance", "0.95", "0.98", "within tolerance, but the value it prints, 94-98%, lies "
                                                   "outside its bounds 0.95 to 0.98"),
    ("96-97%", "differs", 0.95, 0.98, "differs, but the value it prints, 96-97%, lies inside its bounds"),
    ("9", "reproduced", 10.0, math.inf, "reproduced, but the value it prints, 9, lies outside its bounds "
                                        "10 to inf"),
])
def test_a_row_contradicting_its_numbers_is_named(reproduced, verdict, low, high, said):
    assert contradictions.contradiction(row(reproduced, verdict, low, high)).startswith(said)
    assert contradictions.problems([row("2.0", "within tolerance", 1.8, 2.3, "ok"),
                                    row(reproduced, verdict, low, high, "bad")]) == [
        f"claim bad: {contradictions.contradiction(row(reproduced, verdict, low, high))}"]


# --- ledgers built by the ledger's own functions --------------------------------------------------

RESULTS = {
    ("sweep", "main"): pd.DataFrame({"d_k": [4, 1024], "std": [1.98612, 31.92704], "diff": [3.2e-16, 4.1e-16],
                                     "ratio": [12.0, 10.004]}),
    ("timing", "main"): pd.DataFrame({"slope": [2.004], "ratio": [13.3]}),
    ("train", "main"): pd.DataFrame({"task": "sort", "L": [4] * 3 + [8] * 3, "seed": [0, 1, 2] * 2,
                                     "acc": [0.99, 0.98, 0.97, 0.91, 0.95, 0.96]}),
}


def load(experiment, table):
    try:
        return RESULTS[(experiment, table)]
    except KeyError:
        raise FileNotFoundError(experiment) from None


def claim(id, published, cls, column, experiment="sweep", where=None, **kw):
    return Claim.from_dict({"id": id, "article": "001", "section": "s", "claim": "c", "published": published,
                            "class": cls, "source": {"experiment": experiment, "column": column,
                                                     "where": where or {}, **kw.pop("source", {})}, **kw})


CLAIMS = [
    claim("001.a.exact", "31.927", "exact", "std", where={"d_k": 1024}),
    claim("001.a.exact-off", "31.928", "exact", "std", where={"d_k": 1024}),
    claim("001.a.bound", "more than ten", "exact", "ratio", where={"d_k": 4}, band=[10, None]),
    claim("001.a.bound-edge", "more than ten", "exact", "ratio", where={"d_k": 1024}, band=[10.005, None]),
    claim("001.a.roundoff", "3.33e-16", "round-off", "diff", where={"d_k": 4}, tolerance=1e-14),
    claim("001.a.roundoff-off", "3.33e-16", "round-off", "diff", where={"d_k": 4}, tolerance=1e-17),
    claim("001.t.slope", "2.04", "machine-bound", "slope", experiment="timing", band=[1.8, 2.0]),
    claim("001.t.ratio", "20.2", "machine-bound", "ratio", experiment="timing", band=[12.13, 24.25]),
    claim("001.t.free", "5.0", "machine-bound", "slope", experiment="timing"),  # nothing to judge it by
    # the prose: its own intervals would say otherwise than its cells (2.00 lies in 1.99-2.04, 13.3 not
    # in 17.8-20.2); it takes its cell's verdict, and shows the cell's window
    claim("001.prose.t.slope", "1.99-2.04", "machine-bound", "slope", experiment="timing"),
    claim("001.prose.t.ratio", "17.8-20.2", "machine-bound", "ratio", experiment="timing"),
    claim("001.s.L4", "0.981", "stochastic", "acc", experiment="train", where={"task": "sort", "L": 4},
          source={"reduce": "mean"}),
    claim("001.s.L8", "0.951", "stochastic", "acc", experiment="train", where={"task": "sort", "L": 8},
          source={"reduce": "mean"}),
    # judged by the run's own seeds: the published value against the prediction interval, which holds
    # the reproduced mean (0.940) whatever the verdict
    claim("001.s.L8-off", "0.80", "stochastic", "acc", experiment="train", where={"task": "sort", "L": 8},
          source={"reduce": "mean"}),
    claim("001.s.L8-meets", "0.83-0.86", "stochastic", "acc", experiment="train",
          where={"task": "sort", "L": 8}, source={"reduce": "mean"}),
    claim("001.s.L8-apart", "0.70-0.75", "stochastic", "acc", experiment="train",
          where={"task": "sort", "L": 8}, source={"reduce": "mean"}),
    claim("001.s.L8-holds", "0.90-0.99", "stochastic", "acc", experiment="train",
          where={"task": "sort", "L": 8}, source={"reduce": "mean"}),
    claim("001.prose.s.range", "95-98%", "stochastic", "acc", experiment="train", where={"task": "sort"},
          source={"reduce": "mean", "per": "L"}),
    claim("001.prose.s.wide", "90-99%", "stochastic", "acc", experiment="train", where={"task": "sort"},
          source={"reduce": "mean", "per": "L"}),
]


@pytest.fixture  # per test, so that mutation testing sees which tests reach the ledger's functions
def ledger():
    return verdicts.evaluate(CLAIMS, load)


def test_no_row_of_a_ledger_contradicts_its_own_numbers(ledger):
    rows = ledger.set_index("id")
    assert set(ledger["verdict"]) == {"reproduced", "within tolerance", "differs", "inconclusive"}
    assert ledger[["accepted_low", "accepted_high"]].notna().all(axis=1).sum() == 16  # windows to check
    own = ["001.s.L8-off", "001.s.L8-meets", "001.s.L8-apart", "001.s.L8-holds"]
    assert rows.loc[own, "verdict"].tolist() == ["differs", "within tolerance", "differs", "within tolerance"]
    assert rows.loc["001.s.L8-holds", ["accepted_low", "accepted_high"]].tolist() == [0.90, 0.99]
    assert contradictions.problems(ledger.to_dict("records")) == []


def test_a_prose_claim_shows_the_window_of_the_cell_whose_verdict_it_takes(ledger):
    rows = ledger.set_index("id")
    slope = rows.loc["001.prose.t.slope"]
    assert (slope["verdict"], slope["accepted_low"], slope["accepted_high"]) == ("differs", 1.8, 2.0)
    assert slope["reproduced"] == "2.004"  # "2.00" would read inside 1.8 to 2.0: the digits that decide
    said = "the bounds shown, 1.8 to 2, are the window of 001.t.slope, whose verdict decided"
    assert said in slope["reason"]
    ratio = rows.loc["001.prose.t.ratio"]
    assert (ratio["verdict"], ratio["reproduced"]) == ("within tolerance", "13.3")
    assert (ratio["accepted_low"], ratio["accepted_high"]) == (12.13, 24.25)


def test_a_prose_range_over_rows_is_judged_by_its_own_rule_with_the_range_as_bounds(ledger):
    rows = ledger.set_index("id")
    assert rows.loc["001.s.L8", "verdict"] == "within tolerance"  # 0.940: its seeds reach 0.951
    narrow, wide = rows.loc["001.prose.s.range"], rows.loc["001.prose.s.wide"]
    assert (narrow["verdict"], narrow["reproduced"], narrow["accepted_low"], narrow["accepted_high"]) == (
        "differs", "94-98%", 0.95, 0.98)
    assert (wide["verdict"], wide["accepted_low"], wide["accepted_high"]) == ("within tolerance", 0.90, 0.99)


def test_the_check_fails_on_a_ledger_whose_bounds_are_not_those_that_decided(ledger):
    """The prose slope with its own interval as bounds (what the ledger showed before): 2.004 lies
    in 1.99 to 2.04, yet the row differs."""
    broken = ledger.copy()
    at = broken["id"] == "001.prose.t.slope"
    broken.loc[at, ["accepted_low", "accepted_high"]] = [1.99, 2.04]
    assert contradictions.problems(broken.to_dict("records")) == [
        "claim 001.prose.t.slope: differs, but the value it prints, 2.004, lies inside its bounds 1.99 to "
        "2.04"]
    # a seed interval judges the published value: 0.80 outside it, however the reproduced 0.940 lies
    broken.loc[broken["id"] == "001.s.L8-off", "verdict"] = "within tolerance"
    assert contradictions.problems(broken.to_dict("records"))[1].startswith(
        "claim 001.s.L8-off: within tolerance, but the published value, 0.80, lies outside its bounds 0.847")


# --- one source: LEDGER.md, the editions and the overview figure print the ledger's bounds ----------

def test_the_editions_show_the_bounds_of_the_ledger_row():
    from attnrepro.report.editions import edition

    rows = {"a": {**row("2.01", "within tolerance", 1.8, 2.3, "a"), "reason": "r"},
            "b": {**row("2.01", "reproduced", math.nan, math.nan, "b"), "reason": ""}}
    assert edition._judged(rows, "a") == ("within tolerance", "2.01", "r", "1.8 to 2.3")
    assert edition._judged(rows, "b")[3] == "" and edition._judged(rows, "c")[3] == ""
    note = edition.Note("a", 1, 1, "2.04", "c", "2.04", "machine-bound", *edition._judged(rows, "a"))
    tip = edition._tip(note, 0)
    assert "reproduced <b class=\"tip-reproduced\">2.01</b>, bounds <b>1.8 to 2.3</b></span>" in tip
    assert ", bounds" not in edition._tip(edition.Note("b", 1, 1, "2", "c", "2", "exact",
                                                       *edition._judged(rows, "b")), 0)


def test_the_overview_draws_the_ledger_bounds_and_no_other(ledger):
    from attnrepro.report.ledger import overview_figure

    table = ledger.astype(str).replace("nan", "")
    fig = overview_figure.draw(table, CLAIMS)
    b = fig.axes[1]
    bars = [c for c in b.collections if c.get_label() == "the window that decided"]
    ticks = [t.get_text() for t in b.get_xticklabels()]
    drawn = {ticks[round(seg[0][0])]: (seg[0][1], seg[1][1]) for seg in bars[0].get_segments()}
    rows = ledger.set_index("id")
    with_bounds = {i for i in ticks if rows.loc[i, ["accepted_low", "accepted_high"]].notna().all()}
    assert set(drawn) == with_bounds and "001.s.L8" in ticks  # a stochastic claim's own interval, drawn
    assert "001.t.free" in ticks and "001.t.free" not in drawn  # a timing no window judged: no bar
    slope = drawn["001.prose.t.slope"]  # reproduced / published: the window over the range's centre 2.015
    assert slope == pytest.approx((1.8 / 2.015, 2.0 / 2.015))


def test_the_check_at_its_edges():
    """What the mutants of report.ledger.contradictions asked: one open bound, the window's ends,
    and a published range that only touches a seed interval."""
    half = row("5", "reproduced", math.nan, 1.0)
    assert contradictions.bounds(half) is None and contradictions.contradiction(half) == ""
    assert contradictions.bounds(row("5", "reproduced", 0.0, math.nan)) is None
    assert contradictions.contradiction(row("0.5", "reproduced", 0.5, 1.0)) == ""  # its low end is inside

    def seeds(published, low, high, verdict="within tolerance"):
        return {**row("0.97", verdict, low, high), "class": "stochastic", "published": published}

    assert contradictions.contradiction(seeds("0.95-0.99", 0.99, 1.0)) == ""  # touches at its top
    assert contradictions.contradiction(seeds("0.95-0.99", 0.90, 0.95)) == ""  # touches at its bottom
    assert contradictions.contradiction(seeds("0.95-0.99", 0.96, 0.98)) == ""  # holds the window
    assert contradictions.contradiction(seeds("0.95-0.99", 0.991, 1.0)) == (
        "within tolerance, but the published value, 0.95-0.99, lies outside its bounds 0.991 to 1")
