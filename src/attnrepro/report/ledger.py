"""The ledger: every published number beside the reproduced one, with a verdict and a reason.

Published values live in ``config/published.yaml`` (used by this module only). Each
claim names where its reproduced value is found (experiment, table, row filter,
column, reduction) and its class:

- ``exact``: the printed digits must come out; otherwise the claim *differs*.
- ``round-off``: a 1e-16-level figure; *within tolerance* when both values are
  below the claim's tolerance (their last bits depend on the CPU and BLAS kernel).
- ``stochastic``: a statistic over seeds. A published 3-seed mean or minimum is
  *within tolerance* when it lies in the central 95% interval of that statistic over
  every set of 3 seeds of the seed distribution (``spread``: the ``seeds`` target's
  :class:`~attnrepro.evidence.seeds_evaluate.Spread`); the reproduced value stays the
  run's own statistic. Without a distribution that places the claim, the run's own
  seeds judge it (their range, or the 95% interval of their mean from 5 seeds on) and
  the reason says this is the weaker judgement and names ``snakemake --cores 2 seeds``.
  What the article's own code gives here is the listings' (``snakemake --cores 2 listings``,
  :mod:`attnrepro.evidence.citations`): said beside the verdict, never deciding it.
- ``machine-bound``: a timing; *within tolerance* inside the claim's stated band.

A published string is a number as printed ("0.367", "2.56e-06", "27,253", "1.",
"True", "[0 1 2 3 4 5]"), optionally with a unit ("35 s", "3 GiB", "97%"), or an
interval from the prose ("1.99-2.04", "8.3-13.0 s", "about 30 to 65", "95-98%").
The reproduced value is written in the same style; a "%" multiplies it by 100.
An interval is never an exact match: a machine-bound one is *within tolerance* when
the value lies in its band (the interval by default). A stochastic range from the prose
("0.987-0.995", "95-98%") names the grid rows it holds for with ``per`` in its source
(``per: L``: the selection split by L, one statistic per L): *within tolerance* when
every row's statistic (each L's 3-seed mean) lies in the range, and the reason names
each row outside and whether that row's 95% interval of 3-seed statistics in the seed
distribution overlaps the range. A stochastic interval without ``per`` is *within
tolerance* when the statistic lies in it or the run's seed spread overlaps it.

Selectors: ``where`` values may be lists (any of them); ``over`` (a second
selector, on the same experiment and table unless it names others) divides the
value, for the prose's ratios of two reproduced figures ("a factor of 9.6").
``decimals`` (optional) is the rounding a NumPy array printer applied before it
dropped trailing zeros: "0.54" printed from ``x.round(3)`` is compared at 3 decimals.
"""

import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from attnrepro import yamlfile

CLASSES = ("exact", "round-off", "stochastic", "machine-bound")
VERDICTS = ("reproduced", "within tolerance", "differs", "missing")
REDUCERS = {"single": None, "mean": np.mean, "min": np.min, "max": np.max,
            "sum": np.sum, "count": len, "all": np.all, "any": np.any}
_SCI = re.compile(r"[-+]?\d+(?:\.(\d*))?e([-+]?)(\d+)")
_FIXED = re.compile(r"[-+]?\d+(?:\.(\d*))?")
_THOUSANDS = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.(\d*))?")
_NUM = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:e[-+]?\d+)?"
_UNIT = r"(?P<space>\s*)(?P<unit>%|[A-Za-z]+)"
_SINGLE = re.compile(rf"(?P<num>{_NUM})(?:{_UNIT})?")
_INTERVAL = re.compile(rf"(?:about\s+)?(?P<low>{_NUM})\s*(?:-|–|to)\s*"
                       rf"(?:about\s+)?(?P<num>{_NUM})(?:{_UNIT})?")


@dataclass
class Claim:
    id: str
    article: str
    section: str
    claim: str
    published: str
    cls: str
    source: dict
    tolerance: float = None  # round-off: both values below it
    band: list = None  # machine-bound: [low, high] accepted for the reproduced value
    note: str = ""  # why a value that is not an exact match differs
    decimals: int = None  # the rounding of a NumPy printer that drops trailing zeros
    location: dict = None  # where it is printed in the article: {line, column[, text]} (check_location)
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d):
        d = dict(d)
        known = {k: d.pop(k) for k in list(d) if k in cls.__dataclass_fields__ and k != "cls"}
        klass = d.pop("class")
        if "here" in d:  # computed by the listings, never transcribed
            raise ValueError(f"claim {known.get('id')}: 'here' is not a key of a claim: what the article's "
                             "own code gives here is computed by `snakemake --cores 2 listings`")
        if klass not in CLASSES:
            raise ValueError(f"claim {known.get('id')}: class must be one of {CLASSES}, got {klass!r}")
        if (known.get("source") or {}).get("per") and klass != "stochastic":
            raise ValueError(f"claim {known.get('id')}: only a stochastic range is judged row by row (per)")
        if known.get("location") is not None:
            check_location(known.get("id"), known["location"])
        return cls(cls=klass, extra=d, **known)


def check_location(claim_id, location):
    """A claim's ``location``: {line, column} (integers from 1) and, when the article prints the
    claim otherwise than its published string, ``text`` (that printed form); nothing else."""
    keys = set(location) if isinstance(location, dict) else set()
    if not ({"line", "column"} <= keys <= {"line", "column", "text"}
            and all(type(location[k]) is int and location[k] >= 1 for k in ("line", "column"))
            and (isinstance(location.get("text", "-"), str) and location.get("text", "-").strip())):
        raise ValueError(f"claim {claim_id}: location must be {{line, column[, text]}}, line and column "
                         f"integers from 1, text the printed string; got {location!r}")


def load_claims(path):
    """The claims of ``config/published.yaml``: each with its location in the article, refused
    when one has none, two share an id, or a claim gives a key twice (yamlfile.DuplicateKey,
    naming file, line and key: YAML would keep the last value silently)."""
    # libyaml's parser when PyYAML has it: the same data, 8 times faster
    entries = yamlfile.load(path, fast=True)["claims"]
    claims = [Claim.from_dict(e) for e in entries]
    unplaced = [c.id for c in claims if c.location is None]
    if unplaced:
        raise ValueError(f"claims without a location in {path}: {', '.join(unplaced[:5])}"
                         + (f" and {len(unplaced) - 5} more" if len(unplaced) > 5 else ""))
    ids = [c.id for c in claims]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ValueError(f"duplicated claim ids in {path}: {', '.join(duplicated)}")
    return claims


def _normalise(text):
    text = str(text).strip()
    if text.endswith("."):
        text = text[:-1]
    return "0" + text[2:] if text.startswith("-0") and set(text[1:]) <= set("0.e+-") else text


def _number_text(value, number, decimals=None):
    """``value`` written like the printed ``number`` (no unit): sci, thousands or fixed."""
    if decimals is not None:
        text = f"{float(value):.{decimals}f}"
        return _normalise(text.rstrip("0").rstrip(".") if "." in text else text)
    if (m := _SCI.fullmatch(number)) is not None:
        mantissa, _, exponent = f"{float(value):.{len(m.group(1) or '')}e}".partition("e")
        sign = "-" if int(exponent) < 0 else m.group(2).replace("-", "")
        return _normalise(f"{mantissa}e{sign}{str(abs(int(exponent))).zfill(len(m.group(3)))}")
    if (m := _THOUSANDS.fullmatch(number)) is not None:
        return _normalise(f"{float(value):,.{len(m.group(1) or '')}f}")
    if (m := _FIXED.fullmatch(number)) is not None:
        return _normalise(f"{float(value):.{len(m.group(1) or '')}f}")
    return None


def _parse(published):
    """(number, space, unit, interval) of a published number or interval, or None for text."""
    published = str(published).strip()
    for pattern, interval in ((_SINGLE, False), (_INTERVAL, True)):
        if (m := pattern.fullmatch(published)) is not None:
            return m.group("num"), m.group("space") or "", m.group("unit") or "", interval
    return None


def _to_float(number):
    return float(number.replace(",", ""))


def published_range(published):
    """(low, high) of a published number or interval in the units of the reproduced value."""
    parsed = _parse(published)
    if parsed is None:
        raise ValueError(f"not a number: {published!r}")
    number, _, unit, interval = parsed
    high = _to_float(number)
    low = _to_float(_INTERVAL.fullmatch(str(published).strip()).group("low")) if interval else high
    scale = 100.0 if unit == "%" else 1.0
    return low / scale, high / scale


def format_like(value, published, decimals=None):
    """``value`` written with the precision and style of the ``published`` string."""
    published = str(published).strip()
    if published in ("True", "False"):
        return str(bool(value))
    if isinstance(value, (bool, np.bool_)):
        return str(int(value)) if published in ("0", "1") else str(bool(value))
    if isinstance(value, str) or (parsed := _parse(published)) is None:
        return str(value)
    number, space, unit, _ = parsed
    if unit == "%":
        value = float(value) * 100
    text = _number_text(value, number, decimals)
    if text is None:
        return str(value)
    return f"{text}{space}{unit}"


def _published_text(claim):
    """The published string normalised like a reproduced one (trailing zeros, when printed by NumPy)."""
    text = _normalise(claim.published)
    if claim.decimals is not None and _FIXED.fullmatch(text) and "." in text:
        text = _normalise(text.rstrip("0").rstrip("."))
    return text


def _matching(frame, source):
    """The rows of ``frame`` matching ``source['where']`` (refused when none, or no column)."""
    rows = frame
    for key, wanted in (source.get("where") or {}).items():
        rows = rows[rows[key].isin(wanted) if isinstance(wanted, list) else rows[key] == wanted]
    if source["column"] not in rows.columns:
        raise KeyError(source["column"])
    if rows.empty:
        raise ValueError(f"no row matches {source.get('where')}")
    return rows


def select(frame, source):
    """The values of ``source['column']`` in the rows matching ``source['where']``."""
    return _matching(frame, source)[source["column"]].to_numpy()


def reduce(values, how):
    if how in (None, "single"):
        if len(values) != 1:
            raise ValueError(f"expected exactly one row, found {len(values)}")
        return values[0]
    return REDUCERS[how](values)


def _spread(values):
    """(low, high, what): the seed range, or the 95% interval of the mean from 5 seeds on."""
    values = np.asarray(values, dtype=float)
    if len(values) >= 5:
        half = 1.96 * values.std(ddof=1) / math.sqrt(len(values))
        return (values.mean() - half, values.mean() + half,
                f"95% interval of the mean over {len(values)} seeds")
    return values.min(), values.max(), f"range over {len(values)} seeds"


def judge(claim, value, values=None, spread=None):
    """(verdict, reproduced text, reason) for one claim and its reproduced value; a stochastic
    claim is judged against the seed distribution ``spread`` (None: the run has none)."""
    if value is None:
        return "missing", "", "no result file holds this value"
    if isinstance(value, dict):  # one statistic per row (source ``per``): a range, row by row
        return _judge_rows(claim, value, values, spread)
    text = format_like(value, claim.published, claim.decimals)
    interval = (_parse(claim.published) or (None,) * 4)[3]
    if text == _published_text(claim) and not interval:
        return "reproduced", text, ""
    if claim.cls == "exact":
        return "differs", text, claim.note or "exact claim: digits differ"
    if claim.cls == "round-off":
        return _judge_roundoff(claim, value, text)
    if claim.cls == "stochastic":
        return _judge_stochastic(claim, value, text, values, spread)
    return _judge_timing(claim, value, text)


def _judge_roundoff(claim, value, text):
    published = published_range(claim.published)[1]
    tol = claim.tolerance
    if tol is not None and abs(float(value)) <= tol and abs(published) <= tol:
        reason = f"round-off: both below {tol:g}; the last bits move with the numerics (the BLAS kernel, " \
                 "NumPy's code paths, the versions: the numerics sweep varies them)"
        return "within tolerance", text, _join(reason, claim.note)
    return "differs", text, _join(f"round-off claim above its tolerance {tol}", claim.note)


# the fallback when no seed distribution places a stochastic claim (never silent)
BUILD = "`snakemake --cores 2 seeds` builds it, config `seed_distribution.build: true` adds it to the run"
WEAKER = ("judged against the run's own seeds only, a weaker judgement than the seed distribution "
          f"(the 95% interval of 3-seed statistics over many seeds): {BUILD}")


def _judge_stochastic(claim, value, text, values, spread):
    """Against the seed distribution when it places the claim, else the run's own seeds."""
    placed = spread.placed(claim.id) if spread is not None else None
    if placed is not None:
        inside, sentence = placed
        return ("within tolerance" if inside else "differs"), text, _join(sentence, claim.note)
    lacking = ("no seed distribution in this run" if spread is None
               else "the seed distribution does not place this claim")
    verdict, reason = _judge_own_seeds(claim, value, values)
    return verdict, text, _join(reason, f"{lacking}: {WEAKER}", claim.note)


def _judge_own_seeds(claim, value, values):
    """(verdict, reason): the published value or interval against the run's own seed spread."""
    low_p, high_p = published_range(claim.published)
    shown = "published interval" if low_p != high_p else "published value"
    if low_p != high_p and low_p <= float(value) <= high_p:
        return "within tolerance", f"the reproduced statistic lies in the {shown}"
    if values is None or len(values) < 2:
        return "differs", "stochastic claim with a single run: no spread to judge by"
    low, high, what = _spread(values)
    where = f"{what}: {low:.4g} to {high:.4g}"
    if low <= high_p and low_p <= high:  # the spread meets the published value or interval
        return "within tolerance", f"{shown} {'overlaps' if low_p != high_p else 'inside'} the {where}"
    return "differs", f"{shown} outside the {where}"


def _judge_rows(claim, stats, values, spread):
    """A published range checked row by row: every row's statistic (``stats``: {row: value},
    ``values``: {row: per-seed values}), at the range's printed precision, must lie in it; the
    reason names each row outside."""
    low_p, high_p = published_range(claim.published)
    per, how = claim.source["per"], claim.source.get("reduce")
    shown = {key: format_like(v, claim.published) for key, v in stats.items()}
    seeds = {key: f"{len(v)} seed{'s' if len(v) != 1 else ''}" for key, v in values.items()}
    listed = ", ".join(f"{per} = {key}: {shown[key]} ({how} over {seeds[key]})" for key in stats)
    text = _span(stats.values(), claim.published)
    outside = [key for key, t in shown.items() if not low_p <= published_range(t)[0] <= high_p]
    if not outside:
        return "within tolerance", text, _join(f"every row lies in the published range: {listed}", claim.note)
    named = "; ".join(f"{per} = {key} outside the published range ({_row_interval(claim, key, spread)})"
                      for key in outside)
    return "differs", text, _join(named, f"judged row by row: {listed}", claim.note)


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


def _span(values, published):
    """The span of ``values`` written like the ``published`` range ("0.985-0.995", "95-97%")."""
    low, high = (format_like(f(values), published) for f in (min, max))
    if low == high:
        return high
    _, space, unit, _ = _parse(published)
    return f"{low.removesuffix(space + unit) if unit else low}-{high}"


def _judge_timing(claim, value, text):
    band = claim.band
    if band is None and (_parse(claim.published) or (None,) * 4)[3]:
        band = published_range(claim.published)  # the article's own interval
    if band is not None:
        low, high = band
        inside = low <= float(value) <= high
        reason = f"machine-bound: accepted band {low:g} to {high:g} stated before measuring"
        return ("within tolerance" if inside else "differs"), text, _join(reason, claim.note)
    return "differs", text, _join("machine-bound: raw time of another CPU", claim.note)


def _join(*parts):
    return "; ".join(p for p in parts if p)


def reproduced(source, load):
    """(value, per-row values) of a selector; with ``over``, the ratio of two selections; with
    ``per``, ({row: statistic}, {row: values}): the selection split by that column."""
    frame = load(source["experiment"], source.get("table", "main"))
    if source.get("per"):
        groups = {key: rows[source["column"]].to_numpy()
                  for key, rows in _matching(frame, source).groupby(source["per"])}
        return {key: reduce(v, source.get("reduce")) for key, v in groups.items()}, groups
    values = select(frame, source)
    value = reduce(values, source.get("reduce"))
    if source.get("over"):
        over = {"experiment": source["experiment"], "table": source.get("table", "main"), **source["over"]}
        value, values = value / reproduced(over, load)[0], None
    return value, values


def cases_read(source, load):
    """[(experiment, table, case)] of the files whose rows a selector reads (``over``'s too)."""
    table = source.get("table", "main")
    frame = load(source["experiment"], table)
    found = [(source["experiment"], table, case) for case in dict.fromkeys(_matching(frame, source)["case"])]
    if source.get("over"):
        found += cases_read({"experiment": source["experiment"], "table": table, **source["over"]}, load)
    return list(dict.fromkeys(found))


def evaluate(claims, load, spread=None):
    """The ledger as a DataFrame. ``load(experiment, table)`` returns a results table; ``spread``
    (a seeds_evaluate.Spread, or None) is what the stochastic claims are judged against."""
    rows = []
    for claim in claims:
        value, values = None, None
        try:
            value, values = reproduced(claim.source, load)
        except (FileNotFoundError, KeyError, ValueError):
            value, values = None, None
        verdict, text, reason = judge(claim, value, values, spread)
        rows.append({
            "id": claim.id, "article": claim.article, "section": claim.section,
            "claim": claim.claim, "published": claim.published, "reproduced": text,
            "class": claim.cls, "verdict": verdict, "reason": reason,
        })
    return pd.DataFrame(rows, columns=["id", "article", "section", "claim", "published",
                                       "reproduced", "class", "verdict", "reason"])


def summary(ledger):
    """Counts of each verdict per article (rows: article, columns: verdicts)."""
    table = pd.crosstab(ledger["article"], ledger["verdict"])
    return table.reindex(columns=[v for v in VERDICTS if v in table.columns], fill_value=0)


def exact_failures(ledger):
    """Claims classed exact that did not reproduce (the CI gate on this machine kind)."""
    return ledger[(ledger["class"] == "exact") & (ledger["verdict"] != "reproduced")]
