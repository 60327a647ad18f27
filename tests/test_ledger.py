"""The ledger's judgement on small, hand-made tables."""

import pandas as pd
import pytest

from attnrepro.report import ledger

RESULTS = {
    ("sweep", "main"): pd.DataFrame({"d_k": [4, 1024], "std": [1.98612, 31.92704], "diff": [3.2e-16, 4.1e-16]}),
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
    return ledger.Claim.from_dict({
        "id": f"c-{published}", "article": "000", "section": "s", "claim": "c",
        "published": published, "class": cls,
        "source": {"experiment": experiment, "column": column, "where": where or {}, **kw.pop("source", {})},
        **kw,
    })


def verdict_of(c):
    return ledger.evaluate([c], load).iloc[0]


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


def test_stochastic_inside_and_outside_the_seed_spread():
    inside = verdict_of(claim("0.955", "stochastic", "acc", {"task": "sort"}, experiment="train",
                              source={"reduce": "mean"}))
    assert (inside.verdict, inside.reproduced) == ("within tolerance", "0.967")
    assert "range over 3 seeds: 0.95 to 0.99" in inside.reason
    outside = verdict_of(claim("0.999", "stochastic", "acc", {"task": "sort"}, experiment="train",
                               source={"reduce": "mean"}))
    assert outside.verdict == "differs" and "outside" in outside.reason


def test_stochastic_value_given_by_the_article_code_here():
    row = verdict_of(claim("0.981", "stochastic", "acc", {"task": "sort"}, experiment="train",
                           source={"reduce": "mean"}, here="0.967"))
    assert row.verdict == "within tolerance" and "article's own code gives 0.967" in row.reason


def test_timing_band_and_missing_results():
    assert verdict_of(claim("2.04", "machine-bound", "slope", experiment="timing", band=[1.8, 2.3])).verdict == "within tolerance"
    assert verdict_of(claim("2.04", "machine-bound", "slope", experiment="timing", band=[1.9, 2.0])).verdict == "differs"
    assert verdict_of(claim("1", "exact", "x", experiment="absent")).verdict == "missing"


@pytest.mark.parametrize("value, published, expected", [
    (1.0, "1.", "1"), (True, "True", "True"), (1088, "1088", "1088"),
    (0.2134, "2.1e-01", "2.1e-01"), (-0.00001, "0.000", "0.000"), (6.9e-15, "6.9e-15", "6.9e-15"),
])
def test_format_like(value, published, expected):
    assert ledger.format_like(value, published) == expected


def test_summary_and_gate():
    rows = ledger.evaluate([
        claim("31.927", "exact", "std", {"d_k": 1024}),
        claim("31.900", "exact", "std", {"d_k": 1024}),
        claim("3.33e-16", "round-off", "diff", {"d_k": 4}, tolerance=1e-14),
    ], load)
    counts = ledger.summary(rows)
    assert counts.loc["000", "reproduced"] == 1 and counts.loc["000", "differs"] == 1
    assert ledger.exact_failures(rows)["published"].tolist() == ["31.900"]


def test_unknown_class_is_refused():
    with pytest.raises(ValueError, match="class must be one of"):
        claim("1", "approximate", "std")
