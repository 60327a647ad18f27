"""The ledger: every published number beside the reproduced one, with a verdict and a reason.

Published values live in ``config/published.yaml`` (used by this module only). Each
claim names where its reproduced value is found (experiment, table, row filter,
column, reduction) and its class:

- ``exact``: the printed digits must come out; otherwise the claim *differs*.
- ``round-off``: a 1e-16-level figure; *within tolerance* when both values are
  below the claim's tolerance (their last bits depend on the CPU and BLAS kernel).
- ``finite-difference``: a difference quotient's error against the analytic gradient (truncation
  and cancellation, which its rationale sizes for the step used); judged like round-off.
- ``stochastic``: a statistic over seeds. A published 3-seed mean or minimum is
  *within tolerance* when it lies in the central 95% interval of that statistic over
  every set of 3 seeds of the seed distribution (``spread``: the ``seeds`` target's
  :class:`~attnrepro.report.evidence_tables.seeds_evaluate.Spread`); the reproduced value stays the
  run's own statistic. Without a distribution that places the claim, the run's own n
  seeds judge it: *within tolerance* when the published value lies in the 95% prediction
  interval of a new statistic over the article's 3 seeds
  (:func:`~attnrepro.report.products.statistics.prediction_interval`: t-based for a mean,
  order statistics for a minimum or maximum), *inconclusive* when n is too few to predict
  it (1 for a mean; below 58 for a minimum); the reason says this is the weaker judgement
  and names ``snakemake --cores 2 seeds``.
  What the article's own code gives here is the listings' (``snakemake --cores 2 listings``,
  :mod:`attnrepro.report.evidence_tables.citations`): said beside the verdict, never deciding it.
- ``machine-bound``: a timing; *within tolerance* when the value and every pass of its measurement
  lie inside the claim's stated band (a raw time: near the speed factor of its article's other raw
  times); *inconclusive* when the passes straddle the band (:mod:`attnrepro.report.ledger.passes`);
  *disturbed* when read from a measurement that another process slowed
  (:mod:`attnrepro.report.ledger.disturbed`). Never *reproduced*: a time moves with the machine, and
  digits that rounding makes alike (0.001 s published, 0.000970 s here) say nothing; its reproduced
  value is written with the digits that were judged (:func:`timing_text`).

How a published string is parsed and a reproduced value written like it, and how a claim's
value is selected, live in :mod:`attnrepro.report.ledger.claims` (its names are re-exported here).
An interval is never an exact match: a machine-bound one is *within tolerance* when
the value lies in its band (the interval by default). A stochastic range from the prose
("0.987-0.995", "95-98%") names the grid rows it holds for with ``per`` in its source
(``per: L``: the selection split by L, one statistic per L): *within tolerance* when
every row's statistic (each L's 3-seed mean) lies in the range, and the reason names
each row outside and whether that row's 95% interval of 3-seed statistics in the seed
distribution overlaps the range. A stochastic interval without ``per`` is *within
tolerance* when the statistic lies in it or the run's seed spread overlaps it.
"""

import numpy as np
import pandas as pd

from attnrepro.report.ledger import (
    comparable, disturbed, echoes, passes, restated, speed, stochastic, ties, yardstick,
)
from attnrepro.report.ledger.judged import Judged, join, rationale
from attnrepro.report.ledger.stochastic import WEAKER  # noqa: F401  (the ledger's names, used through it)
from attnrepro.report.products import formats
from attnrepro.report.ledger.claims import (  # noqa: F401  (the ledger's names, used through it)
    CLASSES, REDUCERS, VERDICTS, Claim, _normalise, _parse, _published_text, cases_read, check_location,
    check_printed, format_like, load_claims, loosened, published_range, reduce, reproduced, select,
)

def judge(claim, value, values=None, spread=None, factor=None, rule=None, repeats=()):
    """(verdict, reproduced text, reason) for one claim and its reproduced value; a stochastic
    claim is judged against the seed distribution ``spread`` (None: the run has none), a raw time
    against its article's speed ``factor`` (a speed.Factor, computed without this claim) under the
    speed ``rule``; a timing by its band on the value and on each of its ``repeats`` (the value of
    every pass of the measurement: ledger.passes)."""
    if value is None:
        return "missing", "", "no result file holds this value"
    if isinstance(value, dict):  # one statistic per row (source ``per``): a range, row by row
        return stochastic.rows(claim, value, values, spread)
    if claim.cls in ("exact", "echo") and claim.band is not None:
        return _judge_bound(claim, value)
    text = format_like(value, claim.published, claim.decimals)
    interval = (_parse(claim.published)
                or (None,) * 4  # pragma: no mutate (equivalent: (None,) * 5 has None at [3] too)
                )[3]
    if text == _published_text(claim) and not interval and claim.cls != "machine-bound":
        return "reproduced", text, ties.reason(value, claim.published, claim.decimals, text)
    if claim.cls in ("exact", "echo"):
        what = "exact claim" if claim.cls == "exact" else f"echo{rationale(claim)}"
        return "differs", text, claim.note or f"{what}: digits differ"
    if claim.cls == "round-off":
        return _judge_roundoff(claim, value, text)
    if claim.cls == "finite-difference":
        return _judge_finite_difference(claim, value, text)
    if claim.cls == "stochastic":
        return stochastic.judge(claim, value, text, values, spread)
    if claim.why == ALONE:
        return _judge_alone(claim, value, factor)
    if claim.raw_time and factor is not None and rule is not None:
        return _judge_raw_time(claim, value, factor, rule, repeats)
    return _judge_timing(claim, value, repeats)


def _judge_bound(claim, value):
    """A deterministic number the article states in words as a bound ("more than ten times"):
    its band is what the words admit (``null``: no bound on that side); reproduced when the
    value lies in it, the value shown with three significant digits."""
    ends = ("-inf", "inf")  # pragma: no mutate (equivalent: float() reads INF as inf)
    low, high = (float(side if b is None else b) for b, side in zip(claim.band, ends))
    words = claim.location.get("text", claim.published) if claim.location else claim.published
    reason = f"the article states it in words, {words!r}: a bound, {low:g} to {high:g}{rationale(claim)}"
    try:
        text = f"{float(value):.3g}"
    except (TypeError, ValueError):
        return "differs", str(value), join(reason, claim.note)
    if low <= float(value) <= high:
        return Judged("reproduced", text, reason, (low, high))
    return Judged("differs", text, join(reason, claim.note), (low, high))


def _judge_roundoff(claim, value, text):
    """Both values below the claim's tolerance (:func:`_below_tolerance`): its last bits move with
    the numerics; which numerics give the published digits is the evidence's to say
    (report.evidence_tables.citations), or how to make it."""
    return _below_tolerance(claim, value, text, "round-off", "its last bits move with the numerics (the "
                            "BLAS kernel, NumPy's and torch's code paths, the versions)")


def _judge_finite_difference(claim, value, text):
    """A difference quotient's error against the analytic gradient: both values below the claim's
    tolerance, which its rationale sizes from the truncation and cancellation errors of the step
    it uses (:func:`_below_tolerance`)."""
    return _below_tolerance(claim, value, text, "finite-difference error",
                            "an error of the method, not of the gradient")


def _below_tolerance(claim, value, text, what, means):
    """(verdict, text, reason): within tolerance when both values are below the claim's tolerance,
    the reason saying ``what`` the figure is and what that ``means``. A reproduced exact zero is no
    such figure: the two computations it compares gave the same bits (a tensor against itself
    would), so nothing is measured; where the article prints 0 the text already matched."""
    published = published_range(claim.published)[1]
    tol = claim.tolerance
    if float(value) == 0.0:
        why = (f"{claim.cls} claim reproduced as exactly 0: the two computations compared gave the same "
               f"bits, so nothing is measured at the level of {what} (the article prints {claim.published})")
        return "differs", text, join(why, claim.note)
    if tol is not None and abs(float(value)) <= tol and abs(published) <= tol:
        reason = f"{what}: both below {tol:g}{rationale(claim)}; {means}"
        return Judged("within tolerance", text, join(reason, claim.note), (-tol, tol))
    above = f"{claim.cls} claim above its tolerance {tol}{rationale(claim)}"
    return Judged("differs", text, join(above, claim.note), None if tol is None else (-tol, tol))


def _judge_timing(claim, value, repeats=()):
    """Inside the claim's band (or the article's own interval), which its rationale explains, the
    value and each of its ``repeats`` (ledger.passes); the reproduced value is shown at the
    precision that decides (0.093 s against 0.07-0.09 s)."""
    band = claim.band
    if band is None and (_parse(claim.published)
                         or (None,) * 4  # pragma: no mutate (equivalent: (None,) * 5 has None at [3] too)
                         )[3]:
        band = published_range(claim.published)  # the article's own interval
    if band is not None:
        low, high = loosened(band) if claim.about else band
        inside = low <= float(value) <= high
        verdict, counted = passes.judge(inside, repeats, lambda v: low <= v <= high)
        text = timing_text(value, claim, low, high)
        words = f" (the article's about {band[0]:g} to about {band[1]:g}: {ABOUT})" if claim.about else ""
        reason = f"machine-bound: accepted band {low:g} to {high:g}{words}{rationale(claim)}"
        return Judged(verdict, text, join(reason, counted and counted.sentence(), claim.note), (low, high))
    return passes.VERDICT, timing_text(value, claim), join(NO_YARDSTICK, claim.note)


# a time of another machine that nothing here measures this machine by: neither a match nor a difference
NO_YARDSTICK = ("machine-bound: a raw time of another CPU, with nothing here to judge it by (no band, and no "
                "other raw time of its article to give this machine's speed factor)")


ABOUT = "what rounds to each end at the digits it is written with"  # claims.loosened


def decisive_text(value, published, decimals, low, high):
    """``value`` written like ``published``, with as many more digits as it takes for the text to
    fall on the same side of [low, high] as the value does: what was judged, not a rounding that
    contradicts the verdict ("0.09 s" for 0.093 against 0.07-0.09 s reads "0.093 s")."""
    inside = low <= float(value) <= high
    text = format_like(value, published, decimals)
    for extra in range(1, 9):
        shown = published_range(text) if _parse(text) else None
        if shown is None or (low <= shown[1] <= high) == inside:
            return text
        text = format_like(value, _more_digits(published, extra))
    return text


def timing_text(value, claim, low=None, high=None):
    """A machine-bound ``value`` as the ledger writes it: a raw time as every time is written, in
    the timing tables too (formats.time_text: three significant digits, "0.000970" where the article
    printed "0.001"), with its published unit; any other (a ratio, a slope) like its claim's published
    string, never as that string reads (one digit more when they read alike: "20.20" for a published
    20.2). Beside a band [low, high], with the digits that put it on its side of the band
    (:func:`decisive_text`): the value that was judged, not one that rounding makes equal to the
    article's."""
    published, pattern, decimals = _published_text(claim), claim.published, claim.decimals
    parsed = _parse(pattern)
    if parsed is None:  # a published text, not a number: nothing to write like it
        return format_like(
            value, pattern,
            decimals,  # pragma: no mutate (equivalent: format_like writes a text without its decimals)
        )
    if claim.raw_time:
        _, space, unit, _ = parsed
        return f"{formats.time_text(value, low, high)}{space}{unit}"
    text = format_like(value, pattern, decimals)
    for extra in range(1, 9):  # pragma: no mutate (equivalent: extra 0 is the pattern again; 9 never needed)
        if text != published:
            break
        pattern, decimals = _more_digits(claim.published, extra), None
        text = format_like(value, pattern)
    return text if low is None else decisive_text(value, pattern, decimals, low, high)


def _more_digits(published, extra):
    """``published`` with ``extra`` more decimals in its number ("0.07-0.09 s" -> "0.090 s")."""
    number, space, unit, _ = _parse(published)
    mantissa, e, exponent = number.partition("e")
    mantissa = mantissa + ("" if "." in mantissa else ".") + "0" * extra
    return f"{mantissa}{e}{exponent}{space}{unit}"


ALONE = "timed-alone"  # the rationale of a time the article measured alone (published.yaml rationales)


def _judge_alone(claim, value, factor=None):
    """A time the article measured alone, measured here beside other jobs: not comparable,
    *inconclusive*; as information, what this machine's speed factor (from the article's code timed
    here: verdicts.raw_time_factors) makes of the published time."""
    text = timing_text(value, claim)
    info = ""  # pragma: no mutate (equivalent: join drops None as it drops "")
    if factor is not None:
        low, high = published_range(claim.published)
        unit = _parse(claim.published)[2]
        expected = " to ".join(f"{v / factor.factor:.3g}" for v in sorted({low, high})) + f" {unit}".rstrip()
        info = (f"as information, at this machine's speed factor for the article, {factor.factor:.3g}x (from "
                f"the article's code timed here), the published time would be about {expected} here")
    return Judged(passes.VERDICT, text, join(f"not comparable{rationale(claim)}", info, claim.note))


def _judge_raw_time(claim, value, factor, rule, repeats=()):
    """A raw time: consistent with this machine's speed factor for the article, computed without it
    (speed.judge), the value and each of its ``repeats`` (ledger.passes); the claim's own band said
    as information."""
    low_p, high_p = published_range(claim.published)
    inside, reason = speed.judge(low_p / float(value), high_p / float(value), factor, rule)
    low, high = speed.window(factor, rule)
    verdict, counted = passes.judge(
        inside, repeats, lambda v: speed.consistent(low_p / v, high_p / v, factor, rule))
    text = timing_text(value, claim)
    band = claim.band or ([low_p, high_p] if low_p != high_p else None)
    info = ""  # pragma: no mutate (equivalent: _join drops None as it drops "")
    if band is not None:
        where = "inside" if band[0] <= float(value) <= band[1] else "outside"
        info = (f"as information, the raw time lies {where} the claim's band {band[0]:g} to {band[1]:g}"
                f"{rationale(claim)}")
    window = (low_p / high, high_p / low)  # the times whose ratio published / time meets [low, high]
    return Judged(verdict, text, join(reason, counted and counted.sentence(), info, claim.note), window)


def raw_time_factors(claims, load, check=None):
    """{article: speed.Factor} from the claims marked ``raw_time`` that print one value (the prose's
    intervals are judged against the factor, they do not make it) and that the run reproduces from
    an undisturbed measurement (``check``: a disturbed.Check of ``load``, made here when None)."""
    ratios, check = {}, check or disturbed.Check(load)
    for claim in claims:
        low_p, high_p = published_range(claim.published) if claim.raw_time else (None, None)
        if not claim.raw_time or low_p != high_p or check.finding(claim):
            continue
        try:
            value = float(reproduced(claim.source, load)[0])
        except (FileNotFoundError, KeyError, ValueError):
            continue
        measured = yardstick.read(claim, load)  # the article's code timed here: like with like
        value = measured.article if measured is not None else value
        if value > 0:
            ratios.setdefault(claim.article, {})[claim.id] = high_p / value
    return speed.factors(ratios)


def evaluate(claims, load, spread=None, rule=None, article=None):
    """The ledger as a DataFrame. ``load(experiment, table)`` returns a results table; ``spread``
    (a seeds_evaluate.Spread, or None) is what the stochastic claims are judged against; ``rule``
    (a speed.Rule, from published.yaml's ``speed``; None: each raw time judged alone by its band) how
    a raw time is judged against its article's speed factor (:func:`raw_time_factors`); ``article``
    (a comparable.Article, or None: every claim taken as computed with the article's parameters)
    what the article's config plans: a claim computed with other parameters, or whose row this
    run's config left out, is judged "other parameters"."""
    check = disturbed.Check(load)  # one cross-check of the timings for the factors and the verdicts
    factors = raw_time_factors(claims, load, check) if rule is not None else {}
    rows, found = [], {}
    for claim in claims:
        _check_echo(claim, load)
        value, values = None, None
        try:
            value, values = reproduced(claim.source, load)
        except (FileNotFoundError, KeyError, ValueError):
            value, values = None, None
        found[claim.id] = value
        other = _other_parameters(claim, value, load, article) if article is not None else None
        window = None  # pragma: no mutate (equivalent: read only as `window or (nan, nan)`)
        article_code = ""  # the article's own code timed here, beside a time it judges
        if other is not None:
            verdict, text, reason = other
        elif (measured := yardstick.read(claim, load)) is not None:  # no value: none
            judged = yardstick.judge(claim, measured, lambda low, high: timing_text(value, claim, low, high),
                                     lambda v: timing_text(v, claim))
            (verdict, text, reason), window = judged, judged.window
            article_code = timing_text(measured.article, claim)
        else:
            factor = factors.get(claim.article)
            repeats = passes.values(claim.source, load) if claim.cls == "machine-bound" else []
            judged = judge(claim, value, values, spread, factor and factor.without(claim.id), rule, repeats)
            (verdict, text, reason), window = judged, getattr(judged, "window", None)
            verdict, reason = _disturbed(claim, verdict, reason, check)
        low, high = window or (np.nan, np.nan)
        rows.append({
            "id": claim.id, "article": claim.article, "section": claim.section,
            "claim": claim.claim, "published": claim.published,
            "article_code": article_code,
            "reproduced": text,
            "class": claim.cls, "verdict": verdict, "reason": reason,
            "accepted_low": float(low), "accepted_high": float(high),
        })
    _take_cells_verdicts(claims, {row["id"]: row for row in rows}, found)
    return pd.DataFrame(rows, columns=COLUMNS)


# the ledger's columns: accepted_low and accepted_high are the window that decided (Judged.window)
# article_code: the article's own code timed here (report.ledger.yardstick), beside a time it judges
BOUNDS = ("accepted_low", "accepted_high")
COLUMNS = ["id", "article", "section", "claim", "published", "article_code", "reproduced", "class", "verdict",
           "reason", *BOUNDS]
# what a machine-bound claim's row takes from this run's clocks: its time, the article code's, the
# window that judged them, and so the verdict and its reason (archive.verify_compare leaves them
# out of a comparison of two runs' ledgers)
FROM_THE_CLOCK = ("article_code", "reproduced", "verdict", "reason", *BOUNDS)


def _check_echo(claim, load):
    """Refuse a claim that published.yaml classes otherwise than the echo rule does (ledger.echoes);
    a claim whose mask the run lacks is left to its own verdict (missing)."""
    try:
        why = echoes.derivation(claim, load)
    except (FileNotFoundError, KeyError, ValueError):
        return
    echoes.check(claim, why)


def _take_cells_verdicts(claims, rows, values=None):
    """A prose claim that restates cells takes their verdict (ledger.restated) and the window of the
    cell that decided it, its reason saying whose (no window when its own digits decided: the
    digits are its rule): ``rows`` {id: row}, ``values`` {id: reproduced value}, which rewrites the
    prose's reproduced text with the digits that put it on its side of that window."""
    for prose_id, cell_ids in restated.restatements(claims).items():
        row = rows[prose_id]
        prose = next(c for c in claims if c.id == prose_id)
        judged = {i: (rows[i]["verdict"], rows[i]["reason"]) for i in cell_ids}
        verdict, reason, decider = restated.judge(prose, (row["verdict"], row["reason"]), judged)
        window = ""  # pragma: no mutate (equivalent: join drops "" as it drops None)
        if decider is not None:
            low, high = (float(rows[decider].get(k, np.nan)) for k in BOUNDS)
            row.update(zip(BOUNDS, (low, high)))
            if not (np.isnan(low) or np.isnan(  # pragma: no mutate (equivalent: a Judged window has both
                    high)):  # bounds or none, judged.Judged, so one NaN never comes)
                window = (f"the bounds shown, {low:g} to {high:g}, are the window of {decider}, "
                          "whose verdict decided")
                row["reproduced"] = _on_its_side(row["reproduced"], (values or {}).get(prose_id), low, high)
        row.update(verdict=verdict, reason=join(reason, window, prose.note))


def _on_its_side(text, value, low, high):
    """``text`` (a reproduced number as written) with the digits that put it on the side of
    [low, high] that ``value`` lies on (:func:`decisive_text`); ``text`` itself when it is no number
    or no ``value`` is known."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return text
    return decisive_text(number, text, None, low, high) if _parse(text) else text


def _disturbed(claim, verdict, reason, check):
    """(verdict, reason): "disturbed" when the claim's value comes from a disturbed measurement,
    its reason naming it and saying what these times would give (disturbed.Check)."""
    found = check.finding(claim) if verdict != "missing" else ""
    if not found:
        return verdict, reason
    return disturbed.VERDICT, join(found, f"judged on these times it would be {verdict}", reason)


def _other_parameters(claim, value, load, article):
    """(verdict, text, reason) of a claim not comparable with the article (report.comparable), or None."""
    if value is None:
        why = comparable.left_out(claim, article)
        return (comparable.VERDICT, "", f"not computed: {why} (this run's config left out the article's "
                                        "row)") if why else None
    why = comparable.differing(claim, load, article)
    if not why:
        return None
    text = (stochastic.span(value.values(), claim.published) if isinstance(value, dict)
            else format_like(value, claim.published, claim.decimals))
    return comparable.VERDICT, text, f"computed with other parameters than the article's: {why}"


def summary(ledger):
    """Counts of each verdict per article (rows: article, columns: verdicts)."""
    table = pd.crosstab(ledger["article"], ledger["verdict"])
    return table.reindex(columns=[v for v in VERDICTS if v in table.columns])


def exact_failures(ledger):
    """Claims classed exact or echo that did not reproduce (the CI gate on this machine kind)."""
    return ledger[ledger["class"].isin(["exact", "echo"]) & (ledger["verdict"] != "reproduced")]
