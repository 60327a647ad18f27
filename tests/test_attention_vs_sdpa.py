"""000, listing 1: hand-written attention against torch's SDPA."""

import numpy as np


def test_published_weights_and_roundoff(run_case):
    tables = run_case("attention_vs_sdpa")
    main, w = tables["main"].iloc[0], tables["weights"]
    assert (main.weights_rows, main.weights_cols) == (5, 5)
    assert main.row_sum_max_deviation < 1e-15
    by_row = w.pivot(index="query", columns="key", values="weight").to_numpy()
    assert main.row_sum_max_deviation == np.abs(by_row.sum(axis=1) - 1).max()  # the stored weights' own
    # published 3.33e-16: a round-off figure, asserted as round-off
    assert 0 < main.max_abs_diff_torch < 1e-15
    first_row = w[w["query"] == 0].sort_values("key")["weight"].to_numpy()
    np.testing.assert_array_equal(np.round(first_row, 3), [0.367, 0.063, 0.113, 0.115, 0.342])
