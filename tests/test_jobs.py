"""A job belongs to its Snakemake run: it finds it, and writes nothing once it has ended."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from attnrepro import io, jobs
from conftest import copy_repo


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


# --- a job belongs to its run from the moment it is spawned -------------------------------

def _descendants(pid):
    """Every descendant of ``pid`` (children's children too)."""
    out, todo = [], [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*"):
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except OSError:
                kids = []
            out += kids
            todo += kids
    return out


def _jobs_in(root):
    """Pids of the attnrepro jobs running in the folder ``root``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            here = entry.name.isdigit() and os.readlink(entry / "cwd") == str(root)
        except OSError:
            here = False
        if here and "attnrepro.job" in " ".join(jobs._argv(int(entry.name))):
            found.append(int(entry.name))
    return found


def _kill_trial(root, instant, calibration):
    """Start Snakemake on one two-table job, SIGKILL it at ``instant`` ("before": before the job's
    shell exists; a number: that many seconds after the shell appears; "paused": while the job
    holds its first written table), wait for the job to end. Returns (kill time ns, shell seen
    at kill, seconds from start to the shell)."""
    import signal

    cleared = ("PYTHONPATH", "VIRTUAL_ENV", jobs.FAULT, jobs.RUN)
    env = {k: v for k, v in os.environ.items() if k not in cleared}
    if instant == "paused":
        env[jobs.FAULT] = "pause-after-table:main"
    target = root / "results/data/001/batched_attention/default.parquet"
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "1", "--nolock",
                             "--rerun-incomplete", str(target.relative_to(root)),
                             "--configfile", "config/small.yaml"],
                            cwd=root, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shell, spawned = None, None
    try:
        deadline = started + 120
        while time.monotonic() < deadline:
            now = time.monotonic()
            if instant == "before" and now - started >= calibration - 0.5:
                break
            if shell is None:
                shell = next((p for p in _descendants(proc.pid)
                              if "attnrepro.job" in " ".join(jobs._argv(p))), None)
                spawned = now if shell is not None else None
            if instant == "paused" and list(target.parent.glob(".*.tmp")):
                break
            if isinstance(instant, float) and shell is not None and now - spawned >= instant:
                break
            time.sleep(0.001)
        else:
            raise AssertionError("the job never started")
        killed = time.time_ns()
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 60
    while _jobs_in(root) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _jobs_in(root), "the job outlived its run by a minute"
    return killed, shell is not None, (spawned - started) if spawned else None


def test_no_job_writes_after_its_run_is_killed_at_any_instant_around_its_start(tmp_path):
    """SIGKILL Snakemake from before a job's shell exists to after the job's first write: in every
    trial, no output is renamed into place after the kill, and no temporary is left. The identity
    that the run hands down (ATTNREPRO_RUN) lets a job that starts after the kill know its run has
    ended; without it, the job finds no Snakemake ancestor, takes itself for a run by hand, and
    writes its tables about a second after the kill."""
    root = copy_repo(tmp_path / "repo")
    out = root / "results/data/001/batched_attention"
    calibration, stopped = 3.0, 0
    for instant in (0.0, "before", 0.005, 0.03, 0.1, 0.3, "paused"):
        killed, shell_seen, spawn = _kill_trial(root, instant, calibration)
        calibration = spawn or calibration
        late = {p.name: (p.stat().st_ctime_ns - killed) / 1e9 for p in out.glob("*")
                if p.stat().st_ctime_ns > killed + 100_000_000}
        assert not late, f"kill at {instant}: written after the kill (seconds after): {late}"
        assert not list(out.glob(".*.tmp")), f"kill at {instant}: temporaries left"
        assert shell_seen == (instant != "before"), instant
        log = root / "results/logs/001/batched_attention/default.log"
        if shell_seen and not (out / "default.parquet").exists():
            assert "has ended; this job's outputs are not written" in log.read_text(), instant
            stopped += 1
        for path in [*out.glob("*"), log]:
            path.unlink(missing_ok=True)
    assert stopped >= 4, "too few trials caught the job alive: the test would not see the race"


def test_a_job_knows_its_run_from_the_environment_and_refuses_an_ended_one(monkeypatch):
    me = jobs.this_process()
    assert jobs.parse(me.token()) == me and me.here()
    monkeypatch.setitem(jobs._state, "run", None)
    monkeypatch.setitem(jobs._state, "watchdog", None)
    done = subprocess.Popen(["true"])
    done.wait()
    ended = jobs.Run(done.pid, 1, me.boot, me.host)
    with pytest.raises(jobs.RunEnded, match=f"pid {done.pid}"):
        jobs.start(environ={jobs.RUN: ended.token()})
    assert jobs.current() is None
    elsewhere = jobs.Run(1, 1, "another-boot", "another-host")
    run, how = jobs.belongs_to({jobs.RUN: elsewhere.token()})
    assert run is None and "another-host" in how and "not watched" in how
    run, how = jobs.belongs_to({})
    assert run is None and how.startswith("run by hand")
    with pytest.raises(ValueError, match="ATTNREPRO_RUN"):
        jobs.parse("12@host")


def test_a_zombie_run_has_ended():
    child = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while jobs._stat(child.pid)[0] != "Z" and time.monotonic() < deadline:  # not reaped: a zombie
        time.sleep(0.01)
    run = jobs.Run(child.pid, jobs._stat(child.pid)[2])
    try:
        assert jobs._stat(child.pid)[0] == "Z" and not jobs.alive(run)
    finally:
        child.wait()
