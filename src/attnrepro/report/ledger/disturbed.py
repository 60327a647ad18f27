"""Timing claims read from a disturbed measurement: judged "disturbed", never "differs".

A busy machine lengthens a time. Each timing experiment checks every batch of timed calls and
times it again while another process took its core (:func:`attnrepro.experiments._timing.measure`);
a row whose measurement stayed disturbed says so in its tables (``disturbed``, beside
``cpu_share``, ``attempts``, ``load_before``, ``load_after``). A machine-bound claim read from such
a row is judged :data:`VERDICT`, and its reason names the measurement (:meth:`Check.finding`).
Which rows a claim reads:

- a raw time (``raw_time: true``): the rows it selects;
- any other machine-bound claim (a ratio or a slope of times): every row of the cases it reads,
  because a ratio or a fit combines the times of several rows.

Cross-check (:func:`cross_check`): ``causal_timing`` and ``timing_exponent`` time the same function
(001's causal float64 attention, same d_k) at common lengths (T = n), each with the allocator in its
steady state (experiments._allocator). Their minimum times at one length then agree within
the factor the experiments record in their ``machine`` table (column ``agreement``:
experiments._timing.AGREEMENT, its rationale there), whatever else each process ran
before. Beyond it, the slower of the two was disturbed (load lengthens a time, never shortens it):
the claims read from its row are judged "disturbed" too, and LEDGER.md says the disagreement
(:func:`lines`). The speed factor (verdicts.raw_time_factors) leaves every disturbed raw time out.
"""

from dataclasses import dataclass

from attnrepro.report.ledger.claims import _matching

VERDICT = "disturbed"
AGREEMENT = "agreement"  # the machine tables' column: the factor two minima of one function agree within
# the experiments that time the same function: (experiment, table of every timed call, length
# column, seconds column)
SAME_FUNCTION = (("causal_timing", "repeats", "T", "seconds"),
                 ("timing_exponent", "repeats", "n", "seconds"))
ROW_KEYS = ("T", "n", "generated")  # the column that names a timing row, the first present
MISSING = (FileNotFoundError, KeyError, ValueError)


@dataclass(frozen=True)
class Disagreement:
    """Two experiments' minimum times of the same function at one ``length``: {experiment: seconds}."""

    length: int
    seconds: dict
    factor: float

    @property
    def slower(self):
        return max(self.seconds, key=self.seconds.get)

    def sentence(self):
        (a, ta), (b, tb) = self.seconds.items()
        apart = max(ta, tb) / min(ta, tb)
        return (f"{a} and {b} time the same causal attention at length {self.length}: "
                f"minima {ta * 1e3:.4g} ms and {tb * 1e3:.4g} ms, {apart:.2f}x apart (a quiet machine "
                f"gives them within {self.factor:g}x): {self.slower}'s measurement was slowed")


def _minima(load, experiment, table, length, column):
    """{length: minimum seconds over every timed call} of one experiment, and its d_k (its main table)."""
    seconds = load(experiment, table).groupby(length)[column].min()
    d_k = set(load(experiment, "main")["d_k"])
    return {int(k): float(v) for k, v in seconds.items()}, d_k


def recorded_agreement(load):
    """The factor within which the experiments of SAME_FUNCTION say their minima agree (the larger of
    the two ``agreement`` columns of their machine tables)."""
    return max(float(load(entry[0], "machine")[AGREEMENT].max()) for entry in SAME_FUNCTION)


def cross_check(load, factor=None):
    """(lengths compared, [Disagreement]) of the experiments of SAME_FUNCTION at their common
    lengths, within ``factor`` (None: the one they record); ([], []) when either is not among the
    results, records no factor, or they ran another d_k."""
    try:
        (first, d_first), (second, d_second) = (_minima(load, *entry) for entry in SAME_FUNCTION)
        factor = recorded_agreement(load) if factor is None else factor
    except MISSING:
        return [], []
    if d_first != d_second:
        return [], []
    common = sorted(set(first) & set(second))
    a, b = SAME_FUNCTION[0][0], SAME_FUNCTION[1][0]
    found = [Disagreement(n, {a: first[n], b: second[n]}, factor) for n in common
             if max(first[n], second[n]) > factor * min(first[n], second[n])]
    return common, found


def lines(load, factor=None):
    """LEDGER.md's lines on the cross-check: the lengths compared and each disagreement."""
    common, found = cross_check(load, factor)
    if not common:
        return []
    factor = recorded_agreement(load) if factor is None else factor
    a, b = SAME_FUNCTION[0][0], SAME_FUNCTION[1][0]
    head = (f"**Cross-check of timings** ({a} against {b}, minimum times at lengths "
            f"{', '.join(map(str, common))}): ")
    if not found:
        return [head + f"they agree within {factor:g}x."]
    return [head + "; ".join(d.sentence() for d in found)
            + f". The claims read from the slowed measurement are judged *{VERDICT}*."]


def _rows_read(claim, load):
    """[(experiment, rows)] of the rows a machine-bound claim's value comes from (module docstring)."""
    source = claim.source
    table = source.get("table", "main")
    selectors = [source] + ([{**source, **source["over"]}] if source.get("over") else [])
    out = []
    for selector in selectors:
        frame = load(selector["experiment"], table)
        rows = _matching(frame, selector)
        if not claim.raw_time:  # a ratio or a slope: every row of the cases it reads
            rows = frame[frame["case"].isin(set(rows["case"]))] if "case" in frame.columns else frame
        out.append((selector["experiment"], rows))
    return out


def _label(experiment, row):
    key = next((k for k in ROW_KEYS if k in row.index), None)
    case = f" case {row['case']}" if "case" in row.index else ""
    return f"{experiment}{case}" + (f", {key} = {row[key]}" if key else "")


def _described(experiment, row):
    """One disturbed row as a reason says it: where, its CPU share, attempts, the load."""
    load = ""
    if ({"load_before", "load_after"}
            <= set(row.index)  # pragma: no mutate (equivalent: <: the row holds cpu_share too)
    ):
        load = f"; 1-minute load {row['load_before']:.2f} before, {row['load_after']:.2f} after"
    return (f"{_label(experiment, row)}: the timing process ran {row['cpu_share']:.0%} of the wall time "
            f"(below the share a quiet core gives: experiments._timing) after {int(row['attempts'])} "
            f"attempt{'s' if int(row['attempts']) != 1 else ''}{load}")


class Check:
    """Which rows of a run's timing tables were disturbed: ``finding(claim)``, once per ledger."""

    def __init__(self, load, factor=None):
        self.load, self.factor, self._disagreements = load, factor, None

    @property
    def disagreements(self):
        """The cross-check's disagreements, read at the first machine-bound claim."""
        if self._disagreements is None:
            self._disagreements = cross_check(self.load, self.factor)[1]
        return self._disagreements

    def finding(self, claim):
        """The sentence naming the disturbed measurement a machine-bound claim is read from, or ""."""
        if claim.cls != "machine-bound":
            return ""
        try:
            read = _rows_read(claim, self.load)
        except MISSING:
            return ""
        found = []
        for experiment, rows in read:
            if "disturbed" in rows.columns and ({"cpu_share", "attempts"}
                    <= set(rows.columns)  # pragma: no mutate (equivalent: <: they hold "disturbed" too)
            ):
                slowed = rows[rows["disturbed"].fillna(False).astype(bool)]
                found += [_described(experiment, row) for _, row in slowed.iterrows()]
            key = next((k for k in ROW_KEYS if k in rows.columns), None)
            found += [d.sentence() for d in self.disagreements
                      if d.slower == experiment and key is not None and d.length in set(rows[key])]
        if not found:
            return ""
        return "disturbed measurement: " + "; ".join(dict.fromkeys(found))
