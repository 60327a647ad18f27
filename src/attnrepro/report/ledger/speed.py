"""This machine's speed relative to each article's machine, measured from the raw times.

A raw time (seconds or milliseconds of one timed computation) belongs to the machine that
measured it; one raw time judged alone against another machine's says little. What transfers is
whether the timing experiment reproduces *up to the speed of the machine*: if every raw time here
is about four times faster than the article's, it does; if one is 1.2 times and the rest 4 times,
that one is the finding. So, per article (each was timed on its own machine):

- the *ratios* published / timed here of its raw-time claims (``raw_time: true`` in
  config/published.yaml, single values), the time here being the article's own code's where it was
  timed beside ours (report.ledger.yardstick), else ours, estimate the article's **speed factor**:
  their median, with a 95% bootstrap interval (the median of :data:`RESAMPLES` resamplings of the ratios with
  replacement, ``default_rng(SEED)``; :func:`factors`);
- a raw time that the article's own code was not timed beside (report.ledger.yardstick judges
  those), single value or the article's interval, is **consistent** with the factor when
  its ratio lies within the band ``speed.band`` of published.yaml (factor / band to factor x band),
  whose rationale ``speed.why`` the reason quotes (:func:`judge`). The factor that judges a raw time
  is computed **without it** (:meth:`Factor.without`, leave-one-out): a time is never judged against
  a factor it helped make, so scaling it by hand moves its ratio and not its window. Slopes and
  ratios of times keep their own bands (they can transfer between machines as they are; their bands
  judge whether they do).

:class:`Factor` is what LEDGER.md, the annotated editions and ``results/speed.csv`` show.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

JUDGED = "raw time, judged by the article's other raw times:"  # opens the reason of a time the factor judged
RESAMPLES = 2000
SEED = 0
COLUMNS = ["article", "factor", "low", "high", "raw_times", "ratios", "band"]


@dataclass(frozen=True)
class Rule:
    """How a raw time is judged against its article's factor: ``band`` (a ratio within factor /
    band and factor x band is consistent) and ``why`` (its rationale, quoted in every reason)."""

    band: float
    why: str

    @classmethod
    def from_dict(cls, entry):
        if not (isinstance(entry, dict) and set(entry) == {"band", "why"}
                and isinstance(entry["band"], (int, float)) and entry["band"] > 1
                and isinstance(entry["why"], str) and entry["why"].strip()):
            raise ValueError(f"speed must be {{band: a number above 1, why: its rationale}}, got {entry!r}")
        return cls(float(entry["band"]), " ".join(entry["why"].split()))


@dataclass(frozen=True)
class Factor:
    """How many times faster this machine is than an article's: the median ratio and its interval."""

    article: str
    factor: float
    low: float
    high: float
    ratios: dict  # {claim id: published / timed here}

    def sentence(self):
        return (f"this machine runs article {self.article}'s raw times {self.factor:.3g}x as fast as its "
                f"author's machine (median of {len(self.ratios)} ratios published / timed here, by the "
                f"article's own code where it was timed beside ours; 95% "
                f"bootstrap interval {self.low:.3g}x to {self.high:.3g}x)")

    def without(self, claim_id):
        """This factor computed from the other ratios (leave-one-out), None when none is left;
        itself when ``claim_id`` did not make it (a prose interval)."""
        if claim_id not in self.ratios:
            return self
        others = {k: v for k, v in self.ratios.items() if k != claim_id}
        return factors({self.article: others}).get(self.article)

    @classmethod
    def from_row(cls, row):
        """The Factor of a row of ``results/speed.csv`` (:meth:`row`)."""
        ratios = {}
        for item in filter(None, str(row["ratios"]).split("; ")):
            claim, _, ratio = item.rpartition(" ")
            ratios[claim] = float(ratio)
        numbers = [float(row[key]) for key in ("factor", "low", "high")]
        if not all(np.isfinite(numbers)) or min(numbers) <= 0 or not ratios:
            raise ValueError(f"article {row['article']}: factor, interval and ratios must be positive "
                             f"numbers, got {numbers} and {row['ratios']!r}")
        return cls(str(row["article"]), *numbers, ratios)

    def row(self, rule):
        return {"article": self.article, "factor": self.factor, "low": self.low, "high": self.high,
                "raw_times": len(self.ratios),
                "ratios": "; ".join(f"{k} {float(v)!r}" for k, v in self.ratios.items()),
                "band": rule.band if rule else float("nan")}


def judging(ledger, rule):
    """{article: ``rule``, or None where the factor judged none of its raw times} for the rows of
    results/speed.csv: the figure draws the factor's windows only where they decided a verdict
    (a time judged against the article's own code has that code's window: report.ledger.yardstick)."""
    judged = set(ledger.loc[ledger["reason"].astype(str).str.startswith(JUDGED), "article"])
    return {article: rule if article in judged else None for article in set(ledger["article"])}


def read(path):
    """{article: Factor} of ``results/speed.csv`` (the ledger's); {} when there is none."""
    import pandas as pd

    if path is None or not Path(path).is_file():
        return {}
    table = pd.read_csv(path, dtype={"article": str}, keep_default_na=False)
    return {str(r["article"]): Factor.from_row(r) for _, r in table.iterrows()}


def note(path, article):
    """The sentence a timing table adds under its note: this machine's speed against ``article``'s
    (the ledger's ``results/speed.csv`` at ``path``), or that no raw time of it was compared. A
    file that is not there or does not read as the ledger writes it is an io.ResultError naming it."""
    from attnrepro.run import io

    if not Path(path).is_file():
        raise io.ResultError(f"{path}: no such file (the ledger writes it: `snakemake {path}`)")
    try:
        factor = read(path).get(article)
    except (KeyError, ValueError) as error:  # a column missing, a value that is not a number
        raise io.ResultError(f"{path}: not a speed table as the ledger writes it ({error!r}); "
                             f"rebuild it: `snakemake --forcerun ledger {path}`") from error
    if factor is None:
        return (f"Machine speed: no raw time of article {article} is compared in this run "
                f"({path} has no factor for it).")
    return f"Machine speed: {factor.sentence()}, from {path}."


def median_interval(ratios, resamples=RESAMPLES, seed=SEED):
    """(median, low, high): the median of ``ratios`` and the 2.5% and 97.5% quantiles of the
    medians of ``resamples`` resamplings with replacement (numpy default_rng(seed))."""
    values = np.asarray(ratios, dtype=float)
    rng = np.random.default_rng(seed)
    medians = np.median(values[rng.integers(0, len(values), size=(resamples, len(values)))], axis=1)
    low, high = np.quantile(medians, [0.025, 0.975])
    return float(np.median(values)), float(low), float(high)


def factors(ratios_by_article):
    """{article: Factor} from {article: {claim id: ratio}} (articles with no ratio left out)."""
    out = {}
    for article, ratios in ratios_by_article.items():
        if ratios:
            out[article] = Factor(article, *median_interval(list(ratios.values())), dict(ratios))
    return out


def window(factor, rule):
    """(low, high): the ratios published / reproduced consistent with ``factor`` under ``rule``."""
    return factor.factor / rule.band, factor.factor * rule.band


def consistent(ratio_low, ratio_high, factor, rule):
    """Whether the ratios [ratio_low, ratio_high] published / reproduced meet the :func:`window`."""
    low, high = window(factor, rule)
    return ratio_low <= high and low <= ratio_high


def judge(ratio_low, ratio_high, factor, rule):
    """(consistent, sentence): whether a raw time whose ratio published / reproduced is
    [ratio_low, ratio_high] (one value: low == high) lies within the rule's band of the factor, which
    the caller computed without this time (:meth:`Factor.without`)."""
    low, high = window(factor, rule)
    inside = consistent(ratio_low, ratio_high, factor, rule)
    shown = f"{ratio_low:.3g}" if ratio_low == ratio_high else f"{ratio_low:.3g} to {ratio_high:.3g}"
    verdict = ("consistent with it" if inside else
               "outside it: this time does not scale like the article's other raw times (the finding)")
    return inside, (f"{JUDGED} {factor.sentence()}; this time's "
                    f"ratio {shown} is "
                    f"{verdict} (accepted: {low:.3g}x to {high:.3g}x, the factor within x/ {rule.band:g}: "
                    f"{rule.why})")
