"""Exact rounding ties (report.ledger.ties): a value reproduced on a tie says so in its reason."""

import numpy as np
import pytest

from attnrepro.report.ledger import ties, verdicts


@pytest.fixture(scope="module")
def claims():
    return {c.id: c for c in verdicts.load_claims("config/published.yaml")}


def test_the_sort_mean_of_5973_correct_tokens_in_6000_is_reproduced_on_a_tie(claims):
    """The default run's three per-token accuracies of sort, L = 4 (2000 tokens each): 1996, 1984 and
    1993 correct, mean 5973/6000 = 0.9955 exactly; its float, summed, lies a hair below and prints
    0.995 as published, while the exact tie rounds to 0.996 half to even and half up alike."""
    accuracies = [1996 / 2000, 1984 / 2000, 1993 / 2000]
    mean = np.mean(accuracies)
    assert abs(mean - 5973 / 6000) < 1e-15 and mean < 5973 / 6000
    verdict = verdicts.judge(claims["001.train.sort-L4.token-mean"], mean)
    assert verdict == ("reproduced", "0.995", "on an exact rounding tie: 0.9955 rounds to 0.996 (half to "
                       "even and half up) or 0.995 (half down); the float here, 0.9954999999999999, "
                       "prints 0.995")


def test_a_size_on_a_binary_tie_is_reproduced_with_the_tie_said(claims):
    """128^2 float64 values are 0.125 MiB, published 0.12: half to even, where half up gives 0.13."""
    mib = 128 * 128 * 8 / 2**20
    assert verdicts.judge(claims["001.causal_timing.T-128.matrix-mib"], mib) == (
        "reproduced", "0.12", "on an exact rounding tie: 0.125 rounds to 0.12 (half to even) or 0.13 "
        "(half up); the float here, 0.125, prints 0.12")


@pytest.mark.parametrize("value, published, decimals, expected", [
    (0.985, "0.985", None, ""),  # the printed digits themselves: no tie
    (0.99551, "0.996", None, ""),  # near a tie, not on it
    (1.0, "1", 12, ""),  # 1.0 at 12 decimals: within 1e-12 of 1.0000000000005, yet no tie
    (64.0, "64", None, ""),
    ("[0 1 2]", "[0 1 2]", None, ""), (True, "True", None, ""), (float("nan"), "0.1", None, ""),
    (1234.5, "1,234", None, "on an exact rounding tie: 1,234.5 rounds to 1,234 (half to even) or 1,235 "
                             "(half up); the float here, 1234.5, prints 1,234"),
    (8950000.0, "8.9e6", None, "on an exact rounding tie: 8.95e6 rounds to 9.0e6 (half to even and half up) "
                               "or 8.9e6 (half down); the float here, 8950000.0, prints 9.0e6"),
    (0.9725, "97.2%", None, "on an exact rounding tie: 97.25% rounds to 97.2% (half to even) or 97.3% "
                            "(half up); the float here, 0.9725, prints 97.2%"),
    (-0.125, "-0.12", None, "on an exact rounding tie: -0.125 rounds to -0.12 (half to even) or -0.13 "
                            "(half up); the float here, -0.125, prints -0.12"),
    (2.5, "2", 0, "on an exact rounding tie: 2.5 rounds to 2 (half to even) or 3 (half up); the float here, "
                  "2.5, prints 2"),
])
def test_a_tie_is_found_at_one_more_digit_than_the_published_ones(value, published, decimals, expected):
    printed = verdicts.format_like(value, published, decimals)  # as the ledger writes it
    assert ties.reason(value, published, decimals, printed) == expected


def test_a_value_off_the_printed_digits_is_never_reproduced_by_its_tie(claims):
    claim = claims["001.train.sort-L4.token-mean"]
    assert verdicts.judge(claim, 5973 / 6000)[1] == "0.996"  # the tie's float from above prints 0.996
    assert verdicts.judge(claim, 0.9951) == ("reproduced", "0.995", "")
