"""Figures of the verification listings of articles 000, 001 and 003 (SVG through :mod:`render`).

Drawing only: every plotted number is a column of the experiments' Parquet.
"""

import numpy as np

from attnrepro.report.products import style

D_K_AXIS = "d_k (dimensions of query and key, log\u2082 scale)"
MAX_WEIGHT = "mean largest weight (probability)"


def _lines(ax, x, series, ylabel, legend="best"):
    """One line per (label, y, colour key) over x; y label and legend."""
    for label, y, colour in series:
        ax.plot(x, y, "o-", color=style.COLORS[colour], label=label)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc=legend)


def draw_scale_sweep_curves(load):
    """000, √d_k: mean largest weight and softmax Jacobian norm against d_k, without and with the scale."""
    df = load("scale_sweep").sort_values("d_k")
    r = df.iloc[0]
    fig, axes = style.figure(2, style.section_title(
        "scale_sweep", f"softmax over {r['n_keys']} keys, {r['trials']} queries per d_k"))
    weight, jacobian = axes[0]
    _lines(weight, df["d_k"], [("raw scores q\u00b7k", df["max_weight_unscaled"], "without"),
                               ("scores / \u221ad_k", df["max_weight_scaled"], "with")], MAX_WEIGHT)
    _lines(jacobian, df["d_k"], [("raw scores q\u00b7k", df["jacobian_norm_unscaled"], "without"),
                                 ("scores / \u221ad_k", df["jacobian_norm_scaled"], "with")],
           r"mean $\|J\|_F$ of the softmax Jacobian (dimensionless)")
    for ax in (weight, jacobian):
        style.log2_axis(ax, df["d_k"], D_K_AXIS)
    weight.set_title("(a) how switched on the softmax is", fontsize=9)
    jacobian.set_title("(b) how much gradient passes", fontsize=9)
    return fig


def draw_scale_table_curves(load):
    """001, √d_k measured: mean largest weight and sensitivity (Jacobian trace) against d_k."""
    df = load("scale_table").sort_values("d_k")
    raw, scaled = df[~df["scaled"].astype(bool)], df[df["scaled"].astype(bool)]
    r = df.iloc[0]
    fig, axes = style.figure(2, style.section_title(
        "scale_table", f"{r['repetitions']} problems of {r['T']} queries against {r['T']} keys per d_k"))
    weight, sensitivity = axes[0]
    _lines(weight, raw["d_k"], [("not divided", raw["max_weight"], "without"),
                                ("divided by \u221ad_k", scaled["max_weight"], "with")], MAX_WEIGHT)
    sensitivity.axhline(r["max_sensitivity"], color=style.COLORS["other"], ls="--",
                        label=f"maximum 1 - 1/{r['T']} (uniform weights)")
    _lines(sensitivity, raw["d_k"], [("not divided", raw["sensitivity"], "without"),
                                     ("divided by \u221ad_k", scaled["sensitivity"], "with")],
           "mean sensitivity = trace of J (dimensionless)", legend="center right")
    for ax in (weight, sensitivity):
        style.log2_axis(ax, raw["d_k"], D_K_AXIS)
    weight.set_title("(a) how switched on the softmax is", fontsize=9)
    sensitivity.set_title("(b) how much gradient passes", fontsize=9)
    return fig


def draw_mask_before_after_heatmaps(load):
    """001, the causal mask: row sums, and the weights with -inf before the softmax and zeroed after it."""
    sums = load("mask_before_after", "row_sums").sort_values("query")
    weights = load("mask_before_after", "weights")
    fig, axes = style.figure(3, style.section_title(
        "mask_before_after", "masking the future before the softmax (right) or after it (wrong)"))
    bars, before, after = axes[0]
    width = 0.38
    q = sums["query"].to_numpy()
    for offset, column, colour, label in ((-width / 2, "before", "with", "-inf before the softmax"),
                                          (width / 2, "after", "without", "zeroed after the softmax")):
        bars.bar(q + offset, sums[column], width, color=style.COLORS[colour], label=label)
    bars.axhline(1.0, color=style.COLORS["other"], ls="--", lw=1, label="a distribution sums to 1")
    bars.set_xticks(q)
    bars.set_xlabel("query position")
    bars.set_ylabel("sum of the row's weights")
    bars.set_title("(a) row sums", fontsize=9)
    bars.set_ylim(0, 1.45)
    bars.legend(fontsize=7, loc="upper center")
    for ax, column, title in ((before, "before", "(b) mask before: softmax over the visible keys"),
                              (after, "after", "(c) mask after: future weights cut")):
        image = style.heatmap(ax, style.query_key_matrix(weights, column), fmt="{:.3f}", vmin=0, vmax=1)
        ax.set_xlabel("key position")
        ax.set_ylabel("query position")
        ax.set_title(title, fontsize=9)
    fig.colorbar(image, ax=[before, after], label="attention weight (probability)", shrink=0.8)
    return fig


def _encoding_heatmap(long, experiment):
    """A (position, dimension, value) table of a positional encoding as a heat map."""
    table = long.pivot(index="position", columns="dimension", values="value").sort_index().sort_index(axis=1)
    n, d = table.shape
    fig, axes = style.figure(1, style.section_title(
        experiment, f"sinusoidal encoding, {n} positions x {d} dimensions"), width=7.5)
    ax = axes[0, 0]
    image = style.heatmap(ax, table.to_numpy(), fmt="{:.3f}", cmap="RdBu_r", vmin=-1, vmax=1,
                          annotate=n * d <= 128)  # numbers in the cells while they stay readable
    ax.set_xlabel("dimension j (sin at even j, cos at odd j; frequency falls with j)")
    ax.set_ylabel("position")
    fig.colorbar(image, ax=ax, label="PE(position, j) (dimensionless)")
    return fig


def draw_positional_encoding_heatmap(load):
    """003, step 4: the sinusoidal positional encoding of the listing, position by dimension."""
    return _encoding_heatmap(load("order_blindness", "encoding"), "order_blindness")


def draw_position_check_heatmap(load):
    """000, position: the sinusoidal table on which PE(pos + k) = R_k PE(pos) is checked."""
    return _encoding_heatmap(load("permutation_position", "encoding"), "permutation_position")


def draw_causal_change_bars(load):
    """000, the causal mask: change of each output position when only the last inputs change."""
    df = load("causal_change")
    r = df.iloc[0]
    fig, axes = style.figure(1, style.section_title(
        "causal_change", f"inputs {r['changed_from']}..{r['n'] - 1} redrawn, output change per position"),
        width=7)
    ax = axes[0, 0]
    width = 0.38
    for offset, (mask, label, colour) in zip((-width / 2, width / 2), (
            ("none", "no mask", "without"), ("causal", "causal mask", "with"))):
        rows = df[df["mask"] == mask].sort_values("position")
        ax.bar(rows["position"] + offset, rows["output_change"], width, color=style.COLORS[colour],
               label=label)
    changed = np.sort(df.loc[df["input_changed"].astype(bool), "position"].unique())
    if len(changed):
        ax.axvspan(changed.min() - 0.5, changed.max() + 0.5, color=style.COLORS["other"], alpha=0.15,
                   label="inputs redrawn")
    ax.set_xticks(np.sort(df["position"].unique()))
    ax.set_xlabel("output position")
    ax.set_ylabel("max |change| over features (dimensionless)")
    ax.legend(fontsize=8)
    return fig
