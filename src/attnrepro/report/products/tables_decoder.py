"""Tables of article 001's NumPy decoder: parameter count, gradient checks, trainings, attention map.

Formatting, selection and aggregation over seeds (mean, minimum) only: every number
comes from the experiments' Parquet; the split of the copy-without-position run uses
the pure functions of :mod:`attnrepro.model.tasks` on its per-question table.
"""

import pandas as pd

from attnrepro.report.products.formats import (
    ROUND_OFF, ablation_label, ablation_runs, distinct_split, grid_runs, or_dash, shared,
)
from attnrepro.report.products.render import Table
from attnrepro.report.products.statistics import over_seeds

# the hyperparameters of a training that an ablation may change (columns of train's main)
SETTINGS = ("steps", "batch", "d", "heads", "layers", "d_ff", "lr", "alphabet", "scale", "post_ln",
            "position")


def build_block_params(load):
    """The block's parameters: the closed form 12d² + 13d against the tensors of block 0."""
    df = load("block_params").sort_values("d")
    data = df[["d", "d_ff", "formula_12d2_13d", "actual_count"]].rename(
        columns={"formula_12d2_13d": "formula 12d^2+13d", "actual_count": "actual count"})
    r = df.iloc[0]
    note = (f"Block 0 of a decoder initialised for each width from one generator, d_ff = 4d, {r['heads']} "
            "heads (the heads do not enter the count); formula and tensors agree for "
            f"{int(df['match'].sum())} of {len(df)} widths: exact counts, the same on any machine.")
    return Table(data, {}, note)


def build_block_breakdown(load):
    """The parameters of one block entry by entry (the article's d = 512), with each entry's share."""
    df = load("block_params", "breakdown")
    total = df.loc[df["entry"] == "TOTAL", "actual_count"].iloc[0]
    data = df[["entry", "tensors", "formula", "formula_count", "actual_count"]].rename(
        columns={"formula_count": "count (formula)", "actual_count": "actual count"})
    data["share of the block"] = df["actual_count"] / total
    note = (f"d = {shared(df, 'd')}: the article prints the formula column; the actual column sums the "
            "tensors of block 0 with that role. Exact counts; the share is count / TOTAL.")
    return Table(data, {"share of the block": "{:.2%}"}, note)


def build_grad_check(load):
    """The finite-difference check: worst relative deviation per variant (pre-/post-LN) and ε."""
    df = load("grad_check").sort_values(["post_ln", "eps"])  # the listing's order: pre-LN, small eps first
    data = df[["variant", "eps", "worst_relative_deviation", "worst_tensor", "coordinates"]].rename(columns={
        "worst_relative_deviation": "maximum relative deviation", "worst_tensor": "worst tensor",
        "coordinates": "coordinates checked"})
    r = df.iloc[0]
    note = (f"Centred differences (L(+eps) - L(-eps)) / 2 eps against the hand-written gradient on a decoder "
            f"with d = {r['d']}, {r['heads']} heads, {r['layers']} layers (seed {r['seed']}): worst "
            "|numeric - analytic| / max(|numeric|, |analytic|). At the small eps the figure is round-off in "
            "the difference quotient (its digits depend on the CPU and BLAS kernel); at the large one the "
            "difference crosses ReLU corners.")
    return Table(data, {"eps": "{:.0e}", "maximum relative deviation": "{:.2e}"}, note)


def _autograd_variants(main):
    """The variants of autograd_check in a stable order: pre-LN first, scaled first, position first."""
    return main.sort_values(["post_ln", "scale", "position"], ascending=[True, False, False])


def build_autograd_check(load):
    """The hand-written backward pass against torch autograd: the worst tensor of each variant."""
    df = _autograd_variants(load("autograd_check"))
    data = df[["variant", "loss_relative_difference", "worst_relative_difference", "worst_tensor"]].rename(
        columns={"loss_relative_difference": "loss: relative difference",
                 "worst_relative_difference": "gradients: worst relative difference",
                 "worst_tensor": "worst tensor"})
    note = (f"Same tensors in NumPy and in torch {shared(df, 'torch_version')} float64 autograd: "
            "max |g_numpy - g_torch| / max |g_torch| per tensor (per model for gradients that are zero by "
            f"construction), worst tensor shown, each tensor in autograd_tensors; {ROUND_OFF}. "
            "Beyond the article.")
    formats = {"loss: relative difference": "{:.1e}", "gradients: worst relative difference": "{:.1e}"}
    return Table(data, formats, note)


def build_autograd_tensors(load):
    """The autograd agreement tensor by tensor: one column per variant."""
    main = _autograd_variants(load("autograd_check"))
    flags = ["post_ln", "scale", "position"]
    tensors = load("autograd_check", "tensors").merge(main[flags + ["variant"]], on=flags)
    order = list(dict.fromkeys(tensors["tensor"]))  # the model's order: E, P, b0.Wq, ...
    data = tensors.pivot(index="tensor", columns="variant", values="relative_difference")
    data = data.loc[order, list(main["variant"])].reset_index()
    relative = tensors.groupby("tensor")["relative_to"].agg(lambda v: "/".join(sorted(set(v))))
    data.insert(1, "relative to", data["tensor"].map(relative))
    note = ("max |g_numpy - g_torch| divided by the tensor's own largest gradient, or by the model's for the "
            f"key biases and the switched-off position table (their exact gradient is zero); {ROUND_OFF}.")
    return Table(data, {v: "{:.1e}" for v in main["variant"]}, note)


def build_train_accuracy(load):
    """The trainings: per-token and per-sequence accuracy per task and L, mean and minimum over seeds."""
    runs = grid_runs(load("train"))
    summary = over_seeds(runs, ["task", "L"], ["token_accuracy", "sequence_accuracy"])
    data = summary[["task", "L", "runs", "token_accuracy_mean", "token_accuracy_min",
                    "sequence_accuracy_mean", "sequence_accuracy_min"]].rename(columns={
                        "runs": "seeds", "token_accuracy_mean": "per-token mean",
                        "token_accuracy_min": "per-token min", "sequence_accuracy_mean": "per-sequence mean",
                        "sequence_accuracy_min": "per-sequence min"})
    s = {k: shared(runs, k) for k in SETTINGS + ("eval_sequences", "eval_seed")}
    seeds = ", ".join(str(v) for v in sorted(runs["seed"].unique()))
    sizes = runs.groupby("L")["n_parameters"].unique()  # the position table has 2L + 1 rows
    counts = "; ".join(f"{', '.join(map(str, n))} at L = {L}" for L, n in sizes.items())
    note = (f"Configuration: d={s['d']}, {s['heads']} heads (d_head={s['d'] // s['heads']}), {s['layers']} "
            f"layers, d_ff={s['d_ff']}, batch {s['batch']}, Adam lr={s['lr']:g}, {s['steps']} steps, "
            f"alphabet of {s['alphabet']} symbols + separator; model parameters: {counts}; seeds {seeds}; "
            f"true generation on {s['eval_sequences']} questions (seed {s['eval_seed']}). With the article's "
            "settings the copy rows are exact; the sort rows depend on the BLAS kernel (the training steps "
            "amplify its rounding).")
    return Table(data, {c: "{:.3f}" for c in data.columns if "mean" in c or "min" in c}, note)


def _changes(run, base):
    """The settings in which ``run`` differs from ``base``, as 'key = value'."""
    return ", ".join(f"{k} = {run[k]}" for k in SETTINGS if run[k] != base[k]) or "-"


def build_ablations(load):
    """The ablations on copy: final loss, per-token and per-sequence accuracy of each changed run, in the
    article's order and words (formats.ABLATIONS)."""
    base, ablations = ablation_runs(load("train"))
    rows = pd.concat([base, ablations], ignore_index=True)
    base = base.iloc[0]
    data = pd.DataFrame({
        "run": rows["ablation"].map(ablation_label),
        "changes": [_changes(r, base) for _, r in rows.iterrows()],
        "final loss": rows["final_loss"], "token": rows["token_accuracy"],
        "sequence": rows["sequence_accuracy"],
    })
    note = (f"{base['task']}, L = {base['L']}, seed {base['seed']} ('full' is that run of the grid); every "
            "run as 'full' except the changes; final loss is the training loss of the last step, accuracies "
            f"by true generation on {base['eval_sequences']} questions.")
    return Table(data, {"final loss": "{:.4f}", "token": "{:.3f}", "sequence": "{:.3f}"}, note)


def build_copy_without_position(load):
    """Copy without position: per-sequence accuracy on questions with distinct / repeated symbols."""
    base, ablations = ablation_runs(load("train"))
    blind = ablations[~ablations["position"].astype(bool)]
    sequences = load("train", "sequences")
    rows = []
    for _, run in pd.concat([blind, base]).iterrows():
        questions = sequences[sequences["case"] == run["case"]]
        split = distinct_split(questions["correct"], questions["all_distinct"])
        rows.append({"run": ablation_label(run["ablation"]), "position": bool(run["position"]),
                     "distinct: accuracy": split["accuracy_distinct"], "distinct: cases": split["n_distinct"],
                     "repeated: accuracy": split["accuracy_repeated"], "repeated: cases": split["n_repeated"],
                     "distinct share: measured": split["share_distinct"],
                     "distinct share: expected": run["distinct_share_expected"]})
    data = pd.DataFrame(rows)
    base = base.iloc[0]
    a, L = int(base["alphabet"]), int(base["L"])
    falling = "*".join(str(a - i) for i in range(L))
    note = (f"Per-sequence accuracy on the {base['eval_sequences']} test questions split by whether their "
            f"{L} symbols are all distinct; expected share {falling}/{a}^{L}. One seed and two subsets of "
            "one sample: an indication, not a result.")
    formats = {c: or_dash(data[c], "{:.3f}") for c in data.columns if "accuracy" in c or "share" in c}
    return Table(data, formats, note)


def build_attention_map(load):
    """The attention map: per layer and head, the most-weighted key of each answer position."""
    df = load("attention_map").sort_values(["layer", "head"])
    r = df.iloc[0]
    T = len(r["sequence"].split())
    answers = f"most-weighted key for outputs {r['first_query']}..{T - 1}"
    data = df[["layer", "head", "argmax_keys", "deviation", "mean_max_weight"]].rename(
        columns={"argmax_keys": answers, "mean_max_weight": "mean weight"})
    note = (f"Run {r['run']} ({r['task']}, L = {r['L']}, seed {r['seed']}) on [{r['sequence']}]: outputs "
            f"{r['first_query']}..{T - 1} must emit the symbols at keys 0..{r['L'] - 1}; mean weight is the "
            "mean of the answer rows' maxima. A readable map is not an explanation of the model's decisions.")
    return Table(data, {"mean weight": "{:.3f}"}, note)
