"""Shared pieces of the timing experiments: clocks, log-log fits, the machine description.

Raw seconds belong to the machine that measured them; what transfers between
machines are exponents (slopes in the log-log plane), ratios and memory. Every
timing experiment therefore stores each repeat, the derived slopes and ratios,
and a ``machine`` table taken at the start of the job, before anything is timed.
"""

import time

import numpy as np
import pandas as pd

from attnrepro.run import provenance
from attnrepro.numerics import threads


def timed(fn, *args):
    """(result, seconds) of one call ``fn(*args)``, wall time from ``time.perf_counter``."""
    t0 = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - t0


def trial_seconds(fn, args, trials, warmup=1):
    """Seconds of ``trials`` calls ``fn(*args)``, after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn(*args)
    return [timed(fn, *args)[1] for _ in range(trials)]


def loglog_slope(sizes, times):
    """Least-squares slope of log(time) against log(size): the exponent of a power law."""
    x = np.log(np.asarray(sizes, dtype=float))
    y = np.log(np.asarray(times, dtype=float))
    return float(np.polyfit(x, y, 1)[0])


def local_slopes(sizes, times):
    """Slope between each point and the previous one (NaN for the first): len(sizes) values."""
    x = np.log(np.asarray(sizes, dtype=float))
    y = np.log(np.asarray(times, dtype=float))
    return np.concatenate([[np.nan], np.diff(y) / np.diff(x)])


def step_ratios(values):
    """values[i] / values[i-1] (NaN for the first): how much a quantity grows per grid step."""
    v = np.asarray(values, dtype=float)
    return np.concatenate([[np.nan], v[1:] / v[:-1]])


def machine_table():
    """The machine as it is now: one row per BLAS/OpenMP library loaded in this process.

    CPU model, cores, system, load average (1, 5, 15 min), the threads the job asked for and
    the limit it ran with (at most the CPUs it may use: attnrepro.numerics.threads), and each library's
    kernel, version and thread pool size as the library reports it (what really runs).
    """
    m = provenance.machine()
    load = m["load_average"] or (np.nan, np.nan, np.nan)
    base = {
        "cpu": m["cpu"], "cores": m["cores"], "system": m["system"],
        "load_1min": load[0], "load_5min": load[1], "load_15min": load[2],
        "openblas_coretype": m["openblas_coretype"], "threads_limit": threads.current(),
        "threads_asked": threads.asked(), "cpus_available": threads.available(),
    }
    libraries = provenance.blas() or [{}]
    return pd.DataFrame([
        {**base, **{f"blas_{k}": lib.get(k) for k in
                    ("internal_api", "version", "architecture", "num_threads", "threading_layer")}}
        for lib in libraries
    ])
