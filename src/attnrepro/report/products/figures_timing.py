"""Figures of the timing experiments: time against length (log-log), the cache's speed-up, peak memory.

Drawing only: every plotted number is a column of the Parquet. Fitted lines are drawn
with the experiment's stored slope through the centroid of the points in the log-log
plane (where a least-squares line passes), so nothing is refitted here. A point read from a
disturbed measurement carries the mark of products.disturbance, and a fit or interval over partly
disturbed points says how many in its label (:func:`fit_label`).
"""

import numpy as np
import pandas as pd

from attnrepro.report.products import disturbance, style

TIME_MS = "time (ms, machine-bound, log scale)"
REFERENCE = {"color": style.COLORS["other"], "ls": ":", "lw": 1.2}
# what a subtitle says of the slopes and the ratio: that they can transfer, never that they do
TRANSFERS_SLOPES = "the slopes can transfer between machines: the ledger judges whether they do"
TRANSFERS_RATIO = "the ratio can transfer between machines: the ledger judges whether it does"
MARKED_LABEL = f"{disturbance.MARK}: disturbed measurement (another process held the core)"


def fit_label(slope, disturbed):
    """A fitted slope's label, with how many of its points were disturbed: "fitted slope 2.51 (3 of 4
    points disturbed)"."""
    return disturbance.counted(f"fitted slope {slope:.2f}", disturbed)


def interval_label(low, high, disturbed):
    """The label of a slope's 95% interval over ``disturbed`` points (disturbance.counted)."""
    return disturbance.counted(f"95% interval [{low:.2f}, {high:.2f}]", disturbed)


def _mark(ax, x, y, disturbed):
    """The disturbance mark above each point of (x, y) read from a disturbed measurement, and once a
    legend entry saying what it means."""
    disturbed = np.asarray(disturbed, dtype=bool)
    for xi, yi in zip(np.asarray(x)[disturbed], np.asarray(y)[disturbed]):
        ax.annotate(disturbance.MARK, (xi, yi), textcoords="offset points", xytext=(0, 4), ha="center",
                    fontsize=12, fontweight="bold")
    if disturbed.any() and MARKED_LABEL not in [h.get_label() for h in ax.get_lines()]:
        ax.plot([], [], " ", label=MARKED_LABEL)


def _loglog(ax, x, y, slope, xlabel, marker_label, colour, disturbed):
    """Points (the disturbed ones marked), their stored fit and the slope-2 reference on log-log axes."""
    ax.plot(x, y, "o", color=colour, label=marker_label)
    _mark(ax, x, y, disturbed)
    style.power_law(ax, x, y, slope, fit_label(slope, disturbed), color=colour, lw=1.2)
    style.power_law(ax, x, y, 2.0, "slope 2 (quadratic law)", **REFERENCE)
    style.log2_axis(ax, x, xlabel)
    ax.set_yscale("log")
    ax.set_ylabel(TIME_MS)
    ax.grid(alpha=0.3, which="both")


def draw_attention_cost_loglog(load):
    """000 and 001, the n² cost: time of one attention against the length, three grids, log-log."""
    cost = load("quadratic_cost").sort_values("n")
    causal = load("causal_timing").sort_values("T")
    grid, fit = load("timing_exponent", "points").sort_values("n"), load("timing_exponent").iloc[0]
    fig, axes = style.figure(3, style.sections_title(
        ("quadratic_cost", "causal_timing"),
        f"time of one attention against the length (times machine-bound; {TRANSFERS_SLOPES})"), width=15)
    a, b, c = axes[0]
    _loglog(a, cost["n"], cost["mean_seconds"] * 1000, cost["loglog_slope"].iloc[0],
            "n (sequence length, log\u2082 scale)", f"mean of {cost['runs'].iloc[0]} runs", "C0",
            disturbance.flags(cost))
    a.set_title(f"(a) 000: float32, d = {cost['d'].iloc[0]}", fontsize=9)
    _loglog(b, causal["T"], causal["min_ms"], causal["loglog_slope"].iloc[0],
            "T (sequence length, log\u2082 scale)", "minimum over the trials", "C1",
            disturbance.flags(causal))
    b.set_title(f"(b) 001: causal float64, d_k = {causal['d_k'].iloc[0]}", fontsize=9)
    c.plot(grid["n"], grid["median_seconds"] * 1000, "x", color=style.COLORS["other"],
           label=f"median of {fit['repeats']} sweeps")
    disturbed = disturbance.flags(grid)
    _mark(c, grid["n"], grid["median_seconds"] * 1000, disturbed)
    _loglog(c, grid["n"], grid["min_seconds"] * 1000, fit["slope"], "n (sequence length, log\u2082 scale)",
            f"minimum of {fit['repeats']} sweeps", "C2", disturbed)
    c.plot([], [], " ", label=interval_label(fit["ci_low"], fit["ci_high"], disturbed))
    if pd.notna(fit["regime_n_low"]):  # a quadratic regime was found
        regime = disturbed[(grid["n"] >= fit["regime_n_low"]) & (grid["n"] <= fit["regime_n_high"])]
        c.axvspan(fit["regime_n_low"], fit["regime_n_high"], color="C2", alpha=0.1,
                  label=disturbance.counted(f"local slope within 2 \u00b1 {fit['band']:g} "
                                            f"(slope {fit['regime_slope']:.2f})", regime))
    c.set_title(f"(c) 001, beyond the article: log grid, d_k = {fit['d_k']}", fontsize=9)
    for ax in (a, b, c):
        ax.legend(fontsize=7, loc="upper left")
    return fig


def draw_kv_speedup_curve(load):
    """001, the key-value cache: generation time without and with the cache, and their ratio, by length."""
    df = load("kv_speedup").sort_values("generated")
    single = load("kv_cache").iloc[0]
    r = df.iloc[0]
    fig, axes = style.figure(2, style.section_title("kv_speedup", (
        f"toy decoder: {r['layers']} layers, {r['heads']} heads, d = {r['d']}, prompt {r['prompt']}\n"
        f"(times machine-bound; {TRANSFERS_RATIO})")))
    times, ratio = axes[0]
    disturbed = disturbance.flags(df)
    for column, label, colour in (("min_seconds_without_cache", "without cache", "without"),
                                  ("min_seconds_with_cache", "with cache", "with")):
        times.plot(df["generated"], df[column], "o-", color=style.COLORS[colour], label=label)
        _mark(times, df["generated"], df[column], disturbed)
    times.set_yscale("log")
    times.set_ylabel("generation time (s, machine-bound, log scale)")
    times.set_title(f"(a) minimum of {r['repeats']} sweeps", fontsize=9)
    ratio.plot(df["generated"], df["speedup"], "o-", color="C2", label="speed-up, minimum times")
    _mark(ratio, df["generated"], df["speedup"], disturbed)
    ratio.plot([single["generated"]], [single["speedup"]], "*", ms=12, color="C3",
               label="the listing's run (each timed once)")
    _mark(ratio, [single["generated"]], [single["speedup"]], disturbance.flags(load("kv_cache")))
    ratio.set_ylabel("speed-up: time without / time with cache (ratio)")
    ratio.set_title("(b) speed-up against the generated length", fontsize=9)
    for ax in (times, ratio):
        style.log2_axis(ax, sorted(set(df["generated"]) | {single["generated"]}),
                        "rows generated after the prompt (log\u2082 scale)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7, loc="upper left")
    return fig


def draw_score_memory_curve(load):
    """Beyond 000's n² cost: traced peak memory of one attention against n² x bytes of its score matrix."""
    df = load("score_memory")
    fig, axes = style.figure(2, style.section_title(
        "score_memory", f"d = {df['d'].iloc[0]}, peak traced by tracemalloc during one call"))
    peak, ratio = axes[0]
    for i, (name, rows) in enumerate(df.sort_values("n").groupby("procedure")):
        colour = f"C{i}"
        peak.plot(rows["n"], rows["peak_mib"], "o", color=colour, label=f"{name}: traced peak")
        peak.plot(rows["n"], rows["formula_mib"], "--", color=colour,
                  label=f"{name}: n\u00b2 \u00d7 {rows['bytes_per_value'].iloc[0]} bytes")
        ratio.plot(rows["n"], rows["peak_over_formula"], "o-", color=colour, label=name)
    peak.set_yscale("log")
    peak.set_ylabel("memory (MiB, log scale)")
    peak.set_title("(a) peak against the score matrix", fontsize=9)
    ratio.set_ylabel("peak / (n\u00b2 \u00d7 bytes) (score-sized matrices alive)")
    ratio.set_ylim(bottom=0)
    ratio.set_title("(b) how many score matrices at once", fontsize=9)
    for ax in (peak, ratio):
        style.log2_axis(ax, sorted(df["n"].unique()), "n (sequence length, log\u2082 scale)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    return fig
