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
- ``attnrepro.report.evidence.seeds_evaluate``: the k-seed statistics of the seed distribution;
- :func:`mean_interval`: the 95% interval of a mean over the run's own seeds (the ledger's
  fallback judgement of a stochastic claim).
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


def mean_interval(values, z=1.96):
    """(low, high) of the normal 95% interval of the mean of ``values`` (sample deviation)."""
    values = np.asarray(values, dtype=float)
    half = z * values.std(ddof=1) / math.sqrt(len(values))
    centre = mean(values)
    return centre - half, centre + half
