"""The ledger: every published number beside the reproduced one, with a verdict and a reason.

Published values live in ``config/published.yaml`` (used by this module only). Each
claim names where its reproduced value is found (experiment, table, row filter,
column, reduction) and its class:

- ``exact``: the printed digits must come out; otherwise the claim *differs*.
- ``round-off``: a 1e-16-level figure; *within tolerance* when both values are
  below the claim's tolerance (their last bits depend on the CPU and BLAS kernel).
- ``stochastic``: a statistic over seeds; *within tolerance* when the published
  value lies in the seed spread (3-4 seeds) or in the 95% interval of the mean (5+).
- ``machine-bound``: a timing; *within tolerance* inside the claim's stated band.

A published string is a number as printed ("0.367", "2.56e-06", "27,253", "1.",
"True", "[0 1 2 3 4 5]"), optionally with a unit ("35 s", "3 GiB", "97%"), or an
interval from the prose ("1.99-2.04", "8.3-13.0 s", "about 30 to 65", "95-98%").
The reproduced value is written in the same style; a "%" multiplies it by 100.
An interval is never an exact match: a stochastic interval is *within tolerance*
when the reproduced statistic lies in it or the seed spread overlaps it, a
machine-bound one when the value lies in its band (the interval by default).

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
import yaml

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
_INTERVAL = re.compile(rf"(?:about\s+)?(?P<low>{_NUM})\s*(?:-|–|to)\s*(?:about\s+)?(?P<num>{_NUM})(?:{_UNIT})?")


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
    here: str = None  # what the article's own code prints on this machine kind, when known
    note: str = ""  # why a value that is not an exact match differs
    decimals: int = None  # the rounding of a NumPy printer that drops trailing zeros
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d):
        d = dict(d)
        known = {k: d.pop(k) for k in list(d) if k in cls.__dataclass_fields__ and k != "cls"}
        klass = d.pop("class")
        if klass not in CLASSES:
            raise ValueError(f"claim {known.get('id')}: class must be one of {CLASSES}, got {klass!r}")
        return cls(cls=klass, extra=d, **known)


def load_claims(path):
    """The claims of ``config/published.yaml`` (refused when two share an id)."""
    with open(path) as fh:
        entries = yaml.safe_load(fh)["claims"]
    claims = [Claim.from_dict(e) for e in entries]
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


def select(frame, source):
    """The values of ``source['column']`` in the rows matching ``source['where']``."""
    rows = frame
    for key, wanted in (source.get("where") or {}).items():
        rows = rows[rows[key].isin(wanted) if isinstance(wanted, list) else rows[key] == wanted]
    if source["column"] not in rows.columns:
        raise KeyError(source["column"])
    if rows.empty:
        raise ValueError(f"no row matches {source.get('where')}")
    return rows[source["column"]].to_numpy()


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
        return values.mean() - half, values.mean() + half, f"95% interval of the mean over {len(values)} seeds"
    return values.min(), values.max(), f"range over {len(values)} seeds"


def judge(claim, value, values=None):
    """(verdict, reproduced text, reason) for one claim and its reproduced value."""
    if value is None:
        return "missing", "", "no result file holds this value"
    text = format_like(value, claim.published, claim.decimals)
    interval = (_parse(claim.published) or (None,) * 4)[3]
    if text == _published_text(claim) and not interval:
        return "reproduced", text, ""
    if claim.cls == "exact":
        return "differs", text, claim.note or "exact claim: digits differ"
    if claim.cls == "round-off":
        return _judge_roundoff(claim, value, text)
    if claim.cls == "stochastic":
        return _judge_stochastic(claim, value, text, values)
    return _judge_timing(claim, value, text)


def _here_matches(claim, value):
    return claim.here is not None and format_like(value, claim.here) == _normalise(claim.here)


def _judge_roundoff(claim, value, text):
    published = published_range(claim.published)[1]
    tol = claim.tolerance
    if tol is not None and abs(float(value)) <= tol and abs(published) <= tol:
        reason = f"round-off: both below {tol:g}; the last bits depend on the CPU and BLAS kernel"
        if _here_matches(claim, value):
            reason += f" (the article's own code gives {claim.here} on this machine kind)"
        return "within tolerance", text, _join(reason, claim.note)
    return "differs", text, _join(f"round-off claim above its tolerance {tol}", claim.note)


def _judge_stochastic(claim, value, text, values):
    if _here_matches(claim, value):
        reason = (f"the article's own code gives {claim.here} on this machine kind; the published "
                  "figure came from another machine (rounding differences grow over training)")
        return "within tolerance", text, _join(reason, claim.note)
    low_p, high_p = published_range(claim.published)
    shown = "published interval" if low_p != high_p else "published value"
    if low_p != high_p and low_p <= float(value) <= high_p:
        return "within tolerance", text, _join(f"the reproduced statistic lies in the {shown}", claim.note)
    if values is not None and len(values) > 1:
        low, high, what = _spread(values)
        where = f"{what}: {low:.4g} to {high:.4g}"
        if low <= high_p and low_p <= high:  # the spread meets the published value or interval
            inside = "overlaps" if low_p != high_p else "inside"
            return "within tolerance", text, _join(f"{shown} {inside} the {where}", claim.note)
        return "differs", text, _join(f"{shown} outside the {where}", claim.note)
    return "differs", text, _join("stochastic claim with a single run: no spread to judge by", claim.note)


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
    """(value, per-row values) of a selector; with ``over``, the ratio of two selections."""
    frame = load(source["experiment"], source.get("table", "main"))
    values = select(frame, source)
    value = reduce(values, source.get("reduce"))
    if source.get("over"):
        over = {"experiment": source["experiment"], "table": source.get("table", "main"), **source["over"]}
        value, values = value / reproduced(over, load)[0], None
    return value, values


def evaluate(claims, load):
    """The ledger as a DataFrame. ``load(experiment, table)`` returns a results table."""
    rows = []
    for claim in claims:
        value, values = None, None
        try:
            value, values = reproduced(claim.source, load)
        except (FileNotFoundError, KeyError, ValueError):
            value, values = None, None
        verdict, text, reason = judge(claim, value, values)
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
