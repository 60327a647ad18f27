"""001, "The key-value cache": one generation without and one with the cache, and the memory formula.

One generator (seed 5) draws the weights of the toy decoder (four matrices per
layer, layer by layer), then the prompt (prompt x d). Both generations produce
``generated`` rows after the prompt. A pass is the article's procedure: the weights and the prompt
drawn (a new generator of the seed: the same values each pass), then each generation timed once,
in that order. The job times ``passes`` passes in the allocator's steady state
(experiments._allocator); with ``article_code`` the article's own listing runs after each of
ours, in this process (experiments._article_code). ``main`` keeps each generation's minimum over
the passes (load lengthens a time, never shortens it) and the speed-up, the ratio of those minima;
``passes`` holds the same columns per pass, so that the speed-up comes with its independent
repeats. The maximum deviation between the two generations is round-off; the times are machine-bound,
their ratio is what transfers. The deviation comes from the same two generations run again on one
BLAS thread, so that its last bits do not depend on the machine's core count. The two
timed generations of a pass are one batch: when the process was descheduled during it, both
are timed again (experiments._timing.measure); each pass records ``cpu_share``, ``attempts``,
``disturbed`` and the load before and after, ``main`` the quietest pass's
(experiments._timing.quietest).

The memory rows come from the cache formula: this model (T = prompt + generated,
batch 1, float64) and the realistic configurations of the config's ``realistic``
block (one row per count of key-value heads).

``article_main`` and ``article_passes`` hold the same time columns for the article's code (empty
without ``article_code``), ``article_repeats`` its two timed generations per pass.

Tables: ``main`` (one row), ``passes`` (one row per pass), ``memory`` (one row per configuration),
``repeats`` (one row per (pass, mode)), ``machine``, ``article_main``, ``article_passes``,
``article_repeats``.
"""

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from attnrepro.experiments._kv_toy import (
    cache_bytes, draw_weights, generate_with_cache, generate_without_cache,
)
from attnrepro.experiments import _article_code
from attnrepro.experiments._allocator import steady_state
from attnrepro.experiments._timing import Batch, machine_table, measure, quietest
from attnrepro.experiments._memory import BOOL, F64, largest_value, term
from attnrepro.experiments._prices import CELL, FLOP, PREFIX_LAYER, TOKEN_LAYER, WEIGHT_BYTE

EXPERIMENT = {
    "article": "001",
    "order": 14,
    "section": "The key-value cache: what is kept, and how much it weighs",
    "tables": ("main", "passes", "memory", "repeats", "machine", "article_main", "article_passes",
               "article_repeats"),
    "timing": True,
    "article_code": 13,  # the article's listing that times the same computation (experiments._article_code)
    "derived": {
        "memory.T": "the configured length",
        "memory.batch": "the configured batch",
        "memory.d_head": "d / heads",
        "memory.gib": "the cache's bytes of its sizes, in GiB",
        "memory.kv_heads": "the configured heads of keys and values",
        "memory.mib": "the cache's bytes of its sizes, in MiB",
    },
}


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


def speed_columns(t_without, t_with):
    """The columns that derive from the two generations' seconds."""
    return {"seconds_without_cache": t_without,  # machine-bound
            "seconds_with_cache": t_with,  # machine-bound
            "speedup": t_without / t_with}


def time_pass(params):
    """One pass, the article's procedure: the weights and the prompt drawn, then the generation
    without the cache and the one with it, timed as one batch."""
    weights, prompt = build(params)
    args = (prompt, params["generated"], weights, params["heads"])
    return measure([(generate_without_cache, args), (generate_with_cache, args)])


def pass_rows(batches, steps):
    """``passes``: one row per pass, its two times, their ratio and its measurement's record."""
    return pd.DataFrame([{"pass": p, "generated": steps, **speed_columns(*b.seconds), **b.record()}
                         for p, b in enumerate(batches)],
                        columns=["pass", "generated", *speed_columns(1, 1), *Batch([], [], 1).record()])


def repeat_rows(batches, steps):
    """``repeats``: one row per (pass, mode) with its wall and CPU seconds."""
    return pd.DataFrame([
        {"pass": p, "generated": steps, "mode": mode, "repeat": 0, "seconds": s, "cpu_seconds": c}
        for p, b in enumerate(batches)
        for mode, s, c in zip(("without_cache", "with_cache"), b.seconds, b.cpu_seconds)
    ], columns=["pass", "generated", "mode", "repeat", "seconds", "cpu_seconds"])


def article_tables(batches, steps):
    """``article_main``, ``article_passes``, ``article_repeats``: the article's code's times, as ours."""
    seconds = np.array([b.seconds for b in batches]).reshape(-1, 2)  # (passes, 2)
    main = pd.DataFrame([{"generated": steps, **speed_columns(*seconds.min(axis=0)), **quietest(batches)}]
                        if batches else [],
                        columns=["generated", *speed_columns(1, 1), *Batch([], [], 1).record()])
    return {"article_main": main, "article_passes": pass_rows(batches, steps),
            "article_repeats": repeat_rows(batches, steps)}


def run(params, article_code=None):
    """The case's tables; ``article_code``: the article's listing (an _article_code.Program), timed
    after each of our passes when ``params["article_code"]``."""
    machine = machine_table(steady_state())
    h, steps = params["heads"], params["generated"]
    ours, theirs = [], []
    for _ in range(params["passes"]):
        ours.append(time_pass(params))
        if params.get("article_code"):
            theirs += _article_code.batches(article_code, [2])
    seconds = np.array([b.seconds for b in ours])  # (passes, 2): without, with the cache
    weights, prompt = build(params)
    main = pd.DataFrame([{
        "seed": params["seed"], "layers": params["layers"], "heads": h, "d": params["d"],
        "prompt": params["prompt"], "generated": steps, "passes": params["passes"],
        "rows": ours[-1].result.shape[0],
        "max_deviation": deviation(prompt, steps, weights, h),
        **speed_columns(*seconds.min(axis=0)),  # each the minimum over the passes
        **quietest(ours),  # cpu_share, attempts, disturbed, load: measured
    }])
    return {"main": main, "passes": pass_rows(ours, steps), "memory": memory_rows(params),
            "repeats": repeat_rows(ours, steps), "machine": machine, **article_tables(theirs, steps)}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def _sums(first, count):
    """(sum of T, sum of T^2) for T = first .. first + count - 1, in closed form."""
    last = first + count
    squares = (last - 1) * last * (2 * last - 1) // 6 - (first - 1) * first * (2 * first - 1) // 6
    return (last * (last - 1) - first * (first - 1)) // 2, squares


def generation(p, steps):
    """One generation of ``steps`` rows without the cache (every step reruns the prefix) and one
    with it (every step one row through each layer, reading its four (d, d) weights)."""
    layers, h, d, P = p["layers"], p["heads"], p["d"], p["prompt"]
    total, squares = _sums(P, steps)  # the prefix lengths T of the steps without cache
    without = layers * (steps * PREFIX_LAYER + (8 * total * d * d + 4 * squares * d) * FLOP
                        + (h + 2) * squares * CELL)  # h heads' cells and the mask's
    with_cache = (P - 1 + steps) * layers * (TOKEN_LAYER + 32 * d * d * WEIGHT_BYTE)
    return without + with_cache


def peak_memory(p):
    layers, h, d = p["layers"], p["heads"], p["d"]
    T = p["prompt"] + largest_value(p["generated"])
    # the softmax of the prefix's attention: 4 (heads, T, T); from 2 layers on, the previous
    # layer's weights too (``out, _ = attention(...)`` keeps them), and up to two more that the
    # heap keeps: the generation with cache, between two without, fragments it (measured)
    kept = 4 if layers == 1 else 7
    return [
        term(4 * layers * d * d * F64, "W_Q, W_K, W_V, W_O per layer: 4 x layers x (d, d) float64",
             layers=1, d=2),
        term(kept * h * T * T * F64 + 3 * T * T * BOOL,
             f"attention over the prefix without cache: {kept} x (heads, T, T) float64, "
             "T = prompt + generated", heads=1, prompt=2, generated=2),
        term((4 * layers + 8) * T * d * F64,
             "cache (with a copy) and prefix: (4 layers + 8) x (T, d) float64",
             layers=1, d=1, prompt=1, generated=1),
    ]


def work(p):
    """``passes`` timed pairs of generations (as many of the article's code), and the pair again for
    the deviation."""
    return ((2 if p.get("article_code") else 1) * p["passes"] + 1) * generation(p, p["generated"])
