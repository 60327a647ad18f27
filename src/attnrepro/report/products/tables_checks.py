"""Tables of the verification listings (no training, no timing) of the three articles.

Articles 000, 001 (its decoder's tables are in :mod:`attnrepro.report.products.tables_decoder`,
the timing tables in :mod:`attnrepro.report.products.tables_timing`) and 003 (a lesson). Each
``build_<name>(load)`` returns the ``render.Table`` of the product ``name`` (see ``catalog``).
"""

import pandas as pd

from attnrepro.report.products.formats import (
    ROUND_OFF, columns_formats, matrix, one, quantities, shape, token_labels, yes_no,
)
from attnrepro.report.products.render import Table


# --- article 000 ---

def build_attention_check(load):
    """000, listing 1: the weights' shape and row sums, and the deviation from torch's SDPA."""
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
    """000, listing 1: the attention weights, query by key (the listing prints query 0)."""
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
    """000, listing 2: the spread of raw scores against sqrt(d_k), and the softmax without and with it."""
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
    """000, listing 3: hand-written heads from the module's weights against nn.MultiheadAttention."""
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
    """000, listing 3: parameters of nn.MultiheadAttention for several head counts, against 4d^2 + 4d."""
    df = load("multihead_vs_torch", "params").sort_values("heads")
    data = df[["d", "heads", "parameters", "formula_parameters"]].rename(
        columns={"formula_parameters": "4*d*d + 4*d"})
    note = ("Parameters of torch.nn.MultiheadAttention of width d for each number of heads: "
            "the heads split the width, they add no parameters.")
    return Table(data, {}, note)


def build_position_check(load):
    """000, listing 4: permutation equivariance without and with positions, and PE(pos+k) = R_k PE(pos)."""
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
    """000, listing 5: how much each output moves when the last inputs change, without and with the mask."""
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


# --- article 001: verification listings and exercises ---

def build_batched_shapes(load):
    """001, listing 1: shapes of scores, weights and output of batched attention, and the row sums."""
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
    """001, listing 2: NumPy attention against torch's SDPA, without and with the causal mask."""
    df = load("sdpa_causal")
    data = df[["B", "T", "d_k", "mask", "max_abs_diff_torch"]].rename(
        columns={"max_abs_diff_torch": "maximum deviation"})
    data["mask"] = data["mask"].replace({"none": "no mask"})
    note = f"The -inf mask before the softmax against is_causal=True, same Q, K, V (float64); {ROUND_OFF}."
    return Table(data, {"maximum deviation": "{:.2e}"}, note)


SCALE_TABLE_COLUMNS = {  # experiment column -> the listing's header
    "scaled": "divided", "var_dot": "Var(q.k)", "sd_scores": "sd scores", "max_weight": "max weight",
}


def build_scale_table(load):
    """001, listing 3: the √d_k table, scores and softmax statistics with and without the division."""
    df = load("scale_table").sort_values(["d_k", "scaled"])
    data = df[["d_k", "scaled", "var_dot", "sd_scores", "max_weight", "entropy", "sensitivity"]].copy()
    data["scaled"] = yes_no(data["scaled"])
    r = df.iloc[0]
    T = r["T"]
    note = (f"{r['repetitions']} repetitions of {T} queries against {T} keys; "
            f"maximum entropy ln({T}) = {r['max_entropy']:.4f}, "
            f"maximum sensitivity 1 - 1/{T} = {r['max_sensitivity']:.4f}.")
    data = data.rename(columns=SCALE_TABLE_COLUMNS)
    formats = {"Var(q.k)": "{:.2f}", "sd scores": "{:.3f}", "max weight": "{:.4f}",
               "entropy": "{:.4f}", "sensitivity": "{:.4f}"}
    return Table(data, formats, note)


def build_mask_before_after(load):
    """001, listing 4: the weights with the mask before the softmax, and the row sums before and after."""
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
    """001, listing 4: the causal mask, the padding mask of the batch and their combination (1 = may look)."""
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
    """001, listing 5: shapes of the weights and output for h heads of width d/h, and the constant 4 d^2."""
    df = load("multihead_shapes").sort_values("h")
    data = df[["h", "d_head", "weights_shape", "output_shape", "four_d_squared"]].rename(
        columns={"weights_shape": "weights", "output_shape": "output", "four_d_squared": "4*d^2"})
    r = df.iloc[0]
    note = (f"d = {r['d']}, T = {r['T']}, batch {r['B']}: h heads of width d/h; "
            f"the four projection matrices hold {r['weight_params']} numbers whatever h.")
    return Table(data, {}, note)


def build_multihead_permutation(load):
    """001, listing 5: permutation equivariance of multi-head attention without mask and position."""
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


# --- article 003 (a lesson) ---

def _token_weights(long):
    """(query, key, weight) rows with tokens as a token-by-token matrix, printed at two decimals."""
    data = matrix(long, ["query", "query_token"], "key", "weight", token_labels(long, "key", "key_token"))
    data = data.drop(columns="query").rename(columns={"query_token": "token"})
    return data, columns_formats(data, {"token"}, "{:.2f}")


def build_self_attention_weights(load):
    """Step 1: the weights of self-attention on the five-token sentence."""
    data, formats = _token_weights(load("self_attention_tokens", "weights"))
    r = one(load("self_attention_tokens"))
    shapes = (f"output {shape(r['output_rows'], r['output_cols'])}, "
              f"weights {shape(r['weights_rows'], r['weights_cols'])}")
    note = ("Each row: how much one token draws from every token (random embeddings and projections, "
            f"seed {r['seed']}); {shapes}, largest |row sum - 1| {r['row_sum_max_deviation']:.1e} "
            f"({ROUND_OFF}).")
    return Table(data, formats, note)


def build_saturation(load):
    """Step 2: one query against a few keys, the largest weight without and with the division by sqrt(d)."""
    df = load("saturation")
    data = df[["d", "raw_score_std", "max_weight_unscaled", "max_weight_scaled"]].rename(columns={
        "raw_score_std": "raw score spread", "max_weight_unscaled": "max weight unscaled",
        "max_weight_scaled": "max weight scaled"})
    r = df.iloc[0]
    note = (f"One query against {r['keys']} keys for each d, drawn in this order from one generator "
            f"(seed {r['seed']}): spread (standard deviation) of the raw scores and largest softmax weight.")
    return Table(data, columns_formats(data, {"d"}, "{:.2f}"), note)


def build_causal_weights(load):
    """Step 3: the weights of the same sentence under the causal mask."""
    data, formats = _token_weights(load("causal_weights", "weights"))
    r = one(load("causal_weights"))
    note = ("Causal mask: each token sees itself and the tokens before it (the mask is True on and below "
            "the diagonal, scores -inf above it before the softmax); largest weight above the diagonal "
            f"{r['masked_weight_max']:.1f}.")
    return Table(data, formats, note)


def build_order_blindness(load):
    """Step 4: outputs move with the tokens without positions; with the encoding, swapping changes them."""
    r = one(load("order_blindness"))
    rows = [
        ("without positions, outputs just move with the tokens", r["outputs_move_with_tokens"],
         r["error_without_positions"]),
        ("with positions, swapping words changes the result", r["order_changes_result_with_positions"],
         r["difference_with_positions"]),
    ]
    data = pd.DataFrame(rows, columns=["check", "holds", "max |difference|"], dtype=object)
    note = (f"Self-attention on {r['n']} random tokens reordered as [{r['order']}], without and with the "
            f"sinusoidal encoding; the listing prints the booleans; {ROUND_OFF}.")
    return Table(data, {"holds": "{}", "max |difference|": "{:.1e}"}, note)


def build_positional_encoding(load):
    """Step 4: the sinusoidal positional encoding of the listing, position by dimension."""
    data = matrix(load("order_blindness", "encoding"), "position", "dimension", "value", "dim {}".format)
    note = ("PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d)); "
            "the listing prints position 1.")
    return Table(data, columns_formats(data, {"position"}, "{:.3f}"), note)


def _shape_of(r, prefix):
    """The shape held in the columns ``prefix_0``, ``prefix_1``, ..."""
    axes = sorted((c for c in r.index if c.startswith(prefix + "_")), key=lambda c: int(c.rsplit("_", 1)[1]))
    return shape(*(r[c] for c in axes))


def build_torch_modules(load):
    """The PyTorch section: SDPA against the formula, MultiheadAttention, a pre-norm encoder block."""
    r = one(load("torch_modules"))
    rows = [
        ("same as the formula (allclose, atol 1e-6)", r["same_as_formula"], "{}"),
        ("max |formula - SDPA|", r["formula_max_abs_diff"], "{:.1e}"),
        ("first row with causal mask equals V[0]", r["causal_first_row_equals_v0"], "{}"),
        ("max |causal row 0 - V[0]|", r["causal_first_row_max_abs_diff"], "{:.1e}"),
        ("multi-head output", _shape_of(r, "mha_output_dim"), "{}"),
        ("multi-head weights (averaged over heads)", _shape_of(r, "mha_weights_dim"), "{}"),
        ("encoder block output", _shape_of(r, "block_output_dim"), "{}"),
        ("block parameters", int(r["block_parameters"]), "{}"),
    ]
    note = (f"torch float32: SDPA on Q, K, V of {r['n']} x {r['d_k']}; MultiheadAttention and a pre-norm "
            f"GELU TransformerEncoderLayer (d_model {r['d_model']}, {r['heads']} heads, d_ff {r['d_ff']}) "
            f"on a batch of {r['batch']} x {r['tokens']} tokens; the differences are float32 round-off.")
    return quantities(rows, ["quantity", "value"], note)


def build_two_heads(load):
    """Multi-head attention: the weights of two heads with their own projections."""
    data = matrix(load("two_heads", "weights"), ["head", "query"], "key", "weight", "key {}".format)
    r = one(load("two_heads"))
    note = (f"{r['heads']} heads, each with its own W_q, W_k, W_v of {r['d_model']} x {r['d_k']}; "
            "the listing prints the row of token 0 of each head; "
            f"combined output {shape(r['combined_rows'], r['combined_cols'])}.")
    return Table(data, columns_formats(data, {"head", "query"}, "{:.2f}"), note)
