"""Canonical numerics (attnrepro.canonical): the same bits whatever the host's environment says."""

import concurrent.futures
import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from attnrepro import canonical, fingerprint, io
from attnrepro.report import golden, results

from conftest import REPO, not_in_a_mutant

FLAGS = {"sse4_2", "avx", "avx2", "fma"}
PINNED = ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES", *canonical.TORCH)
HOST = ("NPY_ENABLE_CPU_FEATURES", "OPENBLAS_L2_SIZE")  # set by some hosts; unset for the test's baseline


# --- the host and the environment ----------------------------------------------------------


def test_a_host_that_cannot_honour_the_pin_says_why(tmp_path, monkeypatch):
    assert "aarch64, not x86-64" in canonical.host_problem("aarch64", FLAGS)
    assert "lacks avx2 and fma" in canonical.host_problem("x86_64", {"sse4_2", "avx"})
    assert canonical.cpu_flags(tmp_path / "no-cpuinfo") is None
    monkeypatch.setattr(canonical, "cpu_flags", lambda: None)
    assert "cannot be read before NumPy loads" in canonical.host_problem("x86_64")
    assert canonical.host_problem("x86_64", FLAGS) is None
    assert canonical.host_problem("AMD64", FLAGS) is None


def test_apply_sets_every_pinned_variable_and_removes_what_would_narrow_it():
    env = {"OPENBLAS_CORETYPE": "SkylakeX", "NPY_ENABLE_CPU_FEATURES": "X86_V2", "MKL_CBWR": "AUTO",
           "OPENBLAS_L2_SIZE": "256", "OTHER": "x"}
    state = canonical.apply(canonical.SETTING, env, machine="x86_64", flags=FLAGS)
    assert state == {"pin": canonical.SETTING, "applied": True, "reason": ""}
    assert env == {"OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
                   "ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "AVX2",
                   "OPENBLAS_L2_SIZE": "256", "OTHER": "x"}


@pytest.mark.parametrize("pin, machine, flags, reason", [
    ("native", "x86_64", FLAGS, "numerics.pin is native"),
    (canonical.SETTING, "aarch64", FLAGS, "not honoured: the CPU is aarch64"),
    (canonical.SETTING, "x86_64", {"avx"}, "not honoured: the CPU lacks avx2"),
])
def test_native_or_unable_hosts_keep_their_environment_and_are_not_canonical(pin, machine, flags, reason):
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


# A third of the default training: the bits of the parameters part from the first step on (the
# control shows it), so a shorter run tests the same; `STEPS` of the default 1500 keeps it quick.
STEPS = ("--set", "steps=500")


def test_a_sort_training_gives_the_same_bits_whatever_the_environment(tmp_path):
    """Sort, L = 6, seed 0, default config but 500 steps: four environments, one set of tables, bit
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
    from attnrepro.report import ledger, ledger_io

    class Load:  # results.Loader's numerics(experiment, table), two experiments
        def numerics(self, experiment, table="main"):
            return "canonical" if experiment == "scale_table" else f"non-canonical: {experiment}.parquet: why"

    def claim(id, source):
        return ledger.Claim(id=id, article="001", section="s", claim="c", published="1", cls="exact",
                            source=source)

    claims = [claim("a", {"experiment": "scale_table", "column": "x"}),
              claim("b", {"experiment": "train", "column": "x"}),
              claim("c", {"experiment": "scale_table", "column": "x",
                          "over": {"experiment": "train", "column": "y"}})]
    column = ledger_io.numerics_column(claims, Load())
    assert column == ["canonical", "non-canonical: train.parquet: why", "non-canonical: train.parquet: why"]
    table = pd.DataFrame({"id": ["a", "b", "c"], "numerics": column})
    assert ledger_io.numerics_line(table).startswith("Numerics: **2 of 3 claims computed with non-canonical")
    assert ledger_io.numerics_line(table.iloc[:1]).startswith(
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
from attnrepro import canonical
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
from attnrepro import cli, fingerprint

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
