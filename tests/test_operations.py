"""Operations: the archive, refusal of unsafe config, determinism, partial reruns."""

import subprocess
import tarfile

import pandas as pd
import pytest

from attnrepro.run import io
from attnrepro.dag import plan

from conftest import REPO, copy_repo, copy_run, planned_jobs, small_config, snakemake


def test_archive_verifies_and_detects_tampering(archived, tmp_path):
    _, archive = archived  # the small run, archived once per session (conftest.py)
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, filter="data")
    (top,) = tmp_path.iterdir()
    names = {p.relative_to(top).as_posix() for p in top.rglob("*") if p.is_file()}
    assert {"MANIFEST.sha256", "config.resolved.yaml", "environment.json", "ro-crate-metadata.json",
            "README.md", "Snakefile", "workflow/rules/archive.smk", "workflow/schemas/config.schema.yaml",
            "envs/attnrepro.yaml", "results/ledger.csv", "results/README.md"} <= names
    assert any(n.startswith("results/data/001/scale_table/") for n in names)
    assert any(n.startswith("results/figures/") or n.startswith("results/tables/") for n in names)
    check = subprocess.run(["sha256sum", "--quiet", "-c", "MANIFEST.sha256"], cwd=top,
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    manifest = (top / "MANIFEST.sha256").read_text().splitlines()
    assert len(manifest) == len(names) - 1  # every file but the manifest itself
    ledger = top / "results/ledger.csv"
    ledger.write_text(ledger.read_text() + "tampered\n")
    check = subprocess.run(["sha256sum", "--quiet", "-c", "MANIFEST.sha256"], cwd=top,
                           capture_output=True, text=True)
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


@pytest.mark.full
def test_two_clean_runs_give_identical_tables(small_run, tmp_path):
    from attnrepro.report.products import catalog

    # the second run builds what is compared only: every experiment's files and the figures (not
    # the tables, ledger, editions and the seed distribution's extra trainings, which reformat
    # the compared files or repeat a compared computation with other seeds)
    figures = [f"figure_{p.name}" for p in catalog.enabled(small_config()) if p.kind == "figure"]
    second = copy_repo(tmp_path / "second")
    proc = snakemake(second, *plan.enabled(small_config()), *figures)
    assert proc.returncode == 0, proc.stderr[-3000:]
    outputs = sorted(str(p.relative_to(second)) for p in (second / "results/data").rglob("*.parquet"))
    assert set(plan.all_outputs(small_config())) <= set(outputs)
    first, again = _tables(small_run, outputs), _tables(second, outputs)
    assert first.keys() == again.keys()
    for path in first:
        pd.testing.assert_frame_equal(first[path], again[path], check_exact=True, obj=path)
    for product in catalog.enabled(small_config()):
        if product.kind == "figure" and not any(plan.EXPERIMENTS[e].timing for e in product.experiments):
            path = product.outputs["svg"]  # figures of measured times differ with the times
            assert (small_run / path).read_bytes() == (second / path).read_bytes(), path


@pytest.fixture()
def run_copy(small_run, tmp_path):
    """A copy of the finished small run (results and Snakemake metadata included)."""
    dest = tmp_path / "copy"
    return copy_run(small_run, dest)


@pytest.mark.full
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


@pytest.mark.full
def test_editing_the_decoder_reruns_exactly_its_importers(run_copy):
    _touch_source(run_copy, "src/attnrepro/model/decoder.py")
    jobs = planned_jobs(snakemake(run_copy, "-n"))
    assert _case_rules(jobs) == {"train_case", "seed_training_case", "attention_map_case", "grad_check_case",
                                 "autograd_check_case"}
    # the run's trainings and the seed distribution's others (on by default), which live apart
    assert jobs["train_case"] == len(plan.cases("train", small_config()))
    assert jobs["seed_training_case"] == len(plan.seed_extra_cases(small_config()))
    # the scale table reruns only because it reads the ledger (its printed cells' verdicts), not its data
    assert "ledger" in jobs and "table_scale_table" in jobs and "scale_table_case" not in jobs


def test_editing_a_plotting_module_reruns_only_its_figures(run_copy):
    from attnrepro.report.products import catalog

    _touch_source(run_copy, "src/attnrepro/report/products/figures_checks.py")
    jobs = planned_jobs(snakemake(run_copy, "-n"))
    expected = {f"figure_{p.name}" for p in catalog.PRODUCTS.values() if p.module.endswith(".figures_checks")}
    assert expected and set(jobs) - {"all"} == expected


def test_every_experiment_table_and_figure_is_a_target():
    from attnrepro.report.products import catalog

    proc = snakemake(REPO, "--list-target-rules", configfile=None)
    targets = set(proc.stdout.split())
    assert set(plan.EXPERIMENTS) <= targets
    assert {f"{p.kind}_{p.name}" for p in catalog.PRODUCTS.values()} <= targets
    assert {"all", "ledger", "archive", "index"} <= targets


# --- nothing silently wrong in a job's outputs --------------------------------------------------

PROFILE = ("--workflow-profile", "workflow/profiles/default")
TRAINING = "results/data/001/train/copy-L6-seed0"


def _training_tables(root):
    return {t: root / plan.output_path("train", "copy-L6-seed0", t) for t in plan.EXPERIMENTS["train"].tables}


@pytest.mark.full
def test_a_job_killed_between_two_table_writes_leaves_no_set_and_reruns_exactly(
        small_run, tmp_path, monkeypatch):
    root = copy_repo(tmp_path / "repo")
    # the test hook of attnrepro.run.ownership: after the temporary of `curve` (main's is written before it),
    # SIGKILL Snakemake and the job, as a machine crash would: nobody cleans up
    monkeypatch.setenv("ATTNREPRO_FAULT", "crash-after-table:curve")
    crashed = snakemake(root, f"{TRAINING}.parquet", *PROFILE)
    assert crashed.returncode == -9, crashed.stderr[-3000:]
    folder = root / "results/data/001/train"
    assert not list(folder.glob("*.parquet")), "a table of an unfinished set is visible"
    left = sorted(p.name.split(".parquet.")[0] for p in folder.glob(".*.tmp"))
    assert left == [".copy-L6-seed0", ".copy-L6-seed0.curve"]  # killed between two table writes

    monkeypatch.delenv("ATTNREPRO_FAULT")
    assert snakemake(root, "--unlock").returncode == 0
    rerun = snakemake(root, f"{TRAINING}.parquet", *PROFILE)  # rerun-incomplete, keep-incomplete: false
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert planned_jobs(rerun) == {"train_case": 1}
    assert not list(folder.glob(".*.tmp"))
    assert ("left by a killed earlier attempt of this job"
            in (root / "results/logs/001/train/copy-L6-seed0.log").read_text())
    for table, path in _training_tables(root).items():  # the same tables as an uninterrupted run's
        reference = small_run / plan.output_path("train", "copy-L6-seed0", table)
        frames = [io.read_parquet(p) for p in (path, reference)]
        frames = [f.drop(columns=plan.measured_columns("train", f.columns)) for f in frames]
        pd.testing.assert_frame_equal(*frames, check_exact=True, obj=table)


def _job_pid(log):
    import re

    match = re.search(r"job of the Snakemake run pid \d+ .*\(this job: pid (\d+)\)",
                      log.read_text() if log.is_file() else "")
    return int(match.group(1)) if match else None


def _ended(pid):
    from attnrepro.run import ownership as jobs

    stat = jobs._stat(pid)
    return stat is None or stat[0] == "Z"


@pytest.mark.full
def test_an_orphaned_job_never_replaces_the_outputs_of_a_newer_run(tmp_path):
    import os
    import signal
    import sys
    import time

    root = copy_repo(tmp_path / "repo")
    steps = root / "config/steps.yaml"
    steps.write_text("train:\n  steps: 2500\n")
    configs = "config/small.yaml config/steps.yaml"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "ATTNREPRO_FAULT")}
    first = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "1", f"{TRAINING}.parquet",
                              "--configfile", *configs.split()], cwd=root, env=env, start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = root / "results/logs/001/train/copy-L6-seed0.log"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and "step 100/2500" not in (log.read_text() if log.is_file() else ""):
        time.sleep(0.1)
    job = _job_pid(log)
    assert job is not None and "step 100/2500" in log.read_text(), "the training never reported progress"
    try:
        os.kill(first.pid, signal.SIGKILL)  # Snakemake only: its job is re-parented and would run on
        first.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not _ended(job):
            time.sleep(0.1)
        ended_at_once, orphan_log = _ended(job), log.read_text()

        steps.write_text("train:\n  steps: 400\n")
        assert snakemake(root, "--unlock", configfile=configs).returncode == 0
        rerun = snakemake(root, f"{TRAINING}.parquet", *PROFILE, configfile=configs)
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        assert planned_jobs(rerun) == {"train_case": 1}
        deadline = time.monotonic() + 240  # were the orphan alive, it would finish its training
        while time.monotonic() < deadline and not _ended(job):
            time.sleep(0.5)
        assert _ended(job)
    finally:
        if not _ended(job):
            os.kill(job, signal.SIGKILL)
    for table, path in _training_tables(root).items():
        assert io.read_provenance(path)["params"]["steps"] == 400, table
    assert io.read_parquet(root / f"{TRAINING}.parquet")["steps"].tolist() == [400]
    assert not list((root / "results/data/001/train").glob(".*.tmp"))
    # ... and the orphan ended within a poll of its run, saying why
    assert ended_at_once
    assert (f"the Snakemake run that started this job (pid {first.pid}) has ended; "
            "this job's outputs are not written") in orphan_log


def _keep_mtime(path, write):
    import os

    stat = path.stat()
    write(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


@pytest.mark.full
def test_a_result_of_other_parameters_stops_its_readers_and_the_named_command_rebuilds_it(run_copy):
    # what an orphan of an earlier run leaves: the file of another config, newer than nothing
    path = run_copy / f"{TRAINING}.parquet"
    meta = io.read_provenance(path)
    meta["params"]["steps"] = 2500
    _keep_mtime(path, lambda p: io.write_parquet(io.read_parquet(p), p, meta))
    dry = snakemake(run_copy, "-n")
    assert "Nothing to be done" in dry.stdout + dry.stderr  # Snakemake cannot see it

    failed = snakemake(run_copy, "table_train_accuracy", "--forcerun", "table_train_accuracy")
    assert failed.returncode != 0
    message = (run_copy / "results/logs/report/train_accuracy.log").read_text()
    assert (f"{TRAINING}.parquet: written with steps = 2500, "
            "but this run's config plans steps = 100") in message
    command = f"snakemake --cores N --forcerun {TRAINING}.parquet"
    assert f"`{command}`" in message and "Traceback" not in message

    rebuilt = snakemake(run_copy, "table_train_accuracy", "--forcerun", f"{TRAINING}.parquet")
    assert rebuilt.returncode == 0, rebuilt.stderr[-3000:]
    # and the ledger, which the table reads (its printed cells' verdicts), with the attention map the
    # ledger reads, which reads that training's model
    assert planned_jobs(rebuilt) == {"train_case": 1, "attention_map_case": 1, "ledger": 1,
                                     "table_train_accuracy": 1}
    assert io.read_provenance(path)["params"]["steps"] == 100


@pytest.mark.full
def test_a_flipped_bit_or_a_truncated_file_stops_the_ledger_naming_the_file(run_copy):
    import pyarrow.parquet as pq

    # the ledger read a flipped bit as data ("differs"), and a truncated file as "missing"
    def ledger_error():
        ledger = snakemake(run_copy, "ledger", "--forcerun", "ledger")
        assert ledger.returncode != 0
        # no ledger with "missing" or "differs" verdicts
        assert not (run_copy / "results/ledger.csv").exists()
        message = (run_copy / "results/logs/report/ledger.log").read_text()
        assert "Traceback" not in message
        return message

    flipped = run_copy / f"{TRAINING}.parquet"
    original = flipped.read_bytes()
    chunks = pq.ParquetFile(flipped).metadata.row_group(0)
    (chunk,) = [chunks.column(i) for i in range(chunks.num_columns)
                if chunks.column(i).path_in_schema == "sequence_accuracy"]
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    position = start + chunk.total_compressed_size - 2  # in its data page's values

    def flip(p):
        data = bytearray(p.read_bytes())
        data[position] ^= 0x10
        p.write_bytes(bytes(data))

    _keep_mtime(flipped, flip)
    message = ledger_error()
    assert (f"{TRAINING}.parquet: corrupt result file "
            "(unreadable: OSError: could not verify page integrity") in message
    assert f"`snakemake --cores N --forcerun {TRAINING}.parquet`" in message

    _keep_mtime(flipped, lambda p: p.write_bytes(original))
    truncated = "results/data/001/scale_table/d_k-8_scaled-true.parquet"
    _keep_mtime(run_copy / truncated, lambda p: p.write_bytes(p.read_bytes()[:-100]))
    message = ledger_error()
    assert f"{truncated}: corrupt result file (unreadable: " in message
    assert f"`snakemake --cores N --forcerun {truncated}`" in message
