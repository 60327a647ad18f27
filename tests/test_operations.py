"""Operations: the archive, refusal of unsafe config, determinism, partial reruns."""

import shutil
import subprocess
import tarfile

import pandas as pd
import pytest

from attnrepro import io, plan

from conftest import REPO, copy_repo, planned_jobs, small_config, snakemake


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


def _tables(root, outputs):
    """Each table without its measured columns (and without timing jobs' machine tables)."""
    frames = {}
    for path in outputs:
        experiment = path.split("/")[3]
        if plan.EXPERIMENTS[experiment].timing and path.endswith(".machine.parquet"):
            continue
        df = io.read_parquet(root / path)
        frames[path] = df.drop(columns=plan.measured_columns(experiment, df.columns))
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
    from attnrepro.report import catalog

    for product in catalog.enabled(small_config()):
        if product.kind == "figure" and not any(plan.EXPERIMENTS[e].timing for e in product.needs):
            path = product.outputs["svg"]  # figures of measured times differ with the times
            assert (small_run / path).read_bytes() == (second / path).read_bytes(), path


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


def _case_rules(jobs):
    return {rule for rule in jobs if rule.endswith("_case")}


def _touch_source(root, relative):
    path = root / relative
    path.write_text(path.read_text() + "\n# edited by a test\n")


def test_editing_the_decoder_reruns_exactly_its_importers(run_copy):
    _touch_source(run_copy, "src/attnrepro/model/decoder.py")
    jobs = planned_jobs(snakemake(run_copy, "-n"))
    assert _case_rules(jobs) == {"train_case", "attention_map_case", "grad_check_case", "autograd_check_case"}
    # the run's trainings and the seed distribution's (on by default; the run's own are the same jobs)
    assert jobs["train_case"] == len(plan.runnable_cases("train", small_config()))
    assert "ledger" in jobs and "table_scale_table" not in jobs


def test_editing_a_plotting_module_reruns_only_its_figures(run_copy):
    from attnrepro.report import catalog

    _touch_source(run_copy, "src/attnrepro/report/figures_checks.py")
    jobs = planned_jobs(snakemake(run_copy, "-n"))
    expected = {f"figure_{p.name}" for p in catalog.PRODUCTS.values() if p.module.endswith(".figures_checks")}
    assert expected and set(jobs) - {"all"} == expected


def test_every_experiment_table_and_figure_is_a_target():
    from attnrepro.report import catalog

    proc = snakemake(REPO, "--list-target-rules", configfile=None)
    targets = set(proc.stdout.split())
    assert set(plan.EXPERIMENTS) <= targets
    assert {f"{p.kind}_{p.name}" for p in catalog.PRODUCTS.values()} <= targets
    assert {"all", "ledger", "archive", "index"} <= targets


def test_killed_training_leaves_nothing_and_reruns_alone(tmp_path):
    import os
    import signal
    import time

    root = copy_repo(tmp_path / "repo")
    (root / "config/long.yaml").write_text("train:\n  steps: 20000\n")
    target = "results/data/001/train/copy-L6-seed0.parquet"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "snakemake", "--cores", "1", target, "--configfile", "config/small.yaml", "config/long.yaml"],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    log = root / "results/logs/001/train/copy-L6-seed0.log"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (log.is_file() and "step 100/" in log.read_text()):
        time.sleep(0.2)
    assert "step 100/" in log.read_text(), "training never reported progress"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    data = root / "results/data/001/train"
    assert not any(p.suffix == ".parquet" for p in data.glob("*")) if data.exists() else True

    (root / "config/long.yaml").write_text("train:\n  steps: 150\n")
    # what Snakemake asks for after a kill: release its lock, then redo what was incomplete
    assert snakemake(root, "--unlock", configfile="config/small.yaml config/long.yaml").returncode == 0
    rerun = snakemake(root, target, "--rerun-incomplete", configfile="config/small.yaml config/long.yaml")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert planned_jobs(rerun) == {"train_case": 1}
    assert io.read_parquet(root / target)["steps"].tolist() == [150]
