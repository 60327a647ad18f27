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


def test_a_published_value_is_judged_by_the_seed_range_bounds_included():
    assert own("0.95", 0.97, [0.95, 0.99]) == (
        "within tolerance", "published value inside the range over 2 seeds: 0.95 to 0.99")
    assert own("0.95", 0.92, [0.9, 0.95]) == (
        "within tolerance", "published value inside the range over 2 seeds: 0.9 to 0.95")
    assert own("0.95", 0.97, [0.96, 0.98]) == (
        "differs", "published value outside the range over 2 seeds: 0.96 to 0.98")
    assert own("0.95-0.96", 0.97, [0.96, 0.98]) == (
        "within tolerance", "published interval overlaps the range over 2 seeds: 0.96 to 0.98")


def test_one_run_has_no_spread_two_have_one():
    single = ("differs", "stochastic claim with a single run: no spread to judge by")
    assert own("0.95", 0.9, [0.9]) == single and own("0.95", 0.9, None) == single
    assert own("0.95", 0.97, [0.9, 1.0]) == (
        "within tolerance", "published value inside the range over 2 seeds: 0.9 to 1")


def test_from_five_seeds_the_interval_of_the_mean_judges():
    values = [0.93, 0.94, 0.95, 0.96, 0.97]
    half = 1.96 * np.std(values, ddof=1) / math.sqrt(5)
    low, high = 0.95 - half, 0.95 + half
    assert own("0.95", 0.96, values) == (
        "within tolerance", f"published value inside the 95% interval of the mean over 5 seeds: "
                            f"{low:.4g} to {high:.4g}")
    assert own("0.95", 0.96, values[:4])[1] == "published value inside the range over 4 seeds: 0.93 to 0.96"


def test_seed_values_stored_as_text_are_judged_as_numbers():
    assert own("0.95", 0.96, np.array(["0.94", "0.96"])) == (
        "within tolerance", "published value inside the range over 2 seeds: 0.94 to 0.96")


def test_a_stochastic_note_ends_its_reason_placed_or_not():
    assert own("0.95", 0.97, [0.95, 0.99], note="three seeds only")[0] == "within tolerance"
    placed = types.SimpleNamespace(placed=lambda claim_id: (False, "outside the 95% interval"))
    assert verdicts.judge(claim("0.95", "stochastic", note="three seeds only"), 0.97, [0.9], placed) == (
        "differs", "0.97", "outside the 95% interval; three seeds only")


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


def test_a_timing_without_band_or_interval_differs_as_a_raw_time_of_another_cpu():
    assert timing("fast", 2.0) == ("differs", "2.0", "machine-bound: raw time of another CPU")
    assert timing("2.5", 2.0, note="timed once") == (
        "differs", "2.0", "machine-bound: raw time of another CPU; timed once")


def test_the_claims_band_not_the_articles_interval_judges_and_its_rationale_and_note_are_quoted():
    assert timing("1.99-2.04", 2.11, [1.8, 2.3], rationale="another CPU", note="n = 512") == (
        "within tolerance", "2.11", "machine-bound: accepted band 1.8 to 2.3 (another CPU); n = 512")
    assert timing("1.99-2.04", 2.11) == ("differs", "2.11", "machine-bound: accepted band 1.99 to 2.04")


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
    columns = ["id", "article", "section", "claim", "published", "reproduced", "class", "verdict", "reason"]
    assert list(verdicts.evaluate([], lambda experiment, table: None).columns) == columns
    c = claim("1", "exact", id="000.x")
    c.section, c.claim = "3.2", "the std"
    row = verdicts.evaluate([c], lambda experiment, table: pd.DataFrame({"c": [1.0]}))
    assert row.values.tolist() == [["000.x", "000", "3.2", "the std", "1", "1", "exact", "reproduced", ""]]


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
    # the judge's read and the disturbed check's (disturbed.Check); the cross-check's first table
    assert reads == ["e", "e", "causal_timing"]
