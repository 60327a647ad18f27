"""The stochastic fallback's statistics (report.products.statistics): Student's t quantile, the
t-based prediction interval of a new mean, the order-statistics interval of a new minimum or
maximum, and their coverage measured by simulation against their nominal or exact level."""

import math

import numpy as np
import pytest

from attnrepro.report.products import statistics

TRIALS = 20_000  # simulated runs per coverage: its standard error is about 0.15 points at 95%
NEW = statistics.ARTICLE_SEEDS  # the article's 3 seeds


# --- Student's t ----------------------------------------------------------------------------

def test_t_quantile_matches_the_closed_forms_of_one_and_two_degrees_of_freedom():
    for p in (0.6, 0.9, 0.975, 0.995):
        assert statistics.t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-9)
        two = (2 * p - 1) / math.sqrt(2 * p * (1 - p))
        assert statistics.t_quantile(p, 2) == pytest.approx(two, rel=1e-9)


@pytest.mark.parametrize("p, df, printed", [  # printed tables of Student's t, to 5 digits
    (0.975, 4, 2.77645), (0.975, 9, 2.26216), (0.975, 30, 2.04227), (0.95, 5, 2.01505),
    (0.995, 3, 5.84091), (0.975, 1_000_000, 1.95997)])
def test_t_quantile_matches_printed_tables_to_four_digits(p, df, printed):
    assert statistics.t_quantile(p, df) == pytest.approx(printed, abs=1e-5)


def test_t_quantile_is_odd_and_inverts_the_distribution_function():
    assert statistics.t_quantile(0.025, 4) == -statistics.t_quantile(0.975, 4)
    assert statistics.t_quantile(0.5, 7) == pytest.approx(0.0, abs=1e-12)
    for p, df in ((0.7, 3), (0.975, 12), (0.999, 2)):
        assert statistics.t_cdf(statistics.t_quantile(p, df), df) == pytest.approx(p, abs=1e-12)
    assert statistics.t_cdf(0.0, 5) == 0.5 and statistics.t_cdf(-1.0, 1) == pytest.approx(0.25, abs=1e-12)


# --- the prediction intervals -----------------------------------------------------------------

def test_a_mean_is_predicted_by_the_t_interval_with_both_means_errors():
    values = [0.93, 0.94, 0.95, 0.96, 0.97]
    half = 2.776445 * np.std(values, ddof=1) * math.sqrt(1 / 5 + 1 / 3)  # t(0.975, 4) from a table
    low, high, rule = statistics.prediction_interval(values, "mean", 3)
    assert (low, high) == pytest.approx((0.95 - half, 0.95 + half), abs=1e-6)
    assert rule == "t-based: mean ± t(0.975, 4) · s · √(1/5 + 1/3)"


def test_the_exact_coverage_of_the_seeds_range_counts_the_arrangements():
    # n = 2, m = 1: the new seed is the middle one of three exchangeable values with probability 1/3
    assert statistics.minimum_coverage(2, 1, 2) == pytest.approx(1 / 3)
    assert statistics.minimum_coverage(3, 1, 3) == pytest.approx(1 / 2)  # the middle two of four
    # the minimum of 3 new seeds falls below all 5 of ours with probability 3/8, above all with 1/56
    assert statistics.minimum_coverage(5, 3, 5) == pytest.approx(5 / 8 - 1 / 56)


def test_a_minimum_needs_58_seeds_for_3_new_ones_and_takes_the_least_rank_that_covers():
    assert statistics.seeds_needed("min", 3) == statistics.seeds_needed("max", 3) == 58
    assert statistics.seeds_needed("mean", 3) == 2
    assert statistics.minimum_rank(57, 3) is None
    # n = 58: (61 - j)(60 - j)(59 - j) / (61 · 60 · 59) <= 58/61 - 0.95 first at j = 55
    assert statistics.minimum_rank(58, 3) == 55
    values = np.arange(58.0)[::-1]  # seeds 57, 56, ..., 0: sorted inside
    rule = "order statistics, distribution-free: {} seed, exact coverage 95.0%"
    low_ranks, high_ranks = rule.format("smallest to 55th smallest"), rule.format("55th largest to largest")
    assert statistics.prediction_interval(values, "min", 3) == (0.0, 54.0, low_ranks)
    assert statistics.prediction_interval(values, "max", 3) == (3.0, 57.0, high_ranks)


# --- coverage by simulation: normal seeds, a fixed generator ------------------------------------

def simulated(n, seed):
    """(ours, new): n seeds of ours and NEW new ones per trial, normal, shapes (TRIALS, n), (TRIALS, NEW)."""
    rng = np.random.default_rng(seed)
    return rng.normal(0.97, 0.01, (TRIALS, n)), rng.normal(0.97, 0.01, (TRIALS, NEW))


@pytest.mark.parametrize("n", [5, 10])
def test_the_mean_interval_covers_a_new_3_seed_mean_95_percent_of_the_time(n):
    ours, new = simulated(n, seed=n)
    low, high, _ = statistics.prediction_interval(ours, "mean", NEW)  # (TRIALS,) each
    covered = np.mean((low <= new.mean(axis=1)) & (new.mean(axis=1) <= high))
    assert abs(covered - statistics.PREDICTION_LEVEL) < 0.02, covered


@pytest.mark.parametrize("n", [5, 10])
def test_the_seeds_range_covers_a_new_minimum_as_often_as_its_exact_coverage_says(n):
    ours, new = simulated(n, seed=100 + n)
    ours.sort(axis=1)
    inside = (ours[:, 0] <= new.min(axis=1)) & (new.min(axis=1) <= ours[:, -1])
    stated = statistics.minimum_coverage(n, NEW, n)  # 60.7% for n = 5, 76.6% for n = 10
    assert abs(np.mean(inside) - stated) < 0.02, (np.mean(inside), stated)


@pytest.mark.parametrize("how, reduce", [("min", np.min), ("max", np.max)])
def test_the_order_statistics_rule_covers_a_new_minimum_or_maximum_at_its_stated_level(how, reduce):
    n = statistics.seeds_needed(how, NEW)
    ours, new = simulated(n, seed=7)
    low, high, rule = statistics.prediction_interval(ours, how, NEW)  # (TRIALS,) each
    stated = statistics.minimum_coverage(n, NEW, statistics.minimum_rank(n, NEW))
    covered = np.mean((low <= reduce(new, axis=1)) & (reduce(new, axis=1) <= high))
    assert stated >= statistics.PREDICTION_LEVEL and f"exact coverage {stated:.1%}" in rule
    assert abs(covered - stated) < 0.02, (covered, stated)
