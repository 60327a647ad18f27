"""A time judged against the article's own code, timed here beside ours: like with like.

A time belongs to the machine, the process and the moment that measured it. So each timing
experiment with ``article_code`` times the article's own listing after each of its passes, in the
same process, on the same thread, in the same allocator state (experiments._article_code), and
writes the same statistics of it (tables ``article_main``, ``article_passes``). A machine-bound
claim of such an experiment is judged here on two questions, both answered with their numbers:

- **Does ours reproduce the article's procedure here?** The verdict. The statistic of ours (the
  ledger's ``reproduced``) against the same statistic of the article's code (column
  ``article_code``), within the spread the passes themselves show: for a time or a ratio of
  times, the larger of ours' and the article code's max / min over their passes, ``s`` (at least
  :data:`FLOOR`), and the window article / s to article x s; for a slope (an exponent, additive),
  the larger of their ranges, ``w`` (at least :data:`SLOPE_FLOOR`), and the window article - w to
  article + w (:func:`window`). Inside: *within
  tolerance*; outside: *differs*. The reason gives the paired ratios ours / article pass by pass.
  With fewer than two passes there is no spread: *inconclusive*. A pass that either measurement
  found disturbed (another process took the core) is left out, and the reason says how many and
  what the others give; with fewer than two left, *disturbed*.
- **How does this machine compare with the author's?** Information, never the verdict: the
  published value over the article's code here (the machine factor, for a time), or the two side by
  side (for a ratio or a slope).

The window is what the ledger records (``accepted_low``, ``accepted_high``): the verdict follows
from the printed value and those bounds alone.
"""

from dataclasses import dataclass

import numpy as np

from attnrepro.report.ledger.claims import published_range, reproduced
from attnrepro.report.ledger.judged import Judged, join

MAIN, PASSES = "article_main", "article_passes"
# The least spread a window allows. Two functions of the same arithmetic, timed in one process one
# after the other, differ by where their arrays land: 001's causal attention written as the listing
# writes it and as attnrepro.core writes it (equal bits), minimum of 12 trials at T = 2048, were 2.4%,
# 3.4% and 3.0% apart in three rounds (2026-12-07, 2-core AMD EPYC of this project's machine kind,
# one BLAS thread). So a ratio's window is never narrower than article / FLOOR to article x FLOOR,
# and a slope's never narrower than +- SLOPE_FLOOR: the slope of three times over a x16 span of
# sizes (001's T = 128 to 2048) when its two ends move FLOOR apart, 2 ln(FLOOR) / ln(16).
FLOOR = 1.05
SLOPE_FLOOR = 0.035
TABLES = {"main": MAIN, "passes": PASSES}
MISSING = (FileNotFoundError, KeyError, ValueError)
PASS, DISTURBED = "pass", "disturbed"


@dataclass(frozen=True)
class Measured:
    """One claim's statistic of ours and of the article's code, pooled and pass by pass
    (``ours``, ``theirs``: [value per pass]; ``quiet``: [whether both were undisturbed, per pass])."""

    value: float
    article: float
    ours: tuple
    theirs: tuple
    quiet: tuple

    @property
    def kept(self):
        """(ours, theirs) of the undisturbed passes."""
        pairs = [(o, t) for o, t, q in zip(self.ours, self.theirs, self.quiet) if q]
        return tuple(o for o, _ in pairs), tuple(t for _, t in pairs)


def _pass_values(source, load, table):
    """[value per pass] of a selector of ``main``, read from ``table``'s rows of each pass."""
    frame = load(source["experiment"], table)
    out = []
    for number in sorted(set(frame[PASS])):
        one = {**source, "table": table, "where": {**source.get("where", {}), PASS: number}}
        out.append(float(reproduced(one, load)[0]))
    return out


def _quiet(source, load, table):
    """[whether no row the selector reads in a pass was disturbed, per pass] of ``table``."""
    frame = load(source["experiment"], table)
    if DISTURBED not in frame.columns:
        return [True] * len(set(frame[PASS]))
    return [not frame[(frame[PASS] == number)][DISTURBED].astype(
        bool,  # pragma: no mutate (equivalent: any() of the column as floats is the same truth)
    ).any() for number in sorted(set(frame[PASS]))]


def read(claim, load):
    """The claim's :class:`Measured`, or None when its experiment timed no article code (or its
    selector reads another table than ``main``, or a ratio ``over`` another selection)."""
    source = claim.source
    if claim.cls != "machine-bound" or source.get("table", "main") != "main" or source.get(
            "over",  # pragma: no mutate (equivalent: a selection over another finds no pass in its own)
    ) or source.get("per"):
        return None
    try:
        article = float(reproduced({**source, "table": MAIN}, load)[0])
        value = float(reproduced(source, load)[0])
        ours, theirs = _pass_values(source, load, "passes"), _pass_values(source, load, PASSES)
        quiet = [a and b for a, b in zip(_quiet(source, load, "passes"), _quiet(source, load, PASSES))]
    except MISSING:
        return None
    if not np.isfinite(article) or len(ours) != len(theirs):
        return None
    return Measured(value, article, tuple(ours), tuple(theirs), tuple(quiet))


def additive(claim):
    """Whether the claim's statistic is an exponent (a slope), judged by differences, not ratios."""
    return "slope" in claim.source["column"]


def window(claim, article, ours, theirs):
    """(low, high, spread text): the window around ``article`` that the passes' spread allows."""
    if additive(claim):
        width = max(max(ours) - min(ours), max(theirs) - min(theirs))
        wider = width > SLOPE_FLOOR  # pragma: no mutate (equivalent: at the floor, the same window)
        said = (f"± {width:.3g}, the larger range of the two's passes" if wider
                else f"± {SLOPE_FLOOR:g}, the least window: the passes' ranges are narrower, {width:.3g}")
        width = max(width, SLOPE_FLOOR)
        return article - width, article + width, said
    spread = max(max(ours) / min(ours), max(theirs) / min(theirs))
    wider = spread > FLOOR  # pragma: no mutate (equivalent: at the floor, the same window)
    said = (f"÷× {spread:.3g}, the larger max / min of the two's passes" if wider
            else f"÷× {FLOOR:g}, the least window: the passes' max / min are narrower, {spread:.3g}")
    spread = max(spread, FLOOR)
    return article / spread, article * spread, said


def _paired(ours, theirs):
    ratios = [o / t for o, t in zip(ours, theirs)]
    return (f"paired ratios ours / the article's code {min(ratios):.3g} to {max(ratios):.3g} over "
            f"{len(ratios)} passes")


def machine(claim, measured, shown):
    """The comparison with the author's machine, as information: its published value over the article's
    code here for a time (the machine factor), else the two side by side."""
    low, high = published_range(claim.published)
    if claim.raw_time and measured.article > 0:
        factors = sorted({low / measured.article, high / measured.article})
        factor = " to ".join(f"{f:.3g}x" for f in factors)
        return (f"as information, the author's machine: published {claim.published}, the article's code here "
                f"{shown(measured.article)}: this machine runs it {factor} as fast")
    return (f"as information, the author's machine printed {claim.published}; the article's code gives "
            f"{shown(measured.article)} here")


def judge(claim, measured, written, shown=lambda v: f"{v:.3g}"):
    """The :class:`~attnrepro.report.ledger.judged.Judged` of a claim's :class:`Measured` (the module's
    docstring); ``written(low, high)``: the reproduced value as the ledger writes it beside a window
    (None, None: without one), ``shown`` how another value is written."""
    ours, theirs = measured.kept
    left = len(measured.ours) - len(ours)
    disturbed = (f"{left} of {len(measured.ours)} passes disturbed (ours or the article code's), left out"
                 if left else "")
    info, text = machine(claim, measured, shown), written(None, None)
    beside = f"against the article's own code timed here beside it, article-code {shown(measured.article)}"
    head = f"ours {text} {beside}"
    if len(ours) < 2:
        verdict = "disturbed" if left else "inconclusive"
        why = f"{len(ours)} undisturbed pass: no spread to judge by"
        return Judged(verdict, text, join(head, why, disturbed, info, claim.note))
    low, high, spread = window(claim, measured.article, ours, theirs)
    text = written(low, high)
    head = f"ours {text} {beside}"
    verdict = "within tolerance" if low <= measured.value <= high else "differs"
    if verdict == "differs" and left:  # the pooled value holds the disturbed passes too
        verdict = "disturbed"
    accepted = f"accepted {shown(low)} to {shown(high)} ({spread})"
    if left:
        reason = join(f"{head}; {disturbed}", f"the other {len(ours)}: {accepted}, {_paired(ours, theirs)}")
    else:
        reason = f"{head}: {accepted}; {_paired(ours, theirs)}"
    return Judged(verdict, text, join(reason, info, claim.note), (low, high))
