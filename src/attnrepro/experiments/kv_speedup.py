"""Beyond 001's key-value cache listing: the speed-up of the cache against the generated length.

The article says in words that the ratio grows with the generated length, because
without the cache every step recomputes keys and values of the whole prefix.
Same toy decoder and prompt as ``kv_cache`` (seed 5, same draw order), timed in the allocator's
steady state (experiments._allocator). Each repeat
is one sweep over the lengths; per length, the generation without cache is timed,
then the one with cache. Per length the minimum over repeats of each is kept
(load lengthens a time, never shortens it); their ratio and its growth per step
transfer between machines, the seconds do not. Each timed generation is one batch, timed again
on the same inputs when the process was descheduled during it
(experiments._timing.measure); ``main`` records per length the lowest ``cpu_share`` of its
batches, the most ``attempts``, ``disturbed`` (any batch) and the load before and after.

Tables: ``main`` (one row per length), ``repeats`` (one row per (length, mode,
repeat)), ``machine``.
"""

import numpy as np
import pandas as pd

from attnrepro.experiments._kv_toy import generate_with_cache, generate_without_cache
from attnrepro.experiments._allocator import steady_state
from attnrepro.experiments._timing import machine_table, measure, step_ratios, summary
from attnrepro.experiments.kv_cache import build, generation
from attnrepro.experiments.kv_cache import peak_memory  # noqa: F401 (its estimate: experiments.declared)

EXPERIMENT = {
    "article": "001",
    "order": 15,
    "section": "The key-value cache (speed-up against length, beyond the article)",
    "tables": ("main", "repeats", "machine"),
    "timing": True,
}

MODES = {"without_cache": generate_without_cache, "with_cache": generate_with_cache}


def run(params):
    machine = machine_table(steady_state())
    weights, prompt = build(params)
    h, lengths = params["heads"], params["generated"]
    repeats, deviation = [], dict.fromkeys(lengths, 0.0)
    batches = {steps: [] for steps in lengths}
    for r in range(params["repeats"]):
        for steps in lengths:
            rows = {}
            for mode, generate in MODES.items():
                batch = measure([(generate, (prompt, steps, weights, h))])
                rows[mode] = batch.result
                batches[steps].append(batch)
                repeats.append({"generated": steps, "mode": mode, "repeat": r, "seconds": batch.seconds[0],
                                "cpu_seconds": batch.cpu_seconds[0]})
            gap = float(np.abs(rows["without_cache"] - rows["with_cache"]).max())
            deviation[steps] = max(deviation[steps], gap)
    repeats = pd.DataFrame(repeats)

    fastest = repeats.groupby(["mode", "generated"])["seconds"].min()
    without = fastest["without_cache"].loc[lengths].to_numpy()
    with_cache = fastest["with_cache"].loc[lengths].to_numpy()
    speedup = without / with_cache
    main = pd.DataFrame({
        "seed": params["seed"], "layers": params["layers"], "heads": h, "d": params["d"],
        "prompt": params["prompt"], "repeats": params["repeats"], "generated": lengths,
        "max_deviation": [deviation[n] for n in lengths],
        "min_seconds_without_cache": without,  # machine-bound
        "min_seconds_with_cache": with_cache,  # machine-bound
        "speedup": speedup,
        "length_ratio": step_ratios(lengths),
        "speedup_growth": step_ratios(speedup),  # speed-up over the previous length's
        **pd.DataFrame([summary(batches[n]) for n in lengths]).to_dict("list"),  # measured
    })
    return {"main": main, "repeats": repeats, "machine": machine}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def work(p):
    return p["repeats"] * sum(generation(p, g) for g in p["generated"])
