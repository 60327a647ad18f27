"""Operations: the archive, refusal of unsafe config, determinism, partial reruns."""

import re
import shutil
import subprocess
import tarfile

import pandas as pd
import pytest

from attnrepro import io, plan

from conftest import copy_repo, planned_jobs, snakemake

# columns that hold a measured time, or something computed from one (timing experiments only)
TIMING_COLUMN = re.compile(r"seconds|_ms$|time|slope|speedup|ci_|regime|quadratic|load_|interval|growth")


def test_archive_verifies_and_detects_tampering(small_run, tmp_path):
    proc = snakemake(small_run, "archive")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (archive,) = (small_run / "results/archive").glob("attnrepro-results-*.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, filter="data")
    (top,) = tmp_path.iterdir()
    names = {p.relative_to(top).as_posix() for p in top.rglob("*") if p.is_file()}
    assert {"MANIFEST.sha256", "config.resolved.yaml", "environment.json",
            "results/ledger.csv", "results/README.md"} <= names
    assert any(n.startswith("results/data/001/scale_table/") for n in names)
    assert any(n.startswith("results/figures/") or n.startswith("results/tables/") for n in names)
    check = subprocess.run(["sha256sum", "--quiet", "-c", "MANIFEST.sha256"], cwd=top, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    manifest = (top / "MANIFEST.sha256").read_text().splitlines()
    assert len(manifest) == len(names) - 1  # every file but the manifest itself
    ledger = top / "results/ledger.csv"
    ledger.write_text(ledger.read_text() + "tampered\n")
    check = subprocess.run(["sha256sum", "--quiet", "-c", "MANIFEST.sha256"], cwd=top, capture_output=True, text=True)
    assert check.returncode != 0 and "results/ledger.csv: FAILED" in check.stdout


def test_shell_injection_through_config_is_refused(tmp_path):
    root = copy_repo(tmp_path / "repo")
    (root / "config/evil.yaml").write_text(
        "self_attention_tokens:\n  tokens: ['Meera; touch INJECTED', 'bought']\n"
        "skip: ['x; touch INJECTED']\n"
    )
    proc = snakemake(root, configfile="config/evil.yaml")
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "self_attention_tokens.tokens[0]" in out and "skip[0]" in out
    assert not list(root.rglob("INJECTED")) and not (root / "results").exists()


def _tables(root, config_outputs):
    frames = {}
    for path in config_outputs:
        experiment = path.split("/")[3]
        if plan.EXPERIMENTS[experiment].timing:
            if path.endswith(".machine.parquet"):
                continue
            df = io.read_parquet(root / path)
            df = df[[c for c in df.columns if not TIMING_COLUMN.search(c)]]
        else:
            df = io.read_parquet(root / path)
        frames[path] = df
    return frames


def test_two_clean_runs_give_identical_tables(small_run, tmp_path):
    second = copy_repo(tmp_path / "second")
    proc = snakemake(second)
    assert proc.returncode == 0, proc.stderr[-3000:]
    outputs = sorted(str(p.relative_to(small_run)) for p in (small_run / "results/data").rglob("*.parquet"))
    assert outputs
    first, again = _tables(small_run, outputs), _tables(second, outputs)
    assert first.keys() == again.keys()
    for path in first:
        pd.testing.assert_frame_equal(first[path], again[path], check_exact=True, obj=path)
    for figure in (small_run / "results/figures").glob("*.svg"):
        assert figure.read_bytes() == (second / "results/figures" / figure.name).read_bytes(), figure.name


@pytest.fixture()
def run_copy(small_run, tmp_path):
    """A copy of the finished small run (results and Snakemake metadata included)."""
    dest = tmp_path / "copy"
    shutil.copytree(small_run, dest, symlinks=True)
    return dest


def test_editing_a_config_value_reruns_only_what_it_feeds(run_copy):
    small = run_copy / "config/small.yaml"
    small.write_text(small.read_text().replace("repetitions: 20", "repetitions: 21"))
    jobs = planned_jobs(snakemake(run_copy, "-n"))
    assert jobs.get("scale_table_case") == 4  # small config: d_k 8 and 64, each divided or not
    rerun = set(jobs) - {"all"}
    assert {r for r in rerun if r.endswith("_case")} == {"scale_table_case"}
    assert "ledger" in rerun and "table_scale_table" in rerun
