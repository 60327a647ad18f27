"""Beyond 001's O(T²) listing: the exponent from a log grid of lengths, with an interval.

The causal float64 attention of ``causal_timing`` (same seed, ``rng.normal`` draws
of Q, K, V per n in grid order) is timed over a log grid of n, in the allocator's steady state
(experiments._allocator). After one untimed
warm-up sweep, each repeat is a *sweep*: one timed call per n, in grid order, so
that a burst of load spoils one sweep rather than one length. A sweep during which the timing
thread was descheduled is timed again on the same inputs (experiments._timing.measure);
``points`` records per n the CPU share of its calls and whether it was ``disturbed``, ``main``
the sweeps re-measured and whether any sweep stayed disturbed.

- Slope: least-squares slope of log(minimum over sweeps) against log(n); the
  minimum, as in the article, because load lengthens a time and never shortens it
  (the slope of the medians is kept beside it).
- 95% interval: percentile bootstrap over sweeps (whole sweeps resampled with
  replacement, ``bootstrap`` times, generator ``bootstrap_seed``), same statistic.
- Local slopes of the minima between neighbouring n show where the fit leaves the
  quadratic regime: an interval is quadratic when its local slope is within
  ``band`` of 2; the regime is the longest run of such intervals, fitted on its own.

Tables: ``main`` (one row: the fit), ``points`` (one row per n), ``repeats``
(one row per (n, sweep)), ``machine``.
"""

import numpy as np
import pandas as pd

from attnrepro.experiments._allocator import steady_state
from attnrepro.experiments._timing import local_slopes, loglog_slope, machine_table, measure, share
from attnrepro.experiments.causal_timing import causal_attention, causal_call, causal_float64
from attnrepro.experiments._memory import F64, ROW, largest, term
from attnrepro.experiments._prices import CELL, DRAW

EXPERIMENT = {
    "article": "001",
    "order": 13,
    "section": "The count that decides everything: O(T²) (log grid, beyond the article)",
    "tables": ("main", "points", "repeats", "machine"),
    "timing": True,
}


def sweep_seconds(inputs, sweeps):
    """(seconds, cpu_seconds, batches): (sweeps, len(inputs)) wall and thread CPU seconds, one
    warm-up sweep, then one timed call per input per sweep, each sweep measured as one batch."""
    for args in inputs:
        causal_attention(*args)
    calls = [(causal_attention, args) for args in inputs]
    batches = [measure(calls, keep_result=False) for _ in range(sweeps)]
    return (np.array([b.seconds for b in batches]), np.array([b.cpu_seconds for b in batches]), batches)


def bootstrap_slopes(lengths, seconds, draws, seed):
    """Slopes of log(minimum) against log(n) over ``draws`` resamplings of the sweeps (rows)."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, seconds.shape[0], size=(draws, seconds.shape[0]))
    minima = seconds[picks].min(axis=1)  # (draws, n)
    x = np.log(np.asarray(lengths, dtype=float))
    return np.polyfit(x, np.log(minima).T, 1)[0]  # (draws,)


def quadratic_run(in_band):
    """(first, last) point indices of the longest run of in-band intervals, or None.

    ``in_band[i]`` says whether the interval from point i-1 to point i is quadratic.
    """
    best, start = None, None
    for i, ok in enumerate(in_band):
        if ok and start is None:
            start = i - 1
        if start is not None and (not ok or i == len(in_band) - 1):
            last = i if ok else i - 1
            if best is None or last - start > best[1] - best[0]:
                best = (start, last)
            start = None
    return best


def run(params):
    machine = machine_table(steady_state())
    rng = np.random.default_rng(params["seed"])
    d_k, lengths, band = params["d_k"], params["n"], params["band"]
    inputs = [tuple(rng.normal(size=(n, d_k)) for _ in range(3)) for n in lengths]  # (n, d_k) x3
    seconds, cpu, batches = sweep_seconds(inputs, params["repeats"])  # (sweeps, n) each
    shares = np.array([share(cpu[:, j], seconds[:, j]) for j in range(len(lengths))])  # (n,)

    median, fastest = np.median(seconds, axis=0), seconds.min(axis=0)
    local = local_slopes(lengths, fastest)
    in_band = np.abs(local - 2) <= band  # NaN (first point) compares False
    boot = bootstrap_slopes(lengths, seconds, params["bootstrap"], params["bootstrap_seed"])
    regime = quadratic_run(in_band)
    lo, hi = regime if regime else (None, None)

    main = pd.DataFrame([{
        "seed": params["seed"], "d_k": d_k, "lengths": len(lengths),
        "n_min": min(lengths), "n_max": max(lengths), "repeats": params["repeats"],
        "slope": loglog_slope(lengths, fastest),
        "ci_low": float(np.percentile(boot, 2.5)), "ci_high": float(np.percentile(boot, 97.5)),
        "interval": "95% percentile bootstrap over sweeps, slope of minima",
        "bootstrap": params["bootstrap"], "bootstrap_seed": params["bootstrap_seed"],
        "slope_of_medians": loglog_slope(lengths, median),
        "band": band,
        "regime_n_low": lengths[lo] if regime else np.nan,
        "regime_n_high": lengths[hi] if regime else np.nan,
        "regime_slope": loglog_slope(lengths[lo:hi + 1], fastest[lo:hi + 1]) if regime else np.nan,
        "attempts": sum(b.attempts for b in batches),  # sweeps timed, re-measurements included
        "disturbed": any(b.disturbed for b in batches),
        "load_before": batches[0].load_before, "load_after": batches[-1].load_after,
    }])
    points = pd.DataFrame({
        "n": lengths, "median_seconds": median, "min_seconds": fastest,  # machine-bound
        "local_slope": local, "quadratic": in_band,
        "cpu_share": shares, "disturbed": shares < batches[0].min_share,  # over the kept sweeps' calls
    })
    repeats = pd.DataFrame([
        {"n": n, "sweep": s, "seconds": seconds[s, j], "cpu_seconds": cpu[s, j]}
        for s in range(seconds.shape[0]) for j, n in enumerate(lengths)
    ])
    return {"main": main, "points": points, "repeats": repeats, "machine": machine}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    lengths, d_k, repeats, draws = p["n"], p["d_k"], p["repeats"], p["bootstrap"]
    inputs = [term(3 * sum(lengths) * d_k * F64, "Q, K, V of every n: 3 x (n, d_k) float64", n=1, d_k=1)]
    timing = causal_float64(max(lengths), d_k, "n", "d_k")
    bootstrap = [
        term(3 * draws * repeats * len(lengths) * F64,
             "resampled sweeps: 3 x (bootstrap, repeats, len(n)) float64", bootstrap=1, repeats=1),
        term(repeats * len(lengths) * ROW, "repeats table: repeats x len(n) rows", repeats=1),
    ]
    return inputs + largest(timing, bootstrap)


def work(p):
    """A warm-up sweep and ``repeats`` sweeps over n, then the bootstrap of the sweeps' minima."""
    lengths, d_k, repeats = p["n"], p["d_k"], p["repeats"]
    sweeps = (repeats + 1) * sum(causal_call(n, d_k) for n in lengths)
    return sweeps + 3 * sum(lengths) * d_k * DRAW + p["bootstrap"] * repeats * len(lengths) * CELL
