"""Raw times judged as raw times: a machine-bound claim is never "reproduced", however its digits
round (000's 0.001 s at n = 512 reads 0.001 s for any time from 0.0005 to 0.0015 s); its best
verdict is "within tolerance", and its reproduced value is written with the digits that were judged."""

import pytest

from attnrepro.report.ledger import speed, verdicts
from attnrepro.report.products import formats

from conftest import REPO

PUBLISHED = REPO / "config" / "published.yaml"
RULE = speed.Rule(3.0, "the article's runs spread")


@pytest.fixture(scope="module")
def machine_bound():
    return [c for c in verdicts.load_claims(PUBLISHED) if c.cls == "machine-bound"]


def _factor(article):
    return speed.Factor(article, 1.0, 0.9, 1.1, {"x": 1.0})  # this machine as fast as the article's


@pytest.mark.parametrize("value, shown", [(0.00097, "0.000970"), (0.001, "0.00100"), (0.0012, "0.00120"),
                                          (0.0014, "0.00140")])
def test_the_articles_millisecond_is_not_reproduced_by_rounding(machine_bound, value, shown):
    claim = next(c for c in machine_bound if c.id == "000.quadratic_cost.n-512.mean-seconds")
    assert claim.published == "0.001" and claim.raw_time
    for factor, rule in ((None, None), (_factor("000"), RULE)):  # by its band, by the speed factor
        verdict, text, reason = verdicts.judge(claim, value, factor=factor, rule=rule)
        assert (verdict, text) == ("within tolerance", shown), reason


def test_no_machine_bound_claim_is_reproduced_even_at_its_published_value(machine_bound):
    """Each machine-bound claim of published.yaml at exactly its published value (an interval: its
    middle) is within tolerance; a ratio or slope written otherwise than the published string, a raw
    time with the digits every time is written with (formats.time_text, as the timing tables print it)."""
    assert len(machine_bound) >= 20
    for claim in machine_bound:
        low, high = verdicts.published_range(claim.published)
        value = (low + high) / 2
        if claim.why == verdicts.ALONE:  # timed alone by the article, beside other jobs here
            verdict, _, reason = verdicts.judge(claim, value, factor=_factor(claim.article), rule=RULE)
            assert verdict == "inconclusive" and reason.startswith("not comparable ("), (claim.id, reason)
            continue
        for factor, rule in ((None, None), (_factor(claim.article), RULE)):
            verdict, text, reason = verdicts.judge(claim, value, factor=factor, rule=rule)
            assert verdict == "within tolerance", (claim.id, text, reason)
            if claim.raw_time:
                assert text.split(" ")[0] == formats.time_text(value), (claim.id, text)
            else:
                assert text != claim.published, (claim.id, text)
            shown = verdicts.published_range(text)[1]
            assert shown == pytest.approx(value, rel=0.01 if claim.raw_time else 0.05), (claim.id, text)


def test_a_ratio_read_like_the_published_one_gains_a_digit_and_a_raw_time_three_significant(machine_bound):
    ratio = next(c for c in machine_bound if c.id == "001.causal_timing.T-128-512.time-ratio")
    assert verdicts.judge(ratio, 20.2)[:2] == ("within tolerance", "20.20")
    assert verdicts.judge(ratio, 20.93)[:2] == ("within tolerance", "20.9")  # other digits: as printed
    raw = next(c for c in machine_bound if c.id == "001.kv_cache.seconds-with-cache")
    assert raw.published == "0.15"
    assert verdicts.judge(raw, 0.12)[:2] == ("within tolerance", "0.120")
    assert verdicts.judge(raw, 0.6)[:2] == ("differs", "0.600")  # beside the band, as decisive_text


def test_an_exact_claim_whose_digits_come_out_is_still_reproduced():
    exact = verdicts.Claim.from_dict({"id": "e", "article": "000", "section": "s", "claim": "c",
                                      "published": "0.001", "class": "exact",
                                      "source": {"experiment": "e", "column": "c"}})
    assert verdicts.judge(exact, 0.00097)[:2] == ("reproduced", "0.001")
