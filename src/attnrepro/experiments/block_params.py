"""001, "The complete block, and the count of its parameters": 12 d^2 + 13 d against the tensors.

For each width in order, the decoder is initialised from one shared generator
(default_rng(seed), as in the listing) with d_ff = ff_factor * d, and the sizes
of the tensors of block 0 are summed. The breakdown of one width groups the
actual tensors of block 0 by role, beside the article's formula for each role.
"""

import numpy as np
import pandas as pd

from attnrepro.model.params import block_breakdown, block_count, block_formula, init_params
from attnrepro.experiments._memory import F64, largest_value, parameter_count, term
from attnrepro.experiments._prices import DRAW

EXPERIMENT = {
    "article": "001",
    "order": 6,
    "section": "The complete block, and the count of its parameters",
    "tables": ("main", "breakdown"),
    "derived": {
        "breakdown.actual_count": "a tensor's entries: a product of d and d_ff",
        "breakdown.formula_count": "the parameter formula of d and d_ff",
        "main.actual_count": "the block's entries: a product of d and d_ff",
        "main.d_ff": "4 d, by the block's definition",
        "main.formula_12d2_13d": "12 d^2 + 13 d",
    },
}


def run(params):
    rng = np.random.default_rng(params["seed"])
    rows, breakdown = [], None
    for d in params["widths"]:
        d_ff = params["ff_factor"] * d
        p = init_params(params["vocab"], d, params["layers"], d_ff, params["t_max"], rng)
        actual = block_count(p, 0)
        rows.append({"d": d, "d_ff": d_ff, "heads": params["heads"], "formula_12d2_13d": block_formula(d),
                     "actual_count": actual, "match": actual == block_formula(d)})
        if d == params["breakdown_width"]:
            breakdown = pd.DataFrame([
                {"d": d, "entry": entry, "tensors": ", ".join(names), "formula": formula,
                 "formula_count": value, "actual_count": count}
                for entry, names, formula, value, count in block_breakdown(p, 0, d)
            ])
        del p
    total = {"d": params["breakdown_width"], "entry": "TOTAL", "tensors": "b0.*", "formula": "12d^2 + 13d",
             "formula_count": block_formula(params["breakdown_width"]),
             "actual_count": int(breakdown["actual_count"].sum())}
    breakdown = pd.concat([breakdown, pd.DataFrame([total])], ignore_index=True)
    return {"main": pd.DataFrame(rows), "breakdown": breakdown}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    d = largest_value(p["widths"])
    count = parameter_count(p["vocab"], d, p["layers"], p["ff_factor"] * d, p["t_max"])
    return [
        term(count * F64, "one width's decoder tensors float64", widths=2, layers=1, ff_factor=1, vocab=1,
             t_max=1),
        # NumPy scales the temporary draw in place
        term(p["ff_factor"] * d * d * F64, "a draw: (d, d_ff) float64", widths=2, ff_factor=1),
    ]


def work(p):
    vocab, layers, f, t_max = p["vocab"], p["layers"], p["ff_factor"], p["t_max"]
    return sum(parameter_count(vocab, d, layers, f * d, t_max) for d in p["widths"]) * DRAW
