"""Timing claims judged by every pass of their measurement (report.ledger.passes), and the
article's loose words ("about 30 to about 65") widened by what they admit (claims.loosened)."""

import pandas as pd
import pytest

from attnrepro.report.ledger import passes, speed, verdicts
from attnrepro.report.ledger.claims import loosened
from report_helpers import FrameLoad

BAND = [3.48, 4.92]  # a time ratio per doubling: 2^1.8 to 2^2.3


def _ratio_claim(**kw):
    """The time per doubling from n = 1024 to 2048, as a ratio of two rows (source ``over``)."""
    return verdicts.Claim.from_dict({
        "id": "000.cost.ratio", "article": "000", "section": "s", "claim": "c", "published": "4",
        "class": "machine-bound", "band": kw.pop("band", BAND), "why": "ratio-x2",
        "source": {"experiment": "cost", "where": {"n": 2048}, "column": "seconds",
                   "over": {"where": {"n": 1024}, "column": "seconds"}}, **kw})


def _load(main, per_pass):
    """main: {n: seconds}; per_pass: [{n: seconds}] one dict per pass."""
    rows = [{"pass": p, "n": n, "seconds": s} for p, times in enumerate(per_pass) for n, s in times.items()]
    frames = {("cost", "main"): pd.DataFrame({"n": list(main), "seconds": list(main.values())})}
    if per_pass:
        frames[("cost", "passes")] = pd.DataFrame(rows)
    return FrameLoad(frames)


def _verdict(load, claim=None):
    row = verdicts.evaluate([claim or _ratio_claim()], load).iloc[0]
    return row["verdict"], row["reason"]


@pytest.mark.parametrize(("per_pass", "expected"), [
    ([4.1, 3.9, 4.5], "within tolerance"),  # the value and every pass inside
    ([5.5, 6.0, 7.0], "inconclusive"),  # the value inside, the passes outside
    ([4.0, 6.0, 4.2], "inconclusive"),  # the passes straddle the band
])
def test_a_ratio_is_judged_on_its_value_and_every_pass(per_pass, expected):
    load = _load({1024: 1.0, 2048: 4.0}, [{1024: 1.0, 2048: r} for r in per_pass])
    verdict, reason = _verdict(load)
    assert verdict == expected
    inside = sum(BAND[0] <= r <= BAND[1] for r in per_pass)
    span = f"{min(per_pass):.3g} to {max(per_pass):.3g}"
    assert f"{inside} of 3 passes inside (the passes span {span})" in reason


def test_a_ratio_outside_on_its_value_and_every_pass_differs_and_without_passes_its_value_decides():
    outside = _load({1024: 1.0, 2048: 8.0}, [{1024: 1.0, 2048: 7.5}, {1024: 2.0, 2048: 13.0}])
    assert _verdict(outside) == ("differs", "machine-bound: accepted band 3.48 to 4.92; 0 of 2 passes inside "
                                            "(the passes span 6.5 to 7.5)")
    assert _verdict(_load({1024: 1.0, 2048: 8.0}, []))[0] == "differs"
    assert _verdict(_load({1024: 1.0, 2048: 4.0}, []))[0] == "within tolerance"
    # a value outside whose passes are partly inside: the repeats cannot decide either
    assert _verdict(_load({1024: 1.0, 2048: 8.0}, [{1024: 1.0, 2048: 4.0}, {1024: 1.0, 2048: 8.0}]))[0] == \
        "inconclusive"


def test_each_pass_is_its_own_ratio_the_over_selector_restricted_to_that_pass():
    load = _load({1024: 1.0, 2048: 4.0}, [{1024: 1.0, 2048: 4.0}, {1024: 0.5, 2048: 2.5}])
    assert passes.values(_ratio_claim().source, load) == [4.0, 5.0]
    # a selector of another table, or split per row, has no passes
    assert passes.values({**_ratio_claim().source, "table": "repeats"}, load) == []
    assert passes.values({**_ratio_claim().source, "per": "n"}, load) == []


def test_a_selector_without_where_reads_one_row_per_pass_and_its_over_too():
    frames = {("cost", "main"): pd.DataFrame({"a": [7.0], "b": [2.0]}),
              ("cost", "passes"): pd.DataFrame({"pass": [0, 1], "a": [6.0, 8.0], "b": [2.0, 2.0]})}
    ratio = {"experiment": "cost", "column": "a", "over": {"column": "b"}}  # two columns of one row
    assert passes.values(ratio, FrameLoad(frames)) == [3.0, 4.0]
    assert passes.values({"experiment": "cost", "column": "a"}, FrameLoad(frames)) == [6.0, 8.0]


def test_passes_of_one_value_give_their_span_as_that_value():
    assert passes.Repeats(2, 2, 4.0, 4.0).sentence() == "2 of 2 passes inside (the passes span 4)"
    assert passes.Repeats(1, 2, 4.0, 5.5).sentence() == "1 of 2 passes inside (the passes span 4 to 5.5)"


def test_inconclusive_is_counted_apart_and_a_prose_restating_it_takes_it():
    from attnrepro.report.ledger import restated
    from attnrepro.report.ledger.claims import SYMBOLS, VERDICTS

    assert "inconclusive" in VERDICTS and SYMBOLS["inconclusive"] not in (
        SYMBOLS[v] for v in VERDICTS if v != "inconclusive")
    assert restated.worst(["within tolerance", "inconclusive", "disturbed"]) == "inconclusive"
    assert restated.worst(["inconclusive", "differs"]) == "differs"


def _raw(published, value_passes, rule_band=3.0):
    claim = verdicts.Claim.from_dict({
        "id": "001.t", "article": "001", "section": "s", "claim": "c", "published": published,
        "class": "machine-bound", "raw_time": True,
        "source": {"experiment": "cost", "where": {"n": 1024}, "column": "seconds"}})
    load = _load({1024: min(value_passes)}, [{1024: v} for v in value_passes])
    factor = speed.Factor("001", 4.0, 3.5, 4.5, {"001.other": 4.0})
    value = min(value_passes)
    return verdicts.judge(claim, value, factor=factor, rule=speed.Rule(rule_band, "spread"),
                          repeats=passes.values(claim.source, load))


def test_a_raw_time_is_judged_on_every_pass_against_the_window_of_the_others_factor():
    # published 4 s, window of ratios 1.33x to 12x: a reproduced time between 0.333 s and 3 s
    assert _raw("4", [1.0, 1.1, 1.2])[0] == "within tolerance"
    assert _raw("4", [1.0])[0] == "within tolerance"
    assert _raw("4", [1.0]).window == pytest.approx((1 / 3, 3.0))  # the times the window admits
    verdict, _, reason = _raw("4", [1.0, 2.0, 3.5])
    assert verdict == "inconclusive" and "2 of 3 passes inside (the passes span 1 to 3.5)" in reason
    assert _raw("4", [3.5, 4.0])[0] == "differs"
    assert _raw("4", [0.2])[:2] == ("differs", "0.200")  # too fast: its ratio 20x above 12x
    assert "0 of 1 passes inside" in _raw("4", [0.2])[2]


def test_a_raw_times_pass_at_either_end_of_the_window_lies_inside_it():
    # factor 4 within x/ 2: ratios 2x to 8x; 4 s / 0.5 s = 8x and 4 s / 2 s = 2x, both exact
    verdict, _, reason = _raw("4", [0.5, 2.0], rule_band=2.0)
    assert verdict == "within tolerance" and "2 of 2 passes inside (the passes span 0.5 to 2)" in reason


@pytest.mark.parametrize(("band", "widened"), [
    ([30, 65], [25, 65.5]), ([0.25, 100], [0.245, 150]), ([2, 2.5], [1.5, 2.55])])
def test_about_admits_what_rounds_to_each_end_at_its_written_digits(band, widened):
    assert loosened(band) == pytest.approx(widened)


def test_a_band_in_loose_words_judges_by_what_they_admit_and_says_so():
    words = _ratio_claim(band=[30, 65], about=True)
    strict = _ratio_claim(band=[30, 65])
    load = _load({1024: 1.0, 2048: 28.6}, [])
    verdict, reason = _verdict(load, words)
    assert verdict == "within tolerance"
    assert reason.startswith("machine-bound: accepted band 25 to 65.5 (the article's about 30 to about 65: "
                             "what rounds to each end at the digits it is written with)")
    assert _verdict(load, strict)[0] == "differs"
    assert _verdict(_load({1024: 1.0, 2048: 24.9}, []), words)[0] == "differs"


def test_about_marks_only_a_machine_bound_band():
    with pytest.raises(ValueError, match="about: true marks a machine-bound band in loose words"):
        _ratio_claim(band=None, about=True)
    with pytest.raises(ValueError, match="about: true marks"):
        verdicts.Claim.from_dict({"id": "x", "article": "000", "section": "s", "claim": "c", "published": "1",
                                  "class": "exact", "band": [1, 2], "about": True,
                                  "source": {"experiment": "e", "column": "c"}})


def test_the_legend_gives_within_tolerance_one_meaning_per_class_and_says_the_undecided_verdicts():
    from attnrepro.report.ledger import ledger_md
    from attnrepro.report.ledger.claims import CLASSES, UNDECIDED, VERDICTS, WITHIN

    assert list(WITHIN) == list(CLASSES)  # a class added without its meaning fails here
    assert set(UNDECIDED) <= set(VERDICTS)
    text = ledger_md.legend()
    for cls in CLASSES:
        assert f"{cls}: {WITHIN[cls]}" in text
    assert "*inconclusive*: its repeats straddle the band" in text
