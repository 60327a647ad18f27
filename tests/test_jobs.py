"""A job belongs to its Snakemake run: it finds it, and writes nothing once it has ended."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from attnrepro import io, jobs


def _children(pid):
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


@pytest.fixture()
def fake_run():
    """A process whose command line reads as Snakemake's (argv[0] "snakemake"), and its child."""
    parent = subprocess.Popen(["bash", "-c", "exec -a snakemake bash -c 'sleep 60; true'"])
    deadline = time.monotonic() + 10
    while not _children(parent.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    (child,) = _children(parent.pid)
    yield parent, child
    parent.kill()
    parent.wait()
    subprocess.run(["kill", str(child)], capture_output=True)


def test_a_job_finds_the_snakemake_run_it_belongs_to(fake_run):
    parent, child = fake_run
    run = jobs.find_run(child)
    assert run is not None and run.pid == parent.pid and jobs.alive(run)
    assert jobs.find_run() is None or jobs.find_run().pid != parent.pid  # pytest has no such ancestor
    parent.kill()
    parent.wait()
    assert not jobs.alive(run)
    with pytest.raises(jobs.RunEnded,
                       match=f"the Snakemake run that started this job \\(pid {parent.pid}\\) has ended"):
        jobs.check(run)


def test_command_lines_that_run_snakemake():
    assert jobs.runs_snakemake(["/x/.venv/bin/python", "/x/.venv/bin/snakemake", "--cores", "2"])
    assert jobs.runs_snakemake(["python3", "-m", "snakemake", "--cores", "2"])
    assert jobs.runs_snakemake(["snakemake", "-n"])
    assert not jobs.runs_snakemake(["python", "-m", "attnrepro", "run", "snakemake"])
    assert not jobs.runs_snakemake(["bash", "-c", "python -m snakemake --cores 2"])


def test_a_recycled_pid_is_not_the_run():
    me = jobs._stat(os.getpid())
    assert jobs.alive(jobs.Run(os.getpid(), me[2]))
    assert not jobs.alive(jobs.Run(os.getpid(), me[2] - 1))  # same pid, another process
    done = subprocess.Popen(["true"])
    done.wait()
    assert not jobs.alive(jobs.Run(done.pid, 1))


def test_an_orphaned_job_does_not_replace_newer_outputs(tmp_path, monkeypatch):
    paths = {t: tmp_path / f"case{'' if t == 'main' else '.' + t}.parquet" for t in ("main", "curve")}
    for path in paths.values():  # what the newer run wrote
        io.write_parquet(pd.DataFrame({"steps": [400]}), path, {})
    outputs = io.OutputSet(paths)
    for name in paths:  # the orphan's tables, written while its run was alive
        outputs.stage(name, pd.DataFrame({"steps": [2500]}), {})
    ended = jobs.Run(os.getpid(), jobs._stat(os.getpid())[2] - 1)
    monkeypatch.setitem(jobs._state, "run", ended)  # ... which ends before the renames
    with pytest.raises(jobs.RunEnded,
                       match=f"\\(pid {os.getpid()}\\) has ended; this job's outputs are not written"):
        with outputs:
            outputs.commit()
    assert [io.read_parquet(p)["steps"][0] for p in paths.values()] == [400, 400]
    assert not list(tmp_path.glob(".*.tmp"))
    with pytest.raises(jobs.RunEnded):  # a report job's single files too
        io.write_text(tmp_path / "table.md", "stale")
    assert not (tmp_path / "table.md").exists() and not list(tmp_path.glob(".*.tmp"))


def test_the_watchdog_ends_an_orphaned_job(tmp_path):
    """The job's own process dies within a poll of its run's end, removing its temporaries."""
    script = (
        "import sys, time\n"
        "from attnrepro import io, jobs\n"
        "assert jobs.start(poll=0.1) is not None\n"
        "tmp = io.temporary_beside(sys.argv[1])\n"
        "print(tmp, flush=True)\n"
        "time.sleep(30)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(io.__file__).parents[1])}
    (tmp_path / "job.py").write_text(script)
    command = (f"exec -a snakemake bash -c '{sys.executable} {tmp_path / 'job.py'} "
               f"{tmp_path / 'x.parquet'}; true'")
    parent = subprocess.Popen(["bash", "-c", command], env=env)
    job = None
    try:
        deadline = time.monotonic() + 20
        while not list(tmp_path.glob(".x.parquet.*.tmp")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(tmp_path.glob(".x.parquet.*.tmp")), "the job never started"
        (job,) = _children(parent.pid)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 10
        while jobs._stat(job) is not None and jobs._stat(job)[0] != "Z" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert jobs._stat(job) is None or jobs._stat(job)[0] == "Z", "the orphaned job lives on"
        assert not list(tmp_path.glob(".*.tmp"))
    finally:
        parent.kill()
        parent.wait()
        if job is not None and jobs._stat(job) is not None:
            os.kill(job, 9)
