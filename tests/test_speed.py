"""This machine's speed factor per article, and each raw time judged against it (report.speed)."""

import pandas as pd
import pytest

from attnrepro.report.ledger import verdicts, speed
from report_helpers import FrameLoad

RULE = speed.Rule(3.0, "the article's own runs of one timing spread by up to 2.7x")
# published seconds of five raw times; this machine about 4x faster, but n = 4096 only 1.2x
PUBLISHED = {512: "0.004", 1024: "0.016", 2048: "0.064", 4096: "0.240", 8192: "1.000"}
HERE = {512: 0.001, 1024: 0.0041, 2048: 0.0158, 4096: 0.2, 8192: 0.26}


def _claims(prose=None):
    claims = [verdicts.Claim.from_dict({
        "id": f"000.cost.n-{n}", "article": "000", "section": "s", "claim": f"time at n = {n}",
        "published": text, "class": "machine-bound", "raw_time": True,
        "band": [float(text) / 3, float(text) * 3], "location": {"line": 1, "column": 1},
        "source": {"experiment": "quadratic_cost", "where": {"n": n}, "column": "mean_seconds"}})
        for n, text in PUBLISHED.items()]
    if prose:
        claims.append(verdicts.Claim.from_dict({
            "id": "000.prose.cost.n-8192", "article": "000", "section": "s", "claim": "three runs",
            "published": prose, "class": "machine-bound", "raw_time": True,
            "location": {"line": 1, "column": 1},
            "source": {"experiment": "quadratic_cost", "where": {"n": 8192}, "column": "mean_seconds"}}))
    return claims


def _load():
    frame = pd.DataFrame({"n": list(HERE), "mean_seconds": list(HERE.values())})
    return FrameLoad({("quadratic_cost", "main"): frame})


def test_the_factor_is_the_median_ratio_with_a_bootstrap_interval():
    factors = verdicts.raw_time_factors(_claims(), _load())
    factor = factors["000"]
    ratios = sorted(float(PUBLISHED[n]) / HERE[n] for n in HERE)
    assert factor.factor == pytest.approx(ratios[2]) and factor.factor == 0.016 / 0.0041
    assert factor.low <= factor.factor <= factor.high
    assert factor.low >= ratios[0] and factor.high <= ratios[-1]
    assert speed.median_interval(list(factor.ratios.values())) == (factor.factor, factor.low, factor.high)
    assert "3.9x as fast as its author's machine (median of 5 ratios" in factor.sentence()


def test_one_outlying_raw_time_and_only_it_differs_and_says_why():
    table = verdicts.evaluate(_claims(prose="0.9-1.1"), _load(), rule=RULE).set_index("id")
    assert (table["verdict"] == "differs").tolist() == [False, False, False, True, False, False]
    outlier = table.loc["000.cost.n-4096", "reason"]
    assert "ratio 1.2 is outside it: this time does not scale like the article's other raw times" in outlier
    # judged by the factor of the four others (leave-one-out): the median of 4, 3.9, 4.05 and 3.85
    assert outlier.startswith("raw time, judged by the article's other raw times: this machine runs article "
                              "000's raw times 3.95x as fast as its author's machine (median of 4 ratios")
    assert "(accepted: 1.32x to 11.9x, the factor within x/ 3: the article's own runs" in outlier
    assert "as information, the raw time lies inside the claim's band 0.08 to 0.72" in outlier
    inside = table.loc["000.cost.n-512", "reason"]  # the others' median: 3.9, 4.05, 1.2, 3.85
    assert inside.startswith("raw time, judged by the article's other raw times: this machine runs article "
                             "000's raw times 3.87x as fast")
    assert "ratio 4 is consistent with it" in inside
    # the prose's interval (not part of the factor) restates the cell n = 8192: it takes its verdict
    prose = table.loc["000.prose.cost.n-8192"]
    assert prose["reason"].startswith("restates the cells 000.cost.n-8192: within tolerance")
    assert prose["verdict"] == table.loc["000.cost.n-8192", "verdict"] == "within tolerance"


def _judged(here):
    frame = pd.DataFrame({"n": list(here), "mean_seconds": list(here.values())})
    table = verdicts.evaluate(_claims(), FrameLoad({("quadratic_cost", "main"): frame}), rule=RULE)
    return table.set_index("id")


def _window(reason):
    return reason[reason.index("(accepted:"):reason.index("; as information")]


def test_a_raw_time_is_judged_by_a_factor_made_without_it_so_scaling_it_moves_its_ratio_not_its_window():
    before = _judged(HERE)
    after = _judged({**HERE, 2048: HERE[2048] * 10})  # only its own value, scaled by hand
    one = "000.cost.n-2048"
    assert _window(after.loc[one, "reason"]) == _window(before.loc[one, "reason"])
    assert (before.loc[one, "verdict"], after.loc[one, "verdict"]) == ("within tolerance", "differs")
    assert "ratio 0.405 is outside it" in after.loc[one, "reason"]
    others = [i for i in before.index if i != one]
    assert after.loc[others, "verdict"].tolist() == before.loc[others, "verdict"].tolist()
    # a factor that judged a time with itself inside would have kept this one within tolerance
    made_with_it = verdicts.raw_time_factors(_claims(), FrameLoad(
        {("quadratic_cost", "main"): pd.DataFrame({"n": list(HERE), "mean_seconds": [
            HERE[n] * (10 if n == 2048 else 1) for n in HERE]})}))["000"]
    assert made_with_it.without(one).factor != made_with_it.factor


def test_a_factor_without_a_claim_it_never_held_is_itself_and_without_its_only_ratio_none():
    factor = speed.Factor("000", 4.0, 3.5, 4.5, {"000.t": 4.0})
    assert factor.without("000.prose.t") is factor
    assert factor.without("000.t") is None
    two = speed.factors({"000": {"a": 2.0, "b": 8.0}})["000"]
    assert two.without("a").factor == 8.0 and two.without("a").ratios == {"b": 8.0}


def test_without_a_rule_a_raw_time_is_judged_alone_by_its_band():
    table = verdicts.evaluate(_claims(), _load()).set_index("id")
    assert table.loc["000.cost.n-4096", "verdict"] == "within tolerance"  # 0.2 lies in 0.08 to 0.72
    assert not table["reason"].str.contains("raw times .* as fast").any()


def test_the_rule_and_the_raw_time_mark_are_checked(tmp_path):
    with pytest.raises(ValueError, match="speed must be"):
        speed.Rule.from_dict({"band": 0.5, "why": "x"})
    with pytest.raises(ValueError, match="speed must be"):
        speed.Rule.from_dict({"band": 3})
    with pytest.raises(ValueError, match="raw_time: true marks a machine-bound raw time only"):
        verdicts.Claim.from_dict({"id": "x", "article": "000", "section": "s", "claim": "c",
                                "published": "1", "class": "exact", "raw_time": True,
                                "source": {"experiment": "e", "column": "c"}})


def test_the_ledger_writes_the_factors_and_the_editions_read_them(tmp_path):
    from attnrepro.report.commands import ledger as ledger_command

    published = tmp_path / "published.yaml"
    lines = ["speed: {band: 3, why: the article's own runs of one timing spread by up to 2.7x}",
             "rationales: {raw-order: only its order of magnitude compares}", "claims:"]
    for claim in _claims():
        lines.append(f"  - {{id: {claim.id}, article: '000', section: s, claim: c, "
                     f"published: '{claim.published}', class: machine-bound, raw_time: true, why: raw-order, "
                     f"source: {claim.source}, "
                     "location: {line: 1, column: 1}}")
    published.write_text("\n".join(lines).replace("'mean_seconds'", "mean_seconds") + "\n")
    out = {k: tmp_path / f"l.{k}" for k in ("csv", "md")}
    speed_csv = tmp_path / "speed.csv"
    assert ledger_command.write(published, _load(), out["csv"], out["md"], speed_csv=speed_csv) == 0
    factors = speed.read(tmp_path / "speed.csv")
    assert list(factors) == ["000"] and factors["000"].factor == 0.016 / 0.0041
    assert factors["000"].ratios == verdicts.raw_time_factors(_claims(), _load())["000"].ratios
    text = out["md"].read_text()
    assert "**Machine speed**" in text and "within 3x of the factor of its article's other raw times" in text
    assert pd.read_csv(out["csv"]).set_index("id").loc["000.cost.n-4096", "verdict"] == "differs"


def _speed_csv(tmp_path, factors):
    path = tmp_path / "speed.csv"
    pd.DataFrame([f.row(RULE) for f in factors.values()], columns=speed.COLUMNS).to_csv(path, index=False)
    return path


def test_a_timing_tables_note_gives_its_articles_factor_as_the_ledger_prints_it(tmp_path):
    factors = verdicts.raw_time_factors(_claims(), _load())
    path = _speed_csv(tmp_path, factors)
    assert speed.note(path, "000") == f"Machine speed: {factors['000'].sentence()}, from {path}."
    assert "3.9x as fast" in speed.note(path, "000")
    assert speed.note(path, "001").startswith("Machine speed: no raw time of article 001 is compared")


HEADER = "article,factor,low,high,raw_times,ratios,band\n"


@pytest.mark.parametrize("content", ["", "article,factor\n000,4\n", HEADER + "000,nan,1,2,1,000.x 1.5,3\n",
                                     HEADER + "000,4,1,8,0,,3\n"])
def test_a_speed_table_that_does_not_read_as_the_ledgers_is_refused_naming_it(tmp_path, content):
    from attnrepro.run import io

    path = tmp_path / "speed.csv"
    path.write_text(content)
    with pytest.raises(io.ResultError, match="speed.csv: not a speed table"):
        speed.note(path, "000")
    with pytest.raises(io.ResultError, match="no such file"):
        speed.note(tmp_path / "absent.csv", "000")


def test_the_tables_of_machine_bound_times_and_only_they_read_the_speed_factor():
    from attnrepro.report.products import catalog

    timing = {"quadratic_cost", "causal_timing", "timing_exponent_points", "kv_cache", "kv_speedup"}
    assert {p.name for p in catalog.PRODUCTS.values() if p.speed} == timing


def _raw(published, band=None, **kw):
    return verdicts.Claim.from_dict({
        "id": kw.pop("id", "000.t"), "article": kw.pop("article", "000"), "section": "s", "claim": "c",
        "published": published, "class": "machine-bound", "raw_time": True, "band": band,
        "source": kw.pop("source", {"experiment": "quadratic_cost", "column": "mean_seconds"}), **kw})


FACTOR = speed.Factor("000", 4.0, 3.5, 4.5, {"000.t": 4.0})
SAID = ("raw time, judged by the article's other raw times: this machine runs article 000's raw times 4x "
        "as fast as its author's machine (median of 1 ratios published / timed here, by the article's own "
        "code where it was timed beside ours; 95% bootstrap interval 3.5x to 4.5x); this time's ratio")
ACCEPTED = f"(accepted: 1.33x to 12x, the factor within x/ 3: {RULE.why})"


def test_a_raw_times_reason_says_its_ratio_then_its_band_as_information_then_its_note():
    def judged(claim, value):
        return verdicts.judge(claim, value, factor=FACTOR, rule=RULE)

    banded = _raw("0.4", [0.1, 0.2], rationale="its order only", note="timed once")
    assert judged(banded, 0.1) == ("within tolerance", "0.100", f"{SAID} 4 is consistent with it {ACCEPTED}; "
                                   "as information, the raw time lies inside the claim's band 0.1 to 0.2 "
                                   "(its order only); timed once")
    assert judged(_raw("0.8", [0.1, 0.2]), 0.2)[2].endswith("lies inside the claim's band 0.1 to 0.2")
    consistent = f"{SAID} 4 is consistent with it {ACCEPTED}"
    assert judged(_raw("0.4"), 0.1) == ("within tolerance", "0.100", consistent)  # 3 significant digits
    # the article's interval is the band said as information when the claim has none
    assert judged(_raw("0.3-0.5"), 0.6) == (
        "differs", "0.600", f"{SAID} 0.5 to 0.833 is outside it: this time does not scale like the "
        f"article's other raw times (the finding) {ACCEPTED}; as information, the raw time lies outside the "
        "claim's band 0.3 to 0.5")


def test_the_factor_is_made_of_the_single_raw_times_that_the_run_reproduces_above_zero():
    frame = pd.DataFrame({"n": [1, 2, 3, 3, 3, 4], "mean_seconds": [0.1, 0.0, 0.5, 0.25, 0.3, 2.0]})
    load = FrameLoad({("quadratic_cost", "main"): frame})

    def at(n, reduce=None):
        return {"experiment": "quadratic_cost", "where": {"n": n}, "column": "mean_seconds",
                **({"reduce": reduce} if reduce else {})}

    claims = [
        verdicts.Claim.from_dict({"id": "000.slope", "article": "000", "section": "s", "claim": "c",
                                "published": "fast", "class": "machine-bound", "source": at(1)}),
        _raw("0.3-0.5", id="000.prose", source=at(1)),  # an interval: judged, not a ratio
        _raw("1", id="000.absent", source={"experiment": "absent", "column": "mean_seconds"}),
        _raw("1", id="000.zero", source=at(2)),  # no ratio of a time of 0 s
        _raw("0.4", id="000.n-1", source=at(1)),
        _raw("1.0", id="000.n-3", source=at(3, "min")),
        _raw("6", id="001.n-4", article="001", source=at(4)),
    ]
    factors = verdicts.raw_time_factors(claims, load)
    assert {a: f.ratios for a, f in factors.items()} == {"000": {"000.n-1": 4.0, "000.n-3": 4.0},
                                                         "001": {"001.n-4": 3.0}}
