"""Tables of article 003, "Attention & Transformers" (lesson)."""

import pandas as pd

from attnrepro.report.formats import ROUND_OFF, columns_formats, matrix, one, quantities, shape, token_labels
from attnrepro.report.render import Table


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
