"""001, "The key-value cache": one generation without and one with the cache, and the memory formula.

One generator (seed 5) draws the weights of the toy decoder (four matrices per
layer, layer by layer), then the prompt (prompt x d). Both generations produce
``generated`` rows after the prompt; they are timed once each, in that order.
The maximum deviation between them is round-off; the times are machine-bound,
their ratio is what transfers. The timed generations run on the job's threads (every core of
the run, so they vary by machine); the deviation comes from the same two generations run again
on one BLAS thread, so that its last bits do not depend on the machine's core count.

The memory rows come from the cache formula: this model (T = prompt + generated,
batch 1, float64) and the realistic configurations of the config's ``realistic``
block (one row per count of key-value heads).

Tables: ``main`` (one row), ``memory`` (one row per configuration),
``repeats`` (one row per (mode, repeat)), ``machine``.
"""

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from attnrepro.experiments._kv_toy import (
    cache_bytes, draw_weights, generate_with_cache, generate_without_cache,
)
from attnrepro.experiments._timing import machine_table, timed


def build(params):
    """(weights, prompt) of the toy decoder, drawn from default_rng(seed) in the listing's order."""
    rng = np.random.default_rng(params["seed"])
    weights = draw_weights(rng, params["layers"], params["d"])
    prompt = rng.normal(size=(params["prompt"], params["d"]))  # (P, d)
    return weights, prompt


def memory_rows(params):
    """The cache formula for this model, then for each realistic key-value head count."""
    d, h, T = params["d"], params["heads"], params["prompt"] + params["generated"]
    configs = [{"label": "this model", "layers": params["layers"], "kv_heads": h,
                "d_head": d // h, "T": T, "batch": 1, "bytes_per_value": 8}]
    real = params["realistic"]
    configs += [{"label": "realistic", "layers": real["layers"], "kv_heads": kv,
                 "d_head": real["d_head"], "T": real["T"], "batch": real["batch"],
                 "bytes_per_value": real["bytes_per_value"]} for kv in real["kv_heads"]]
    rows = []
    for c in configs:
        total = cache_bytes(c["layers"], c["kv_heads"], c["d_head"], c["T"], c["batch"],
                            c["bytes_per_value"])
        rows.append({**c, "bytes": total, "mib": total / 2**20, "gib": total / 2**30})
    return pd.DataFrame(rows)


def deviation(prompt, steps, weights, h):
    """Max |without cache - with cache| of the two generations, on one BLAS thread."""
    with threadpool_limits(limits=1, user_api="blas"):
        without = generate_without_cache(prompt, steps, weights, h)
        with_cache = generate_with_cache(prompt, steps, weights, h)
    return float(np.abs(without - with_cache).max())


def run(params):
    machine = machine_table()
    weights, prompt = build(params)
    h, steps = params["heads"], params["generated"]
    _, t_without = timed(generate_without_cache, prompt, steps, weights, h)
    with_cache, t_with = timed(generate_with_cache, prompt, steps, weights, h)

    main = pd.DataFrame([{
        "seed": params["seed"], "layers": params["layers"], "heads": h, "d": params["d"],
        "prompt": params["prompt"], "generated": steps,
        "rows": with_cache.shape[0],
        "max_deviation": deviation(prompt, steps, weights, h),
        "seconds_without_cache": t_without,  # machine-bound
        "seconds_with_cache": t_with,  # machine-bound
        "speedup": t_without / t_with,
    }])
    repeats = pd.DataFrame([
        {"generated": steps, "mode": "without_cache", "repeat": 0, "seconds": t_without},
        {"generated": steps, "mode": "with_cache", "repeat": 0, "seconds": t_with},
    ])
    return {"main": main, "memory": memory_rows(params), "repeats": repeats, "machine": machine}
