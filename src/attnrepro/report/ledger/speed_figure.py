"""This machine's speed against each article's machine: the raw times' ratios, the factor, its band.

``results/figures/machine_speed.svg``, drawn from ``results/speed.csv`` (the ledger's, one row per
article: attnrepro.report.ledger.speed): one panel per article, one point per raw time, its ratio
published / reproduced on a log axis; the speed factor (their median) as a line with its 95%
bootstrap interval shaded, and the band within which a raw time is consistent with it (the factor
divided and multiplied by ``speed.band`` of config/published.yaml) dashed. A point outside the
dashed lines is a raw time that does not move with the machine: the ledger's finding.
"""

import matplotlib.pyplot as plt
import numpy as np

from attnrepro.report.ledger import speed

COLOR = "#c0392b"


def draw(factors, band):
    """The figure for ``factors`` ({article: speed.Factor}) and the consistency ``band``."""
    articles = sorted(factors) or ["-"]
    fig, axes = plt.subplots(1, len(articles), figsize=(4.2 * len(articles), 3.8), squeeze=False)
    for ax, article in zip(axes[0], articles):
        factor = factors.get(article)
        if factor is None:
            ax.text(0.5, 0.5, "no raw time in this run", ha="center", va="center", transform=ax.transAxes)
            continue
        names = list(factor.ratios)
        x = np.arange(len(names))
        ax.axhspan(factor.low, factor.high, color=COLOR, alpha=0.15, label="95% interval of the factor")
        ax.axhline(factor.factor, color=COLOR, lw=1.5, label=f"factor {factor.factor:.3g}x (median)")
        if band == band:  # not NaN
            for edge in (factor.factor / band, factor.factor * band):
                ax.axhline(edge, color="#555555", lw=0.8, ls="--")
            ax.plot([], [], color="#555555", lw=0.8, ls="--", label=f"consistent: within {band:g}x of it")
        ax.scatter(x, list(factor.ratios.values()), color="#2471a3", zorder=3)
        ax.set_yscale("log")
        ax.set_xticks(x, [n.split(".", 1)[1] for n in names], rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("published / reproduced time")
        ax.set_title(f"article {article}: {len(names)} raw times", fontsize=9)
        ax.grid(alpha=0.25, axis="y")
        ax.legend(fontsize=7, loc="best")
    fig.suptitle("This machine's speed against each article's machine, from the raw times", fontsize=10)
    fig.tight_layout()
    return fig


def write(speed_csv, svg_path):
    """Draw ``results/figures/machine_speed.svg`` from the ledger's ``results/speed.csv``."""
    import pandas as pd

    from attnrepro.report.products import render

    table = pd.read_csv(speed_csv, dtype={"article": str}, keep_default_na=False)
    band = float(table["band"].iloc[0]) if len(table) and table["band"].iloc[0] != "" else float("nan")
    render.write_figure(draw(speed.read(speed_csv), band), svg_path)
    return svg_path
