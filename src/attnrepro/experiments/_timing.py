"""Shared pieces of the timing experiments: clocks, log-log fits, the machine description.

Raw seconds belong to the machine that measured them; what transfers between
machines are exponents (slopes in the log-log plane), ratios and memory. Every
timing experiment therefore stores each repeat, the derived slopes and ratios,
and a ``machine`` table taken at the start of the job, before anything is timed.

A busy machine lengthens a time (never shortens it), so every batch of timed calls is checked
(:func:`measure`): beside each call's wall time it reads the CPU time of the whole process (every
thread), the CPU clock read outside the wall interval. A timing job runs its BLAS on one thread
(the rules give it ``--threads 1`` while it holds every core of the run, so that nothing runs beside
it), so a batch whose process held a core for less than :data:`MIN_SHARE` of its wall time was
descheduled: another process took the core. Such a batch is timed again, on the same inputs (nothing is drawn
anew), after a pause of :data:`PAUSE` seconds, up to :data:`ATTEMPTS` batches in all; the quietest
batch is kept. Each timing table records what happened: ``cpu_share`` (of the kept batch),
``attempts``, ``disturbed`` (no batch reached the share) and the 1-minute load average before and
after (``load_before``, ``load_after``). The ledger judges a claim read from a disturbed
measurement "disturbed", never "differs" (:mod:`attnrepro.report.ledger.disturbed`).

What moved a minimum besides load is held fixed: the allocator's thresholds
(:func:`attnrepro.experiments._allocator.steady_state`, called first in every timing job's run and
recorded in its ``machine`` table), a warm-up before the timed calls, and the sizes visited in the
article's order. In that state two minima of one function at one size agree within
:data:`AGREEMENT`, whatever ran before and whichever order visited the sizes. docs/outputs.md,
"Timings", says what is controlled and why.
"""

import os
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from attnrepro.run import provenance
from attnrepro.numerics import threads


MIN_SHARE = 0.9  # a batch whose process ran less than this share of its wall time was descheduled
ATTEMPTS = 3  # timed batches per measurement at most: the first and up to two re-measurements
PAUSE = 1.0  # seconds slept before a re-measurement (at most the last batch's wall time): a burst may pass
CLOCKS = (time.perf_counter, time.process_time)  # (wall, CPU time of the process: every thread)
# Two minima of one function at one size, taken in one steady state (_allocator.steady_state), agree
# within this factor, whatever ran before, whichever order visited the sizes, and whether the calls
# came in a row or one per sweep. Measured on 2026-12-04 (causal attention, d_k 64, one thread, this
# project's 2-core machine kind): at T = 512, 2.78 to 2.89 ms after a freed 16 MiB array or none, in
# either order; causal_timing's trials in a row against timing_exponent's sweeps (each call after a
# larger one, its caches cold) 1.24x apart at T = 128, 1.1x at 512, 1.0x at 2048. The default
# allocator moved one minimum 2.2x to 3.8x; this factor lies between the two.
AGREEMENT = 1.5


def one_minute_load():
    """The 1-minute load average of the machine (NaN where the system has none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return float("nan")


@dataclass
class Batch:
    """The kept batch of one measurement: per call its wall and process CPU seconds."""

    seconds: list  # wall time of each timed call, in call order
    cpu_seconds: list  # CPU time of the process around each call (its clock read outside the wall's)
    attempts: int  # batches timed (1: the first was quiet)
    load_before: float = float("nan")
    load_after: float = float("nan")
    result: object = field(default=None, repr=False)  # what the last timed call returned
    min_share: float = MIN_SHARE

    @property
    def cpu_share(self):
        """CPU time of the process over wall time, over the whole batch (1: never descheduled)."""
        return share(self.cpu_seconds, self.seconds)

    @property
    def disturbed(self):
        return bool(self.cpu_share < self.min_share)

    def record(self):
        """The columns a timing table records for this measurement."""
        return {"cpu_share": self.cpu_share, "attempts": self.attempts, "disturbed": self.disturbed,
                "load_before": self.load_before, "load_after": self.load_after}


def share(cpu_seconds, seconds):
    wall = float(sum(seconds))
    return float(sum(cpu_seconds)) / wall if wall > 0 else 1.0


def measure(calls, warmup=(), attempts=None, min_share=None, pause=None, clocks=None, sleep=time.sleep,
            keep_result=True):
    """Time ``calls`` ([(fn, args)], in order) as one batch, after the untimed ``warmup`` calls;
    time the same batch again, on the same arguments, while its CPU share is below ``min_share``,
    at most ``attempts`` batches in all, sleeping ``pause`` seconds (at most the last batch's wall
    time) before each new one. Returns the quietest batch (highest share; the first that reaches
    ``min_share``). Defaults: the module's MIN_SHARE, ATTEMPTS, PAUSE and CLOCKS (read at the call,
    so a test may set them). ``keep_result=False`` keeps no result in the Batch: a result kept
    until the end of a job pins the heap block it sits in, and a later pass faults in a new one."""
    attempts = ATTEMPTS if attempts is None else attempts
    min_share = MIN_SHARE if min_share is None else min_share
    pause = PAUSE if pause is None else pause
    wall_clock, cpu_clock = clocks or CLOCKS
    if attempts < 1:
        raise ValueError(f"attempts must be >= 1, got {attempts}")
    load_before, best, seconds = one_minute_load(), None, []
    for attempt in range(1, attempts + 1):
        if attempt > 1:  # a short batch waits as long as it took: re-measuring costs it at most 2x
            sleep(min(pause, sum(seconds)))
        for fn, args in warmup:
            fn(*args)
        seconds, cpu, result = [], [], None
        for fn, args in calls:
            c0 = cpu_clock()  # the CPU clock outside the wall interval: it adds nothing to the time
            w0 = wall_clock()
            result = fn(*args)
            w1 = wall_clock()
            c1 = cpu_clock()
            seconds.append(w1 - w0)
            cpu.append(c1 - c0)
        if best is None or share(cpu, seconds) > share(best.cpu_seconds, best.seconds):
            best = Batch(seconds, cpu, attempt, load_before, result=result if keep_result else None,
                         min_share=min_share)
        if share(cpu, seconds) >= min_share:
            break
    best.attempts, best.load_after = attempt, one_minute_load()
    return best


def repeat_table(sizes, batches, size, call):
    """One row per (pass, size, call) of ``batches`` ([pass][size] -> Batch) with its wall and CPU
    seconds; ``size`` and ``call`` name the size and call columns ("n", "run"; "T", "trial")."""
    return pd.DataFrame([
        {"pass": p, size: value, call: i, "seconds": s, "cpu_seconds": c}
        for p, row in enumerate(batches) for value, batch in zip(sizes, row)
        for i, (s, c) in enumerate(zip(batch.seconds, batch.cpu_seconds))],
        columns=["pass", size, call, "seconds", "cpu_seconds"])


def quietest(batches):
    """The record behind a minimum over several batches: the quietest batch's (highest share). Load
    lengthens a time, never shortens it, so a minimum is disturbed only when every batch was."""
    return max(batches, key=lambda b: b.cpu_share).record()


def summary(batches):
    """The record of several batches behind one row: the lowest share, the most attempts, disturbed
    when any was, the load before the first and after the last."""
    worst = min(batches, key=lambda b: b.cpu_share)
    return {"cpu_share": worst.cpu_share, "attempts": max(b.attempts for b in batches),
            "disturbed": any(b.disturbed for b in batches),
            "load_before": batches[0].load_before, "load_after": batches[-1].load_after}


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


def machine_table(allocator):
    """The machine as it is now: one row per BLAS/OpenMP library loaded in this process.

    CPU model, cores, system, load average (1, 5, 15 min), the threads the job asked for and
    the limit it ran with (at most the CPUs it may use: attnrepro.numerics.threads), each library's
    kernel, version and thread pool size as the library reports it (what really runs), and the
    ``allocator`` state the job set (the record of :func:`attnrepro.experiments._allocator.steady_state`).
    """
    m = provenance.machine()
    load = m["load_average"] or (np.nan, np.nan, np.nan)
    base = {
        "cpu": m["cpu"], "cores": m["cores"], "system": m["system"],
        "load_1min": load[0], "load_5min": load[1], "load_15min": load[2],
        "openblas_coretype": m["openblas_coretype"], "threads_limit": threads.current(),
        "threads_asked": threads.asked(), "cpus_available": threads.available(), **allocator,
        "agreement": AGREEMENT,  # what the ledger's cross-check of two experiments' minima allows
    }
    libraries = provenance.blas() or [{}]
    return pd.DataFrame([
        {**base, **{f"blas_{k}": lib.get(k) for k in
                    ("internal_api", "version", "architecture", "num_threads", "threading_layer")}}
        for lib in libraries
    ])
