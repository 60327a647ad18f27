"""Statistics over seeds and cases, computed in one place, with the article's arithmetic.

A table, a figure, the ledger, the seed distribution and the annotated editions print the same
claim; they print the same digits only if they compute it the same way. The article's listing
(001, the trainings' table) takes each row's three seeds in seed order and prints
``np.mean([...])`` and ``min([...])``. pandas' grouped mean adds in another order and
rounds otherwise: for sort, L = 4, per-token accuracy it gives 0.9955000000000002 where
NumPy gives 0.9954999999999999, which prints 0.996 against the article's 0.995. So every
mean, minimum and maximum over seeds or cases is one of the functions below (:data:`REDUCERS`),
over values in the order the article's loop visits them (:func:`in_seed_order`), and the
callers reduce with them rather than with pandas' own:

- :func:`over_seeds`: the trainings table and figure (mean and minimum of each task and L);
- ``attnrepro.report.ledger.verdicts.reduce``: every claim whose selector reduces rows (``reduce``);
- ``attnrepro.report.evidence_tables.seeds_evaluate``: the k-seed statistics of the seed distribution;
- :func:`prediction_interval`: where a new statistic over the article's m seeds falls, predicted
  from the run's own n seeds (the ledger's fallback judgement of a stochastic claim when no seed
  distribution places it). A mean: the t-based interval mean ± t(0.975, n - 1) s √(1/n + 1/m),
  95% under normal seeds. A minimum (maximum): distribution-free, from order statistics, smallest
  seed to the j-th smallest, j the least rank whose exact coverage reaches 95%; none below
  :func:`seeds_needed` seeds (58 for m = 3: the minimum of 3 new seeds falls below all n of ours
  with probability 3/(n + 3)).
"""

import math

import numpy as np
import pandas as pd


def mean(values, axis=None):
    """The arithmetic mean as NumPy computes it (pairwise summation, in the order given)."""
    return np.mean(np.asarray(values, dtype=float), axis=axis)


def minimum(values, axis=None):
    return np.min(np.asarray(values), axis=axis)


def maximum(values, axis=None):
    return np.max(np.asarray(values), axis=axis)


REDUCERS = {"single": None, "mean": mean, "min": minimum, "max": maximum, "sum": np.sum,
            "count": len, "all": np.all, "any": np.any}
OVER_SEEDS = {"mean": mean, "min": minimum, "max": maximum}  # what a row of seeds is summarised by


def in_seed_order(rows, column="seed"):
    """``rows`` (a DataFrame) in the order of ``column`` (the seed), stably; as given without it."""
    return rows.sort_values(column, kind="stable") if column in rows.columns else rows


def over_seeds(frame, by, columns):
    """Mean and minimum over the runs (seeds) of each group of ``by`` (sorted), values in seed
    order: ``<column>_mean``, ``<column>_min`` and ``runs``, one row per group."""
    rows = []
    for key, group in frame.groupby(list(by), sort=True):
        group = in_seed_order(group)
        row = dict(zip(by, key if isinstance(key, tuple) else (key,)))
        for column in columns:
            row[f"{column}_mean"] = float(mean(group[column]))
            row[f"{column}_min"] = float(minimum(group[column]))
        rows.append({**row, "runs": len(group)})
    return pd.DataFrame(rows, columns=[*by, *(f"{c}_{s}" for c in columns for s in ("mean", "min")), "runs"])


ARTICLE_SEEDS = 3  # the seeds behind a published statistic: "mean over 3 seeds" (001, the trainings' table)
PREDICTION_LEVEL = 0.95  # the nominal coverage of the fallback's prediction intervals
_TINY = 1e-300  # the modified Lentz method's guard against a zero denominator


def t_cdf(t, df):
    """P(T <= t) for Student's t with ``df`` degrees of freedom: 1 - I_x(df/2, 1/2) / 2 at
    x = df / (df + t²) for t >= 0 (the regularized incomplete beta), by symmetry below 0."""
    tail = _beta_regularized(df / (df + t * t), df / 2, 0.5) / 2
    return 1 - tail if t >= 0 else tail


def t_quantile(p, df):
    """The ``p``-quantile of Student's t with ``df`` degrees of freedom, by bisection on
    :func:`t_cdf` to a relative 1e-13 (exact to 4 digits and beyond: tests/test_fallback.py checks
    the closed forms of df = 1 and 2 and printed tables)."""
    if p < 0.5:
        return -t_quantile(1 - p, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        low, high = high, 2 * high
    for _ in range(200):  # pragma: no mutate (equivalent: the width test ends it first)
        middle = (low + high) / 2
        low, high = (middle, high) if t_cdf(middle, df) < p else (low, middle)
        if high - low <= 1e-13 * high:
            break
    return (low + high) / 2


def _beta_regularized(x, a, b):
    """I_x(a, b), the regularized incomplete beta function, from its continued fraction on the side
    of (a + 1) / (a + b + 2) where it converges fast (Numerical Recipes, 3rd ed., 6.4)."""
    if x <= 0 or x >= 1:
        return float(x >= 1)
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(log_front)
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(x, a, b) / a
    return 1 - front * _beta_fraction(1 - x, b, a) / b


def _beta_fraction(x, a, b):
    """The continued fraction of I_x(a, b), by the modified Lentz method (to a relative 1e-15)."""
    c, d = 1.0, _guarded(1 - (a + b) * x / (a + 1))
    fraction = d
    for k in range(1, 1000):
        even = k * (b - k) * x / ((a + 2 * k - 1) * (a + 2 * k))
        odd = -(a + k) * (a + b + k) * x / ((a + 2 * k) * (a + 2 * k + 1))
        for term in (even, odd):
            c, d = _nonzero(1 + term / c), _guarded(1 + term * d)
            fraction *= c * d
        if abs(c * d - 1) < 1e-15:
            break
    return fraction


def _nonzero(value):
    return value if abs(value) >= _TINY else _TINY


def _guarded(value):
    """1 / value, a zero taken as the tiniest float (Lentz)."""
    return 1 / _nonzero(value)


def mean_prediction_interval(values, m, level=PREDICTION_LEVEL):
    """(low, high): the interval in which the mean of ``m`` new seeds falls with probability
    ``level`` when seeds are normal, from the run's n seeds ``values`` (n >= 2; shape (..., n),
    seeds on the last axis, low and high of shape (...)): mean ± t((1 + level)/2, n - 1) · s ·
    √(1/n + 1/m), s the sample deviation (the new mean's and our mean's errors add)."""
    values = np.asarray(values, dtype=float)  # (..., n)
    n = values.shape[-1]
    t = t_quantile((1 + level) / 2, n - 1)
    half = t * values.std(axis=-1, ddof=1) * math.sqrt(1 / n + 1 / m)  # (...)
    centre = mean(values, axis=-1)  # (...)
    return centre - half, centre + half


def above_rank(n, m, k):
    """P(the minimum of m new seeds lies above the k-th smallest of n seeds of ours), any continuous
    distribution: the k smallest of the n + m exchangeable values are all ours, C(n, k) / C(n + m, k)."""
    return math.comb(n, k) / math.comb(n + m, k)


def minimum_coverage(n, m, j):
    """The exact probability that the minimum of m new seeds lies between the smallest and the j-th
    smallest of n seeds of ours: n / (n + m) - C(n, j) / C(n + m, j) (distribution-free)."""
    return above_rank(n, m, 1) - above_rank(n, m, j)


def minimum_rank(n, m, level=PREDICTION_LEVEL):
    """The least rank j whose interval [smallest, j-th smallest] covers a new minimum over m seeds
    with probability ``level`` or more; None when even the largest seed (j = n) falls short."""
    return next((j for j in range(1, n + 1) if minimum_coverage(n, m, j) >= level), None)


def seeds_needed(how, m, level=PREDICTION_LEVEL):
    """The fewest seeds of ours from which :func:`prediction_interval` predicts a new ``how`` over
    ``m`` seeds: 2 for a mean (a deviation), else the least n with a :func:`minimum_rank`."""
    if how not in ("min", "max"):
        return 2
    n = 1
    while minimum_rank(n, m, level) is None:
        n += 1
    return n


def prediction_interval(values, how, m, level=PREDICTION_LEVEL):
    """(low, high, rule): where a new ``how`` (min, max; any other statistic: a mean) over ``m``
    seeds falls with probability ``level``, from the run's seeds ``values`` (shape (..., n), seeds
    on the last axis, n at least :func:`seeds_needed`; low and high of shape (...)), and the rule
    that made it, in words. Seeds that tie only raise the coverage of a minimum's (maximum's)
    interval: its ends are included."""
    values = np.sort(np.asarray(values, dtype=float), axis=-1)  # (..., n), ascending
    n = values.shape[-1]
    if how not in ("min", "max"):
        low, high = mean_prediction_interval(values, m, level)
        return low, high, f"t-based: mean ± t({(1 + level) / 2:g}, {n - 1}) · s · √(1/{n} + 1/{m})"
    j = minimum_rank(n, m, level)
    if how == "min":
        low, high, ranks = values[..., 0], values[..., j - 1], f"smallest to {_ordinal(j)} smallest"
    else:
        low, high, ranks = values[..., n - j], values[..., -1], f"{_ordinal(j)} largest to largest"
    coverage = minimum_coverage(n, m, j)
    return low, high, f"order statistics, distribution-free: {ranks} seed, exact coverage {coverage:.1%}"


def _ordinal(k):
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"
