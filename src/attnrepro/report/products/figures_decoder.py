"""Figures of article 001's NumPy decoder: attention maps, trainings, ablations, the block's parameters.

Drawing only: every plotted number is a column of the experiments' Parquet (means over
seeds are marked beside the seeds they summarise).
"""

import numpy as np
import pandas as pd

from attnrepro.report.products import style
from attnrepro.report.products.formats import ablation_runs, grid_runs, shared
from attnrepro.report.products.statistics import over_seeds

ACCURACIES = (("sequence_accuracy", "per-sequence accuracy (fraction of test questions)"),
              ("token_accuracy", "per-token accuracy (fraction of answer symbols)"))
SEPARATOR = "#c0392b"


def _head(weights, layer, head):
    return style.query_key_matrix(weights[(weights["layer"] == layer) & (weights["head"] == head)], "weight")


def _mark_separator(ax, position, label=None):
    """Outline the separator's row (as a query) and column (as a key)."""
    for span in (ax.axhspan, ax.axvspan):
        span(position - 0.5, position + 0.5, fill=False, edgecolor=SEPARATOR, lw=1.4, label=label)
        label = None


def _sequence_axes(ax, labels, fontsize):
    ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=fontsize)
    ax.set_yticks(range(len(labels)), labels, fontsize=fontsize)
    ax.set_xlabel("key j: position (symbol)")
    ax.set_ylabel("query i: position (symbol)")


def draw_attention_heatmap(load):
    """001, the attention map: the sharpest head's weights (largest mean weight), labelled by symbol."""
    main, weights = load("attention_map"), load("attention_map", "weights")
    r = main.loc[main["mean_max_weight"].astype(float).idxmax()]
    labels = style.sequence_labels(r["sequence"], r["first_query"])
    fig, axes = style.figure(1, style.section_title("attention_map", (
        f"layer {r['layer']}, head {r['head']} of run {r['run']} ({r['task']}, L = {r['L']}): answer rows "
        f"{r['deviation']}, mean weight {r['mean_max_weight']:.3f}")), width=9, height=8)
    ax = axes[0, 0]
    image = style.heatmap(ax, _head(weights, r["layer"], r["head"]), fmt="{:.2f}", vmin=0, vmax=1)
    _sequence_axes(ax, labels, 8)
    _mark_separator(ax, r["first_query"], "separator (SEP)")
    fig.legend(loc="outside lower right", fontsize=8)
    fig.colorbar(image, ax=ax, label="attention weight (probability)", shrink=0.8)
    return fig


def draw_attention_heads(load):
    """001, the attention map: every head of every layer as small multiples, same colour scale."""
    main, weights = load("attention_map"), load("attention_map", "weights")
    main = main.sort_values(["layer", "head"])
    layers, heads = main["layer"].nunique(), main["head"].nunique()
    r = main.iloc[0]
    fig, axes = style.figure(heads, style.section_title("attention_map", (
        f"all {layers * heads} heads of run {r['run']} ({r['task']}, L = {r['L']}) on [{r['sequence']}]")),
        nrows=layers, width=3.6 * heads, height=3.9 * layers + 0.8)
    labels = style.sequence_labels(r["sequence"], r["first_query"])
    for ax, (_, h) in zip(axes.ravel(), main.iterrows()):
        image = style.heatmap(ax, _head(weights, h["layer"], h["head"]), vmin=0, vmax=1, annotate=False)
        _sequence_axes(ax, labels, 5)
        _mark_separator(ax, h["first_query"])
        ax.set_title(f"layer {h['layer']}, head {h['head']}: {h['deviation']}\n"
                     f"mean weight {h['mean_max_weight']:.3f}", fontsize=8)
    fig.colorbar(image, ax=axes, label="attention weight (probability)", shrink=0.6)
    return fig


def draw_train_accuracy_points(load):
    """001, the experiment: accuracy per task and L, every seed a point, the mean over seeds marked."""
    runs = grid_runs(load("train"))
    means = over_seeds(runs, ["task", "L"], [c for c, _ in ACCURACIES])
    tasks, lengths = sorted(runs["task"].unique()), sorted(runs["L"].unique())
    seeds = sorted(runs["seed"].unique())
    fig, axes = style.figure(2, style.section_title("train", (
        f"{len(seeds)} seeds per task and L, true generation on {shared(runs, 'eval_sequences')} questions")))
    width = 0.5 / max(len(tasks), 1)
    for ax, (column, label) in zip(axes[0], ACCURACIES):
        for t, task in enumerate(tasks):
            colour, offset = f"C{t}", (t - (len(tasks) - 1) / 2) * width
            rows = runs[runs["task"] == task]
            spread = {s: (i - (len(seeds) - 1) / 2) * width / 4 for i, s in enumerate(seeds)}
            jitter = rows["seed"].map(spread)  # the seeds side by side
            ax.plot(rows["L"] + offset + jitter, rows[column], "o", color=colour, alpha=0.45, ms=5,
                    label=f"{task}: one seed")
            m = means[means["task"] == task]
            ax.plot(m["L"] + offset, m[f"{column}_mean"], "_-", color=colour, ms=18, mew=2.5,
                    label=f"{task}: mean over seeds")
        ax.set_xticks(lengths, [str(v) for v in lengths])
        ax.set_xlabel("L (symbols in the question)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower left")
    axes[0, 0].set_title("(a) whole answer right", fontsize=9)
    axes[0, 1].set_title("(b) answer symbols right", fontsize=9)
    return fig


def _curves(load):
    """The loss curves joined with their run's task, L, seed and ablation."""
    runs = load("train")[["case", "task", "L", "seed", "ablation"]]
    return load("train", "curve").merge(runs, on="case")


def _loss_axes(ax, title):
    ax.set_yscale("log")
    ax.set_xlabel("training step")
    ax.set_ylabel("training loss (cross-entropy, nats, log scale)")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)


def draw_loss_curves(load):
    """001, the experiment and the ablations: the training loss against the step, one line per run."""
    curves = _curves(load)
    full, ablations = curves[curves["ablation"] == "full"], curves[curves["ablation"] != "full"]
    tasks = sorted(full["task"].unique())
    fig, axes = style.figure(len(tasks) + (not ablations.empty), style.section_title(
        "train", "training loss of every run (batch loss on fresh sequences at each recorded step)"))
    for ax, task in zip(axes[0], tasks):
        rows = full[full["task"] == task]
        for i, L in enumerate(sorted(rows["L"].unique())):
            label = f"L = {L}"
            for _, run in rows[rows["L"] == L].groupby("seed"):
                ax.plot(run["step"], run["loss"], color=f"C{i}", alpha=0.6, lw=1, label=label)
                label = None  # one legend entry per L, one line per seed
        _loss_axes(ax, f"{task}: every L and seed")
    if not ablations.empty:
        ax = axes[0, -1]
        base = full[full["case"] == shared(ablation_runs(load("train"))[0], "case")]
        ax.plot(base["step"], base["loss"], color="black", lw=1.6, label="full")
        for i, (name, run) in enumerate(ablations.groupby("ablation")):
            ax.plot(run["step"], run["loss"], color=f"C{i + 3}", lw=1, alpha=0.8, label=name)
        _loss_axes(ax, f"ablations ({shared(ablations, 'task')}, L = {shared(ablations, 'L')}, "
                       f"seed {shared(ablations, 'seed')})")
    return fig


def draw_ablation_bars(load):
    """001, the ablations: accuracy and final loss of the base run and of each ablation."""
    base, ablations = ablation_runs(load("train"))
    rows = pd.concat([base, ablations], ignore_index=True)
    task, L, seed = base.iloc[0][["task", "L", "seed"]]
    names, x = list(rows["ablation"]), np.arange(len(rows))
    fig, axes = style.figure(2, style.product_title("ablation_bars", (
        f"{task}, L = {L}, seed {seed}, one piece changed at a time")))
    acc, loss = axes[0]
    for offset, (column, label), colour in zip((-0.2, 0.2), ACCURACIES, ("C0", "C1")):
        acc.bar(x + offset, rows[column], 0.4, color=colour, label=label.split(" (")[0])
    acc.set_ylabel("accuracy (fraction)")
    acc.set_ylim(0, 1.25)
    acc.legend(fontsize=7, loc="upper center", ncol=2)
    loss.bar(x, rows["final_loss"], 0.6, color=style.COLORS["other"])
    loss.set_yscale("log")
    loss.set_ylabel("final training loss (nats, log scale)")
    for ax, title in ((acc, "(a) accuracy by true generation"), (loss, "(b) loss at the last step")):
        ax.set_xticks(x, names, rotation=30, ha="right", fontsize=8)
        ax.set_xlabel("run ('full' = every piece in place)")
        ax.set_title(title, fontsize=9)
        ax.grid(alpha=0.3, axis="y")
    return fig


def draw_block_breakdown_bars(load):
    """001, the block's parameters: where they are (d of the breakdown), and the count against d."""
    parts = load("block_params", "breakdown")
    parts = parts[parts["entry"] != "TOTAL"]
    matrices = parts["formula"].str.contains("d^2", regex=False)  # the weight matrices; the rest is small
    groups = list(zip(parts.loc[matrices, "entry"], parts.loc[matrices, "actual_count"]))
    groups.append(("biases and layer norms\n(" + ", ".join(parts.loc[~matrices, "tensors"]) + ")",
                   parts.loc[~matrices, "actual_count"].sum()))
    total = sum(count for _, count in groups)
    counts = load("block_params").sort_values("d")
    fig, axes = style.figure(2, style.section_title("block_params", (
        f"pre-LN block, d_ff = 4d: {total:,} parameters at d = {shared(parts, 'd')}")), width=10)
    where, law = axes[0]
    y = np.arange(len(groups))[::-1]
    bars = where.barh(y, [c for _, c in groups], color=["C0"] * (len(groups) - 1) + [style.COLORS["other"]])
    where.bar_label(bars, [f"{c:,} ({c / total:.2%})" for _, c in groups], fontsize=7, padding=2)
    where.set_yticks(y, [name for name, _ in groups], fontsize=7)
    where.set_xlabel("parameters (count)")
    where.set_ylabel("entry of the block")
    where.set_xlim(0, 1.45 * max(c for _, c in groups))
    where.set_title(f"(a) breakdown at d = {shared(parts, 'd')}", fontsize=9)
    law.plot(counts["d"], counts["formula_12d2_13d"], "-", color=style.COLORS["other"],
             label="12d\u00b2 + 13d")
    law.plot(counts["d"], counts["actual_count"], "o", color="C0", label="counted on the tensors of block 0")
    style.log2_axis(law, counts["d"], "d (model width, log\u2082 scale)")
    law.set_yscale("log")
    law.set_ylabel("parameters per block (count, log scale)")
    law.set_title("(b) the closed form against the count", fontsize=9)
    law.grid(alpha=0.3, which="both")
    law.legend(fontsize=7)
    return fig
