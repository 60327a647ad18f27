"""The ledger at a glance: every numeric claim's published value against the reproduced one.

``results/figures/ledger_overview.svg``, drawn from ``results/ledger.csv`` and the bands and
tolerances of ``config/published.yaml``:

(a) published against reproduced, log-log (the claims span 1e-16 to 1e9), one point per claim,
    coloured by class, shaped by verdict, on the diagonal when they agree; an exact zero sits on
    the axes' "0" line; a machine-bound claim's accepted band is a vertical bar at its published
    value, a tolerance (round-off, finite-difference) a shaded square (both values below it: within
    tolerance); a published range a horizontal bar; a missing value a mark under the axis.
(b) the claims judged by a window (the tolerated classes left out: a ratio of two round-off figures
    says nothing), as reproduced / published on a log axis, one column per claim, named by its id:
    the window that decided its verdict as a bar around the published 1, the point inside it or not
    (the ledger's accepted_low and accepted_high, nothing else: no bar where the ledger gives none).

The windows are the ledger's (``accepted_low``, ``accepted_high``: judged.Judged), the rule that
decided each verdict: a band, the times a raw time's speed factor admits, a one-sided bound drawn
open on its side (an arrow), the seed interval of a stochastic claim; each drawn in its claim's
class colour, the class the ledger gives it.

The title counts the whole ledger as LEDGER.md does (report.ledger.headline.counts: the same
numbers, the ledger's verdict names); the foot names the claims not drawn (:func:`left_out`: a
published value that is no number, such as True, a shape or an array) with their verdicts.
"""

import textwrap

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from attnrepro.report.ledger import headline, verdicts
from attnrepro.report.ledger.claims import TOLERATED
from attnrepro.report.products import style

# an echo of the configuration in grey: not a computation
CLASS_COLORS = {"exact": "#2471a3", "echo": "#95a5a6", "round-off": "#8e44ad", "finite-difference": "#1e8449",
                "stochastic": "#d68910", "machine-bound": "#c0392b"}
VERDICT_MARKERS = {"reproduced": "o", "within tolerance": "D", "differs": "X", "missing": "v",
                   "other parameters": "s",  # computed with other parameters: not the article's number
                   "disturbed": "P",  # read from a timing that another process slowed
                   "inconclusive": "h"}  # a timing whose passes straddle its band
ZERO = 1e-18  # where an exact zero is drawn on the log axes (tick "0")


def _value(text):
    """(low, high) of a number or range as printed (a "%" divides by 100), or None for text."""
    try:
        return verdicts.published_range(text)
    except (ValueError, AttributeError):
        return None


def numeric_rows(table, claims):
    """One row per claim whose published string is a number or range: its values, class, verdict,
    and the band or tolerance published.yaml gives it."""
    by_id = {c.id: c for c in claims}
    rows = []
    for _, row in table.iterrows():
        published = _value(str(row["published"]))
        if published is None or row["id"] not in by_id:
            continue
        claim = by_id[row["id"]]
        reproduced = _value(str(row["reproduced"])) if str(row["reproduced"]).strip() else None
        low, high = (np.nan, np.nan) if row["class"] in TOLERATED else window(row)
        rows.append({"id": row["id"], "class": row["class"], "verdict": row["verdict"],
                     "pub_low": published[0], "pub_high": published[1],
                     "rep_low": reproduced[0] if reproduced else np.nan,
                     "rep_high": reproduced[1] if reproduced else np.nan,
                     "band_low": low, "band_high": high,
                     "tolerance": claim.tolerance if claim.tolerance is not None else np.nan})
    return pd.DataFrame(rows, columns=ROWS)


ROWS = ["id", "class", "verdict", "pub_low", "pub_high", "rep_low", "rep_high", "band_low", "band_high",
        "tolerance"]


def window(row):
    """(low, high) of the window that decided a ledger row (NaN, NaN without one)."""
    def number(key):
        try:
            return float(row.get(key, ""))
        except (TypeError, ValueError):
            return np.nan
    return number("accepted_low"), number("accepted_high")


def _floor(values):
    """``values`` with exact zeros (and negatives' magnitudes below the floor) at ZERO."""
    values = np.abs(np.asarray(values, dtype=float))
    return np.where(values > ZERO, values, ZERO)


def _overview(ax, rows):
    """Panel (a): published against reproduced, log-log."""
    for tolerance in sorted(rows["tolerance"].dropna().unique()):
        ax.fill_between([ZERO, tolerance], ZERO, tolerance, color=CLASS_COLORS["round-off"], alpha=0.08,
                        label=f"tolerance {tolerance:g} (round-off, finite-difference): both values below it")
    bands = rows.dropna(subset=["band_low"])
    top = max(_floor(rows[["pub_high", "rep_high"]].max()).max() * 3, 10)
    _windows(ax, _floor(bands["pub_high"]), bands["band_low"], bands["band_high"], bands["class"], top)
    ranges = rows[rows["pub_low"] < rows["pub_high"]]
    ax.hlines(_floor(ranges["rep_high"].fillna(ZERO)), _floor(ranges["pub_low"]), _floor(ranges["pub_high"]),
              color="#555555", lw=1.5, label="a published range")
    low, high = ZERO, top
    ax.plot([low, high], [low, high], color="#999999", lw=0.8, ls="--", label="reproduced = published")
    for (cls, verdict), group in rows.groupby(["class", "verdict"]):
        missing = group["rep_high"].isna()
        y = np.where(missing, ZERO / 10, _floor(group["rep_high"].fillna(0)))
        ax.scatter(_floor(group["pub_high"]), y, s=22, marker=VERDICT_MARKERS.get(verdict, "o"),
                   color=CLASS_COLORS.get(cls, "#333333"), alpha=0.8, linewidths=0.6,
                   edgecolors="white" if verdict != "differs" else None)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(ZERO / 30, high)
    ax.set_ylim(ZERO / 30, high)
    decades = range(-16, int(np.log10(high)) + 1)  # a tick on every decade, "0" on its own line
    ticks, labels = [ZERO] + [10.0 ** e for e in decades], ["0"] + [f"1e{e}" for e in decades]
    ax.set_xticks(ticks, labels, rotation=90, fontsize=6.5)
    ax.set_yticks(ticks, labels, fontsize=6.5)
    ax.minorticks_off()
    ax.set_xlabel("published value (log; 0 on its own line)")
    ax.set_ylabel("reproduced value (log; a missing one below the axis)")
    ax.set_title(f"(a) the {len(rows)} claims whose published value is a number, published against "
                 "reproduced", fontsize=9)
    ax.grid(alpha=0.25)


def _ratios(ax, rows):
    """Panel (b): reproduced / published for the claims judged by a band, a range or seeds."""
    judged = rows["class"].isin(["machine-bound", "stochastic"]) | rows["band_low"].notna()
    picked = rows[judged & ~rows["class"].isin(TOLERATED) & (rows["pub_high"] != 0)]
    picked = picked.sort_values(["class", "id"]).reset_index(drop=True)
    x = np.arange(len(picked))
    centre = picked["pub_high"].where(picked["pub_low"] == picked["pub_high"],
                                      (picked["pub_low"] + picked["pub_high"]) / 2)
    drawn = picked["band_low"].notna() & picked["band_high"].notna()  # the ledger's window, no other
    low, high = (picked[side][drawn] / centre[drawn] for side in ("band_low", "band_high"))
    _windows(ax, x[drawn.to_numpy()], low, high, picked["class"][drawn], TOP_RATIO)
    for (cls, verdict), group in picked.dropna(subset=["rep_high"]).groupby(["class", "verdict"]):
        ax.scatter(group.index, group["rep_high"] / centre[group.index], s=24, alpha=0.85,
                   marker=VERDICT_MARKERS.get(verdict, "o"), color=CLASS_COLORS.get(cls, "#333333"))
    ax.axhline(1.0, color="#999999", lw=0.8, ls="--")
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))  # 0.5, 1, 2, 5, 10, ...
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_locator(LogLocator(base=10, subs=np.arange(2, 10)))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(x, picked["id"], rotation=90, fontsize=5.5)  # each column named by its claim
    ax.set_xlim(-0.7, len(picked) - 0.3)
    missing = int(picked["rep_high"].isna().sum())
    ax.set_xlabel(f"{len(picked)} claims judged by a window (by class, then id)"
                  + (f"; {missing} missing, not drawn" if missing else ""), fontsize=8)
    ax.set_ylabel("reproduced / published (log)")
    ax.set_ylim(top=TOP_RATIO)
    ax.set_title("(b) the claims judged by a window: the one that decided each verdict", fontsize=9)
    ax.grid(alpha=0.25, axis="y")


TOP_RATIO = 1e3  # panel (b)'s top: an open side drawn up to it


def _windows(ax, x, low, high, classes, top):
    """Each window a bar at ``x`` in its class colour; an open side (inf) up to ``top`` with an arrow."""
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    if not len(low):
        return
    bottom = max(ZERO, ax.get_ylim()[0]) if ax.get_yscale() == "log" else ZERO
    colours = [CLASS_COLORS.get(c, "#333333") for c in classes]
    shown_high = np.where(np.isinf(high), top, high)
    shown_low = np.where(np.isinf(low) | (low <= 0), bottom, low)
    ax.vlines(x, shown_low, shown_high, colors=colours, alpha=0.35, lw=4, label="the window that decided")
    for side, ends, marker in ((np.isinf(high), shown_high, "^"), (np.isinf(low), shown_low, "v")):
        if side.any():
            ax.scatter(np.asarray(x)[side], ends[side], marker=marker, s=28, alpha=0.6,
                       color=[c for c, s in zip(colours, side) if s],
                       label="an open side (a one-sided bound)")


def _legend(fig, ax, table, rows):
    from matplotlib.lines import Line2D

    handles, labels = ax.get_legend_handles_labels()
    for cls, colour in CLASS_COLORS.items():
        if (rows["class"] == cls).any():
            handles.append(Line2D([], [], ls="", marker="s", color=colour))
            labels.append(f"class {cls} ({int((rows['class'] == cls).sum())} drawn)")
    for verdict in headline.verdict_names(rows):
        handles.append(Line2D([], [], ls="", marker=VERDICT_MARKERS.get(verdict, "o"), color="#444444"))
        labels.append(f"{verdict} ({int((rows['verdict'] == verdict).sum())} drawn)")
    # the claims not drawn under the legend, as its title at the foot (the layout makes room for it)
    fig.legend(handles, labels, loc="outside lower center", ncols=4, fontsize=7, frameon=False,
               title="\n".join(textwrap.wrap(foot(table, rows), 190)), title_fontsize=7)


def left_out(table, rows):
    """The ledger's claims that ``rows`` (numeric_rows) does not draw: their rows of ``table``."""
    return table[~table["id"].isin(set(rows["id"]))]


def title(table, rows):
    """The figure's title: the ledger's counts (headline.counts, as LEDGER.md) and how many drawn."""
    computed, echoes = headline.counts(table), headline.counts(table, computed=False)
    echoes = {v: n for v, n in echoes.items() if n}
    return (f"The ledger: {len(table)} claims of the three articles, {len(rows)} drawn (colour: class; "
            f"marker: verdict), {len(table) - len(rows)} left out (named below)\n"
            f"{sum(computed.values())} computed: {headline.counts_sentence(computed)}\n"
            f"{sum(echoes.values())} echoes: {headline.counts_sentence(echoes)}")


def foot(table, rows):
    """The claims not drawn, by experiment, with why and their verdicts (one line or a few)."""
    out = left_out(table, rows)
    if out.empty:
        return "Every claim of the ledger is drawn."
    groups = out.groupby(out["id"].map(lambda i: ".".join(str(i).split(".")[:2])), sort=True).size()
    found = {v: int((out["verdict"] == v).sum()) for v in headline.verdict_names(out)}
    named = ", ".join(f"{g} ({n})" for g, n in groups.items())
    return (f"Left out: the {len(out)} claims whose published value is no number (True/False, a shape, an "
            f"array, a word): {named}; their verdicts: "
            f"{headline.counts_sentence({v: n for v, n in found.items() if n})}.")


def draw(table, claims):
    """The figure of the ledger ``table`` (results/ledger.csv) with the ``claims``' bands."""
    rows = numeric_rows(table, claims)
    fig, axes = style.figure(2, title(table, rows), width=13, height=8)
    _overview(axes[0][0], rows)
    _ratios(axes[0][1], rows)
    _legend(fig, axes[0][0], table, rows)
    return fig


def write(ledger_csv, published_path, svg_path):
    """Draw ``results/figures/ledger_overview.svg`` from the ledger and published.yaml."""
    from attnrepro.report.products import render

    table = pd.read_csv(ledger_csv, dtype=str, keep_default_na=False)
    render.write_figure(draw(table, verdicts.load_claims(published_path)), svg_path)
    return svg_path
