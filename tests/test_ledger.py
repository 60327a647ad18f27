"""The ledger's judgement on small, hand-made tables."""

import numpy as np
import pandas as pd
import pytest

from attnrepro.report.evidence_tables import citations, seeds_evaluate
from attnrepro.report.ledger import verdicts
from attnrepro.report.products import formats
from report_helpers import FrameLoad

RESULTS = {
    ("sweep", "main"): pd.DataFrame({"d_k": [4, 1024], "std": [1.98612, 31.92704],
                                     "diff": [3.2e-16, 4.1e-16]}),
    ("train", "main"): pd.DataFrame({
        "task": ["sort"] * 3 + ["copy"] * 3, "seed": [0, 1, 2] * 2,
        "acc": [0.990, 0.960, 0.950, 1.0, 1.0, 1.0],
    }),
    ("timing", "main"): pd.DataFrame({"slope": [2.11]}),
}


def load(experiment, table):
    try:
        return RESULTS[(experiment, table)]
    except KeyError:
        raise FileNotFoundError(experiment) from None


def claim(published, cls, column, where=None, experiment="sweep", **kw):
    return verdicts.Claim.from_dict({
        "id": f"c-{published}", "article": "000", "section": "s", "claim": "c",
        "published": published, "class": cls,
        "source": {"experiment": experiment, "column": column, "where": where or {}, **kw.pop("source", {})},
        **kw,
    })


def sort_mean(published, **kw):
    """A stochastic claim on the mean sort accuracy over the three seeds of RESULTS."""
    return claim(published, "stochastic", "acc", {"task": "sort"}, experiment="train",
                 source={"reduce": "mean"}, **kw)


def verdict_of(c):
    return verdicts.evaluate([c], load).iloc[0]


def test_exact_match_at_the_printed_precision():
    row = verdict_of(claim("31.927", "exact", "std", {"d_k": 1024}))
    assert (row.verdict, row.reproduced, row.reason) == ("reproduced", "31.927", "")


def test_exact_mismatch_differs_with_its_reason():
    row = verdict_of(claim("31.928", "exact", "std", {"d_k": 1024}, note="printed from another run"))
    assert (row.verdict, row.reproduced) == ("differs", "31.927")
    assert row.reason == "printed from another run"


def test_roundoff_is_judged_by_tolerance_not_digits():
    row = verdict_of(claim("3.33e-16", "round-off", "diff", {"d_k": 4}, tolerance=1e-14))
    assert (row.verdict, row.reproduced) == ("within tolerance", "3.20e-16")
    assert "below 1e-14" in row.reason
    big = verdict_of(claim("3.33e-16", "round-off", "diff", {"d_k": 4}, tolerance=1e-17))
    assert big.verdict == "differs"


def test_without_a_seed_distribution_the_runs_own_seeds_judge_and_the_reason_says_it_is_weaker():
    inside = verdict_of(sort_mean("0.955"))
    assert (inside.verdict, inside.reproduced) == ("within tolerance", "0.967")
    # t(0.975, 2) = 4.3027 (closed form): 0.9667 ± 4.3027 · 0.02082 · √(1/3 + 1/3)
    assert ("95% prediction interval of a new mean over 3 seeds from this run's 3 seeds "
            "(t-based: mean ± t(0.975, 2) · s · √(1/3 + 1/3)): 0.8935 to 1.04") in inside.reason
    outside = verdict_of(sort_mean("0.85"))
    assert outside.verdict == "differs" and "outside" in outside.reason
    for row in (inside, outside):  # never a silent fallback
        assert "no seed distribution in this run: judged against the run's own seeds only" in row.reason
        assert "a weaker judgement" in row.reason and "`snakemake --cores 2 seeds` builds it" in row.reason


def test_a_round_off_reason_names_what_moves_its_last_bits_and_no_product_the_run_lacks():
    row = verdict_of(claim("3.33e-16", "round-off", "diff", {"d_k": 4}, tolerance=1e-14))
    assert row.reason.endswith("its last bits move with the numerics (the BLAS kernel, NumPy's and torch's "
                               "code paths, the versions)")
    assert "CPU" not in row.reason and "sweep" not in row.reason


# --- against the seed distribution: 3-seed statistics over many seeds ------------------------

SEEDS = np.linspace(0.96, 0.99, 20)  # 20 seeds of the sort run: 3-seed means within 0.963-0.987


def seed_frame(values, **cell):
    """The trainings of the seed distribution: one row per seed (``cell``: task, L)."""
    return pd.DataFrame({"task": "sort", **cell, "seed": range(len(values)), "acc": values})


def spread_of(claims, frame, tmp_path=None):
    """The seed distribution that places ``claims`` (through its CSV when ``tmp_path`` is given)."""
    table = seeds_evaluate.evaluate(claims, FrameLoad({("train", "main"): frame}))
    if tmp_path is None:
        return seeds_evaluate.Spread(table)
    table.to_csv(tmp_path / "seeds.csv", index=False)
    return citations.spread(tmp_path / "seeds.csv")


def test_a_published_mean_is_judged_by_the_interval_of_3_seed_means_not_by_the_runs_seeds():
    claims = [sort_mean("0.975"), sort_mean("0.955")]
    spread = spread_of(claims, seed_frame(SEEDS))
    inside, outside = (verdicts.evaluate([c], load, spread).iloc[0] for c in claims)
    assert (inside.verdict, inside.reproduced) == ("within tolerance", "0.967")  # the run's own mean
    assert "of the 1140 means of 3 of the 20 seeds measured here, inside their 95% interval" in inside.reason
    # 0.955 lies in the range of the run's own seeds (0.95-0.99), yet no 3 of the 20 seeds give it
    assert (outside.verdict, outside.reproduced) == ("differs", "0.967")
    assert "outside their 95% interval" in outside.reason and "percentile 0 " in outside.reason
    assert "weaker" not in inside.reason + outside.reason


def test_a_claim_the_distribution_does_not_place_falls_back_and_says_so():
    spread = seeds_evaluate.Spread(pd.DataFrame(columns=seeds_evaluate.COLUMNS))
    row = verdicts.evaluate([sort_mean("0.955")], load, spread).iloc[0]
    assert row.verdict == "within tolerance"
    assert "the seed distribution does not place this claim: judged against the run's own seeds" in row.reason


# --- a published range, row by row ---------------------------------------------------------

ROWS = pd.DataFrame({  # sort, 3 seeds per L: means 0.99 (L = 4), 0.97 (L = 6), 0.95 (L = 8)
    "task": "sort", "L": [4] * 3 + [6] * 3 + [8] * 3, "seed": [0, 1, 2] * 3,
    "acc": [0.99, 0.99, 0.99, 0.98, 0.97, 0.96, 0.96, 0.95, 0.94],
})


def rows_load(experiment, table):
    return ROWS


def sort_range(published):
    """A stochastic range that every L's mean over its seeds must lie in."""
    return claim(published, "stochastic", "acc", {"task": "sort"}, experiment="train",
                 source={"reduce": "mean", "per": "L"})


def test_a_published_range_holds_when_every_rows_mean_lies_in_it():
    row = verdicts.evaluate([sort_range("0.94-0.995")], rows_load).iloc[0]
    assert (row.verdict, row.reproduced) == ("within tolerance", "0.950-0.990")
    assert "every row lies in the published range" in row.reason
    assert "L = 8: 0.950 (mean over 3 seeds)" in row.reason
    share = verdicts.evaluate([sort_range("95-99%")], rows_load).iloc[0]
    assert (share.verdict, share.reproduced) == ("within tolerance", "95-99%")


def test_one_row_outside_the_published_range_makes_it_differ_and_is_named():
    # the mean pooled over L (0.97) lies in 0.96-0.995; the L = 8 row (0.95) does not
    row = verdicts.evaluate([sort_range("0.96-0.995")], rows_load).iloc[0]
    assert (row.verdict, row.reproduced) == ("differs", "0.950-0.990")
    assert "L = 8 outside the published range" in row.reason
    assert "L = 4 outside" not in row.reason and "L = 6 outside" not in row.reason
    assert "no seed distribution in this run" in row.reason and "`snakemake --cores 2 seeds`" in row.reason


@pytest.mark.parametrize("seeds, meets", [
    (np.linspace(0.93, 0.97, 20), "overlaps"), (np.linspace(0.90, 0.94, 20), "does not overlap"),
])
def test_a_row_outside_the_range_says_whether_its_3_seed_interval_meets_it(tmp_path, seeds, meets):
    placed = claim("0.95", "stochastic", "acc", {"task": "sort", "L": 8}, experiment="train",
                   source={"reduce": "mean"})
    spread = spread_of([placed], seed_frame(seeds, L=8), tmp_path)
    row = verdicts.evaluate([sort_range("0.96-0.995")], rows_load, spread).iloc[0]
    assert row.verdict == "differs"
    assert ("L = 8 outside the published range (its 95% interval of the 1140 means of 3 of 20 seeds"
            in row.reason)
    assert f"{meets} the range)" in row.reason and "no seed distribution" not in row.reason


def test_each_row_outside_is_named_even_where_the_distribution_has_no_interval():
    placed = claim("0.95", "stochastic", "acc", {"task": "sort", "L": 8}, experiment="train",
                   source={"reduce": "mean"})
    spread = spread_of([placed], seed_frame(SEEDS, L=8))
    row = verdicts.evaluate([sort_range("0.975-0.995")], rows_load, spread).iloc[0]
    assert row.verdict == "differs"
    assert "L = 6 outside the published range (the seed distribution holds no interval for this row)" \
        in row.reason
    assert "L = 8 outside the published range (its 95% interval" in row.reason


def test_only_a_stochastic_claim_is_judged_row_by_row():
    with pytest.raises(ValueError, match="row by row"):
        claim("0.9-1", "exact", "acc", experiment="train", source={"per": "L"})


def test_timing_band_and_missing_results():
    assert verdict_of(claim("2.04", "machine-bound", "slope", experiment="timing",
                            band=[1.8, 2.3])).verdict == "within tolerance"
    assert verdict_of(claim("2.04", "machine-bound", "slope", experiment="timing",
                            band=[1.9, 2.0])).verdict == "differs"
    assert verdict_of(claim("1", "exact", "x", experiment="absent")).verdict == "missing"


@pytest.mark.parametrize("value, published, expected", [
    (1.0, "1.", "1"), (True, "True", "True"), (1088, "1088", "1088"),
    (0.2134, "2.1e-01", "2.1e-01"), (-0.00001, "0.000", "0.000"), (6.9e-15, "6.9e-15", "6.9e-15"),
])
def test_format_like(value, published, expected):
    assert verdicts.format_like(value, published) == expected


def test_summary_and_gate():
    rows = verdicts.evaluate([
        claim("31.927", "exact", "std", {"d_k": 1024}),
        claim("31.900", "exact", "std", {"d_k": 1024}),
        claim("3.33e-16", "round-off", "diff", {"d_k": 4}, tolerance=1e-14),
    ], load)
    counts = verdicts.summary(rows)
    assert counts.loc["000", "reproduced"] == 1 and counts.loc["000", "differs"] == 1
    assert verdicts.exact_failures(rows)["published"].tolist() == ["31.900"]


def test_unknown_class_is_refused():
    with pytest.raises(ValueError, match="class must be one of"):
        claim("1", "approximate", "std")


@pytest.mark.parametrize("value, published, expected", [
    (0.003, "3e-3", "3e-3"), (8886110.5, "8.9e6", "8.9e6"), (2.56e-6, "2.56e-06", "2.56e-06"),
    (27253, "27,253", "27,253"), (1610612736, "1,610,612,736", "1,610,612,736"),
    (0.969, "97%", "97%"), (14.2, "35 s", "14 s"), (3.0, "3 GiB", "3 GiB"),
    (True, "1", "1"), (False, "0", "0"), ("[0 1 2 3 4 5]", "[0 1 2 3 4 5]", "[0 1 2 3 4 5]"),
    ("-6 constant", "-6 constant", "-6 constant"),
    (10.2, "8.3-13.0 s", "10.2 s"), (0.958, "95-98%", "96%"), (48.3, "about 30 to 65", "48"),
])
def test_format_like_units_intervals_and_separators(value, published, expected):
    assert verdicts.format_like(value, published) == expected


@pytest.mark.parametrize("published, expected", [
    ("1.99-2.04", (1.99, 2.04)), ("8.3-13.0 s", (8.3, 13.0)), ("about 30 to 65", (30, 65)),
    ("95-98%", (0.95, 0.98)), ("27,253", (27253, 27253)), ("35 s", (35, 35)),
])
def test_published_range(published, expected):
    assert verdicts.published_range(published) == pytest.approx(expected)


def test_numpy_printed_values_compare_at_their_rounding():
    # "0.54" printed by NumPy from x.round(3): 0.5403 shows as 0.54, 0.5449 would show as 0.545
    ok = verdicts.Claim.from_dict({"id": "a", "article": "003", "section": "s", "claim": "c",
                                 "published": "0.54", "class": "exact", "decimals": 3, "source": {}})
    assert verdicts.judge(ok, 0.5403)[:2] == ("reproduced", "0.54")
    assert verdicts.judge(ok, 0.5449)[:2] == ("differs", "0.545")
    one = verdicts.Claim.from_dict({"id": "b", "article": "003", "section": "s", "claim": "c",
                                  "published": "1.", "class": "exact", "decimals": 12, "source": {}})
    assert verdicts.judge(one, 1 - 1e-15)[0] == "reproduced" and verdicts.judge(one, 0.9999)[0] == "differs"


def test_stochastic_interval_overlapping_the_statistic_or_the_spread():
    inside = verdict_of(sort_mean("95-98%"))
    assert (inside.verdict, inside.reproduced) == ("within tolerance", "97%")
    assert "lies in the published interval" in inside.reason
    spread = verdict_of(sort_mean("98-99%"))
    assert spread.verdict == "within tolerance" and "overlaps the 95% prediction interval" in spread.reason
    outside = verdict_of(sort_mean("80-85%"))
    assert outside.verdict == "differs" and "outside the 95% prediction interval" in outside.reason


def test_machine_bound_interval_is_its_own_band_and_never_an_exact_match():
    inside = verdict_of(claim("1.99-2.12", "machine-bound", "slope", experiment="timing"))
    assert (inside.verdict, inside.reproduced) == ("within tolerance", "2.11")
    assert "band 1.99 to 2.12" in inside.reason
    assert verdict_of(claim("1.99-2.04", "machine-bound", "slope", experiment="timing")).verdict == "differs"
    same = verdict_of(claim("2.11-2.11", "machine-bound", "slope", experiment="timing"))
    assert same.verdict == "within tolerance"


def test_selectors_with_lists_ratios_and_no_matching_row():
    both = verdict_of(claim("2", "exact", "acc", {"task": "copy", "seed": [0, 1]}, experiment="train",
                            source={"reduce": "count"}))
    assert both.verdict == "reproduced"
    ratio = verdict_of(claim("16.08", "exact", "std", {"d_k": 1024},
                             source={"over": {"where": {"d_k": 4}, "column": "std"}}))
    assert (ratio.verdict, ratio.reproduced) == ("reproduced", "16.08")
    assert verdict_of(claim("1", "exact", "std", {"d_k": 8})).verdict == "missing"
    assert verdict_of(claim("1", "exact", "no_such_column", {"d_k": 4})).verdict == "missing"


def test_markdown_opens_with_the_verdict_and_lists_each_claim_not_reproduced_with_its_reason():
    from attnrepro.report.ledger import ledger_md

    rows = verdicts.evaluate([
        claim("31.927", "exact", "std", {"d_k": 1024}),
        claim("31.900", "exact", "std", {"d_k": 1024}, note="a |J| in the reason"),
        claim("3.33e-16", "round-off", "diff", {"d_k": 4}, tolerance=1e-14),
        claim("31.927", "echo", "std", {"d_k": 1024}),  # counted apart from the headline
    ], load)
    text = ledger_md.markdown(rows)
    summary = [line for line in text.splitlines() if line.startswith("**Verdict**")]
    assert len(summary) == 1 and text.splitlines()[4] == summary[0]  # under the title, after the opening
    assert text.splitlines()[2].startswith("**In short**: 1 of the 3 computed claims reproduce as printed")
    assert summary[0].startswith("**Verdict**: 4 claims, 3 computed and 1 echoes. Computed: 1 reproduced, "
                                 "1 within tolerance, 0 disturbed, 0 inconclusive, 1 differs, 0 missing")
    assert ("Echoes (counted apart): 1 reproduced, 0 within tolerance, 0 disturbed, 0 inconclusive, 0 differs"
            in summary[0])
    per_class = "| exact | 2 | 1 | 0 | 0 | 0 | 1 | 0 |"
    assert any(line.startswith(per_class) for line in text.splitlines())
    assert text.index("**Verdict**") < text.index("## Not reproduced") < text.index("## Article 000")
    assert ("- [c-31.900](articles/000.html#c-31.900) (exact, **differs**): c: published 31.900, reproduced "
            "31.927.\n  Reason: a |J| in the reason.\n") in text
    # the bounds that decided, as ledger.csv holds them (accepted_low, accepted_high)
    assert ("(round-off, **within tolerance**): c: published 3.33e-16, reproduced 3.20e-16, bounds -1e-14 to "
            "1e-14.") in text
    assert "| id | published | reproduced |\n|---|---|---|\n| c-31.927 | 31.927 | 31.927 |" in text


def test_markdown_keeps_the_printed_digits():
    from attnrepro.report.ledger import ledger_md

    rows = verdicts.evaluate([claim("1.000", "exact", "std", {"d_k": 4},
                                  source={"over": {"where": {"d_k": 4}, "column": "std"}})],
                           load)
    assert "| 1.000 " in ledger_md.markdown(rows)


def test_a_roundoff_claim_reproduced_as_exactly_zero_differs_and_says_why():
    claim = verdicts.Claim.from_dict({"id": "r", "article": "000", "section": "s", "claim": "max |a - b|",
                                    "published": "2.2e-16", "class": "round-off", "tolerance": 1e-14,
                                    "source": {"experiment": "e", "column": "c"}})
    verdict, text, reason = verdicts.judge(claim, 0.0)
    assert (verdict, text) == ("differs", "0.0e00")
    assert reason.startswith("round-off claim reproduced as exactly 0: the two computations compared "
                             "gave the same bits")
    assert verdicts.judge(claim, 3.3e-16)[0] == "within tolerance"
    zero = verdicts.Claim.from_dict({"id": "z", "article": "000", "section": "s", "claim": "c",
                                   "published": "0", "class": "round-off", "tolerance": 1e-14,
                                   "source": {"experiment": "e", "column": "c"}})
    assert verdicts.judge(zero, 0.0)[0] == "reproduced"  # a declared exact zero: the article prints 0


@pytest.mark.parametrize("cls", ["exact", "echo"])
def test_a_bound_stated_in_words_is_reproduced_inside_it_and_differs_outside(cls):
    """"more than ten times": band [10, null]; the value shown with three significant digits."""
    words = {"line": 1, "column": 1, "text": "more than ten times"}
    bound = claim("10", cls, "std", {"d_k": 1024}, band=[10, None], location=words, note="a note",
                  **({"why": "echo-derived"} if cls == "echo" else {}))
    verdict, text, reason = verdicts.judge(bound, 10.66)
    assert (verdict, text) == ("reproduced", "10.7")
    assert reason.startswith("the article states it in words, 'more than ten times': a bound, 10 to inf")
    assert verdicts.judge(bound, 9.5)[:2] == ("differs", "9.5")
    assert verdicts.judge(bound, 9.5)[2].endswith("; a note")
    below = claim("0.5", cls, "std", {"d_k": 1024}, band=[None, 0.5], location=words)
    assert verdicts.judge(below, 0.25)[0] == "reproduced" and verdicts.judge(below, 0.75)[0] == "differs"
    assert verdicts.judge(bound, "ten")[:2] == ("differs", "ten")


def test_a_time_is_written_with_the_digits_that_were_judged():
    raw = claim("0.001", "machine-bound", "std", {"d_k": 4}, raw_time=True)
    assert verdicts.timing_text(0.00097, raw) == "0.000970"  # three significant digits, never "0.001"
    sci = claim("3.0e-06", "machine-bound", "std", raw_time=True)
    assert verdicts.timing_text(2.5e-06, sci) == "2.50e-06"
    ratio = claim("20.2", "machine-bound", "std", band=[12.13, 24.25])
    assert verdicts.timing_text(20.2, ratio) == "20.20"  # one digit more when it reads as published
    assert verdicts.timing_text(19.8, ratio) == "19.8"  # a ratio keeps the article's digits otherwise
    assert verdicts.timing_text(0.093, claim("0.07-0.09 s", "machine-bound", "std"), 0.07, 0.09) == "0.093 s"
    printed = claim("0.54", "machine-bound", "std", band=[0.1, 1.0], decimals=3)
    assert verdicts.timing_text(0.5514, printed) == "0.551"  # the printer's 3 decimals, zeros dropped
    for value in (0.00097, 2.5e-06, 85.21, 9.996):  # a raw time: the tables' digits, its unit after them
        assert verdicts.timing_text(value, raw) == formats.time_text(value)
    interval = claim("0.07-0.09 s", "machine-bound", "std", raw_time=True)
    assert verdicts.timing_text(85.21, interval) == "85.2 s"  # three significant digits, not the article's
    assert verdicts.timing_text(0.09004, interval, 0.07, 0.09) == "0.09004 s"  # "0.0900 s" would read inside


def test_a_missing_value_stays_missing_on_a_disturbed_row_and_a_disturbed_reason_keeps_the_judgement():
    class Always:
        def finding(self, claim):
            return "disturbed measurement: x"

    timing = claim("1.0", "machine-bound", "std", band=[0.5, 2.0])
    assert verdicts._disturbed(timing, "missing", "no file", Always()) == ("missing", "no file")
    assert verdicts._disturbed(timing, "differs", "band 0.5 to 2", Always()) == (
        "disturbed", "disturbed measurement: x; judged on these times it would be differs; band 0.5 to 2")


def test_a_restating_prose_claim_keeps_its_own_note():
    cell = claim("31.927", "exact", "std", {"d_k": 1024})
    prose = verdicts.Claim.from_dict({
        "id": "000.prose.std", "article": "000", "section": "s", "claim": "c", "published": "31.9",
        "class": "exact", "note": "the prose's note",
        "source": {"experiment": "sweep", "column": "std", "where": {"d_k": 1024}}})
    rows = verdicts.evaluate([cell, prose], load).set_index("id")
    assert rows.loc["000.prose.std", "reason"] == (
        "restates the cells c-31.927: reproduced, and takes the least good of their verdicts (one rule per "
        "number); the prose's note")


def test_a_bound_in_words_includes_its_ends_and_names_what_the_article_prints():
    plain = claim("10", "exact", "std", band=[10, 20], location={"line": 1, "column": 1}, note="n")
    assert verdicts.judge(plain, 10.0)[0] == verdicts.judge(plain, 20.0)[0] == "reproduced"  # ends inside
    words = "the article states it in words, '10': a bound, 10 to 20"
    assert verdicts.judge(plain, 10.0)[2].startswith(words)
    assert verdicts.judge(plain, "ten")[2] == "the article states it in words, '10': a bound, 10 to 20; n"
    unplaced = claim("10", "exact", "std", band=[10, 20])
    assert verdicts._judge_bound(unplaced, 12)[2].startswith("the article states it in words, '10'")


def test_a_time_that_rounds_to_nothing_is_written_as_its_pattern_says():
    """Beyond raw times no digits are added for significance: 0.001 against a band pattern "0.07"."""
    assert verdicts.timing_text(0.001, claim("0.07", "machine-bound", "std", band=[0.05, 0.1])) == "0.00"
