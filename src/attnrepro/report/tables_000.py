"""Tables of article 000, "01 - Transformer Architecture: attention, encoder, decoder"."""

import pandas as pd

from attnrepro.report.formats import ROUND_OFF, columns_formats, matrix, one, shape, yes_no
from attnrepro.report.render import Table


def build_attention_check(load):
    """Listing 1: the weights' shape and row sums, and the deviation from torch's SDPA."""
    r = one(load("attention_vs_sdpa"))
    data = pd.DataFrame([{
        "n": r["n"], "d_k": r["d_k"], "d_v": r["d_v"],
        "weights shape": shape(r["weights_rows"], r["weights_cols"]),
        "max |row sum - 1|": r["row_sum_max_deviation"],
        "max |numpy - torch|": r["max_abs_diff_torch"],
    }])
    formats = {"max |row sum - 1|": "{:.1e}", "max |numpy - torch|": "{:.2e}"}
    note = ("Hand-written attention against torch's scaled_dot_product_attention "
            f"(float64, seed {r['seed']}); {ROUND_OFF}.")
    return Table(data, formats, note)


def build_attention_weights(load):
    """Listing 1: the attention weights, query by key (the listing prints query 0)."""
    data = matrix(load("attention_vs_sdpa", "weights"), "query", "key", "weight", "key {}".format)
    note = ("Attention weights of listing 1, one row per query, each row a distribution over the keys; "
            "the listing prints the row of query 0.")
    return Table(data, columns_formats(data, {"query"}, "{:.3f}"), note)


SCALE_SWEEP_COLUMNS = {  # experiment column -> the listing's header
    "d_k": "d_k", "std_scores": "std(q.k)", "sqrt_d_k": "sqrt(d_k)",
    "max_weight_unscaled": "max weight without", "jacobian_norm_unscaled": "|J| without",
    "max_weight_scaled": "max weight with", "jacobian_norm_scaled": "|J| with",
}


def build_scale_sweep(load):
    """Listing 2: the spread of raw scores against sqrt(d_k), and the softmax without and with it."""
    df = load("scale_sweep").sort_values("d_k")
    data = df[list(SCALE_SWEEP_COLUMNS)].rename(columns=SCALE_SWEEP_COLUMNS)
    formats = {"std(q.k)": "{:.3f}", "sqrt(d_k)": "{:.3f}", "max weight without": "{:.3f}",
               "|J| without": "{:.4f}", "max weight with": "{:.3f}", "|J| with": "{:.4f}"}
    r = df.iloc[0]
    note = (f"{r['trials']} queries against {r['n_keys']} keys for each d_k (seed {r['seed']}); "
            "mean largest weight and mean Frobenius norm |J| of the softmax Jacobian diag(p) - p p^T, "
            "without and with the division by sqrt(d_k).")
    return Table(data, formats, note)


def build_multihead_check(load):
    """Listing 3: hand-written heads from the module's weights against nn.MultiheadAttention."""
    r = one(load("multihead_vs_torch"))
    data = pd.DataFrame([{
        "d": r["d"], "h": r["h"], "n": r["n"],
        "max |output - torch|": r["max_abs_diff_output"],
        "max |weights - torch|": r["max_abs_diff_weights"],
    }])
    formats = {"max |output - torch|": "{:.2e}", "max |weights - torch|": "{:.2e}"}
    note = ("Multi-head attention by hand from the weights of torch.nn.MultiheadAttention (float64), "
            f"the weights of every head compared; {ROUND_OFF}.")
    return Table(data, formats, note)


def build_multihead_params(load):
    """Listing 3: parameters of nn.MultiheadAttention for several head counts, against 4d^2 + 4d."""
    df = load("multihead_vs_torch", "params").sort_values("heads")
    data = df[["d", "heads", "parameters", "formula_parameters"]].rename(
        columns={"formula_parameters": "4*d*d + 4*d"})
    note = ("Parameters of torch.nn.MultiheadAttention of width d for each number of heads: "
            "the heads split the width, they add no parameters.")
    return Table(data, {}, note)


def build_position_check(load):
    """Listing 4: permutation equivariance without and with positions, and PE(pos+k) = R_k PE(pos)."""
    r = one(load("permutation_position"))
    k = r["shift"]
    rotation = (f"PE(pos+{k}) = R_{k} PE(pos) over {r['positions']} positions "
                f"and {r['frequencies']} frequencies")
    rows = [
        ("without position: output(permuted) == permuted(output)", r["allclose_without_position"],
         r["error_without_position"]),
        ("with positional encoding: same equality", r["allclose_with_position"], r["error_with_position"]),
        (rotation, None, r["rotation_max_error"]),
    ]
    data = pd.DataFrame(rows, columns=["check", "allclose", "max error"], dtype=object)
    formats = {"allclose": ["{}", "{}", "-"], "max error": "{:.1e}"}
    note = (f"torch.nn.MultiheadAttention (d = {r['d']}, h = {r['h']}) on {r['n']} tokens, permutation "
            f"{r['permutation']}, sinusoidal encoding at fixed positions; {ROUND_OFF}.")
    return Table(data, formats, note)


def build_causal_change(load):
    """Listing 5: how much each output moves when the last inputs change, without and with the mask."""
    df = load("causal_change")
    data = matrix(df, ["position", "input_changed"], "mask", "output_change")
    data = data.rename(columns={"input_changed": "input changed", "none": "no mask", "causal": "causal mask"})
    data["input changed"] = yes_no(data["input changed"])
    data = data[["position", "input changed", "no mask", "causal mask"]]
    r = df.iloc[0]
    note = (f"Largest change over the {r['d']} features of each output position of "
            f"torch.nn.MultiheadAttention (h = {r['h']}) when only inputs {r['changed_from']}..{r['n'] - 1} "
            "are redrawn; an exact zero means the position cannot see the change.")
    return Table(data, {"no mask": "{:.1e}", "causal mask": "{:.1e}"}, note)
