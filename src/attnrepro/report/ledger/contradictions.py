"""No verdict that contradicts its own numbers: a ledger row re-judged from what it prints alone.

Every row of ``ledger.csv`` prints its reproduced value (``reproduced``) and the window of the rule
that decided its verdict (``accepted_low``, ``accepted_high``: judged.Judged; NaN where no window
decided, an open side -inf or inf). A reader who sees a value and a window can check the verdict
without the pipeline: a row *reproduced* or *within tolerance* with a window must print a value
inside it (each end of a printed range), a row that *differs* must print one outside it (some end).
A stochastic claim judged by seeds is the one exception, as its rule is (ledger.stochastic): its
window is an interval of 3-seed statistics, and what lies in it or not is the *published* value
(a published range: whether the two meet); a window that is the published range itself (a range
stated of every row, or a statistic inside the article's interval) judges the reproduced value.
:func:`problems` lists every row that fails this; the tests run it over ledgers built by the ledger's
own functions and the gate over the default run (report.ledger.golden), one function for both.

Pure Python: the table is any sequence of mappings (``DataFrame.to_dict("records")``).
"""

import math

from attnrepro.report.ledger.claims import published_range

INSIDE = ("reproduced", "within tolerance")  # the verdicts whose value lies in their window
OUTSIDE = ("differs",)  # the verdict whose value lies outside it


def _number(cell):
    """A bound as the ledger writes it (a float, or its text; "" or NaN: none) as a float, NaN for none."""
    try:
        return float(cell)
    except (TypeError, ValueError):
        return math.nan


def bounds(row):
    """(low, high) of a ledger row's window (``accepted_low``, ``accepted_high``), or None without one."""
    low, high = _number(row.get("accepted_low")), _number(row.get("accepted_high"))
    return None if math.isnan(low) or math.isnan(high) else (low, high)


def bounds_text(row):
    """A ledger row's window as LEDGER.md and the editions print it ("1.8 to 2.3"; "" without one)."""
    window = bounds(row)
    return "" if window is None else f"{window[0]:.4g} to {window[1]:.4g}"


def printed_ends(text):
    """(low, high) of a printed value or range, its unit stripped ("0.000970 s", "95-97%": 0.95 to
    0.97, as published_range reads it), or None when the text is no number."""
    try:
        return published_range(str(text))
    except ValueError:
        return None


def judged(row, low, high):
    """(ends, what, meets) of what ``row``'s window [low, high] judges: the reproduced value's ends
    (what: "the value it prints"), or for a stochastic row whose window is a seed interval the
    published value's ("the published value"), where ``meets`` says that meeting the window, not
    lying in it, is what counts (an interval overlaps a prediction interval)."""
    # a missing cell reads as any text that is no number: None
    reproduced = printed_ends(row.get("reproduced", ""))  # pragma: no mutate (equivalent: as said above)
    published = (printed_ends(row.get("published", ""))  # pragma: no mutate (equivalent: as said above)
                 if row.get("class") == "stochastic" else None)
    if published is None or published == (low, high):
        return reproduced, f"the value it prints, {row.get('reproduced')},", False
    return published, f"the published value, {row.get('published')},", True


def contradiction(row):
    """Why ``row`` (a ledger row: a mapping) contradicts its printed value and bounds, or "" when it
    does not (or cannot: no window, no number, or a verdict that claims no side of the window)."""
    verdict = row.get("verdict")
    low, high = _number(row.get("accepted_low")), _number(row.get("accepted_high"))
    if verdict not in INSIDE + OUTSIDE:  # claims no side of a window
        return ""
    if math.isnan(low) or math.isnan(high):  # no window decided
        return ""
    ends, what, meets = judged(row, low, high)
    if ends is None:
        return ""
    inside = (ends[0] <= high and low <= ends[1]) if meets else all(low <= end <= high for end in ends)
    if verdict in INSIDE and not inside:
        return f"{verdict}, but {what} lies outside its bounds {low:g} to {high:g}"
    if verdict in OUTSIDE and inside:
        return f"{verdict}, but {what} lies inside its bounds {low:g} to {high:g}"
    return ""


def problems(rows):
    """One line per row of ``rows`` (ledger rows: mappings) whose verdict its own printed value and
    bounds contradict: "claim <id>: <why>"."""
    return [f"claim {row.get('id')}: {why}" for row in rows if (why := contradiction(row))]
