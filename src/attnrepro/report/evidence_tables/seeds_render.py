"""The seed distribution's products: its CSV, its Markdown table and its SVG.

:func:`write` places each published training figure among the seeds
(:mod:`attnrepro.report.evidence_tables.seeds_evaluate`) and writes its three products (paths:
``attnrepro.evidence.SEEDS``): the CSV and the Markdown table (one row per claim), and the SVG
(per-token and per-sequence accuracy by L, every seed a point, the published mean and minimum
marked). The report job runs it (``workflow/rules/evidence.smk``, target ``seeds``); by hand:

    python -m attnrepro.report seeds --published config/published.yaml \
        --csv s.csv --md s.md --svg s.svg --inputs results/data/001/train/sort-L*-seed*.parquet
"""

import logging

import numpy as np
import pandas as pd

from attnrepro.run import io
from attnrepro.report.evidence_tables.seeds_evaluate import ARTICLE_SEEDS, LABELS, evaluate, is_true
from attnrepro.report.ledger import verdicts
from attnrepro.report.products import render, results

log = logging.getLogger("attnrepro.report")


def markdown(table):
    shown = pd.DataFrame(
        {
            "task": table["task"],
            "L": table["L"],
            "figure": [f"{LABELS.get(c, c)}, {s}" for c, s in zip(table["column"], table["statistic"])],
            "published": table["published"],
            "seeds": table["n_seeds"],
            "per seed: min / median / max": [
                f"{a:.3f} / {b:.3f} / {c:.3f}"
                for a, b, c in zip(table["seed_min"], table["seed_median"], table["seed_max"])
            ],
            "percentile per seed": [f"{p:.0f}" for p in table["seed_percentile"]],
            f"seeds 0-{ARTICLE_SEEDS - 1} here": [f"{v:.3f}" for v in table["first_seeds_value"]],
            "percentile among 3-seed statistics": [f"{p:.0f}" for p in table["subset_percentile"]],
            "95% interval of the 3-seed statistic": [
                f"{a:.3f} to {b:.3f}" for a, b in zip(table["interval_low"], table["interval_high"])
            ],
            "inside": ["yes" if is_true(v) else "no" for v in table["inside_interval"]],
        }
    )
    note = (
        "Percentiles are mid-rank (share below, plus half of the share equal). The 3-seed "
        f"statistic is computed over {table['method'].iloc[0]} (exact enumeration, no normal "
        "approximation); its interval is the 2.5% and 97.5% quantiles. What the article's own code "
        "gives here: the ledger's column article_code (`snakemake --cores 2 listings`)."
    )
    return render.markdown(
        render.Table(shown, note=note),
        title="Seed distributions: the published training figures among the seeds measured here",
        article="001",
    )


def draw(table, frame, k=ARTICLE_SEEDS):
    """Per-token and per-sequence accuracy by L: every seed a point (seeds 0..k-1 filled),
    the published mean (red bar) and minimum (red triangle), the 95% interval of a k-seed mean."""
    from attnrepro.report.products import style

    tasks = sorted(set(table["task"])) if len(table) else sorted(set(frame["task"]))
    columns = [c for c in LABELS if c in frame.columns]
    fig, axes = style.figure(
        len(columns),
        style.section_title(
            "train", f"{', '.join(tasks)}: every seed a point ({_seed_count(frame)} seeds per L)"
        ),
        nrows=len(tasks),
    )
    for row, task in enumerate(tasks):
        runs = frame[frame["task"] == task]
        lengths = sorted(runs["L"].unique())
        for col, column in enumerate(columns):
            ax = axes[row][col]
            for x, L in enumerate(lengths):
                at = runs[runs["L"] == L].sort_values("seed")
                jitter = ((at["seed"].to_numpy() * 0.6180339) % 1 - 0.5) * 0.36
                article = at["seed"] < k
                ax.scatter(
                    x + jitter[~article],
                    at.loc[~article, column],
                    s=14,
                    facecolors="none",
                    edgecolors=style.COLORS["with"],
                    linewidths=0.8,
                    label="a seed (measured here)" if x == 0 else None,
                )
                ax.scatter(
                    x + jitter[article],
                    at.loc[article, column],
                    s=16,
                    color=style.COLORS["with"],
                    label=f"seeds 0-{k - 1} (the default run)" if x == 0 else None,
                )
                claims = table[
                    (table["task"] == task) & (table["L"].astype(str) == str(L)) & (table["column"] == column)
                ]
                for _, c in claims.iterrows():
                    published = float(np.mean(verdicts.published_range(c["published"])))
                    if c["statistic"].startswith("mean"):
                        ax.plot(
                            [x - 0.3, x + 0.3],
                            [published] * 2,
                            color=style.COLORS["without"],
                            lw=2,
                            label="published mean (3 seeds)" if x == 0 else None,
                        )
                        ax.plot(
                            [x + 0.34] * 2,
                            [c["interval_low"], c["interval_high"]],
                            color="black",
                            lw=3,
                            alpha=0.35,
                            label=f"95% interval of a {k}-seed mean here" if x == 0 else None,
                        )
                    elif c["statistic"].startswith("min"):
                        ax.plot(
                            [x],
                            [published],
                            marker="v",
                            ms=7,
                            color=style.COLORS["without"],
                            ls="none",
                            label="published minimum (3 seeds)" if x == 0 else None,
                        )
            ax.set_xticks(range(len(lengths)), [f"L = {L}" for L in lengths])
            ax.set_xlim(-0.6, len(lengths) - 0.4)
            ax.set_ylabel(f"{LABELS[column]} ({task}, 500 test questions)")
            ax.grid(alpha=0.3, axis="y")
            ax.legend(fontsize=7, loc="lower left")
    return fig


def _seed_count(frame):
    counts = frame.groupby(["task", "L"])["seed"].nunique()
    return str(counts.min()) if counts.min() == counts.max() else f"{counts.min()}-{counts.max()}"


def write(published_path, paths, csv_path, md_path, svg_path, k=ARTICLE_SEEDS):
    load = results.Loader(paths)
    table = evaluate(verdicts.load_claims(published_path), load, k)
    with io.atomic_path(csv_path) as tmp:
        table.to_csv(tmp, index=False)
    empty = "# Seed distributions\n\nNo stochastic claim of the published values reads these trainings.\n"
    io.write_text(md_path, markdown(table) if len(table) else empty)
    render.write_figure(draw(table, load("train"), k), svg_path)
    log.info("seed distributions: %d claims over %d trainings", len(table), len(paths))
    return 0
