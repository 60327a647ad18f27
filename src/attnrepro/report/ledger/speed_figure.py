"""This machine's speed against each article's machine: the raw times' ratios, the factor, its band.

``results/figures/machine_speed.svg``, drawn from ``results/speed.csv`` (the ledger's, one row per
article: attnrepro.report.ledger.speed): one panel per article, one point per raw time, its ratio
published / reproduced on a log axis; the speed factor (their median) as a line with its 95%
bootstrap interval shaded, and, where the factor judged the raw times (speed.csv's ``band``; not
where each was judged against the article's own code timed beside it, report.ledger.yardstick),
beside each point the window it was judged by: the factor of the article's *other* raw times
(speed.Factor.without) divided and multiplied by ``speed.band`` of config/published.yaml. A point
outside its window is a raw time that does not move with the machine: the ledger's finding. The ticks
read as plain numbers (0.5, 1, 2, 5, ...); the legend stands under the panels, where it hides no
point.
"""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from attnrepro.report.ledger import speed

COLOR = "#c0392b"


def draw(factors, band):
    """The figure for ``factors`` ({article: speed.Factor}) and the consistency ``band``."""
    articles = sorted(factors) or ["-"]
    fig, axes = plt.subplots(1, len(articles), figsize=(4.4 * len(articles), 5.2), squeeze=False,
                             layout="constrained")
    for ax, article in zip(axes[0], articles):
        factor = factors.get(article)
        if factor is None:
            ax.text(0.5, 0.5, "no raw time in this run", ha="center", va="center", transform=ax.transAxes)
            continue
        names = list(factor.ratios)
        x = np.arange(len(names))
        ax.axhspan(factor.low, factor.high, color=COLOR, alpha=0.15)
        ax.axhline(factor.factor, color=COLOR, lw=1.5)
        if band == band:  # not NaN
            _windows(ax, factor, names, band)
        ax.scatter(x, list(factor.ratios.values()), color="#2471a3", zorder=3)
        ax.set_yscale("log")
        plain_log_ticks(ax.yaxis)
        ax.set_xticks(x, [n.split(".", 1)[1] for n in names], rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("published / time here")
        ax.set_title(f"article {article}: {len(names)} raw times, factor {factor.factor:.3g}x", fontsize=9)
        ax.grid(alpha=0.25, axis="y")
    _legend(fig, band)
    fig.suptitle("This machine's speed against each article's machine, from the raw times", fontsize=10)
    return fig


def _windows(ax, factor, names, band):
    """Beside each raw time, the window it was judged by: the others' factor x/ ``band``."""
    for i, name in enumerate(names):
        others = factor.without(name)
        if others is not None:
            ax.vlines(i, others.factor / band, others.factor * band, color="#555555", lw=3, alpha=0.35)


def _legend(fig, band):
    """One legend under the panels (the layout makes room for it), where it can hide no point."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Line2D([], [], ls="", marker="o", color="#2471a3"), Line2D([], [], color=COLOR, lw=1.5),
               Patch(color=COLOR, alpha=0.15)]
    labels = ["a raw time's ratio", "the article's factor (median of its ratios)",
              "95% interval of the factor"]
    if band == band:  # not NaN
        handles.append(Line2D([], [], color="#555555", lw=3, alpha=0.35))
        labels.append(f"its window: within {band:g}x of the factor of the other raw times")
    fig.legend(handles, labels, loc="outside lower center", ncols=2, fontsize=7, frameon=False)


def plain(value, _=None):
    """A tick label as a plain number: 0.5, 3, 20 (not 5x10^-1, 3x10^0)."""
    return f"{value:g}"


def plain_log_ticks(axis):
    """Ticks of a log axis at 1, 2 and 5 times each power of ten, labelled as plain numbers; the
    other integer multiples unlabelled minor ticks."""
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(plain))
    axis.set_minor_locator(LogLocator(base=10, subs=(3.0, 4.0, 6.0, 7.0, 8.0, 9.0)))
    axis.set_minor_formatter(NullFormatter())


def write(speed_csv, svg_path):
    """Draw ``results/figures/machine_speed.svg`` from the ledger's ``results/speed.csv``."""
    import pandas as pd

    from attnrepro.report.products import render

    table = pd.read_csv(speed_csv, dtype={"article": str}, keep_default_na=False)
    band = float(table["band"].iloc[0]) if len(table) and table["band"].iloc[0] != "" else float("nan")
    render.write_figure(draw(speed.read(speed_csv), band), svg_path)
    return svg_path
