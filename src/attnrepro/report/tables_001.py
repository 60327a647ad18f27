"""Tables of article 001, "95 - Attention, Derived in Full": the verification listings and exercises.

The decoder's tables (parameter count, gradient checks, trainings, attention map) are in
:mod:`attnrepro.report.tables_decoder`, the timing tables in :mod:`attnrepro.report.tables_timing`.
"""

import pandas as pd

from attnrepro.report.formats import ROUND_OFF, columns_formats, matrix, one, quantities, yes_no
from attnrepro.report.render import Table


def build_batched_shapes(load):
    """Listing 1: shapes of scores, weights and output of batched attention, and the row sums."""
    r = one(load("batched_attention"))
    data = pd.DataFrame([{
        "B": r["B"], "T": r["T"], "d": r["d"], "d_k": r["d_k"],
        "scores QK^T": r["scores_shape"], "weights (softmax)": r["weights_shape"],
        "output": r["output_shape"], "max |row sum - 1|": r["row_sum_max_deviation"],
    }])
    note = (f"Batched scaled dot-product attention (seed {r['seed']}); every row of the weights sums to one, "
            f"{ROUND_OFF}.")
    return Table(data, {"max |row sum - 1|": "{:.1e}"}, note)


def build_sdpa_check(load):
    """Listing 2: NumPy attention against torch's SDPA, without and with the causal mask."""
    df = load("sdpa_causal")
    data = df[["B", "T", "d_k", "mask", "max_abs_diff_torch"]].rename(
        columns={"max_abs_diff_torch": "maximum deviation"})
    data["mask"] = data["mask"].replace({"none": "no mask"})
    note = f"The -inf mask before the softmax against is_causal=True, same Q, K, V (float64); {ROUND_OFF}."
    return Table(data, {"maximum deviation": "{:.2e}"}, note)


def build_scale_table(load):
    """Listing 3: the √d_k table, scores and softmax statistics with and without the division."""
    df = load("scale_table").sort_values(["d_k", "scaled"])
    data = df[["d_k", "scaled", "var_dot", "sd_scores", "max_weight", "entropy", "sensitivity"]].copy()
    data["scaled"] = yes_no(data["scaled"])
    r = df.iloc[0]
    T = r["T"]
    note = (f"{r['repetitions']} repetitions of {T} queries against {T} keys; "
            f"maximum entropy ln({T}) = {r['max_entropy']:.4f}, "
            f"maximum sensitivity 1 - 1/{T} = {r['max_sensitivity']:.4f}.")
    formats = {"var_dot": "{:.2f}", "sd_scores": "{:.3f}", "max_weight": "{:.4f}",
               "entropy": "{:.4f}", "sensitivity": "{:.4f}"}
    return Table(data.rename(columns={"scaled": "divided"}), formats, note)


def build_mask_before_after(load):
    """Listing 4: the weights with the mask before the softmax, and the row sums before and after."""
    weights = matrix(load("mask_before_after", "weights"), "query", "key", "before", "key {}".format)
    sums = load("mask_before_after", "row_sums")[["query", "before", "after"]]
    sums = sums.rename(columns={"before": "row sum before", "after": "row sum after"})
    data = weights.merge(sums, on="query")
    r = one(load("mask_before_after"))
    note = ("Weights with the future set to -inf BEFORE the softmax (key columns), and the row sums of those "
            "and of the weights zeroed AFTER the softmax; maximum deviation between the two matrices "
            f"{r['max_deviation']:.4f}.")
    return Table(data, columns_formats(data, {"query"}, "{:.3f}"), note)


def build_mask_patterns(load):
    """Listing 4: the causal mask, the padding mask of the batch and their combination (1 = may look)."""
    label = "key {}".format
    causal = matrix(load("mask_before_after", "weights"), "query", "key", "visible", label)
    causal.insert(0, "mask", "causal")
    causal.insert(1, "sequence", "all")
    padding = matrix(load("mask_before_after", "padding"), "sequence", "key", "valid", label)
    padding.insert(0, "mask", "padding (valid keys)")
    padding.insert(2, "query", "all")
    combined = matrix(load("mask_before_after", "combined"), ["sequence", "query"], "key", "allowed", label)
    combined.insert(0, "mask", "causal AND padding")
    data = pd.concat([causal, padding, combined], ignore_index=True)
    keys = [c for c in data.columns if c.startswith("key ")]
    data[keys] = data[keys].astype(int)
    lengths = one(load("mask_before_after"))["lengths"]
    note = (f"Masks of the batch with lengths {lengths} (sequences counted from 0); "
            "the listing prints the combined mask of sequence 1, its 'sequence 2'.")
    return Table(data.astype({"sequence": str, "query": str}), {}, note)


def build_multihead_shapes(load):
    """Listing 5: shapes of the weights and output for h heads of width d/h, and the constant 4 d^2."""
    df = load("multihead_shapes").sort_values("h")
    data = df[["h", "d_head", "weights_shape", "output_shape", "four_d_squared"]].rename(
        columns={"weights_shape": "weights", "output_shape": "output", "four_d_squared": "4*d^2"})
    r = df.iloc[0]
    note = (f"d = {r['d']}, T = {r['T']}, batch {r['B']}: h heads of width d/h; "
            f"the four projection matrices hold {r['weight_params']} numbers whatever h.")
    return Table(data, {}, note)


def build_multihead_permutation(load):
    """Listing 5: permutation equivariance of multi-head attention without mask and position."""
    r = one(load("multihead_shapes", "permutation"))
    equivariance, change = "max |attn(PX) - P attn(X)|", "max |attn(PX) - attn(X)|"
    data = pd.DataFrame([{"h": r["h"], "permutation": r["permutation"],
                          equivariance: r["max_equivariance_error"], change: r["max_change"]}])
    note = ("Permuting the input permutes the output (first column) but does change it (second column); "
            f"{ROUND_OFF}.")
    return Table(data, {equivariance: "{:.3e}", change: "{:.3e}"}, note)


def _exercise_1(r):
    return [
        ("1", f"Var(q.k), d_k = {r['d_k']:.0f}", r["variance"], "{:.0f}"),
        ("1", "sd(q.k)", r["sd"], "{:.0f}"),
        ("1", f"gap of {r['gap_sd']:.0f} sd between two raw scores", r["raw_gap"], "{:.0f}"),
        ("1", "weight ratio without the division, exp(gap)", r["raw_ratio"], "{:.1e}"),
        ("1", "gap after the division by sqrt(d_k)", r["scaled_gap"], "{:.0f}"),
        ("1", "weight ratio with the division", r["scaled_ratio"], "{:.2f}"),
    ]


def _exercise_2(r):
    cache = f"key-value cache, T = {r['T']:.0f}, batch {r['batch']:.0f}"
    return [
        ("2", f"parameters per block, d = {r['d']:.0f}", r["params_per_block"], "{:,.0f}"),
        ("2", f"parameters of {r['blocks']:.0f} blocks", r["params_total"], "{:,.0f}"),
        ("2", f"their weights at {r['bytes']:.0f} bytes each (MiB)", r["weights_mib"], "{:.1f}"),
        ("2", f"{cache} (bytes)", r["cache_bytes"], "{:,.0f}"),
        ("2", f"{cache} (GiB)", r["cache_gib"], "{:.1f}"),
        ("2", "cache / weights", r["cache_to_weights"], "{:.1f}"),
        ("2", "multi-query cache, one K, V pair (GiB)", r["multi_query_cache_gib"], "{:.3f}"),
    ]


def build_exercises(load):
    """Exercises 1 and 2: the figures of their solutions."""
    r = one(load("exercises"))
    note = ("Exercise 1: softmax saturation from the variance of the dot product; exercise 2: parameters of "
            f"{r['heads']:.0f}-head pre-LN blocks against the key-value cache, in bytes.")
    return quantities(_exercise_1(r) + _exercise_2(r), ["exercise", "quantity", "value"], note)
