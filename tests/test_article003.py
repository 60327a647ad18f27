"""Article 003 (lesson): self-attention on five tokens, saturation, causal mask, order, PyTorch, two heads.

Rounded values are compared as the lesson printed them (NumPy's round or the
same format spec); round-off figures are asserted below a tolerance.
"""

import numpy as np

ROUNDOFF = 1e-14

STEP1_ROWS = {  # step 1, printed with row.round(2)
    "Meera": [0.03, 0.32, 0.12, 0.51, 0.02],
    "bought": [0.56, 0.13, 0.05, 0.02, 0.24],
    "a": [0.45, 0.31, 0.02, 0.08, 0.14],
    "new": [0.08, 0.15, 0.5, 0.16, 0.11],
    "bat": [0.02, 0.38, 0.2, 0.39, 0.02],
}
CAUSAL_ROWS = {  # step 3
    "Meera": [1.0, 0.0, 0.0, 0.0, 0.0],
    "bought": [0.81, 0.19, 0.0, 0.0, 0.0],
    "a": [0.57, 0.4, 0.03, 0.0, 0.0],
    "new": [0.09, 0.17, 0.56, 0.18, 0.0],
    "bat": [0.02, 0.38, 0.2, 0.39, 0.02],
}


def matrix(table, value="weight"):
    """(n, n) matrix of a long (query, key, value) table."""
    return table.pivot(index="query", columns="key", values=value).to_numpy()


def rounded_rows(table):
    rows = table.sort_values(["query", "key"]).groupby("query_token", sort=False)["weight"]
    return {token: np.round(w.to_numpy(), 2).tolist() for token, w in rows}


def test_self_attention_tokens_published(run_case):
    tables = run_case("self_attention_tokens")
    main = tables["main"].iloc[0]
    assert (main.output_rows, main.output_cols) == (5, 4)
    assert (main.weights_rows, main.weights_cols) == (5, 5)
    assert np.round(matrix(tables["weights"]).sum(axis=1), 3).tolist() == [1.0] * 5
    assert main.row_sum_max_deviation < ROUNDOFF
    assert main.row_sum_max_deviation == np.abs(matrix(tables["weights"]).sum(axis=1) - 1).max()
    assert rounded_rows(tables["weights"]) == STEP1_ROWS


def test_saturation_published(run_case):
    main = run_case("saturation")["main"]
    assert main["d"].tolist() == [4, 64, 512]
    assert [format(v, "6.2f") for v in main.raw_score_std] == ["  0.48", "  5.73", " 14.71"]
    assert [format(v, ".2f") for v in main.max_weight_unscaled] == ["0.29", "0.94", "0.93"]
    assert [format(v, ".2f") for v in main.max_weight_scaled] == ["0.25", "0.38", "0.31"]


def test_causal_weights_published_and_exact_zeros(run_case):
    tables = run_case("causal_weights")
    weights = tables["weights"]
    allowed = matrix(weights, "allowed").astype(bool)
    np.testing.assert_array_equal(allowed.astype(int), np.tril(np.ones((5, 5), dtype=int)))
    w = matrix(weights)
    assert np.all(w[~allowed] == 0.0)  # exactly 0, from -inf before the softmax
    assert tables["main"].iloc[0].masked_weight_max == 0.0
    assert w[0, 0] == 1.0
    assert np.abs(w.sum(axis=1) - 1).max() < ROUNDOFF
    assert rounded_rows(weights) == CAUSAL_ROWS


def test_causal_last_row_equals_unmasked(run_case):
    # the last token sees every key: its row is step 1's row, bit for bit
    masked = matrix(run_case("causal_weights")["weights"])
    plain = matrix(run_case("self_attention_tokens")["weights"])
    np.testing.assert_array_equal(masked[-1], plain[-1])


def test_order_blindness_published(run_case):
    tables = run_case("order_blindness")
    main = tables["main"]
    assert main.outputs_move_with_tokens.dtype == bool
    assert main.outputs_move_with_tokens.iloc[0]
    assert 0 < main.error_without_positions.iloc[0] < ROUNDOFF  # round-off shows: not a value against itself
    assert main.order_changes_result_with_positions.iloc[0]
    enc = tables["encoding"]
    position_1 = enc[enc.position == 1].sort_values("dimension").value.to_numpy()
    assert np.round(position_1, 3).tolist() == [0.841, 0.54, 0.1, 0.995, 0.01, 1.0, 0.001, 1.0]


def test_torch_modules_published(run_case):
    main = run_case("torch_modules")["main"].iloc[0]
    assert main["same_as_formula"] and main["causal_first_row_equals_v0"]
    assert 0 < main["formula_max_abs_diff"] < 1e-6  # float32 round-off: two computations, not one twice
    assert tuple(main[f"mha_output_dim_{i}"] for i in range(3)) == (2, 10, 32)
    assert tuple(main[f"mha_weights_dim_{i}"] for i in range(3)) == (2, 10, 10)
    assert tuple(main[f"block_output_dim_{i}"] for i in range(3)) == (2, 10, 32)
    assert main["block_parameters"] == 8544


def test_two_heads_published(run_case):
    tables = run_case("two_heads")
    main, weights = tables["main"].iloc[0], tables["weights"]
    assert (main.combined_rows, main.combined_cols) == (5, 8)
    token_0 = weights[weights["query"] == 0].sort_values(["head", "key"])
    by_head = [np.round(g.weight.to_numpy(), 2).tolist() for _, g in token_0.groupby("head")]
    assert by_head == [[0.03, 0.32, 0.12, 0.51, 0.02], [0.19, 0.16, 0.3, 0.27, 0.08]]
    # head 0 draws the same numbers as step 1: the same weights, bit for bit
    step1 = matrix(run_case("self_attention_tokens")["weights"])
    np.testing.assert_array_equal(matrix(weights[weights["head"] == 0]), step1)
