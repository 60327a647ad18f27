"""The ledger's verdicts word for word: each class's reason (rationale and note included), the
boundaries of every band, interval and tolerance, and the digits a timing is shown with."""

import math
import types

import numpy as np
import pandas as pd
import pytest

from attnrepro.report.ledger import verdicts, speed

# what every stochastic reason without a seed distribution ends with (ledger.WEAKER)
NO_DISTRIBUTION = f"no seed distribution in this run: {verdicts.WEAKER}"


def claim(published, cls, **kw):
    """A claim of class ``cls`` published as ``published`` (no result file behind it)."""
    return verdicts.Claim.from_dict({"id": kw.pop("id", "c"), "article": "000", "section": "s",
                                   "claim": "c", "published": published, "class": cls,
                                   "source": kw.pop("source", {"experiment": "e", "column": "c"}), **kw})


# --- exact, echo, text and missing ------------------------------------------------------------

def test_exact_and_echo_reasons_name_the_class_and_the_echos_rationale():
    assert verdicts.judge(claim("3", "exact"), 4) == ("differs", "4", "exact claim: digits differ")
    echo = claim("3", "echo", rationale="the config's value, printed back")
    assert verdicts.judge(echo, 4) == ("differs", "4",
                                       "echo (the config's value, printed back): digits differ")
    assert verdicts.judge(claim("3", "echo"), 4)[2] == "echo: digits differ"  # no rationale: no brackets
    assert verdicts.judge(claim("3", "echo"), 3) == ("reproduced", "3", "")


def test_a_missing_value_has_no_text_and_says_so():
    assert verdicts.judge(claim("3", "exact"), None) == ("missing", "", "no result file holds this value")


def test_a_published_interval_is_never_an_exact_match_even_where_the_text_is_the_same():
    assert verdicts.judge(claim("1.99-2.04", "exact"), "1.99-2.04") == (
        "differs", "1.99-2.04", "exact claim: digits differ")
    # published text (no number): compared as text
    assert verdicts.judge(claim("[0 1 2]", "exact"), "[0 1 2]") == ("reproduced", "[0 1 2]", "")


# --- round-off ----------------------------------------------------------------------------

NUMERICS = ("its last bits move with the numerics (the BLAS kernel, NumPy's and torch's code paths, "
            "the versions)")


def test_round_off_reasons_quote_the_rationale_and_the_note():
    c = claim("3.33e-16", "round-off", tolerance=1e-14, rationale="BLAS-level", note="as printed")
    assert verdicts.judge(c, 3.2e-16) == ("within tolerance", "3.20e-16",
                                        f"round-off: both below 1e-14 (BLAS-level); {NUMERICS}; as printed")
    assert verdicts.judge(c, 2e-14) == ("differs", "2.00e-14",
                                      "round-off claim above its tolerance 1e-14 (BLAS-level); as printed")
    assert verdicts.judge(c, 0.0)[2].endswith("(the article prints 3.33e-16); as printed")


def test_round_off_tolerance_holds_at_its_bound_and_needs_both_values_below_it():
    c = claim("3.33e-16", "round-off", tolerance=1e-14)
    assert verdicts.judge(c, 1e-14)[0] == "within tolerance"  # the reproduced value at the tolerance
    assert verdicts.judge(claim("1e-14", "round-off", tolerance=1e-14), 3e-16)[0] == "within tolerance"
    assert verdicts.judge(c, 1e-12) == ("differs", "1.00e-12", "round-off claim above its tolerance 1e-14")


def test_a_tolerance_is_the_window_on_both_sides_of_zero_and_without_one_there_is_none():
    assert verdicts.judge(claim("3.33e-16", "round-off", tolerance=1e-14), 3.2e-16).window == (-1e-14, 1e-14)
    untolerated = verdicts.judge(claim("3.33e-16", "round-off"), 3.2e-16)  # a tolerance the schema requires
    assert untolerated[0] == "differs" and untolerated.window is None


# --- finite-difference --------------------------------------------------------------------

def test_a_finite_difference_error_is_judged_by_its_tolerance_and_called_what_it_is():
    c = claim("4.90e-05", "finite-difference", tolerance=1e-3, rationale="central difference at 1e-6",
              note="cancellation")
    assert verdicts.judge(c, 6.78e-5) == (
        "within tolerance", "6.78e-05", "finite-difference error: both below 0.001 (central difference at "
        "1e-6); an error of the method, not of the gradient; cancellation")
    assert verdicts.judge(c, 1e-3)[0] == "within tolerance"  # at its bound
    assert verdicts.judge(c, 1.1e-3) == ("differs", "1.10e-03", "finite-difference claim above its "
                                         "tolerance 0.001 (central difference at 1e-6); cancellation")
    zero = verdicts.judge(c, 0.0)
    assert zero[0] == "differs" and zero[2].startswith("finite-difference claim reproduced as exactly 0")
    assert "round-off" not in verdicts.judge(c, 6.78e-5)[2]


# --- stochastic, judged by the run's own seeds --------------------------------------------

def own(published, value, values, **kw):
    """(verdict, reason) of a stochastic claim judged by ``values``, without the fallback's notice."""
    verdict, _, reason = verdicts.judge(claim(published, "stochastic", **kw), value, values)
    assert reason.endswith(NO_DISTRIBUTION + (f"; {kw['note']}" if kw.get("note") else ""))
    return verdict, reason.split(f"; {NO_DISTRIBUTION}")[0]


def test_a_published_interval_holds_its_own_bounds():
    assert own("0.5-0.6", 0.5, [0.5, 0.5, 0.5]) == (
        "within tolerance", "the reproduced statistic lies in the published interval")
    assert own("0.5-0.6", 0.6, [0.6, 0.6, 0.6]) == (
        "within tolerance", "the reproduced statistic lies in the published interval")


T1 = math.tan(math.pi * 0.475)  # t(0.975, 1), closed form
MEAN = "95% prediction interval of a new mean over 3 seeds from this run's"
MIN = {"experiment": "e", "column": "c", "reduce": "min"}  # the source of a published minimum
MINIMUM = "95% prediction interval of a new minimum over 3 seeds from this run's 58 seeds"


def mean_rule(n):
    return f"(t-based: mean ± t(0.975, {n - 1}) · s · √(1/{n} + 1/3))"


def test_a_published_value_is_judged_by_the_prediction_interval_of_a_new_3_seed_mean():
    half = T1 * np.std([0.95, 0.99], ddof=1) * math.sqrt(1 / 2 + 1 / 3)
    where = f"{MEAN} 2 seeds {mean_rule(2)}: {0.97 - half:.4g} to {0.97 + half:.4g}"  # 0.6419 to 1.298
    assert own("0.95", 0.97, [0.95, 0.99]) == ("within tolerance", f"published value inside the {where}")
    assert own("0.6", 0.97, [0.95, 0.99]) == ("differs", f"published value outside the {where}")
    assert own("0.55-0.65", 0.97, [0.95, 0.99]) == (
        "within tolerance", f"published interval overlaps the {where}")
    window = verdicts.judge(claim("0.95", "stochastic"), 0.97, [0.95, 0.99]).window  # the interval drawn
    assert window == pytest.approx((0.97 - half, 0.97 + half))
    assert verdicts.judge(claim("0.95", "stochastic"), 0.9, [0.9]).window is None  # inconclusive: none


def test_a_published_minimum_is_judged_by_order_statistics_bounds_included():
    values = [(900 + i) / 1000 for i in range(58)]  # smallest 0.9, 55th smallest 0.954 (as "0.954" reads)
    where = (f"{MINIMUM} (order statistics, distribution-free: smallest to 55th smallest seed, "
             "exact coverage 95.0%): 0.9 to 0.954")
    for published in ("0.900", "0.954"):
        assert own(published, 0.91, values, source=MIN) == (
            "within tolerance", f"published value inside the {where}")
    assert own("0.955", 0.91, values, source=MIN) == ("differs", f"published value outside the {where}")
    assert own("0.899", 0.91, values, source=MIN) == ("differs", f"published value outside the {where}")


def test_too_few_seeds_are_inconclusive_never_a_difference():
    one = ("inconclusive", "not enough seeds to judge: a 95% prediction interval of a new mean over 3 seeds "
                           "needs 2 seeds of this run, it has 1")
    assert own("0.95", 0.9, [0.9]) == one and own("0.95", 0.9, None) == one
    assert own("0.5", 0.9, [0.9, 0.95, 0.97], source=MIN) == (
        "inconclusive", "not enough seeds to judge: a 95% prediction interval of a new minimum over 3 seeds "
                        "needs 58 seeds of this run, it has 3")
    assert own("0.5", 0.9, [0.9] * 57, source=MIN)[0] == "inconclusive"
    assert own("0.5", 0.9, [0.9] * 58, source=MIN)[0] == "differs"
    # a published interval holding the statistic needs no seeds
    assert own("0.85-0.95", 0.9, [0.9])[0] == "within tolerance"


def test_the_level_a_reason_states_is_the_level_it_judges_at(monkeypatch):
    from attnrepro.report.products import statistics

    monkeypatch.setattr(statistics, "PREDICTION_LEVEL", 0.9)
    assert own("0.5", 0.9, [0.9] * 28, source=MIN)[0] == "differs"  # 28 seeds predict a minimum at 90%
    half = math.tan(math.pi * 0.45) * np.std([0.95, 0.99], ddof=1) * math.sqrt(1 / 2 + 1 / 3)  # t(0.95, 1)
    assert own("0.95", 0.97, [0.95, 0.99]) == (
        "within tolerance", "published value inside the 90% prediction interval of a new mean over 3 seeds "
                            "from this run's 2 seeds (t-based: mean ± t(0.95, 1) · s · √(1/2 + 1/3)): "
                            f"{0.97 - half:.4g} to {0.97 + half:.4g}")


def test_seed_values_stored_as_text_are_judged_as_numbers():
    half = T1 * np.std([0.94, 0.96], ddof=1) * math.sqrt(1 / 2 + 1 / 3)
    assert own("0.95", 0.96, np.array(["0.94", "0.96"])) == (
        "within tolerance", f"published value inside the {MEAN} 2 seeds {mean_rule(2)}: "
                            f"{0.95 - half:.4g} to {0.95 + half:.4g}")


def test_a_stochastic_note_ends_its_reason_placed_or_not():
    assert own("0.95", 0.97, [0.95, 0.99], note="three seeds only")[0] == "within tolerance"
    placed = types.SimpleNamespace(placed=lambda claim_id: (False, "outside the 95% interval"),
                                   interval={"c": (0.9, 0.95)}.get)  # the claim's own interval
    assert verdicts.judge(claim("0.95", "stochastic", note="three seeds only"), 0.97, [0.9], placed) == (
        "differs", "0.97", "outside the 95% interval; three seeds only")
    assert verdicts.judge(claim("0.95", "stochastic"), 0.97, [0.9], placed).window == (0.9, 0.95)


# --- a published range, row by row ------------------------------------------------------------

ROWS = pd.DataFrame({"task": "sort", "L": [4, 4, 4, 6, 8, 8], "seed": [0, 1, 2, 0, 0, 1],
                     "acc": [0.99, 0.99, 0.99, 0.97, 0.96, 0.94]})  # means: 0.99, 0.97 (1 seed), 0.95


def rows_verdict(published, spread=None, note=""):
    c = claim(published, "stochastic", note=note,
              source={"experiment": "train", "column": "acc", "reduce": "mean", "per": "L"})
    stats, values = verdicts.reproduced(c.source, lambda experiment, table: ROWS)
    return verdicts.judge(c, stats, values, spread)


LISTED = "L = 4: 0.990 (mean over 3 seeds), L = 6: 0.970 (mean over 1 seed), L = 8: 0.950 (mean over 2 seeds)"


def test_every_row_is_listed_with_its_seeds_and_the_note_follows():
    assert rows_verdict("0.94-0.995", note="per L") == (
        "within tolerance", "0.950-0.990", f"every row lies in the published range: {LISTED}; per L")


def test_each_row_outside_is_named_then_every_row_listed_then_the_note():
    box = types.SimpleNamespace(row_interval=lambda source, key: None)
    assert rows_verdict("0.975-0.995", box, note="per L") == (
        "differs", "0.950-0.990",
        "L = 6 outside the published range (the seed distribution holds no interval for this row); "
        "L = 8 outside the published range (the seed distribution holds no interval for this row); "
        f"judged row by row: {LISTED}; per L")


@pytest.mark.parametrize("interval, meets", [((0.90, 0.975), "overlaps"), ((0.995, 1.0), "overlaps"),
                                             ((0.90, 0.974), "does not overlap")])
def test_a_rows_interval_that_touches_the_range_overlaps_it(interval, meets):
    spread = types.SimpleNamespace(row_interval=lambda source, key: (*interval, "means of 3 of 20 seeds"))
    reason = rows_verdict("0.975-0.995", spread)[2]
    assert (f"L = 6 outside the published range (its 95% interval of the means of 3 of 20 seeds here, "
            f"{interval[0]:.3f} to {interval[1]:.3f}, {meets} the range)") in reason


# --- machine-bound: a band, and the digits that decide ------------------------------------------

def timing(published, value, band=None, **kw):
    return verdicts.judge(claim(published, "machine-bound", band=band, **kw), value)


def test_a_timing_without_band_or_interval_is_inconclusive_as_a_raw_time_of_another_cpu():
    assert timing("fast", 2.0) == ("inconclusive", "2.0", verdicts.NO_YARDSTICK)
    assert verdicts.NO_YARDSTICK.startswith("machine-bound: a raw time of another CPU, with nothing here")
    assert timing("2.5", 2.0, note="timed once") == (
        "inconclusive", "2.0", f"{verdicts.NO_YARDSTICK}; timed once")


def test_the_claims_band_not_the_articles_interval_judges_and_its_rationale_and_note_are_quoted():
    assert timing("1.99-2.04", 2.11, [1.8, 2.3], rationale="another CPU", note="n = 512") == (
        "within tolerance", "2.11", "machine-bound: accepted band 1.8 to 2.3 (another CPU); n = 512")
    assert timing("1.99-2.04", 2.11) == ("differs", "2.11", "machine-bound: accepted band 1.99 to 2.04")


def test_a_pass_at_either_end_of_the_band_lies_inside_it():
    verdict, _, reason = verdicts.judge(claim("1", "machine-bound", band=[0.5, 2.0]), 1.0, repeats=[0.5, 2.0])
    assert verdict == "within tolerance" and "2 of 2 passes inside (the passes span 0.5 to 2)" in reason


def test_a_timing_published_as_text_is_written_as_any_claims_text():
    for published, decimals, value, shown in [("fast", None, 2.0, "2.0"), ("fast", 3, 2.0, "2.0"),
                                              ("True", None, 1.0, "True")]:
        timing = claim(published, "machine-bound", decimals=decimals)
        assert verdicts.timing_text(value, timing) == shown
        assert shown == verdicts.format_like(value, published, decimals)


def test_a_rule_and_a_factor_judge_only_raw_times():
    rule = speed.Rule(3.0, "runs spread")
    factor = speed.Factor("000", 4.0, 3.5, 4.5, {"a": 4.0})
    slope = claim("2.04", "machine-bound", band=[1.8, 2.3])
    assert verdicts.judge(slope, 2.11, factor=factor, rule=rule) == (
        "within tolerance", "2.11", "machine-bound: accepted band 1.8 to 2.3")


@pytest.mark.parametrize("published, value, band, shown", [
    ("0.08 s", 0.093, [0.07, 0.09], "0.093 s"),  # "0.09 s" would read inside the band
    ("0.2", 0.07, [0.07, 0.09], "0.07"),  # inside at the band's bounds: "0.1" would read outside
    ("0.2", 0.09, [0.07, 0.09], "0.09"),
    ("0.08", 0.0704, [0.07, 0.09], "0.07"),  # the text at a bound reads inside, as the value is
    ("0.08", 0.0896, [0.07, 0.09], "0.09"),
    ("30 s", 35.4, [30, 35.2], "35.4 s"),  # a whole number gains a decimal point
    ("8.0e-02", 0.0904, [0.07, 0.09], "9.04e-02"),  # scientific: digits in the mantissa
    ("0.08", 0.0900000000001, [0.07, 0.09], "0.0900000000"),  # at most 8 more digits than printed
    ("0.08", float("nan"), [0.07, 0.09], "nan"),
])
def test_a_timing_is_shown_with_the_digits_that_decide_its_verdict(published, value, band, shown):
    verdict, text, _ = timing(published, value, band)
    assert text == shown
    assert verdict == ("within tolerance" if band[0] <= value <= band[1] else "differs")


def test_the_decisive_digits_start_from_the_printers_decimals():
    # printed by NumPy from x.round(3): 0.5449 is shown 0.545, not 0.54
    assert timing("0.54", 0.5449, [0.5, 0.6], decimals=3)[:2] == ("within tolerance", "0.545")
    # 0.545 (the printer's 3 decimals) reads inside 0.545-0.546; one more digit says why it is not
    assert timing("0.54", 0.54494, [0.545, 0.546], decimals=3)[:2] == ("differs", "0.5449")


# --- the table -------------------------------------------------------------------------------

def test_the_ledger_has_its_columns_even_without_claims_and_each_row_its_claims_fields():
    columns = ["id", "article", "section", "claim", "published", "article_code", "reproduced", "class",
               "verdict", "reason", "accepted_low", "accepted_high"]
    assert list(verdicts.evaluate([], lambda experiment, table: None).columns) == columns
    c = claim("1", "exact", id="000.x")
    c.section, c.claim = "3.2", "the std"
    row = verdicts.evaluate([c], lambda experiment, table: pd.DataFrame({"c": [1.0]}))
    assert row.iloc[:, :10].values.tolist() == [
        ["000.x", "000", "3.2", "the std", "1", "", "1", "exact", "reproduced", ""]]
    assert row[["accepted_low", "accepted_high"]].isna().all(axis=None)  # the digits decided: no window


def test_the_ledger_records_the_window_that_decided_each_verdict():
    load = lambda experiment, table: pd.DataFrame({"c": [12.5]})  # noqa: E731
    bound = claim("10", "exact", band=[10, None], id="000.bound")  # "more than ten times": one-sided
    roundoff = claim("3e-16", "round-off", tolerance=1e-14, id="000.roundoff", why="r", rationale="r")
    timing = claim("4", "machine-bound", band=[3.48, 4.92], id="000.ratio", why="r", rationale="r")
    table = verdicts.evaluate([bound, roundoff, timing], load).set_index("id")
    windows = table[["accepted_low", "accepted_high"]].values.tolist()
    assert windows == [[10.0, float("inf")], [-1e-14, 1e-14], [3.48, 4.92]]
    assert verdicts.judge(bound, 9.5).window == (10.0, float("inf"))  # the window that refused it too


def test_the_summary_counts_each_verdict_per_article_in_the_verdicts_order():
    ledger_rows = pd.DataFrame({"article": ["000", "000", "001", "000"],
                                "verdict": ["differs", "reproduced", "missing", "reproduced"]})
    counts = verdicts.summary(ledger_rows)
    assert list(counts.columns) == ["reproduced", "differs", "missing"]
    assert counts.to_dict("index") == {"000": {"reproduced": 2, "differs": 1, "missing": 0},
                                       "001": {"reproduced": 0, "differs": 0, "missing": 1}}
    assert (counts.dtypes == "int64").all()


def test_the_gate_takes_the_exact_and_echo_claims_that_did_not_reproduce():
    rows = pd.DataFrame({"id": list("abcde"), "class": ["exact", "echo", "echo", "round-off", "exact"],
                         "verdict": ["differs", "differs", "reproduced", "differs", "missing"]})
    assert verdicts.exact_failures(rows)["id"].tolist() == ["a", "b", "e"]


def test_without_a_rule_no_factor_is_made_and_each_claims_table_is_read_once():
    reads = []

    def load(experiment, table):
        reads.append(experiment)
        return pd.DataFrame({"c": [0.1]})

    raw = claim("0.4", "machine-bound", raw_time=True, band=[0.05, 0.2])
    assert verdicts.evaluate([raw], load)[["verdict", "reason"]].values.tolist() == [
        ["within tolerance", "machine-bound: accepted band 0.05 to 0.2"]]
    # the judge's read, the article code's (ledger.yardstick: article_main, main, passes: no pass column,
    # none), its passes' (ledger.passes) and the disturbed check's (disturbed.Check); the cross-check's
    assert reads == ["e", "e", "e", "e", "e", "e", "causal_timing"]


def _reading(reads):
    """A load that records each (experiment, table) it reads into ``reads``."""
    def load(experiment, table):
        reads.append((experiment, table))
        return pd.DataFrame({"c": [0.1]})
    return load


def test_only_a_machine_bound_claims_passes_are_read():
    reads = []
    assert verdicts.evaluate([claim("0.1", "exact")], _reading(reads)).verdict.tolist() == ["reproduced"]
    assert reads == [("e", "main")]


def test_with_a_rule_the_factors_and_the_verdicts_share_one_cross_check():
    reads = []
    raw = claim("0.4", "machine-bound", raw_time=True, band=[0.05, 0.2])
    verdicts.evaluate([raw], _reading(reads), rule=speed.Rule(3.0, "runs spread"))
    # the factors' reads (the claim's table, the cross-check's, the value, the article code's: none
    # here), then the verdict's (the value, the article code's, the passes, the disturbed check)
    assert reads == [("e", "main"), ("causal_timing", "repeats"), ("e", "main"),
                     ("e", "article_main"), ("e", "main"), ("e", "passes"),
                     ("e", "main"), ("e", "article_main"), ("e", "main"), ("e", "passes"),
                     ("e", "passes"), ("e", "main")]
