"""A job belongs to its Snakemake run: it finds it, and writes nothing once it has ended."""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from attnrepro.run import heartbeat, io, ownership
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
    run = ownership.find_run(child)
    assert run is not None and run.pid == parent.pid and ownership.alive(run)
    # pytest has no such ancestor
    assert ownership.find_run() is None or ownership.find_run().pid != parent.pid
    parent.kill()
    parent.wait()
    assert not ownership.alive(run)
    with pytest.raises(ownership.RunEnded,
                       match=f"the Snakemake run that started this job \\(pid {parent.pid}\\) has ended"):
        ownership.check(run)


def test_command_lines_that_run_snakemake():
    assert ownership.runs_snakemake(["/x/.venv/bin/python", "/x/.venv/bin/snakemake", "--cores", "2"])
    assert ownership.runs_snakemake(["python3", "-m", "snakemake", "--cores", "2"])
    assert ownership.runs_snakemake(["snakemake", "-n"])
    assert not ownership.runs_snakemake(["python", "-m", "attnrepro", "run", "snakemake"])
    assert not ownership.runs_snakemake(["bash", "-c", "python -m snakemake --cores 2"])


def test_a_recycled_pid_is_not_the_run():
    me = ownership._stat(os.getpid())
    assert ownership.alive(ownership.Run(os.getpid(), me[2]))
    assert not ownership.alive(ownership.Run(os.getpid(), me[2] - 1))  # same pid, another process
    done = subprocess.Popen(["true"])
    done.wait()
    assert not ownership.alive(ownership.Run(done.pid, 1))


def test_an_orphaned_job_does_not_replace_newer_outputs(tmp_path, monkeypatch):
    paths = {t: tmp_path / f"case{'' if t == 'main' else '.' + t}.parquet" for t in ("main", "curve")}
    for path in paths.values():  # what the newer run wrote
        io.write_parquet(pd.DataFrame({"steps": [400]}), path, {})
    outputs = io.OutputSet(paths)
    for name in paths:  # the orphan's tables, written while its run was alive
        outputs.stage(name, pd.DataFrame({"steps": [2500]}), {})
    ended = ownership.Run(os.getpid(), ownership._stat(os.getpid())[2] - 1)
    monkeypatch.setitem(ownership._state, "run", ended)  # ... which ends before the renames
    with pytest.raises(ownership.RunEnded,
                       match=f"\\(pid {os.getpid()}\\) has ended; this job's outputs are not written"):
        with outputs:
            outputs.commit()
    assert [io.read_parquet(p)["steps"][0] for p in paths.values()] == [400, 400]
    assert not list(tmp_path.glob(".*.tmp"))
    with pytest.raises(ownership.RunEnded):  # a report job's single files too
        io.write_text(tmp_path / "table.md", "stale")
    assert not (tmp_path / "table.md").exists() and not list(tmp_path.glob(".*.tmp"))


def test_the_watchdog_ends_an_orphaned_job(tmp_path):
    """The job's own process dies within a poll of its run's end, removing its temporaries."""
    script = (
        "import sys, time\n"
        "from attnrepro.run import io, ownership\n"
        "assert ownership.start(poll=0.1) is not None\n"
        "tmp = io.temporary_beside(sys.argv[1])\n"
        "print(tmp, flush=True)\n"
        "time.sleep(30)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(io.__file__).parents[2])}
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
        while (ownership._stat(job) is not None and ownership._stat(job)[0] != "Z"
               and time.monotonic() < deadline):
            time.sleep(0.05)
        assert ownership._stat(job) is None or ownership._stat(job)[0] == "Z", "the orphaned job lives on"
        assert not list(tmp_path.glob(".*.tmp"))
    finally:
        parent.kill()
        parent.wait()
        if job is not None and ownership._stat(job) is not None:
            os.kill(job, 9)


# --- a job belongs to its run from the moment it is spawned -------------------------------

def _descendants(pid):
    """Every descendant of ``pid`` (children's children too) still alive while they are read: a
    process that ends meanwhile has no children left to list."""
    out, todo = [], [pid]
    while todo:
        try:
            tasks = list(Path(f"/proc/{todo.pop()}/task").iterdir())
        except OSError:  # it ended
            tasks = []
        for task in tasks:
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
        if here and "attnrepro.jobs.experiment" in " ".join(ownership._argv(int(entry.name))):
            found.append(int(entry.name))
    return found


def _kill_trial(root, instant, calibration):
    """Start Snakemake on one two-table job, SIGKILL it at ``instant`` ("before": before the job's
    shell exists; a number: that many seconds after the shell appears; "paused": while the job
    holds its first written table), wait for the job to end. Returns (kill time ns, shell seen
    at kill, seconds from start to the shell)."""
    import signal

    cleared = ("PYTHONPATH", "VIRTUAL_ENV", ownership.FAULT, ownership.RUN)
    env = {k: v for k, v in os.environ.items() if k not in cleared}
    if instant == "paused":
        env[ownership.FAULT] = "pause-after-table:main"
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
            if instant == "before" and now - started >= calibration / 2:  # well before: start-up varies
                break
            if shell is None:
                shell = next((p for p in _descendants(proc.pid)
                              if "attnrepro.jobs.experiment" in " ".join(ownership._argv(p))), None)
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


@pytest.mark.full
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
    me = ownership.this_process()
    assert ownership.parse(me.token()) == me and me.here()
    monkeypatch.setitem(ownership._state, "run", None)
    monkeypatch.setitem(ownership._state, "watchdog", None)
    done = subprocess.Popen(["true"])
    done.wait()
    ended = ownership.Run(done.pid, 1, me.boot, me.host)
    with pytest.raises(ownership.RunEnded, match=f"pid {done.pid}"):
        ownership.start(environ={ownership.RUN: ended.token()})
    assert ownership.current() is None
    elsewhere = ownership.Run(1, 1, "another-boot", "another-host")
    run, how = ownership.belongs_to({ownership.RUN: elsewhere.token()})
    assert run == elsewhere and "another-host" in how and "its heartbeat alone tells" in how
    run, how = ownership.belongs_to({})
    assert run is None and how.startswith("run by hand")
    with pytest.raises(ValueError, match="ATTNREPRO_RUN"):
        ownership.parse("12@host")


def test_a_zombie_run_has_ended():
    child = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while ownership._stat(child.pid)[0] != "Z" and time.monotonic() < deadline:  # not reaped: a zombie
        time.sleep(0.01)
    run = ownership.Run(child.pid, ownership._stat(child.pid)[2])
    try:
        assert ownership._stat(child.pid)[0] == "Z" and not ownership.alive(run)
    finally:
        child.wait()


# --- the pieces of the watch, in this process (mutation testing reaches them here) ---------------

NO_SUCH_PID = 2**22 + 1  # above the kernel's largest pid_max: never a process


@pytest.fixture()
def sleeper():
    """A child process sleeping until killed, and its Run as the run would hand it down."""
    child = subprocess.Popen(["sleep", "60"])
    me = ownership.this_process()
    yield child, ownership.Run(child.pid, ownership._stat(child.pid)[2], me.boot, me.host)
    child.kill()
    child.wait()


@pytest.fixture()
def unstarted(monkeypatch):
    """This process as a job that has not called jobs.start yet."""
    monkeypatch.setitem(ownership._state, "run", None)
    monkeypatch.setitem(ownership._state, "watchdog", None)


def _processes(monkeypatch, table):
    """Make jobs see ``table`` ({pid: (state, parent pid, start time, argv)}) as /proc."""
    monkeypatch.setattr(ownership, "_stat", lambda pid: table[pid][:3] if pid in table else None)
    monkeypatch.setattr(ownership, "_argv", lambda pid: table[pid][3] if pid in table else [])


def test_stat_reads_state_parent_and_start_time_behind_an_odd_command_name(tmp_path):
    odd = tmp_path / "a) b c"  # the name in /proc/<pid>/stat: "(a) b c)"
    shutil.copy(shutil.which("sleep"), odd)
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    child = subprocess.Popen([str(odd), "60"])
    try:
        assert f"({odd.name})" in Path(f"/proc/{child.pid}/stat").read_text()
        state, parent, started = ownership._stat(child.pid)
        assert state in ("R", "S") and parent == os.getpid()
        assert abs(started / os.sysconf("SC_CLK_TCK") - uptime) < 5  # clock ticks after boot
    finally:
        child.kill()
        child.wait()
    assert ownership._stat(NO_SUCH_PID) is None


def test_argv_decodes_any_bytes_and_is_empty_for_no_process():
    child = subprocess.Popen([b"\xffsleep", b"60"], executable=shutil.which("sleep"))
    try:
        deadline = time.monotonic() + 10
        while ownership._argv(child.pid) == [""] and time.monotonic() < deadline:  # still in exec
            time.sleep(0.01)
        assert ownership._argv(child.pid) == ["\ufffdsleep", "60", ""]
    finally:
        child.kill()
        child.wait()
    assert ownership._argv(NO_SUCH_PID) == []


def test_the_run_hands_down_its_identity_or_clears_a_stale_one(monkeypatch):
    environ = {}
    me = ownership.hand_down(environ)
    assert me == ownership.Run(os.getpid(), ownership._stat(os.getpid())[2],
                          Path("/proc/sys/kernel/random/boot_id").read_text().strip(), socket.gethostname())
    assert environ == {ownership.RUN: me.token()} and ownership.parse(environ[ownership.RUN]) == me
    monkeypatch.setattr(ownership, "_stat", lambda pid: None)  # a system without /proc
    assert ownership.this_process() is None
    assert ownership.hand_down(environ) is None and environ == {}
    assert ownership.hand_down(environ) is None and environ == {}  # nothing to clear
    monkeypatch.setattr(ownership, "BOOT_ID", Path("/proc/no-such-boot-id"))
    assert ownership._boot() == ""


def test_a_run_is_here_on_this_host_and_boot_or_where_they_are_unrecorded():
    host, boot = socket.gethostname(), ownership._boot()
    assert boot and ownership.Run(1, 1, boot, host).here() and ownership.Run(1, 1, "", "").here()
    assert not ownership.Run(1, 1, "another-boot", host).here()  # this host, rebooted since
    assert not ownership.Run(1, 1, boot, "another-host").here()


def test_a_token_is_parsed_back_or_refused_by_name():
    # a boot id is a UUID; a Linux hostname may hold any character, "@" too
    odd = ownership.Run(7, 9, "6b1e-42", "user@node")
    assert ownership.parse(odd.token()) == odd
    for bad in ("x:2:b@h", "1:y:b@h", "1:2@h", "1:2:3:b@h", ""):
        with pytest.raises(ValueError, match=f"ATTNREPRO_RUN='{bad}' is not pid:start:boot@host"):
            ownership.parse(bad)


def test_a_zombie_or_dead_process_has_ended_a_running_one_not(monkeypatch):
    for state, lives in {"R": True, "S": True, "D": True, "Z": False, "X": False}.items():
        _processes(monkeypatch, {5: (state, 1, 40, ["snakemake"])})
        assert ownership.alive(ownership.Run(5, 40)) is lives, state
    error = pytest.raises(ownership.RunEnded, ownership.check, ownership.Run(5, 40)).value
    assert error.run == ownership.Run(5, 40)
    ownership.check(None)  # a run by hand: nothing to check


def test_command_lines_at_the_edges_of_what_runs_snakemake():
    assert ownership.runs_snakemake(["python", "-m", "snakemake"])
    assert not ownership.runs_snakemake(["python", "-m"])
    assert not ownership.runs_snakemake(["grep", "-rn", "snakemake"])  # an argument, not the program
    assert ownership.runs_snakemake(["python3", "-u", "-m", "snakemake"])
    assert not ownership.runs_snakemake(["git", "commit", "-a", "-m", "snakemake"])  # another program's -m


def test_find_run_walks_every_ancestor_up_to_pid_1(monkeypatch):
    job = {30: ("S", 2, 50, ["bash", "-c", "python -m attnrepro.jobs.experiment"]),
           31: ("R", 30, 51, ["python", "-m", "attnrepro.jobs.experiment"])}
    _processes(monkeypatch, {1: ("S", 0, 1, ["/sbin/init"]), 2: ("S", 1, 40, ["snakemake", "-c2"]), **job})
    assert ownership.find_run(31) == ownership.Run(2, 40)
    _processes(monkeypatch, {1: ("S", 0, 3, ["/venv/bin/snakemake", "-c2"]), 2: ("S", 1, 40, ["bash"]),
                             **job})  # a container running Snakemake alone: pid 1
    assert ownership.find_run(31) == ownership.Run(1, 3)
    _processes(monkeypatch, {1: ("S", 0, 1, ["/sbin/init"]), 2: ("S", 1, 40, ["bash"]), **job})
    assert ownership.find_run(31) is None
    _processes(monkeypatch, {2: ("S", 0, 40, ["snakemake"]), os.getpid(): ("R", 2, 60, ["python"])})
    assert ownership.find_run() == ownership.Run(2, 40)  # this process's ancestors by default
    run, how = ownership.belongs_to({})
    assert run == ownership.Run(2, 40)
    assert how == "job of the Snakemake run pid 2 (its ancestor; ATTNREPRO_RUN unset)"


def test_how_a_job_says_which_run_it_belongs_to(monkeypatch):
    me = socket.gethostname()
    elsewhere = ownership.Run(1, 1, "", "another-host")
    run, how = ownership.belongs_to({ownership.RUN: elsewhere.token()})
    assert run == elsewhere and how == (
        "job of the Snakemake run pid 1 on host another-host (handed down in ATTNREPRO_RUN), whose "
        f"process this job ({me}) cannot see: its heartbeat alone tells")
    rebooted = ownership.Run(1, 1, "another-boot", "")
    run, how = ownership.belongs_to({ownership.RUN: rebooted.token()})
    assert run == rebooted and how.startswith("job of the Snakemake run pid 1 on host ? (handed down ")
    _processes(monkeypatch, {})
    assert ownership.belongs_to({}) == (None, "run by hand: no Snakemake run handed this job its identity "
                                         "(ATTNREPRO_RUN unset), none is its ancestor")


# the watchdog's thread ends in SystemExit (os._exit replaced), which pytest would report
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_start_watches_the_run_and_ends_the_job_with_it(sleeper, unstarted, monkeypatch, caplog, capsys,
                                                        tmp_path):
    """The watchdog, in a thread of this process: os._exit ends the thread instead of pytest."""
    child, run = sleeper
    exits = []

    def leave(status):
        exits.append(status)
        raise SystemExit(status)  # ends the watchdog's thread only

    monkeypatch.setattr(ownership.os, "_exit", leave)
    caplog.set_level("INFO", logger="attnrepro")
    assert ownership.start(poll=0.02, environ={ownership.RUN: run.token()}) == run == ownership.current()
    assert caplog.messages == [f"job of the Snakemake run pid {run.pid} (handed down in ATTNREPRO_RUN) "
                               f"(this job: pid {os.getpid()})"]
    watchdog = ownership._state["watchdog"]
    assert watchdog.name == "attnrepro-run-watchdog" and watchdog.daemon
    assert ownership.start(environ={}) == run and ownership._state["watchdog"] is watchdog  # once per process
    tmp = io.temporary_beside(tmp_path / "x.parquet")
    ownership.register(tmp_path / ".y.parquet.gone.tmp")  # renamed meanwhile: no reason to live on
    time.sleep(0.2)  # polls while the run lives: the job goes on
    assert watchdog.is_alive() and tmp.exists() and exits == []
    child.kill()
    child.wait()
    watchdog.join(10)
    assert not watchdog.is_alive() and exits == [1] and not tmp.exists()
    assert capsys.readouterr().err == (f"attnrepro: the Snakemake run that started this job (pid {run.pid}) "
                                       "has ended; this job's outputs are not written\n")


def test_a_job_by_hand_is_not_watched(unstarted, monkeypatch, caplog):
    _processes(monkeypatch, {})
    caplog.set_level("INFO", logger="attnrepro")
    assert ownership.start(environ={}) is None and ownership._state["watchdog"] is None
    assert caplog.messages[0].startswith("run by hand: no Snakemake run handed this job its identity")


def test_publishing_holds_off_the_watchdog_and_lets_it_go_after_a_refusal(sleeper, monkeypatch):
    child, run = sleeper
    monkeypatch.setitem(ownership._state, "run", run)

    def watchdog_can_poll():
        """Whether another thread (the watchdog's) gets the lock within 0.2 s."""
        got = []

        def poll():
            got.append(ownership._LOCK.acquire(timeout=0.2))
            if got[0]:
                ownership._LOCK.release()

        thread = threading.Thread(target=poll)
        thread.start()
        thread.join()
        return got[0]

    with ownership.publishing():
        assert not watchdog_can_poll()
    assert watchdog_can_poll()
    child.kill()
    child.wait()
    with pytest.raises(ownership.RunEnded):
        with ownership.publishing():
            pass
    assert watchdog_can_poll()


# --- a second run's heartbeat: what really happened ------------------------------------------------

def _second_sleeper():
    """Another child sleeping until killed (a second run), and its Run."""
    child = subprocess.Popen(["sleep", "60"])
    me = ownership.this_process()
    return child, ownership.Run(child.pid, ownership._stat(child.pid)[2], me.boot, me.host)


def test_a_live_second_runs_heartbeat_is_said_a_dead_ones_is_an_ended_run(sleeper, tmp_path):
    """The job's run lives, here; the heartbeat names a second run: alive, it took the heartbeat over
    (not "has ended"); dead, the old words. The job stops without writing either way."""
    child, run = sleeper
    beat = tmp_path / "heartbeat.json"
    second, taker = _second_sleeper()
    try:
        heartbeat.write(beat, taker.token(), now=time.time() - 40)  # stale: its process tells here
        ended = ownership.verdict(run, beat)
        assert re.fullmatch(
            re.escape(f"a second run (pid {taker.pid}) took over this folder's heartbeat while this job's "
                      f"run (pid {run.pid}) is alive: its heartbeat {beat} names another run "
                      f"({taker.token()}), ")
            + r"40\.\d" + re.escape(" s old; this job's outputs are not written"), str(ended)), str(ended)
        assert ended.run == run and ended.taker == taker
        with pytest.raises(ownership.RunEnded, match=f"^a second run \\(pid {taker.pid}\\) took over"):
            ownership.check(run, beat)
    finally:
        second.kill()
        second.wait()
    heartbeat.write(beat, taker.token())  # fresh, but its process is gone
    ended = ownership.verdict(run, beat)
    assert str(ended).startswith(f"the Snakemake run that started this job (pid {run.pid} on {run.host}) has "
                                 f"ended: its heartbeat {beat} names another run ({taker.token()}), 0.")
    assert ended.taker is None


def test_a_second_run_is_alive_by_its_process_where_seen_else_by_its_fresh_heartbeat(sleeper):
    child, run = sleeper
    remote = ownership.Run(4343, 999, "boot-a", "login2")
    assert ownership.second_run(None) is None
    assert ownership.second_run((run.token(), 1000.0)) == run  # here: its process, whatever the age
    assert ownership.second_run((remote.token(), 0.0)) == remote  # elsewhere: its heartbeat
    assert ownership.second_run((remote.token(), 30.0)) == remote
    assert ownership.second_run((remote.token(), 30.01)) is None  # stale
    assert ownership.second_run(("not a run", 0.0)) is None
    child.kill()
    child.wait()
    assert ownership.second_run((run.token(), 0.0)) is None


def test_a_second_run_named_by_host_where_the_job_cannot_see_it():
    here = ownership.this_process()
    remote = ownership.Run(4343, 999, "boot-a", "login2")
    assert str(ownership.RunEnded(here, "why", remote)) == (
        f"a second run (pid 4343 on login2) took over this folder's heartbeat while this job's run (pid "
        f"{here.pid}) is alive: why; this job's outputs are not written")
    assert str(ownership.RunEnded(remote, "why", here)) == (
        f"a second run (pid {here.pid}) took over this folder's heartbeat from this job's run (pid 4343 on "
        "login2): why; this job's outputs are not written")


def test_the_fault_hook_acts_on_its_table_only(sleeper, unstarted, monkeypatch, caplog):
    child, run = sleeper
    done = []
    monkeypatch.setattr(ownership, "time", SimpleNamespace(sleep=lambda s: done.append(("sleep", s))))
    monkeypatch.setattr(ownership, "logging", SimpleNamespace(shutdown=lambda: done.append("shutdown")))
    monkeypatch.setattr(ownership, "find_run", lambda: None)

    def hook(fault, table="main"):
        done.clear()
        caplog.clear()
        kill = lambda pid, sig: done.append(("kill", "me" if pid == os.getpid() else pid, sig))  # noqa: E731
        monkeypatch.setattr(ownership, "os", SimpleNamespace(environ={ownership.FAULT: fault} if fault
        else {},
                                                        getpid=os.getpid, kill=kill))
        assert ownership.fault_point(table) is None
        return done[:], [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]

    for fault in ("", "kill-after-table:curve", "explode-after-table:main", "kill-after-table"):
        assert hook(fault) == ([], []), fault
    assert hook("pause-after-table:main") == (
        [("sleep", 3.0)],
        ["ATTNREPRO_FAULT=pause-after-table:main: pausing 3 s after writing the temporary of table main"])
    killed_self = ["shutdown", ("kill", "me", signal.SIGKILL)]
    assert hook("kill-after-table:curve", "curve") == (killed_self, [
        "ATTNREPRO_FAULT=kill-after-table:curve: killing this job after writing the temporary of table "
        "curve"])
    assert hook("crash-after-table:main")[0] == killed_self  # no run known: only the job
    monkeypatch.setitem(ownership._state, "run", run)
    assert hook("crash-after-table:main")[0] == [("kill", run.pid, signal.SIGKILL), *killed_self]
    monkeypatch.setitem(ownership._state, "run", None)
    monkeypatch.setattr(ownership, "find_run", lambda: run)  # a run found among the ancestors
    assert hook("crash-after-table:main")[0] == [("kill", run.pid, signal.SIGKILL), *killed_self]
    elsewhere = ownership.Run(run.pid, run.started, "another-boot", "another-host")
    monkeypatch.setitem(ownership._state, "run", elsewhere)  # its pid here is another host's process
    assert hook("crash-after-table:main")[0] == killed_self
    monkeypatch.setitem(ownership._state, "run", None)
    child.kill()
    child.wait()
    assert hook("crash-after-table:main")[0] == killed_self  # an ended run is not killed again
