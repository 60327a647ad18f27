"""The timing experiments (000 n² cost; 001 O(T²), key-value cache; their extensions).

Tiny sizes only, and never a speed: shapes, exact memory columns, the agreement
of cached and uncached generation, the fitting helpers on synthetic data, and the
refusal of bad timing grids.
"""

import copy
import re

import numpy as np
import pytest

from attnrepro.dag import config as cfg
from attnrepro.dag import plan
from attnrepro.core.attention import attention
from attnrepro.experiments import _allocator, _kv_toy, _timing, kv_cache, timing_exponent
from attnrepro.experiments.causal_timing import causal_attention
from attnrepro.experiments.quadratic_cost import attention_float32

TINY = {
    "quadratic_cost": {"n": [8, 16, 32], "runs": 2, "passes": 2, "article_code": False},
    "causal_timing": {"T": [8, 32], "trials": [3, 2], "passes": 2, "article_code": False},
    "timing_exponent": {"n": [8, 16, 32, 64], "repeats": 3, "bootstrap": 50},
    "kv_cache": {"layers": 2, "heads": 2, "d": 8, "prompt": 4, "generated": 5, "passes": 2,
                 "article_code": False},
    "kv_speedup": {"layers": 2, "heads": 2, "d": 8, "prompt": 4, "generated": [1, 2, 3], "repeats": 2},
    "score_memory": {"d": 8, "n": [64, 128]},
}
MACHINE_COLUMNS = {"cpu", "cores", "load_1min", "threads_limit", "blas_internal_api", "blas_num_threads"}
ALLOCATOR_COLUMNS = ("allocator", "malloc_mmap_threshold", "malloc_mmap_accepted", "malloc_trim_threshold",
                     "malloc_trim_accepted")


@pytest.fixture(scope="module")
def tiny(run_case):
    return {exp: run_case(exp, **overrides) for exp, overrides in TINY.items()}


@pytest.mark.parametrize("exp", sorted(TINY))
def test_tables_match_the_plan_and_describe_the_machine(tiny, exp):
    entry = plan.EXPERIMENTS[exp]
    assert entry.timing
    assert list(tiny[exp]) == list(entry.tables) and entry.tables[0] == "main"
    machine = tiny[exp]["machine"]
    assert len(machine) >= 1 and MACHINE_COLUMNS <= set(machine.columns)
    # the allocator's steady state the job set: on glibc (this project's machines) both thresholds, accepted
    libc, version = _allocator.glibc()
    set_here = (f"glibc {version}", _allocator.MMAP_THRESHOLD, True, _allocator.TRIM_THRESHOLD, True)
    expected = set_here if libc else ("not controlled", None, False, None, False)
    recorded = [tuple(row) for row in machine[list(ALLOCATOR_COLUMNS)].itertuples(index=False)]
    assert recorded == [expected] * len(machine)


def test_quadratic_cost_shapes_and_exact_cells(tiny, run_case):
    main, repeats = tiny["quadratic_cost"]["main"], tiny["quadratic_cost"]["repeats"]
    assert list(main["n"]) == [8, 16, 32] and len(repeats) == 2 * 3 * 2
    np.testing.assert_array_equal(main["cells_ratio"].iloc[1:], [4.0, 4.0])
    assert (repeats["seconds"] > 0).all() and np.isfinite(main["loglog_slope"]).all()
    # the article's grid, one run each: 1, 4, 16, 64 MiB of float32 scores
    article = run_case("quadratic_cost", runs=1, passes=1)["main"]
    assert list(article["cells"]) == [262144, 1048576, 4194304, 16777216]
    assert list(article["mib_float32"]) == [1.0, 4.0, 16.0, 64.0]


def test_float32_attention_stays_float32_and_agrees_with_float64():
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((16, 8)) for _ in range(3))
    out32 = attention_float32(*(M.astype(np.float32) for M in (Q, K, V)))
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32, attention(Q, K, V)[0], atol=1e-5)


def test_causal_timing_shapes_and_memory_columns(tiny, run_case):
    main, repeats = tiny["causal_timing"]["main"], tiny["causal_timing"]["repeats"]
    assert list(main["T"]) == [8, 32] and len(repeats) == 2 * (3 + 2)
    assert main["length_ratio"].iloc[1] == 4 and main["matrix_ratio"].iloc[1] == 16
    article = run_case("causal_timing", trials=[1, 1, 1], passes=1)["main"]
    assert [f"{v:.2f}" for v in article["matrix_mib"]] == ["0.12", "2.00", "32.00"]
    assert [f"{v:.2f}" for v in article["qkv_mib"]] == ["0.19", "0.75", "3.00"]


def test_causal_attention_is_the_listing_arithmetic():
    rng = np.random.default_rng(0)
    Q, K, V = (rng.normal(size=(32, 8)) for _ in range(3))
    S = np.where(np.tril(np.ones((32, 32), dtype=bool)), (Q @ K.T) / np.sqrt(8), -np.inf)
    S = S - S.max(axis=-1, keepdims=True)
    P = np.exp(S) / np.exp(S).sum(axis=-1, keepdims=True)
    np.testing.assert_array_equal(causal_attention(Q, K, V), P @ V)


def test_kv_cache_generations_agree(tiny, default_config):
    main = tiny["kv_cache"]["main"].iloc[0]
    assert main["rows"] == 4 + 5
    # round-off (the cached steps multiply other shapes): not 0, which is one generation against itself
    assert 0 < main["max_deviation"] < 1e-12
    assert len(tiny["kv_cache"]["repeats"]) == 2 * 2
    # ... and it is the two generations' gap, recomputed here from the same weights and prompt
    weights, prompt = kv_cache.build({**default_config["kv_cache"], **TINY["kv_cache"]})
    without = _kv_toy.generate_without_cache(prompt, 5, weights, 2)
    assert np.abs(without - _kv_toy.generate_with_cache(prompt, 5, weights, 2)).max() == main["max_deviation"]


def test_kv_cache_memory_rows_are_the_articles(default_config):
    memory = kv_cache.memory_rows(default_config["kv_cache"])
    assert list(memory["label"]) == ["this model", "realistic", "realistic"]
    assert memory["mib"].iloc[0] == 2.5  # T = 160, float64
    assert list(memory["kv_heads"].iloc[1:]) == [32, 1]
    assert memory["gib"].iloc[1] == 2.0 and memory["gib"].iloc[2] == 0.0625
    assert [f"{g:.3f}" for g in memory["gib"].iloc[1:]] == ["2.000", "0.062"]


def test_kv_speedup_shapes_and_agreement(tiny):
    main, repeats = tiny["kv_speedup"]["main"], tiny["kv_speedup"]["repeats"]
    assert list(main["generated"]) == [1, 2, 3]
    assert len(repeats) == 3 * 2 * 2 and set(repeats["mode"]) == {"with_cache", "without_cache"}
    assert (main["max_deviation"] < 1e-12).all() and (main["speedup"] > 0).all()
    assert (main["max_deviation"] > 0).all()  # round-off at every length, not 0.0 from a self-comparison


def test_timing_exponent_shapes(tiny):
    t = tiny["timing_exponent"]
    main = t["main"].iloc[0]
    assert len(t["main"]) == 1 and len(t["points"]) == 4 and len(t["repeats"]) == 4 * 3
    assert main["ci_low"] <= main["ci_high"] and np.isfinite(main["slope"])
    local = t["points"]["local_slope"]
    assert np.isnan(local.iloc[0]) and np.isfinite(local.iloc[1:]).all()


def test_score_memory_formula_and_traced_peak(tiny):
    main = tiny["score_memory"]["main"]
    assert len(main) == 2 * 2
    assert list(main["formula_bytes"]) == [64 * 64 * 4, 64 * 64 * 8, 128 * 128 * 4, 128 * 128 * 8]
    # the score matrix is really allocated, and tracemalloc sees NumPy's buffers
    assert (main["peak_bytes"] >= main["formula_bytes"]).all()


def test_slopes_on_synthetic_power_laws():
    n = np.array([64, 128, 256, 512, 1024])
    assert _timing.loglog_slope(n, 3e-9 * n.astype(float) ** 2) == pytest.approx(2, abs=1e-12)
    np.testing.assert_allclose(_timing.local_slopes(n, 5.0 * n**3.0)[1:], 3.0, rtol=1e-12)
    np.testing.assert_array_equal(_timing.step_ratios([1, 4, 16])[1:], [4.0, 4.0])


def test_quadratic_run_finds_the_longest_band():
    # intervals: point 0 has none; 1-2 out, 3-5 in, 6 out, 7 in
    in_band = [False, False, False, True, True, True, False, True]
    assert timing_exponent.quadratic_run(in_band) == (2, 5)
    assert timing_exponent.quadratic_run([False, True, True]) == (0, 2)
    assert timing_exponent.quadratic_run([False, False]) is None


def test_bootstrap_of_an_exact_power_law_is_exact():
    n = [16, 32, 64, 128]
    seconds = np.array([[1e-6 * k * m**2 for m in n] for k in (1.0, 1.5, 2.0)])  # 3 sweeps
    slopes = timing_exponent.bootstrap_slopes(n, seconds, 20, 0)
    np.testing.assert_allclose(slopes, 2.0, rtol=1e-12)


@pytest.mark.parametrize("section, key, value, where", [
    ("causal_timing", "T", [], "causal_timing.T"),
    ("quadratic_cost", "n", [512, 0], "quadratic_cost.n[1]"),
    ("timing_exponent", "n", [64, -128], "timing_exponent.n[1]"),
    ("kv_speedup", "generated", [], "kv_speedup.generated"),
    ("causal_timing", "trials", [400, 60], "causal_timing.trials"),
])
def test_bad_timing_grids_are_refused(default_config, section, key, value, where):
    bad = copy.deepcopy(default_config)
    bad[section][key] = value
    with pytest.raises(cfg.ConfigError, match=re.escape(where)):
        cfg.validate(bad)


def test_trial_count_mismatch_is_a_semantic_error_naming_the_key(default_config):
    bad = copy.deepcopy(default_config)
    bad["causal_timing"]["trials"] = [400, 60, 12, 3]
    errors = cfg.semantic_errors(bad)
    assert errors == ["causal_timing.trials: 4 values for the 3 lengths of causal_timing.T (one per length)"]


# --- threads that tell the truth ----------------------------------------------------------

def test_threads_never_exceed_the_cpus_a_job_may_use(monkeypatch):
    from attnrepro.numerics import threads

    monkeypatch.setattr(threads, "_ASKED", {"n": None})
    for name in threads.VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert threads.limit(16, cpus=2) == 2 and threads.current() == 2 and threads.asked() == 16
    assert threads.limit(1, cpus=2) == 1 and threads.asked() == 1
    assert threads.available() == len(__import__("os").sched_getaffinity(0))


def test_a_timing_job_asked_for_more_threads_than_its_cpus_runs_and_records_what_blas_ran(tmp_path):
    """--threads 16 on one CPU (an affinity mask of one): BLAS runs one thread, and the provenance,
    the machine table and the table's note say 1, with the 16 asked."""
    import json
    import os
    import subprocess
    import sys

    from attnrepro.run import io
    from attnrepro.report.products import formats
    from conftest import REPO

    params = {**plan.cases("quadratic_cost", cfg.load(REPO / "config/config.yaml"))["default"],
              **TINY["quadratic_cost"]}
    out = tmp_path / "q.parquet"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    env.pop("ATTNREPRO_RUN", None)
    proc = subprocess.run(
        [sys.executable, "-m", "attnrepro.jobs.experiment", "quadratic_cost", "--article", "000",
         "--section", "s",
         "--threads", "16", "--params-json", json.dumps(params), "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=300,
        preexec_fn=lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "16 asked, 1 CPU(s) available to this job: its BLAS and OpenMP pools run 1" in proc.stderr
    meta = io.read_provenance(out)
    assert (meta["threads"], meta["threads_asked"], meta["cpus_available"]) == (1, 16, 1)
    assert [lib["num_threads"] for lib in meta["blas"]] == [1] * len(meta["blas"]) and meta["blas"]
    machine = io.read_parquet(out.with_name("q.machine.parquet"))
    assert set(machine["blas_num_threads"]) == {1} and set(machine["threads_asked"]) == {16}
    assert formats.machine(machine).endswith(", 1 thread(s) (16 asked, 1 CPU(s) available)")
