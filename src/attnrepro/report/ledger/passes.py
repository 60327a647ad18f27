"""A timing claim judged by its repeats: every pass of the measurement, not one number.

A ratio or a slope of times, or a raw time, is one measurement; a second one on the same machine
gives another value. So the timing experiments run their whole procedure ``passes`` times on the
same inputs (``experiments._timing``): table ``main`` holds the statistic over all passes (what
the ledger shows), table ``passes`` the same columns once per pass (column ``pass``). A claim is
judged by its band on every one of them (:func:`judge`):

- **within tolerance**: the value and every pass lie inside the band;
- **differs**: the value and every pass lie outside it;
- **inconclusive** (:data:`VERDICT`): some lie inside and some outside; the repeats straddle the
  band, so this machine's measurement cannot decide, and the verdict says so rather than calling
  it a difference. It is counted apart.

A claim whose experiment records no passes is judged on its one value, as before.
"""

from dataclasses import dataclass

from attnrepro.report.ledger.claims import reproduced

VERDICT = "inconclusive"
TABLE, COLUMN = "passes", "pass"
MISSING = (FileNotFoundError, KeyError, ValueError)


def _in_pass(source, number):
    """The selector ``source`` restricted to one pass (its ``over`` too), read from TABLE."""
    one = {**source, "table": TABLE, "where": {**source.get("where", {}), COLUMN: number}}
    if source.get("over"):
        one["over"] = {**source["over"], "where": {**source["over"].get("where", {}), COLUMN: number}}
    return one


def values(source, load):
    """[value of each pass] of a selector of table ``main``; [] when its experiment has no passes."""
    if source.get("table", "main") != "main" or source.get("per"):
        return []
    try:
        numbers = sorted(set(load(source["experiment"], TABLE)[COLUMN]))
        return [float(reproduced(_in_pass(source, n), load)[0]) for n in numbers]
    except MISSING:
        return []


@dataclass(frozen=True)
class Repeats:
    """How many of a claim's passes lie inside its band, and their span."""

    inside: int
    count: int
    low: float
    high: float

    def sentence(self, shown=lambda v: f"{v:.3g}"):
        span = shown(self.low) if self.low == self.high else f"{shown(self.low)} to {shown(self.high)}"
        return f"{self.inside} of {self.count} passes inside (the passes span {span})"


def judge(value_inside, repeated, is_inside):
    """(verdict, Repeats or None): ``value_inside`` (the shown value's side of the band), the
    passes ``repeated`` ([value]) and ``is_inside(value)`` the band's test (module docstring)."""
    if not repeated:
        return ("within tolerance" if value_inside else "differs"), None
    inside = sum(bool(is_inside(v)) for v in repeated)
    counted = Repeats(inside, len(repeated), min(repeated), max(repeated))
    if value_inside and inside == len(repeated):
        return "within tolerance", counted
    if not value_inside and inside == 0:
        return "differs", counted
    return VERDICT, counted
