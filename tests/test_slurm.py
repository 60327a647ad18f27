"""A cross-section of the small config through workflow/profiles/slurm on a real one-node SLURM cluster.

A cluster on 127.0.0.1 (tests/cluster/localslurm.py: munged, slurmctld, slurmd from Debian's
`munge` and `slurm-wlm`), whose node has a host name of its own, runs every `<experiment>_case`
job as an sbatch job, submitted by the slurm environment's Snakemake (.venv-slurm, `make
slurm-env`). First a long training whose login-side Snakemake is SIGKILLed: the job, which cannot
see that process, stops by its heartbeat without writing. Then a second run builds that training
and a cross-section of the small config, whose tables must equal those of a local run in another
copy. One cluster and one run for both (a second cluster and run cost 70 s of the suite).
Skipped where the daemons, root or the slurm environment are missing; CI installs them (.ci/run)
and sets ATTNREPRO_REQUIRE_ALL=1, under which a missing one fails the tests instead
(conftest.missing). Alone: `pytest -m slurm`.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from attnrepro.run import heartbeat, io
from attnrepro.dag import plan
from attnrepro.report.products import catalog

from cluster.localslurm import LocalSlurm, missing_tools
from conftest import REPO, copy_repo, small_config

SLURM_PYTHON = Path(os.environ.get("ATTNREPRO_SLURM_PYTHON", REPO / ".venv-slurm" / "bin" / "python"))
# Hard limits: Snakemake waiting on job states it never gets ignores SIGTERM, so the run is
# killed with its whole process group.
RUN_TIMEOUT = int(os.environ.get("ATTNREPRO_SLURM_TIMEOUT", "1200"))
# A cross-section of the small config, to keep the test short (each sbatch job starts
# Snakemake twice, ~5 CPU-seconds): a grid (4 jobs), a training read by a downstream job
# through `inputs`, a timing job (whole node), and a figure built on the login node (a table reads
# the ledger, hence every experiment: too long a run here).
TARGETS = ["scale_table", "attention_map", "causal_timing", "figure_scale_table_curves"]
EXPERIMENTS = ["scale_table", "attention_map", "causal_timing"]


def _skip_reason():
    if sys.platform != "linux" or os.geteuid() != 0:
        return "the local SLURM cluster needs root on Linux"
    if missing_tools():
        return f"not installed: {', '.join(missing_tools())} (apt-get install slurm-wlm munge)"
    if not shutil.which("unshare"):
        return "not installed: unshare (util-linux), for a node with a host name of its own"
    if not SLURM_PYTHON.exists():
        return f"no slurm environment at {SLURM_PYTHON} (make slurm-env)"
    # find, not import: importing the plugin asks for a SLURM controller (~9 s without one)
    find = "import importlib.util as u, sys; sys.exit(u.find_spec('snakemake_executor_plugin_slurm') is None)"
    probe = subprocess.run([str(SLURM_PYTHON), "-c", find], capture_output=True)
    if probe.returncode != 0:
        return f"{SLURM_PYTHON} lacks snakemake-executor-plugin-slurm (make slurm-env)"
    return None


SKIP = _skip_reason()
# conftest.missing: skip, or fail in CI
pytestmark = [pytest.mark.slurm, pytest.mark.full, pytest.mark.needs(SKIP)]


def run(argv, cwd, env, timeout):
    """Run ``argv`` in its own process group; on timeout kill the group. (returncode, log)."""
    log_path = cwd / "run.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return None, log_path.read_text()
    return proc.returncode, log_path.read_text()


def test_slurm_run_succeeds(runs):
    assert runs.slurm_rc is not None, f"killed after {RUN_TIMEOUT} s:\n{runs.slurm_log[-6000:]}"
    assert runs.slurm_rc == 0, runs.slurm_log[-6000:]


def test_every_case_ran_as_a_completed_sbatch_job(runs):
    config = small_config()
    # + the map's training, + the killed run's training (sort-L6-seed0), built again
    cases = sum(len(plan.cases(e, config)) for e in EXPERIMENTS) + 2
    states = [job.split("|")[1] for job in runs.jobs]
    assert states == ["COMPLETED"] * cases, runs.jobs


def test_timing_jobs_get_the_whole_node(runs):
    """Timing jobs ask for --exclusive (workflow/rules/common.smk, whole_node)."""
    timing = {e for e in EXPERIMENTS if plan.EXPERIMENTS[e].timing}
    cpus = {}
    for job in runs.jobs:
        _, _, ncpus, comment = job.split("|")
        rule = comment.removeprefix("rule_").split("_wildcards_")[0].removesuffix("_case")
        cpus.setdefault(rule, set()).add(int(ncpus))
    assert timing <= set(cpus)
    for rule, counts in cpus.items():
        expected = {runs.node_cpus} if rule in timing else {plan.EXPERIMENTS[rule].threads}
        assert counts == expected, rule


def test_same_files_as_a_local_run(runs, small_run):
    def files(root):  # (other tests add an archive to small_run)
        return sorted(
            str(p.relative_to(root)) for p in (root / "results").rglob("*")
            if p.is_file() and not {"logs", "archive"} & set(p.relative_to(root).parts)
        )

    slurm_files = files(runs.slurm_dir)
    assert set(slurm_files) <= set(files(small_run))
    config = small_config()
    for experiment in EXPERIMENTS:
        assert set(plan.experiment_outputs(experiment, config)) <= set(slurm_files), experiment


def _compared(path, frame):
    """The part of a table that two runs of the same job must reproduce exactly."""
    experiment = io.read_provenance(path)["experiment"]
    if plan.EXPERIMENTS[experiment].timing and path.name.endswith(".machine.parquet"):
        return frame.iloc[:0]  # the machine's state (load, ...) when it measured: names and types
    frame = frame.drop(columns=plan.measured_columns(experiment, frame.columns))
    frame.attrs = {}  # provenance
    return frame


def test_parquet_tables_equal_those_of_a_local_run(runs, small_run):
    paths = sorted(str(p.relative_to(runs.slurm_dir))
                   for p in (runs.slurm_dir / "results/data").rglob("*.parquet"))
    assert len(paths) >= sum(len(plan.experiment_outputs(e, small_config())) for e in EXPERIMENTS)
    for path in paths:
        slurm, local = runs.slurm_dir / path, small_run / path
        slurm_frame, local_frame = pd.read_parquet(slurm), pd.read_parquet(local)
        assert list(slurm_frame.columns) == list(local_frame.columns), path
        assert dict(slurm_frame.dtypes) == dict(local_frame.dtypes), path
        assert len(slurm_frame) == len(local_frame), path
        pd.testing.assert_frame_equal(
            _compared(slurm, slurm_frame), _compared(local, local_frame), check_exact=True, obj=path
        )


def test_report_tables_and_figures_equal_those_of_a_local_run(runs, small_run):
    """Built on the login node (localrules) from the tables the cluster wrote."""
    products = [catalog.PRODUCTS[t.split("_", 1)[1]] for t in TARGETS if t.startswith(("table_", "figure_"))]
    assert products
    for product in products:
        for path in product.outputs.values():
            assert (runs.slurm_dir / path).read_bytes() == (small_run / path).read_bytes(), path


def test_cluster_daemons_are_gone_after_teardown(runs):
    assert set(runs.daemons) == {"munged", "slurmctld", "slurmd"}
    assert runs.leftovers == []


# --- a job never outlives its run, on a node that cannot see it ------------------------------

NODE_HOST = "attnrepro-node"  # the compute node's host name: the login side's processes are not its
TRAINING = "results/data/001/train/sort-L6-seed0"
LONG_STEPS = 20000  # 6 to 7 ms a step here (2026-12-02, 2 cores): minutes, far past the heartbeat's bound
LONG = f"train:\n  steps: {LONG_STEPS}\n"
STOPPED = re.compile(r"the Snakemake run that started this job \(pid (\d+) on (\S+)\) has ended: its "
                     r"heartbeat (\S+) is ([\d.]+) s old, stale after 30 s; "
                     r"this job's outputs are not written")


def _wait_for(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return time.monotonic()
        time.sleep(0.2)
    raise AssertionError(f"no {what} after {seconds} s")


def _jobs(env):
    """Every job of the cluster, as its controller saw it (MinJobAge keeps finished ones):
    ``id|state|cpus|comment``."""
    return subprocess.run(["squeue", "--noheader", "--states=all", "--format=%i|%T|%C|%k"], env=env,
                          capture_output=True, text=True, timeout=30).stdout.splitlines()


@pytest.fixture(scope="module")
def slurm_runs(tmp_path_factory):
    """The slurm profile runs one long training; once it trains on the node, its Snakemake is
    SIGKILLed (that process alone: what the job left behind runs on). Once the job has stopped, a
    second run of the small config (100 steps) builds the same training and the cross-section
    TARGETS. The cluster is torn down whatever happens."""
    base = tmp_path_factory.mktemp("slurm")
    slurm = LocalSlurm(base / "cluster", hostname=NODE_HOST)
    started = time.monotonic()
    slurm.up()
    try:
        bringup = time.monotonic() - started
        root = copy_repo(base / "run")
        (root / "long.yaml").write_text(LONG)
        cleared = ("PYTHONPATH", "VIRTUAL_ENV", "ATTNREPRO_RUN", heartbeat.HEARTBEAT)
        env = {k: v for k, v in slurm.env.items() if k not in cleared}
        # the profile's 40 s before the first status check suit a busy cluster; this one answers at once
        argv = [str(SLURM_PYTHON), "-m", "snakemake", "--workflow-profile", "workflow/profiles/slurm",
                "--slurm-init-seconds-before-status-checks", "1", f"{TRAINING}.parquet"]
        small = ["--configfile", "config/small.yaml"]
        job_log = root / "results/logs/001/train/sort-L6-seed0.log"
        with open(root / "first.log", "w") as out:
            first = subprocess.Popen([*argv, *small, "long.yaml"], cwd=root, env=env,
                                     stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        try:
            _wait_for(lambda: first.poll() is not None
                      or (job_log.exists() and f" step 100/{LONG_STEPS} " in job_log.read_text()), 180,
                      "training on the node")
            assert first.poll() is None, (root / "first.log").read_text()[-3000:]
            os.kill(first.pid, signal.SIGKILL)
            killed_at = time.monotonic()
        finally:
            first.kill()
            first.wait()

        def job_state():
            return [job.split("|")[1] for job in _jobs(slurm.env)]

        stopped_at = _wait_for(lambda: job_state() and job_state()[0] not in ("RUNNING", "COMPLETING"),
                               heartbeat.STALE_SECONDS + 60, "end of the orphaned job")
        data = root / "results/data/001/train"
        orphan = SimpleNamespace(state=job_state()[0], log=job_log.read_text(),
                                 seconds=stopped_at - killed_at,
                                 files=sorted(p.name for p in data.rglob("*") if p.is_file()))
        before = {job.split("|")[0] for job in _jobs(slurm.env)}  # ids: the orphan's
        subprocess.run([*argv, "--unlock", *small], cwd=root, env=env, capture_output=True,
                       timeout=RUN_TIMEOUT)
        started = time.monotonic()
        second_rc, second_log = run([*argv, *TARGETS, *small], root, env, RUN_TIMEOUT)
        second_seconds = time.monotonic() - started
        jobs = [job for job in _jobs(slurm.env) if job.split("|")[0] not in before]  # the second run's
        node_cpus = slurm.cpus
    finally:
        daemons = slurm.down()
    said = STOPPED.search(orphan.log)
    print(f"\nSLURM bring-up {bringup:.1f} s; the orphan stopped {orphan.seconds:.0f} s after the kill: "
          f"{said.group(0) if said else orphan.log[-500:]}; second run {second_seconds:.0f} s, "
          f"{len(jobs)} sbatch jobs")
    return SimpleNamespace(root=root, main_pid=first.pid, orphan=orphan, second_rc=second_rc,
                           second_log=second_log, jobs=jobs, node_cpus=node_cpus, daemons=daemons,
                           leftovers=slurm.leftovers(daemons))


@pytest.fixture(scope="module")
def runs(slurm_runs):
    """The second run, on the cluster, of the cross-section (and the killed training)."""
    both = slurm_runs
    return SimpleNamespace(slurm_dir=both.root, slurm_rc=both.second_rc, slurm_log=both.second_log,
                           jobs=both.jobs, node_cpus=both.node_cpus, daemons=both.daemons,
                           leftovers=both.leftovers)


@pytest.fixture(scope="module")
def killed(slurm_runs):
    """The killed first run: its orphaned training, then the second run that completes."""
    return slurm_runs


def test_a_job_on_a_node_knows_the_login_side_run_not_its_job_step(killed):
    """The job step (the Snakemake that the sbatch job runs on the node, reading the workflow again)
    keeps the identity that the run handed down: the job names the login side's Snakemake."""
    first = killed.orphan.log.splitlines()[0]
    assert (f"job of the Snakemake run pid {killed.main_pid} on host {socket.gethostname()} (handed down in "
            f"ATTNREPRO_RUN), whose process this job ({NODE_HOST}) cannot see: its heartbeat alone tells; "
            f"its heartbeat {killed.root / heartbeat.FILE} is ") in first, first


def test_an_orphaned_job_stops_by_the_heartbeat_without_writing(killed):
    stopped = STOPPED.search(killed.orphan.log)
    assert stopped, killed.orphan.log[-3000:]
    pid, host, path, age = stopped.groups()
    beat = str(killed.root / heartbeat.FILE)
    assert (int(pid), host, path) == (killed.main_pid, socket.gethostname(), beat)
    # the age is printed to 0.1 s: a heartbeat 30.04 s old, stale, reads "30.0"
    assert heartbeat.STALE_SECONDS <= float(age) < heartbeat.STALE_SECONDS + 15
    assert killed.orphan.seconds < heartbeat.STALE_SECONDS + 20
    assert killed.orphan.state == "FAILED"
    assert killed.orphan.files == []  # no table, no temporary
    assert f" step {LONG_STEPS}/{LONG_STEPS} " not in killed.orphan.log


def test_a_second_run_completes_after_the_kill(killed):
    assert killed.second_rc == 0, killed.second_log[-6000:]
    table = io.read_parquet(killed.root / f"{TRAINING}.parquet")
    assert io.read_provenance(killed.root / f"{TRAINING}.parquet")["params"]["steps"] == 100, table
    assert not (killed.root / heartbeat.FILE).exists()  # removed by the run that wrote it, at its end
