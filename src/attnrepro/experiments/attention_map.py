"""001, "The attention map, and why it is not an explanation": where each head looks.

Reads one trained decoder (the ``main`` and ``parameters`` tables of a ``train``
job, by default copy, L = 6, seed 0), runs the forward pass on the map sequence
[17 3 0 12 7 9 SEP 17 3 0 12 7] with the flags it was trained with, and keeps
the attention weights of every layer and head. For the queries that emit the
answer (from the separator on), the table gives the most-weighted key, its
offset from the query (``-6 constant`` when every answer row looks six back)
and the mean, smallest and largest of the row maxima.
"""

import numpy as np
import pandas as pd

from attnrepro.run import io
from attnrepro.model.decoder import Arch, attention_weights, forward
from attnrepro.model.params import init_params
from attnrepro.experiments._memory import F64, parameter_count, term
from attnrepro.experiments._prices import PARAM_ROW, decoder_step

EXPERIMENT = {
    "article": "001",
    "order": 10,
    "section": "The attention map, and why it is not an explanation",
    "tables": ("main", "weights"),
}


def load_trained(main, parameters):
    """The tensors of a train job, rebuilt from its long ``parameters`` table."""
    shapes = init_params(int(main["alphabet"]) + 1, int(main["d"]), int(main["layers"]), int(main["d_ff"]),
                         2 * int(main["L"]) + 1, np.random.default_rng(0))  # for names and shapes only
    p = {}
    for name, group in parameters.groupby("tensor", sort=False):
        values = group.sort_values("index")["value"].to_numpy()
        p[name] = values.reshape(shapes[name].shape)
    missing = set(shapes) - set(p)
    if missing:
        raise ValueError(f"parameters table lacks {sorted(missing)}")
    return {name: p[name] for name in shapes}


def head_summary(w, first_query):
    """Per head of one layer's weights w (h, T, T): argmax keys, offset, mean max weight."""
    rows = []
    for head in range(w.shape[0]):
        answer = w[head][first_query:]  # (T - first_query, T)
        choice = answer.argmax(-1)
        offset = choice - np.arange(first_query, w.shape[1])
        constant = bool((offset == offset[0]).all())
        rows.append({"head": head, "argmax_keys": str(choice), "argmax_list": choice.tolist(),
                     "constant": constant, "offset": int(offset[0]) if constant else None,
                     "deviation": f"{offset[0]:+d} constant" if constant else "variable",
                     "mean_max_weight": float(answer.max(-1).mean()),
                     # the spread of the row maxima ("from 0.99 to 1.00 of weight", 001's figure)
                     "min_max_weight": float(answer.max(-1).min()),
                     "max_max_weight": float(answer.max(-1).max())})
    return rows


def run(params, inputs):
    main = io.read_parquet(inputs["main"]).iloc[0]
    p = load_trained(main, io.read_parquet(inputs["parameters"]))
    sep = int(main["alphabet"])
    sequence = np.array([[sep if s == "SEP" else int(s) for s in params["sequence"]]])  # (1, T)
    arch = Arch(int(main["layers"]), int(main["heads"]), bool(main["scale"]), bool(main["post_ln"]))
    _, cache = forward(p, sequence, arch)
    first_query = int(np.flatnonzero(sequence[0] == sep)[0])  # the separator emits the first answer symbol
    run_columns = {"run": params["run"], "task": main["task"], "L": int(main["L"]), "seed": int(main["seed"]),
                   "sequence": " ".join(map(str, params["sequence"])), "first_query": first_query}
    rows, long = [], []
    for layer, w in enumerate(attention_weights(cache), start=1):
        w = w[0]  # (h, T, T) of the only sequence
        rows += [{"layer": layer, **r, **run_columns} for r in head_summary(w, first_query)]
        h, T, _ = w.shape
        hh, qq, kk = np.meshgrid(np.arange(h), np.arange(T), np.arange(T), indexing="ij")
        long.append(pd.DataFrame({"layer": layer, "head": hh.ravel(), "query": qq.ravel(),
                                  "key": kk.ravel(), "weight": w.ravel()}))
    main_table = pd.DataFrame(rows)
    main_table["offset"] = main_table["offset"].astype("Int64")
    return {"main": main_table, "weights": pd.concat(long, ignore_index=True)}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

# bytes per parameter while run reads train's parameters table back: Arrow's table, pandas'
# columns, the content hash's, groupby's sorted copies and the rebuilt tensors
TABLE_READ = 144  # (measured: 111, plus 12 MiB of Arrow's pool)

def peak_memory(p):
    """The trained decoder of the train case ``run``, read back from its parameters table, and
    one sequence through it. ``p["trained"]`` holds that case's parameters (the pre-flight adds
    them: :func:`attnrepro.dag.preflight.estimated_cases`); without them (a config without train, as
    ``python -m attnrepro run attention_map`` checks it), nothing: the model's sizes are unknown."""
    T, trained = len(p["sequence"]), p.get("trained")
    if not trained:
        return []
    layers, heads = trained["layers"], trained["heads"]
    count = parameter_count(trained["alphabet"] + 1, trained["d"], layers, trained["d_ff"],
                            2 * trained["L"] + 1)
    return [
        term(count * TABLE_READ, f"train case {p['run']}'s parameters table read back: one row per "
             "parameter", run=1),
        # np.meshgrid's three index arrays and the DataFrame of five columns
        term(layers * heads * T * T * 8 * F64, "the weights table: layers x heads x T x T rows",
             sequence=2),
    ]


def work(p):
    """The trained model's parameters table read back (none known without ``trained``: the
    pre-flight's estimated_cases adds it), then one sequence through it."""
    t = p.get("trained")
    if not t:
        return 0.0
    count = parameter_count(t["alphabet"] + 1, t["d"], t["layers"], t["d_ff"], 2 * t["L"] + 1)
    return count * PARAM_ROW + decoder_step(1, len(p["sequence"]), t["d"], t["heads"], t["layers"], t["d_ff"],
                                     t["alphabet"] + 1)
