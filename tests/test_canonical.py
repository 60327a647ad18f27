"""Canonical numerics (attnrepro.numerics.canonical): the same bits whatever the host's environment says."""

import concurrent.futures
import itertools
import json
import logging
import os
import subprocess
import sys
import types

import pandas as pd
import pytest

from attnrepro.numerics import canonical, fingerprint
from attnrepro.run import io
from attnrepro.report.ledger import golden
from attnrepro.report.products import results

from conftest import REPO, not_in_a_mutant

FLAGS = {"sse4_2", "avx", "avx2", "fma"}
PINNED = ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES", *canonical.TORCH)
HOST = ("NPY_ENABLE_CPU_FEATURES", "OPENBLAS_L2_SIZE")  # set by some hosts; unset for the test's baseline


# --- setting names and what they set ----------------------------------------------------------


def test_setting_names_map_to_the_environment():
    assert canonical.environment("default") == {"OPENBLAS_CORETYPE": None, "NPY_DISABLE_CPU_FEATURES": None}
    assert canonical.environment("sandybridge-noavx512") == {
        "OPENBLAS_CORETYPE": "Sandybridge",
        "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
    }
    assert canonical.environment("skylakex") == {
        "OPENBLAS_CORETYPE": "SkylakeX",
        "NPY_DISABLE_CPU_FEATURES": None,
    }
    assert [canonical.setting_name(*s) for s in [("default",), ("default", "noavx2"), ("SkylakeX",),
                                                  ("Haswell", "noavx512"), ("Opteron_SSE3", "default")]] == [
        "default", "default-noavx2", "skylakex", "haswell-noavx512", "opteron_sse3"]
    for kernel, mask in itertools.product(["default", "Zen", "Opteron_SSE3"], canonical.MASKS):
        assert canonical.parse_setting(canonical.setting_name(kernel, mask)) == (kernel, mask)


def test_apply_sets_and_removes_inherited_variables():
    env = {"OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": "AVX512_ICL", "OTHER": "x"}
    assert canonical.apply_setting("default", dict(env)) == {"OTHER": "x"}
    assert canonical.apply_setting("default", {}) == {}  # nothing to remove: no error
    assert canonical.apply_setting("nehalem-noavx2", dict(env)) == {
        "OPENBLAS_CORETYPE": "Nehalem",
        "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
        "OTHER": "x",
    }


def test_a_setting_applied_to_this_process_after_numpy_loaded_is_refused():
    """The variables are read when NumPy loads OpenBLAS: set later, they would change nothing."""
    before = dict(os.environ)
    try:
        with pytest.raises(RuntimeError) as refused:
            canonical.apply_setting("sandybridge")  # this process: numpy is loaded
        assert str(refused.value) == "a numerics setting must be applied before numpy is imported"
    finally:
        os.environ.clear()
        os.environ.update(before)


KERNELS_KNOWN = ("known: default, athlon, atom, banias, barcelona, bobcat, bulldozer, cooperlake, "
                 "coppermine, core2, dunnington, excavator, haswell, katmai, nano, nehalem, northwood, "
                 "opteron, opteron_sse3, penryn, piledriver, prescott, sandybridge, sapphirerapids, "
                 "skylakex, steamroller, zen")


@pytest.mark.parametrize("bad, message", [
    ("bogus", f"unknown OpenBLAS kernel 'bogus' in numerics setting 'bogus'; {KERNELS_KNOWN}"),
    ("-noavx512", f"unknown OpenBLAS kernel '' in numerics setting '-noavx512'; {KERNELS_KNOWN}"),
    ("haswell-fast", "unknown NumPy mask 'fast' in numerics setting 'haswell-fast'; known: noavx512, noavx2"),
    ("default-default", "unknown NumPy mask 'default' in numerics setting 'default-default'; known: "
                        "noavx512, noavx2"),
    ("Haswell-", "unknown OpenBLAS kernel 'Haswell' in numerics setting 'Haswell-'; " + KERNELS_KNOWN),
    ("haswell-", "unknown NumPy mask 'default' in numerics setting 'haswell-'; known: noavx512, noavx2"),
    ("haswell-noavx512-x", "unknown NumPy mask 'noavx512-x' in numerics setting 'haswell-noavx512-x'; known: "
                           "noavx512, noavx2"),
])
def test_unknown_setting_names_are_refused_naming_the_part_and_the_known_ones(bad, message):
    with pytest.raises(ValueError) as refused:
        canonical.parse_setting(bad)
    assert str(refused.value) == message


# --- the host and the environment ----------------------------------------------------------


def test_a_host_that_cannot_honour_the_pin_says_why(tmp_path, monkeypatch):
    assert canonical.host_problem("aarch64", FLAGS) == (
        "the CPU is aarch64, not x86-64: the pinned kernels do not exist there")
    assert canonical.host_problem("x86_64", {"sse4_2", "avx"}) == (
        "the CPU lacks avx2 and fma: the pinned kernels would not run")
    assert canonical.host_problem("x86_64", {"avx2"}) == "the CPU lacks fma: the pinned kernels would not run"
    assert canonical.host_problem("x86_64", set()).startswith("the CPU lacks avx2 and fma")  # no flag at all
    assert canonical.cpu_flags(tmp_path / "no-cpuinfo") is None
    monkeypatch.setattr(canonical, "cpu_flags", lambda: None)
    assert canonical.host_problem("x86_64") == (
        "the CPU flags cannot be read before NumPy loads (no /proc/cpuinfo)")
    assert canonical.host_problem("x86_64", FLAGS) is None
    assert canonical.host_problem("AMD64", FLAGS) is None
    monkeypatch.setattr(canonical, "cpu_flags", lambda: FLAGS)
    monkeypatch.setattr(canonical.platform, "machine", lambda: "x86_64")
    assert canonical.host_problem() is None  # this host's machine and flags, read when not given
    monkeypatch.setattr(canonical.platform, "machine", lambda: "arm64")
    assert canonical.host_problem().startswith("the CPU is arm64, not x86-64")


CPUINFO = """processor\t: 0
model name\t: AMD EPYC 7B13
flags\t\t: fpu sse4_2 avx avx2 fma
vmx flags\t: ept vpid
bugs\t\t: sysret_ss_attrs

processor\t: 1
flags\t\t: fpu sse4_2 avx
"""


def test_the_cpu_flags_are_read_from_the_first_flags_line(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(CPUINFO)
    assert canonical.cpu_flags(cpuinfo) == {"fpu", "sse4_2", "avx", "avx2", "fma"}
    cpuinfo.write_text("processor\t: 0\nFeatures\t: fp asimd\n")  # no flags line (an Arm kernel's)
    assert canonical.cpu_flags(cpuinfo) is None
    assert canonical.cpu_flags(tmp_path) is None  # unreadable: a folder
    real = canonical.cpu_flags()  # this host's: an x86 Linux names fpu first; elsewhere no flags line
    assert real is None or "fpu" in real


def test_apply_sets_every_pinned_variable_and_removes_what_would_narrow_it():
    env = {"OPENBLAS_CORETYPE": "SkylakeX", "NPY_ENABLE_CPU_FEATURES": "X86_V2", "MKL_CBWR": "AUTO",
           "OPENBLAS_L2_SIZE": "256", "OTHER": "x"}
    state = canonical.apply(canonical.SETTING, env, machine="x86_64", flags=FLAGS)
    assert state == {"pin": canonical.SETTING, "applied": True, "reason": ""}
    assert env == {"OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
                   "ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "AVX2",
                   "OPENBLAS_L2_SIZE": "256", "OTHER": "x"}
    empty = {}  # nothing to remove: no error
    assert canonical.apply(canonical.SETTING, empty, machine="x86_64", flags=FLAGS)["applied"] is True
    assert empty == {k: v for k, v in env.items() if k not in ("OPENBLAS_L2_SIZE", "OTHER")}


@pytest.mark.parametrize("pin, machine, flags, reason", [
    ("native", "x86_64", FLAGS, "numerics.pin is native"),
    (canonical.SETTING, "aarch64", FLAGS, "not honoured: the CPU is aarch64"),
    (canonical.SETTING, "x86_64", {"avx"}, "not honoured: the CPU lacks avx2"),
])
def test_native_or_unable_hosts_keep_their_environment_and_are_not_canonical(pin, machine, flags, reason):
    """End to end in this process: check() reads the real libraries back."""
    env = {"OPENBLAS_CORETYPE": "SkylakeX"}
    state = canonical.apply(pin, env, machine=machine, flags=flags)
    assert env == {"OPENBLAS_CORETYPE": "SkylakeX"} and not state["applied"]
    assert reason in state["reason"]
    record = canonical.check(state)  # numpy is loaded here: the record of this process
    assert record["canonical"] is False and record["setting"] == "native" and reason in record["reason"]


def test_a_pin_that_did_not_take_effect_is_named():
    wrong = {"openblas_kernel": "SkylakeX", "numpy_features": "X86_V3 X86_V4", "torch_capability": None}
    assert canonical.mismatches(wrong) == ["openblas_kernel is 'SkylakeX', not 'Haswell'",
                                           "numpy_features is 'X86_V3 X86_V4', not 'X86_V3'"]
    assert canonical.mismatches(dict(canonical.EXPECTED)) == []
    with pytest.raises(ValueError, match="numerics.pin must be one of"):
        canonical.apply("haswell", {})


def test_apply_says_why_it_does_not_pin_and_refuses_an_unknown_pin(caplog):
    env = {}
    with caplog.at_level(logging.WARNING, logger="attnrepro"):
        state = canonical.apply(canonical.SETTING, env, machine="aarch64", flags=FLAGS)
        problem = "the CPU is aarch64, not x86-64: the pinned kernels do not exist there"
        assert state == {"pin": canonical.SETTING, "applied": False,
                         "reason": f"pin haswell-noavx512 not honoured: {problem}"}
        assert caplog.messages == [f"numerics: cannot pin haswell-noavx512 on this host ({problem}); running "
                                   "native, outputs marked non-canonical"]
        caplog.clear()
        assert canonical.apply("native", env) == {"pin": "native", "applied": False,
                                                  "reason": "numerics.pin is native: the host's own numerics"}
        assert caplog.messages == [] and env == {}  # the user's choice: no warning, nothing set
    with pytest.raises(ValueError) as refused:
        canonical.apply("haswell", {})
    assert str(refused.value) == "numerics.pin must be one of haswell-noavx512, native, got 'haswell'"


def test_effective_reads_the_kernel_openblas_loaded_and_the_features_numpy_enabled(monkeypatch):
    import threadpoolctl
    from numpy._core import _multiarray_umath as umath

    real = canonical.effective()  # this process: what its libraries run
    assert real["openblas_kernel"] and set(real["openblas_kernel"].split(",")) <= set(canonical.KERNELS)
    assert set(real["numpy_features"].split()) <= set(umath.__cpu_dispatch__)
    monkeypatch.setattr(threadpoolctl, "threadpool_info", lambda: [
        {"internal_api": "openmp", "architecture": "Zen"},  # not OpenBLAS: not read
        {"internal_api": "openblas", "architecture": "Haswell"},
        {"internal_api": "openblas"},  # a second OpenBLAS that does not say its kernel
    ])
    monkeypatch.setattr(umath, "__cpu_dispatch__", ["X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"])
    monkeypatch.setattr(umath, "__cpu_features__", {"X86_V3": True, "X86_V4": True, "AVX512_ICL": False})
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.delenv("NPY_DISABLE_CPU_FEATURES", raising=False)
    assert canonical.effective() == {"openblas_coretype": "Haswell", "openblas_kernel": "Haswell,?",
                                     "numpy_disabled": "", "numpy_features": "X86_V3 X86_V4"}
    monkeypatch.delenv("OPENBLAS_CORETYPE")
    monkeypatch.setenv("NPY_DISABLE_CPU_FEATURES", "X86_V4")
    read = canonical.effective()
    assert (read["openblas_coretype"], read["numpy_disabled"]) == ("", "X86_V4")


def test_torch_capability_is_read_where_torch_is_loaded(monkeypatch):
    fake = types.SimpleNamespace(backends=types.SimpleNamespace(cpu=types.SimpleNamespace(
        get_cpu_capability=lambda: "AVX2")))
    monkeypatch.setitem(sys.modules, "torch", fake)
    assert canonical.torch_capability() == "AVX2"
    monkeypatch.delitem(sys.modules, "torch")
    assert canonical.torch_capability() is None


# --- what check() records, its readings given ----------------------------------------------------

RUNNING = {"openblas_coretype": "Haswell", "openblas_kernel": "Haswell",
           "numpy_disabled": "X86_V4 AVX512_ICL AVX512_SPR", "numpy_features": "X86_V3"}
PRINTS = {"libm.exp": "6518342356ad", "numpy.tanh.float64": "2f0e8d3a9ef4"}
APPLIED = {"pin": canonical.SETTING, "applied": True, "reason": ""}


def _check(monkeypatch, tmp_path, state, running=RUNNING, torch="AVX2", prints=PRINTS):
    """check(state) with the readings of a host faked (the libraries' effective numerics, torch's
    capability, the C library, the fingerprint) against a golden file of PRINTS."""
    monkeypatch.setattr(canonical, "effective", lambda: dict(running))
    monkeypatch.setattr(canonical, "torch_capability", lambda: torch)
    monkeypatch.setattr(fingerprint, "libc", lambda: "glibc 2.36")
    monkeypatch.setattr(fingerprint, "measure", lambda: dict(prints))
    for key, value in {"OPENBLAS_L2_SIZE": None, "MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "avx2",
                       "ONEDNN_MAX_CPU_ISA": "AVX2"}.items():
        monkeypatch.delenv(key, raising=False) if value is None else monkeypatch.setenv(key, value)
    golden = tmp_path / "numerics.json"
    golden.write_text(fingerprint.text("glibc 2.36", PRINTS))
    return canonical.check(state, golden)


@pytest.mark.parametrize("torch", ["AVX2", None])  # None: the job did not load torch
def test_a_pinned_job_with_the_golden_fingerprint_is_canonical(monkeypatch, tmp_path, caplog, torch):
    record = _check(monkeypatch, tmp_path, APPLIED, torch=torch)
    assert record == {"setting": "haswell-noavx512", "pin": "haswell-noavx512", "pinned": True,
                      "canonical": True, "reason": "", **RUNNING, "torch_capability": torch,
                      "openblas_l2_size": "", "mkl_cbwr": "COMPATIBLE", "aten_cpu_capability": "avx2",
                      "onednn_max_cpu_isa": "AVX2",
                      "libc": "glibc 2.36", "fingerprint": PRINTS}
    assert caplog.messages == []


def test_a_pin_that_did_not_take_effect_names_every_library_that_ignored_it(monkeypatch, tmp_path, caplog):
    running = {**RUNNING, "openblas_kernel": "Sandybridge"}
    with caplog.at_level(logging.WARNING, logger="attnrepro"):
        record = _check(monkeypatch, tmp_path, APPLIED, running=running, torch="DEFAULT")
    reason = ("pin haswell-noavx512 did not take effect: openblas_kernel is 'Sandybridge', not 'Haswell'; "
              "torch_capability is 'DEFAULT', not 'AVX2'")
    assert {k: record[k] for k in ("setting", "pinned", "canonical", "reason", "openblas_kernel")} == {
        "setting": "native", "pinned": False, "canonical": False, "reason": reason,
        "openblas_kernel": "Sandybridge"}
    assert caplog.messages == [f"numerics: {reason}; outputs marked non-canonical"]


def test_a_pinned_job_with_another_fingerprint_is_pinned_but_not_canonical(monkeypatch, tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="attnrepro"):
        record = _check(monkeypatch, tmp_path, APPLIED, prints={**PRINTS, "libm.exp": "000000000000"})
    reason = ("the math library computes other bits: libm.exp differ from the golden fingerprint "
              f"({tmp_path / 'numerics.json'}, made with glibc 2.36; here glibc 2.36)")
    assert {k: record[k] for k in ("setting", "pinned", "canonical", "reason", "fingerprint")} == {
        "setting": "native", "pinned": True, "canonical": False, "reason": reason,
        "fingerprint": {**PRINTS, "libm.exp": "000000000000"}}
    assert caplog.messages == [f"numerics: {reason}; outputs marked non-canonical"]


def test_a_job_that_did_not_pin_keeps_its_reason_and_logs_nothing_more(monkeypatch, tmp_path, caplog):
    """Its kernel and fingerprint are recorded, not judged: it was never meant to be canonical."""
    state = {"pin": "native", "applied": False, "reason": "numerics.pin is native: the host's own numerics"}
    with caplog.at_level(logging.WARNING, logger="attnrepro"):
        record = _check(monkeypatch, tmp_path, state, running={**RUNNING, "openblas_kernel": "Sandybridge"},
                        prints={**PRINTS, "libm.exp": "000000000000"})
    assert {k: record[k] for k in ("setting", "pin", "pinned", "canonical", "reason", "openblas_kernel")} == {
        "setting": "native", "pin": "native", "pinned": False, "canonical": False,
        "reason": "numerics.pin is native: the host's own numerics", "openblas_kernel": "Sandybridge"}
    assert caplog.messages == []


def test_check_compares_with_the_committed_golden_fingerprint_by_default(monkeypatch, tmp_path):
    committed_libc, committed = fingerprint.load(REPO / fingerprint.GOLDEN)
    _check(monkeypatch, tmp_path, APPLIED)  # the fakes in place
    monkeypatch.setattr(fingerprint, "measure", lambda: dict(committed))
    assert canonical.check(APPLIED)["canonical"] is True
    monkeypatch.setattr(fingerprint, "measure", lambda: {**committed, "libm.exp": "000000000000"})
    assert canonical.check(APPLIED)["reason"] == (
        "the math library computes other bits: libm.exp differ from the golden fingerprint "
        f"(tests/golden/numerics.json, made with {committed_libc}; here glibc 2.36)")


# --- a job, end to end -----------------------------------------------------------------------


def _python(args, env_changes):
    """``python *args`` in this checkout, in the test's baseline environment changed by env_changes
    (None removes a variable); the finished process, its status checked."""
    env = {k: v for k, v in os.environ.items() if k not in PINNED + HOST}
    env["PYTHONPATH"] = str(REPO / "src")
    for key, value in env_changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    proc = subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def _run(out, env_changes, *args, experiment="train", case="sort-L6-seed0", python=("-m", "attnrepro")):
    """`python -m attnrepro run` (or ``python``: another way to call its main) with the default
    config; returns the provenance's numerics record and the log."""
    proc = _python([*python, "run", experiment, "--case", case, "--out", str(out), *args], env_changes)
    return io.read_provenance(out)["numerics"], proc.stderr


def _hashes(main):
    """{table: content hash} of every table of one job (measured columns dropped)."""
    tables = sorted(main.parent.glob(f"{main.stem}*.parquet"))
    return {p.name.removeprefix(main.stem): golden.table_hash(p)[1] for p in tables}


ENVIRONMENTS = {  # what a host's environment may say; the pin overrides all of it
    "unset": {},
    "skylakex": {"OPENBLAS_CORETYPE": "SkylakeX"},
    "sandybridge-npy": {"OPENBLAS_CORETYPE": "Sandybridge", "NPY_DISABLE_CPU_FEATURES": "X86_V3"},
    "npy-l2": {"NPY_DISABLE_CPU_FEATURES": "AVX2 X86_V4", "OPENBLAS_L2_SIZE": "256", "MKL_CBWR": "AUTO"},
}


# A fifteenth of the default training: the bits of the parameters part from the first step on (the
# control, native numerics, still differs at 100 steps), so a shorter run tests the same; 100 of the
# default 1500 steps take 9 s for the five trainings, where 500 took 30.
STEPS = ("--set", "steps=100")


@pytest.mark.full
def test_a_sort_training_gives_the_same_bits_whatever_the_environment(tmp_path):
    """Sort, L = 6, seed 0, default config but 100 steps: four environments, one set of tables, bit
    for bit; the control (native numerics, the Sandybridge kernel) shows that the environment can
    matter."""
    not_in_a_mutant("trains four times")
    runs = {name: (tmp_path / name / "train" / "sort-L6-seed0.parquet", env)
            for name, env in ENVIRONMENTS.items()}
    control = tmp_path / "control" / "train" / "sort-L6-seed0.parquet"
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(_run, out, env, *STEPS) for name, (out, env) in runs.items()}
        futures["control"] = pool.submit(_run, control, {"OPENBLAS_CORETYPE": "Sandybridge"},
                                         "--pin", "native", *STEPS)
        records = {name: f.result()[0] for name, f in futures.items()}
    hashes = {name: _hashes(out) for name, (out, _) in runs.items()}
    assert len(hashes["unset"]) == 4  # main, curve, sequences, parameters
    assert all(h == hashes["unset"] for h in hashes.values()), hashes
    for name in runs:
        assert records[name]["canonical"] is True, records[name]
        assert records[name]["openblas_kernel"] == "Haswell" and records[name]["numpy_features"] == "X86_V3"
    assert records["control"]["canonical"] is False and records["control"]["openblas_kernel"] == "Sandybridge"
    assert _hashes(control) != hashes["unset"]


@pytest.mark.full
def test_torch_runs_pinned_and_a_native_job_is_marked_in_the_ledger_status(tmp_path):
    not_in_a_mutant("runs torch jobs in subprocesses")
    pinned, log = _run(tmp_path / "pinned.parquet", {"ATEN_CPU_CAPABILITY": "default"},
                       experiment="torch_modules", case="default")
    assert pinned["torch_capability"] == "AVX2" and pinned["mkl_cbwr"] == "COMPATIBLE"
    assert "numerics canonical" in log
    native, log = _run(tmp_path / "native.parquet", {}, "--pin", "native",
                       experiment="torch_modules", case="default")
    assert native["canonical"] is False and "NOT canonical (numerics.pin is native" in log
    assert results.numerics_status([tmp_path / "pinned.parquet"]) == "canonical"
    status = results.numerics_status([tmp_path / "pinned.parquet", tmp_path / "native.parquet"])
    assert status == "non-canonical: native.parquet: numerics.pin is native: the host's own numerics"


def test_the_ledger_marks_each_claim_computed_from_a_non_canonical_file():
    from attnrepro.report.ledger import verdicts
    from attnrepro.report.ledger import files, ledger_md

    class Load:  # results.Loader's numerics(experiment, table), two experiments
        def numerics(self, experiment, table="main"):
            return "canonical" if experiment == "scale_table" else f"non-canonical: {experiment}.parquet: why"

    def claim(id, source):
        return verdicts.Claim(id=id, article="001", section="s", claim="c", published="1", cls="exact",
                            source=source)

    claims = [claim("a", {"experiment": "scale_table", "column": "x"}),
              claim("b", {"experiment": "train", "column": "x"}),
              claim("c", {"experiment": "scale_table", "column": "x",
                          "over": {"experiment": "train", "column": "y"}})]
    column = files.numerics_column(claims, Load())
    assert column == ["canonical", "non-canonical: train.parquet: why", "non-canonical: train.parquet: why"]
    table = pd.DataFrame({"id": ["a", "b", "c"], "numerics": column})
    assert ledger_md.numerics_line(table).startswith("Numerics: **2 of 3 claims computed with non-canonical")
    assert ledger_md.numerics_line(table.iloc[:1]).startswith(
        "Numerics: all 1 claims computed with the canonical")


def test_a_table_and_a_figure_from_a_native_file_say_so(tmp_path):
    from attnrepro.report import cli as report_cli

    data = tmp_path / "results/data/003/saturation/default.parquet"
    _run(data, {}, "--pin", "native", experiment="saturation", case="default")
    md, csv = tmp_path / "saturation.md", tmp_path / "saturation.csv"
    assert report_cli.main(["table", "saturation", "--md", str(md), "--csv", str(csv),
                            "--inputs", str(data)]) == 0
    assert "Numerics: non-canonical: default.parquet: numerics.pin is native" in md.read_text()
    pinned = tmp_path / "pinned/results/data/003/saturation/default.parquet"
    _run(pinned, {}, experiment="saturation", case="default")
    assert report_cli.main(["table", "saturation", "--md", str(md), "--csv", str(csv),
                            "--inputs", str(pinned)]) == 0
    assert "Numerics" not in md.read_text()


# --- what check() records when the numerics are not the pinned ones --------------------------

NOT_TAKEN = """
import json, os
from attnrepro.numerics import canonical
state = canonical.apply(canonical.SETTING)
os.environ["OPENBLAS_CORETYPE"] = "Sandybridge"  # after the pin, before NumPy loads
import numpy
print(json.dumps(canonical.check(state)))
"""


def test_a_pin_that_did_not_take_effect_makes_the_record_non_canonical():
    """End to end: check() reads the kernel OpenBLAS really loaded, not what apply() asked for."""
    record = json.loads(_python(["-c", NOT_TAKEN], {}).stdout)
    assert record["openblas_kernel"] == "Sandybridge" and record["numpy_features"] == "X86_V3"
    assert (record["canonical"], record["pinned"], record["setting"]) == (False, False, "native")
    assert record["reason"] == ("pin haswell-noavx512 did not take effect: openblas_kernel is 'Sandybridge', "
                                "not 'Haswell'")


SHIFTED_EXP = """
import sys
from attnrepro import cli
from attnrepro.numerics import fingerprint

unshifted = fingerprint.inputs


def shifted():  # every input of exp one ulp up: what another libm's exp looks like to the fingerprint
    import numpy as np

    x = unshifted()
    x["exp"] = np.nextafter(x["exp"], np.inf)
    return x


fingerprint.inputs = shifted
sys.exit(cli.main(sys.argv[1:]))
"""


def test_a_job_whose_exp_computes_other_bits_is_not_canonical_and_names_the_math_library(tmp_path):
    record, log = _run(tmp_path / "exercises.parquet", {}, experiment="exercises", case="default",
                       python=("-c", SHIFTED_EXP))
    golden_libc, golden_prints = fingerprint.load(REPO / fingerprint.GOLDEN)
    reason = ("the math library computes other bits: libm.exp, numpy.exp.float64 differ from the golden "
              f"fingerprint (tests/golden/numerics.json, made with {golden_libc}; here {fingerprint.libc()})")
    assert (record["canonical"], record["pinned"], record["reason"]) == (False, True, reason)
    assert f"NOT canonical ({reason})" in log
    kept = {k: v for k, v in record["fingerprint"].items() if k not in ("libm.exp", "numpy.exp.float64")}
    assert len(kept) == 10 and kept == {k: golden_prints[k] for k in kept}  # log, tanh, ...: unmoved
    assert record["libc"] == fingerprint.libc() != "unknown"
