"""Each published stochastic figure of article 001's trainings, placed among many seeds.

The article prints, per task and L, the mean and the minimum over 3 seeds of the per-token
and per-sequence accuracies. With the grid widened to N seeds (``seed_distribution.seeds``, 20 per
L), a published figure is placed twice:

- among the N per-seed values: its percentile (mid-rank: the share of values below it,
  plus half of those equal to it, in %);
- among the statistic of every set of 3 distinct seeds out of the N (all C(N, 3) sets,
  1140 for N = 20; a fixed-seed random sample of ``SUBSETS`` sets when there are more):
  its percentile, and whether it lies in their central 95% interval (2.5% and 97.5%
  quantiles, linear interpolation) — the spread a 3-seed mean (or minimum) has on this
  machine. No normal approximation: accuracies are bounded and skewed.

The claims come from ``config/published.yaml``: the stochastic ones whose source is the
``train`` main table reduced over seeds (mean, min or max). Outputs: a CSV and a Markdown
table (one row per claim), an SVG (per-token and per-sequence accuracy by L, every seed a
point, the published mean and minimum marked), and :class:`Spread`, what the ledger judges its
stochastic claims against (:func:`reason_for` is its sentence): a placed claim is within
tolerance when it lies in the 95% interval, and a published range checked row by row reads
each row's interval off the claim placed at that row (task, L, column, statistic).

The CSV, Markdown table and SVG are written by :mod:`attnrepro.report.evidence_tables.seeds_render`.
"""

import itertools
import logging
import math

import numpy as np
import pandas as pd

from attnrepro.run import io
from attnrepro.report.ledger import consistency, verdicts
from attnrepro.report.products import statistics

log = logging.getLogger("attnrepro.report")
ARTICLE_SEEDS = statistics.ARTICLE_SEEDS  # "mean over 3 seeds": the k of the k-seed statistics
SUBSETS = 100_000  # beyond this many k-subsets, a random sample of this size
SUBSET_SEED = 0
STATISTICS = statistics.OVER_SEEDS  # the tables' and the ledger's arithmetic
COLUMNS = [
    "id",
    "article",
    "claim",
    "task",
    "L",
    "column",
    "statistic",
    "published",
    "n_seeds",
    "seeds",
    "seed_min",
    "seed_median",
    "seed_max",
    "seed_percentile",
    "first_seeds_value",
    "subsets",
    "method",
    "subset_percentile",
    "interval_low",
    "interval_high",
    "inside_interval",
    "params",
]
LABELS = {"token_accuracy": "per-token accuracy", "sequence_accuracy": "per-sequence accuracy"}


def placed_claims(claims):
    """The stochastic claims that reduce the ``train`` main table over seeds to one figure
    (a published interval, such as the prose's "between 0.987 and 0.995", is not one)."""
    return [
        c
        for c in claims
        if c.cls == "stochastic"
        and c.source.get("experiment") == "train"
        and c.source.get("table", "main") == "main"
        and c.source.get("reduce") in STATISTICS
        and not c.source.get("over")
        and len(set(verdicts.published_range(c.published))) == 1
    ]


def all_seeds(source):
    """The claim's selector with any restriction on the seed removed: every seed of the grid."""
    return {**source, "where": {k: v for k, v in (source.get("where") or {}).items() if k != "seed"}}


def percentile(values, x):
    """Mid-rank percentile of ``x`` among ``values``: % below, plus half of % equal."""
    values = np.asarray(values, dtype=float)
    return 100.0 * (np.sum(values < x) + 0.5 * np.sum(values == x)) / len(values)


def subset_statistics(values, k, how, limit=SUBSETS, seed=SUBSET_SEED):
    """(statistics, method): ``how`` (mean, min, max) of every set of k distinct values, or of
    ``limit`` random sets (numpy default_rng(seed)) when there are more than ``limit``."""
    values = np.asarray(values, dtype=float)
    n = len(values)
    if k > n:
        raise ValueError(f"{k} seeds asked of {n}")
    total = math.comb(n, k)
    if total <= limit:
        index = np.array(list(itertools.combinations(range(n), k)))
        method = f"all {total} sets of {k} of the {n} seeds"
    else:
        rng = np.random.default_rng(seed)
        index = np.array([rng.choice(n, size=k, replace=False) for _ in range(limit)])
        method = f"{limit} random sets of {k} of the {n} seeds (default_rng({seed}))"
    return STATISTICS[how](values[index], axis=1), method


def interval(statistics, level=0.95):
    """The central ``level`` interval of ``statistics`` (quantiles, linear interpolation)."""
    tail = (1 - level) / 2
    low, high = np.quantile(np.asarray(statistics, dtype=float), [tail, 1 - tail])
    return float(low), float(high)


def place(claim, frame, k=ARTICLE_SEEDS, params=None):
    """One row: the claim's published value among the per-seed values and the k-seed statistics,
    with the parameters its trainings share (``params``: {case: (params, path)} of the trainings,
    Loader.params; refused when they differ in more than the seed)."""
    source = all_seeds(claim.source)
    rows = frame
    for key, wanted in source["where"].items():
        rows = rows[rows[key].isin(wanted) if isinstance(wanted, list) else rows[key] == wanted]
    rows = rows.sort_values("seed")
    if rows["seed"].duplicated().any():
        raise ValueError("several rows per seed (the claim pools more than one grid cell)")
    values = rows[source["column"]].to_numpy(dtype=float)
    how = source["reduce"]
    low_p, high_p = verdicts.published_range(claim.published)
    published = (low_p + high_p) / 2
    stats, method = subset_statistics(values, k, how)
    low, high = interval(stats)
    first = rows[rows["seed"].isin(range(k))][source["column"]]  # the default run's seeds 0..k-1
    where = source["where"]
    return {
        "id": claim.id,
        "article": claim.article,
        "claim": claim.claim,
        "task": where.get("task", ""),
        "L": where.get("L", ""),
        "column": source["column"],
        "statistic": f"{how} over {k} seeds",
        "published": claim.published,
        "n_seeds": len(values),
        "seeds": " ".join(str(int(s)) for s in rows["seed"]),
        "seed_min": values.min(),
        "seed_median": float(np.median(values)),
        "seed_max": values.max(),
        "seed_percentile": percentile(values, published),
        "first_seeds_value": float(STATISTICS[how](first)) if len(first) == k else float("nan"),
        "subsets": len(stats),
        "method": method,
        "subset_percentile": percentile(stats, published),
        "interval_low": low,
        "interval_high": high,
        "inside_interval": bool(low <= published <= high),
        "params": _shared(rows["case"], params) if params is not None and "case" in rows else "",
    }


def _shared(cases, params):
    """The JSON of the parameters that the trainings ``cases`` share, their seed left out."""
    chosen = {case: params[case][0] for case in cases}
    return consistency.encode(consistency.shared(chosen, {c: params[c][1] for c in cases}, ignore=("seed",)))


def evaluate(claims, load, k=ARTICLE_SEEDS):
    """The table: one row per placed claim whose rows are among the trainings read."""
    frame, params = load("train"), load.params("train")
    rows = []
    for claim in placed_claims(claims):
        try:
            row = place(claim, frame, k, params)
        except (KeyError, ValueError) as error:
            log.warning("claim %s not placed: %s", claim.id, error)
            continue
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def reason_for(claim_id, table):
    """The ledger's evidence for a stochastic claim, or None when the table does not hold it (the
    file it cites is report.evidence_tables.citations's to name: :class:`Spread`)."""
    rows = table[table["id"] == claim_id]
    if rows.empty:
        return None
    r = rows.iloc[0]
    inside = "inside" if is_true(r["inside_interval"]) else "outside"
    return (
        f"published {r['published']} ({r['statistic']}) lies at percentile {r['subset_percentile']:.0f} "
        f"of the {r['subsets']} {r['statistic'].split()[0]}s of {_k(r)} of the {r['n_seeds']} seeds "
        f"measured here, {inside} their 95% interval {r['interval_low']:.3f}-{r['interval_high']:.3f} "
        f"(per seed: percentile {r['seed_percentile']:.0f})"
    )


def read(path):
    """The table back from its CSV: published texts as printed."""
    table = pd.read_csv(
        path, dtype={"published": str, "seeds": str, "L": str, "params": str},
        keep_default_na=False,
    )
    table["inside_interval"] = table["inside_interval"].map(
        {"True": True, "False": False, True: True, False: False}
    )
    return table


def check_params(table, load, path):
    """Refuse a seed distribution (``table``, read from ``path``) computed from trainings with other
    parameters than the run's (``load``: the ledger's inputs) of the same task and L, seed aside:
    io.InconsistentInputs naming the file, the run's training and the first differing key."""
    if consistency.PARAMS not in table.columns:
        raise io.ResultError(f"{path}: records no parameters of its trainings (written by an older "
                             f"version); rebuild it with `{io.rebuild_command(path)}`")
    run = load.params("train") if ("train", "main") in load.files else {}
    for text in dict.fromkeys(table[consistency.PARAMS]):
        recorded = consistency.decode(text)
        cell = {case: found for case, found in run.items()
                if all(found[0].get(key) == recorded.get(key) for key in ("task", "L", "ablation"))}
        if cell:
            paths = {case: found[1] for case, found in cell.items()}
            params = {case: found[0] for case, found in cell.items()}
            mine = consistency.shared(params, paths, ignore=("seed",))
            consistency.check(path, recorded, mine, next(iter(paths.values())))


class Spread:
    """The seed distribution (the table of :func:`evaluate` or :func:`read`) as the ledger's
    yardstick for its stochastic claims; ``citation`` (" [file]" or "") ends each sentence."""

    def __init__(self, table, citation=""):
        self.table = table
        self.citation = citation

    def placed(self, claim_id):
        """(inside the 95% interval, the sentence saying where), or None when not placed here."""
        rows = self.table[self.table["id"] == claim_id]
        if rows.empty:
            return None
        return is_true(rows.iloc[0]["inside_interval"]), reason_for(claim_id, self.table) + self.citation

    def interval(self, claim_id):
        """(low, high): the 95% interval of 3-seed statistics that placed the claim, or None."""
        rows = self.table[self.table["id"] == claim_id]
        if rows.empty:
            return None
        return float(rows.iloc[0]["interval_low"]), float(rows.iloc[0]["interval_high"])

    def row_interval(self, source, key):
        """(low, high, what) of the 95% interval of the k-seed statistic (``source['reduce']``) of
        ``source['column']`` at the row ``source['per'] = key`` of the selection, read off a claim
        placed there; None when none is. Of the selection's keys only task and L name a row
        here: the distribution holds full-model trainings over every seed."""
        cell = {**(source.get("where") or {}), source["per"]: key}
        t = self.table
        statistic = t["statistic"].str.startswith(f"{source.get('reduce')} over ")
        rows = t[(t["column"] == source["column"]) & statistic]
        for name in ("task", "L"):
            if name in cell:
                rows = rows[rows[name].astype(str) == str(cell[name])]
        if rows.empty:
            return None
        r = rows.iloc[0]
        what = f"{r['subsets']} {r['statistic'].split()[0]}s of {_k(r)} of {r['n_seeds']} seeds"
        return float(r["interval_low"]), float(r["interval_high"]), what


def _k(row):
    return row["statistic"].split(" over ")[1].split()[0]


def is_true(value):
    """True for a true bool (NumPy's too); False otherwise (NA, a CSV's empty cell)."""
    return isinstance(value, (bool, np.bool_)) and bool(value)
