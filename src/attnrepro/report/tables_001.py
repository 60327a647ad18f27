"""Tables of article 001, "95 - Attention, Derived in Full"."""

import numpy as np

from attnrepro.report.render import Table


def build_scale_table(load):
    """The √d_k table: scores and softmax statistics with and without the division."""
    df = load("scale_table").sort_values(["d_k", "scaled"])
    data = df[["d_k", "scaled", "var_dot", "sd_scores", "max_weight", "entropy", "sensitivity"]].copy()
    data["scaled"] = np.where(data["scaled"], "yes", "no")
    T = int(df["T"].iloc[0])
    note = (f"{int(df['repetitions'].iloc[0])} repetitions of {T} queries against {T} keys; "
            f"maximum entropy ln({T}) = {np.log(T):.4f}, maximum sensitivity 1 - 1/{T} = {1 - 1 / T:.4f}.")
    formats = {"var_dot": "{:.2f}", "sd_scores": "{:.3f}", "max_weight": "{:.4f}",
               "entropy": "{:.4f}", "sensitivity": "{:.4f}"}
    return Table(data.rename(columns={"scaled": "divided"}), formats, note)
