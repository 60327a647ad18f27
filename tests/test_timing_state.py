"""What a timing job holds fixed (experiments._allocator, docs/outputs.md "Timings"), and its passes.

The minima are taken in fresh processes (tests/timing_probe.py, one BLAS thread): a process's
history is what is under test. A pair of measurements is taken again, up to ATTEMPTS times, while
either was disturbed (the Batch record says so); the minima are compared whatever the last says,
since load lengthens a time and the minimum of many calls rarely meets it.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from attnrepro.experiments import _allocator, _timing, causal_timing, kv_cache, quadratic_cost

from conftest import REPO

ATTEMPTS = 2  # the pair measured once, and once more if disturbed
CALLS = 30  # timed calls per size: 0.1 s at T = 512 in the steady state, 0.4 s at T = 1024


def minima(freed_mib=0, sizes=(512,), steady=True):
    """{T: (minimum seconds, disturbed)} of causal attention timed in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OPENBLAS_NUM_THREADS": "1"}
    query = {"steady": steady, "freed_mib": freed_mib, "sizes": list(sizes), "calls": CALLS}
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "timing_probe.py")], input=json.dumps(query),
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {int(T): tuple(found) for T, found in json.loads(proc.stdout).items()}


def quiet_pair(first, second):
    """Two measurements ({T: (seconds, disturbed)}), taken again while either was disturbed."""
    for _ in range(ATTEMPTS):
        a, b = first(), second()
        if not any(disturbed for _, disturbed in [*a.values(), *b.values()]):
            break
    return a, b


def apart(a, b):
    """{T: the larger minimum over the smaller} of two measurements."""
    return {T: max(a[T][0], b[T][0]) / min(a[T][0], b[T][0]) for T in a}


def test_a_freed_large_array_does_not_move_the_minimum():
    """A 16 MiB array freed first (by default, glibc then serves 2 MiB blocks from its heap and keeps
    them: 2.3x faster here) or none: at T = 512 the minima agree within AGREEMENT."""
    after_one, after_none = quiet_pair(lambda: minima(freed_mib=16), lambda: minima())
    assert apart(after_one, after_none)[512] <= _timing.AGREEMENT, (after_one, after_none)


def test_the_order_of_sizes_does_not_move_a_minimum():
    """512 then 1024, or 1024 then 512 (by default, 1024's freed blocks raise glibc's thresholds
    before 512 is timed): each minimum within AGREEMENT of the other order's."""
    ascending, descending = quiet_pair(lambda: minima(sizes=(512, 1024)), lambda: minima(sizes=(1024, 512)))
    ratios = apart(ascending, descending)
    assert set(ratios) == {512, 1024} and max(ratios.values()) <= _timing.AGREEMENT, (ascending, descending)


# --- the steady state's record ------------------------------------------------------------------

class FakeLibc:
    """A C library whose mallopt answers ``answer`` and records its calls."""

    def __init__(self, answer):
        self.answer, self.calls = answer, []

    def mallopt(self, param, value):
        self.calls.append((param, value))
        return self.answer


def test_the_steady_state_sets_both_thresholds_and_says_so():
    libc = FakeLibc(1)
    record = _allocator.steady_state(libc=(libc, "2.99"))
    assert libc.calls == [(-3, 256 * 2**20), (-1, 2**30)]
    assert record == {"allocator": "glibc 2.99",
                      "malloc_mmap_threshold": 256 * 2**20, "malloc_mmap_accepted": True,
                      "malloc_trim_threshold": 2**30, "malloc_trim_accepted": True}


def test_a_refused_threshold_is_recorded_as_refused():
    record = _allocator.steady_state(libc=(FakeLibc(0), "2.99"))
    assert record["malloc_mmap_accepted"] is False and record["malloc_trim_accepted"] is False


def test_without_glibc_nothing_is_controlled():
    record = _allocator.steady_state(libc=(None, None))
    assert record == {"allocator": "not controlled",
                      "malloc_mmap_threshold": None, "malloc_mmap_accepted": False,
                      "malloc_trim_threshold": None, "malloc_trim_accepted": False}


def test_the_thresholds_exceed_what_a_timing_experiment_allocates():
    """The largest array: timing_exponent's n = 4096 float64 scores; the most one call holds: four of
    them and the mask's three bool (causal_timing.causal_float64)."""
    n = 4096
    assert n * n * 8 < _allocator.MMAP_THRESHOLD
    assert n * n * (4 * 8 + 3) < _allocator.TRIM_THRESHOLD


# --- passes: the article's procedure repeated on inputs drawn once -------------------------------

@pytest.fixture
def quiet(monkeypatch):
    """Every batch counts as quiet: one batch per measurement, so the calls can be counted."""
    monkeypatch.setattr(_timing, "MIN_SHARE", 0.0)


def recorder(monkeypatch, module, name):
    """Replace ``module.name`` by a wrapper that records each call's arguments: the list of them."""
    calls, fn = [], getattr(module, name)

    def wrapped(*args):
        calls.append(args)
        return fn(*args)

    monkeypatch.setattr(module, name, wrapped)
    return calls


def same_arrays(args, drawn):
    return len(args) >= len(drawn) and all(np.array_equal(a, b) for a, b in zip(args, drawn))


def test_causal_timing_passes_repeat_the_procedure_on_the_same_draws(run_case, default_config, monkeypatch,
                                                                      quiet):
    calls = recorder(monkeypatch, causal_timing, "causal_attention")
    out = run_case("causal_timing", T=[16, 64], trials=[3, 2], passes=3)
    # per pass, per T in the article's order: the warm-up and the trials
    assert [args[0].shape[0] for args in calls] == ([16] * 4 + [64] * 3) * 3
    rng = np.random.default_rng(default_config["causal_timing"]["seed"])  # as the listing draws
    drawn = {T: [rng.normal(size=(T, 64)) for _ in range(3)] for T in (16, 64)}
    assert all(same_arrays(args, drawn[args[0].shape[0]]) for args in calls)
    main, passes, repeats = out["main"], out["passes"], out["repeats"]
    assert list(passes["pass"]) == [0, 0, 1, 1, 2, 2] and list(passes["T"]) == [16, 64] * 3
    assert set(passes.columns) - {"pass"} <= set(main.columns)
    assert list(main["passes"]) == [3, 3] and len(repeats) == 3 * (3 + 2)
    per_pass = repeats.groupby(["pass", "T"])["seconds"].min() * 1000
    assert list(passes["min_ms"]) == list(per_pass)
    assert list(main["min_ms"]) == list(passes.groupby("T")["min_ms"].min())
    assert main["time_ratio"].iloc[1] == main["min_ms"].iloc[1] / main["min_ms"].iloc[0]
    pass_two = passes[passes["pass"] == 2]
    assert pass_two["time_ratio"].iloc[1] == pass_two["min_ms"].iloc[1] / pass_two["min_ms"].iloc[0]


def test_quadratic_cost_pools_every_run_of_every_pass(run_case, default_config, monkeypatch, quiet):
    calls = recorder(monkeypatch, quadratic_cost, "attention_float32")
    out = run_case("quadratic_cost", n=[16, 32], runs=2, passes=3)
    assert [args[0].shape[0] for args in calls] == [16, 16, 32, 32] * 3
    rng = np.random.default_rng(default_config["quadratic_cost"]["seed"])
    drawn = {n: [rng.standard_normal((n, 64)).astype(np.float32) for _ in range(3)] for n in (16, 32)}
    assert all(same_arrays(args, drawn[args[0].shape[0]]) for args in calls)
    main, passes, repeats = out["main"], out["passes"], out["repeats"]
    assert len(passes) == 3 * 2 and set(passes.columns) - {"pass"} <= set(main.columns)
    pooled = [np.mean(repeats.loc[repeats["n"] == n, "seconds"].to_numpy()) for n in (16, 32)]
    assert list(main["mean_seconds"]) == pooled
    assert list(main["min_seconds"]) == list(passes.groupby("n")["min_seconds"].min())
    one = repeats[(repeats["pass"] == 1) & (repeats["n"] == 32)]["seconds"].to_numpy()
    assert passes.set_index(["pass", "n"]).loc[(1, 32), "mean_seconds"] == np.mean(one)


def test_kv_cache_keeps_each_generations_minimum_over_the_passes(run_case, default_config, monkeypatch,
                                                                 quiet):
    calls = recorder(monkeypatch, kv_cache, "generate_with_cache")
    out = run_case("kv_cache", layers=2, heads=2, d=8, prompt=4, generated=5, passes=3)
    assert len(calls) == 3 + 1  # one timed per pass, one for the deviation
    rng = np.random.default_rng(default_config["kv_cache"]["seed"])  # the weights layer by layer, the prompt
    weights = [rng.normal(size=(8, 8)) / np.sqrt(8) for _ in range(2 * 4)]
    prompt = rng.normal(size=(4, 8))
    assert all(np.array_equal(args[0], prompt) and args[1] == 5 for args in calls)
    assert all(same_arrays([w for layer in args[2] for w in layer], weights) for args in calls)
    main, passes = out["main"].iloc[0], out["passes"]
    assert list(passes["pass"]) == [0, 1, 2] and set(passes.columns) - {"pass"} <= set(out["main"].columns)
    for column in ("seconds_without_cache", "seconds_with_cache"):
        assert main[column] == passes[column].min()
    assert main["speedup"] == passes["seconds_without_cache"].min() / passes["seconds_with_cache"].min()
    assert main["passes"] == 3 and len(out["repeats"]) == 3 * 2
