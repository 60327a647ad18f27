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
"""

import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

CLASSES = ("exact", "round-off", "stochastic", "machine-bound")
VERDICTS = ("reproduced", "within tolerance", "differs", "missing")
REDUCERS = {"single": None, "mean": np.mean, "min": np.min, "max": np.max,
            "sum": np.sum, "count": len, "all": np.all, "any": np.any}
_SCI = re.compile(r"[-+]?\d+(?:\.(\d*))?e[-+]?\d+")
_FIXED = re.compile(r"[-+]?\d+(?:\.(\d*))?")


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
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d):
        d = dict(d)
        known = {k: d.pop(k) for k in list(d) if k in cls.__dataclass_fields__ and k != "cls"}
        klass = d.pop("class")
        if klass not in CLASSES:
            raise ValueError(f"claim {known.get('id')}: class must be one of {CLASSES}, got {klass!r}")
        return cls(cls=klass, extra=d, **known)


def _normalise(text):
    text = str(text).strip()
    if text.endswith("."):
        text = text[:-1]
    return "0" + text[2:] if text.startswith("-0") and set(text[1:]) <= set("0.e+-") else text


def format_like(value, published):
    """``value`` written with the precision and style of the ``published`` string."""
    published = str(published).strip()
    if published in ("True", "False"):
        return str(bool(value))
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if (m := _SCI.fullmatch(published)) is not None:
        return _normalise(f"{float(value):.{len(m.group(1) or '')}e}")
    if (m := _FIXED.fullmatch(published)) is not None:
        decimals = len(m.group(1) or "")
        return _normalise(f"{float(value):.{decimals}f}")
    return str(value)


def select(frame, source):
    """The values of ``source['column']`` in the rows matching ``source['where']``."""
    rows = frame
    for key, wanted in (source.get("where") or {}).items():
        rows = rows[rows[key] == wanted]
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
    text = format_like(value, claim.published)
    if text == _normalise(claim.published):
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
    published = float(claim.published)
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
    if values is not None and len(values) > 1:
        low, high, what = _spread(values)
        published = float(claim.published)
        where = f"{what}: {low:.4g} to {high:.4g}"
        if low <= published <= high:
            return "within tolerance", text, _join(f"published value inside the {where}", claim.note)
        return "differs", text, _join(f"published value outside the {where}", claim.note)
    return "differs", text, _join("stochastic claim with a single run: no spread to judge by", claim.note)


def _judge_timing(claim, value, text):
    if claim.band is not None:
        low, high = claim.band
        inside = low <= float(value) <= high
        reason = f"machine-bound: accepted band {low:g} to {high:g} stated before measuring"
        return ("within tolerance" if inside else "differs"), text, _join(reason, claim.note)
    return "differs", text, _join("machine-bound: raw time of another CPU", claim.note)


def _join(*parts):
    return "; ".join(p for p in parts if p)


def evaluate(claims, load):
    """The ledger as a DataFrame. ``load(experiment, table)`` returns a results table."""
    rows = []
    for claim in claims:
        value, values = None, None
        try:
            frame = load(claim.source["experiment"], claim.source.get("table", "main"))
            values = select(frame, claim.source)
            value = reduce(values, claim.source.get("reduce"))
        except (FileNotFoundError, KeyError, ValueError):
            value = None
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
