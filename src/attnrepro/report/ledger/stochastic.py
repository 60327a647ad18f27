"""Stochastic claims: a statistic over seeds, judged against the seed distribution when it places
the claim, else against the run's own seeds (a prediction interval over the article's seeds), and a
published range judged row by row (verdicts' module docstring says the rules)."""

import numpy as np

from attnrepro.report.ledger import passes
from attnrepro.report.ledger.claims import _parse, format_like, published_range
from attnrepro.report.ledger.judged import Judged, join
from attnrepro.report.products import statistics


# the fallback when no seed distribution places a stochastic claim (never silent)
BUILD = "`snakemake --cores 2 seeds` builds it, config `seed_distribution.build: true` adds it to the run"
WEAKER = ("judged against the run's own seeds only, a weaker judgement than the seed distribution "
          f"(the 95% interval of 3-seed statistics over many seeds): {BUILD}")


def judge(claim, value, text, values, spread):
    """Against the seed distribution when it places the claim, else the run's own seeds."""
    placed = spread.placed(claim.id) if spread is not None else None
    if placed is not None:
        inside, sentence = placed
        return Judged("within tolerance" if inside else "differs", text, join(sentence, claim.note),
                      spread.interval(claim.id))
    lacking = ("no seed distribution in this run" if spread is None
               else "the seed distribution does not place this claim")
    verdict, reason, window = own_seeds(claim, value, values)
    return Judged(verdict, text, join(reason, f"{lacking}: {WEAKER}", claim.note), window)


NOT_ENOUGH = passes.VERDICT  # inconclusive: the verdict of a claim the run's own seeds are too few to judge
STATISTIC = {"mean": "mean", "min": "minimum", "max": "maximum"}  # a statistic over seeds, in words


def own_seeds(claim, value, values):
    """(verdict, reason, window): the published value or interval against the interval in which a new
    statistic over the article's seeds (statistics.ARTICLE_SEEDS) falls, predicted from the run's
    own seeds (statistics.prediction_interval); too few seeds to predict it: :data:`NOT_ENOUGH`."""
    low_p, high_p = published_range(claim.published)
    shown = "published interval" if low_p != high_p else "published value"
    if low_p != high_p and low_p <= float(value) <= high_p:
        return "within tolerance", f"the reproduced statistic lies in the {shown}", (low_p, high_p)
    how, m, level = claim.source.get("reduce"), statistics.ARTICLE_SEEDS, statistics.PREDICTION_LEVEL
    seeds = [value] if values is None else values  # (n,): one run without values
    seeds = np.asarray(seeds, dtype=float)  # pragma: no mutate (equivalent: prediction_interval reads floats)
    n, needed = len(seeds), statistics.seeds_needed(how, m, level)
    predicted = f"{level:.0%} prediction interval of a new {STATISTIC.get(how, 'mean')} over {m} seeds"
    if n < needed:
        return NOT_ENOUGH, (f"not enough seeds to judge: a {predicted} "
                            f"needs {needed} seeds of this run, it has {n}"), None
    low, high, rule = statistics.prediction_interval(seeds, how, m, level)
    low, high = float(low), float(high)
    where = f"{predicted} from this run's {n} seeds ({rule}): {low:.4g} to {high:.4g}"
    if low <= high_p and low_p <= high:  # the interval meets the published value or interval
        meets = "overlaps" if low_p != high_p else "inside"
        return "within tolerance", f"{shown} {meets} the {where}", (low, high)
    return "differs", f"{shown} outside the {where}", (low, high)


def rows(claim, stats, values, spread):
    """A published range checked row by row: every row's statistic (``stats``: {row: value},
    ``values``: {row: per-seed values}), at the range's printed precision, must lie in it; the
    reason names each row outside, the range is the window (the span it prints lies inside it, or
    some end outside when a row is)."""
    low_p, high_p = published_range(claim.published)
    per, how = claim.source["per"], claim.source.get("reduce")
    shown = {key: format_like(v, claim.published) for key, v in stats.items()}
    seeds = {key: f"{len(v)} seed{'s' if len(v) != 1 else ''}" for key, v in values.items()}
    listed = ", ".join(f"{per} = {key}: {shown[key]} ({how} over {seeds[key]})" for key in stats)
    text = span(stats.values(), claim.published)
    outside = [key for key, t in shown.items() if not low_p <=
               published_range(t)[0]  # pragma: no mutate (equivalent: t is one number, its low is its high)
               <= high_p]
    if not outside:
        return Judged("within tolerance", text,
                      join(f"every row lies in the published range: {listed}", claim.note), (low_p, high_p))
    named = "; ".join(f"{per} = {key} outside the published range ({_row_interval(claim, key, spread)})"
                      for key in outside)
    return Judged("differs", text, join(named, f"judged row by row: {listed}", claim.note), (low_p, high_p))


def _row_interval(claim, key, spread):
    """Whether the row's 95% interval of 3-seed statistics in the seed distribution meets the range."""
    if spread is None:
        return f"no seed distribution in this run to say whether 3 seeds can reach it: {BUILD}"
    found = spread.row_interval(claim.source, key)
    if found is None:
        return "the seed distribution holds no interval for this row"
    low, high, what = found
    low_p, high_p = published_range(claim.published)
    meets = "overlaps" if low <= high_p and low_p <= high else "does not overlap"
    return f"its 95% interval of the {what} here, {low:.3f} to {high:.3f}, {meets} the range"


def span(values, published):
    """The span of ``values`` written like the ``published`` range ("0.985-0.995", "95-97%")."""
    low, high = (format_like(f(values), published) for f in (min, max))
    if low == high:
        return high
    _, space, unit, _ = _parse(published)
    return f"{low.removesuffix(space + unit)}-{high}"
