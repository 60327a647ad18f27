"""The run's heartbeat: published by the run's Snakemake, checked by every job on any node."""

import errno
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from attnrepro.run import heartbeat, io, ownership
from conftest import copy_repo, snakemake

TOKEN = "4242:777:boot-a@login1"
OTHER = "4343:999:boot-a@login1"  # a newer run in the same directory
ELSEWHERE = ownership.Run(4242, 777, "boot-a", "login1")  # a run this job cannot see: another host


@pytest.fixture()
def beat(tmp_path):
    return tmp_path / ".snakemake" / "attnrepro" / "heartbeat.json"


@pytest.fixture()
def no_publisher(monkeypatch):
    """This process publishing no heartbeat yet; what a test starts is stopped."""
    monkeypatch.setitem(heartbeat._state, "publisher", None)
    yield
    if heartbeat._state["publisher"] is not None:
        heartbeat._state["publisher"].stop()


@pytest.fixture()
def unstarted(monkeypatch):
    """This process as a job that has not called jobs.start yet."""
    for key in ("run", "heartbeat", "watchdog"):
        monkeypatch.setitem(ownership._state, key, None)


def _wait(condition, seconds=5.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


# --- the file -------------------------------------------------------------------------------

def test_a_heartbeat_is_written_whole_through_a_temporary(beat, monkeypatch):
    heartbeat.write(beat, TOKEN, now=1000.5)
    assert json.loads(beat.read_text()) == {"run": TOKEN, "time": 1000.5}
    assert heartbeat.read(beat) == (TOKEN, 1000.5)
    assert os.listdir(beat.parent) == ["heartbeat.json"]

    def interrupted(src, dst):
        raise OSError(errno.EIO, "interrupted before the rename")

    monkeypatch.setattr(heartbeat.os, "replace", interrupted)
    with pytest.raises(OSError):
        heartbeat.write(beat, OTHER, now=2000.0)
    assert heartbeat.read(beat) == (TOKEN, 1000.5)  # the file itself is never half-written


def test_a_missing_heartbeat_reads_none_a_broken_one_is_refused(beat):
    assert heartbeat.read(beat) is None
    beat.parent.mkdir(parents=True)
    for text in ("{\"run\": \"1:2:b@h\"", "[]", "{\"time\": 5}", "{\"run\": \"x\", \"time\": \"5\"}",
                 "{\"run\": 7, \"time\": 5}", "{\"run\": \"x\", \"time\": true}"):
        beat.write_text(text)
        refused = "^" + re.escape('not a heartbeat: {"run": ..., "time": ...}') + "$"
        with pytest.raises(ValueError, match=refused):
            heartbeat.read(beat)
    beat.write_text(json.dumps({"run": "x", "time": 5}))
    assert heartbeat.read(beat) == ("x", 5.0)


def test_a_read_that_fails_is_tried_again_then_refused(beat, monkeypatch):
    heartbeat.write(beat, TOKEN, now=10.0)
    real, calls = Path.read_text, []
    monkeypatch.setattr(heartbeat.time, "sleep", lambda s: calls.append(("sleep", s)))

    def flaky(path, failures):
        calls.append("read")
        if calls.count("read") <= failures:
            raise OSError(errno.ESTALE, "Stale file handle")
        return real(path)

    monkeypatch.setattr(Path, "read_text", lambda path: flaky(path, 2))
    assert heartbeat.read(beat) == (TOKEN, 10.0)  # renamed over between open and read: twice
    assert calls == ["read", ("sleep", 0.1), "read", ("sleep", 0.1), "read"]
    calls.clear()
    monkeypatch.setattr(Path, "read_text", lambda path: flaky(path, 3))
    with pytest.raises(ValueError, match="^Stale file handle$"):
        heartbeat.read(beat)
    assert calls.count("read") == 3

    def bare(path):  # an OSError without strerror: its own text is the reason
        raise OSError("the share went away")

    monkeypatch.setattr(Path, "read_text", bare)
    with pytest.raises(ValueError, match="^the share went away$"):
        heartbeat.read(beat)


def test_status_names_the_file_and_its_age_and_what_is_wrong(beat):
    assert heartbeat.status(TOKEN, beat, now=50.0) == (False, f"it has no heartbeat at {beat}")
    heartbeat.write(beat, TOKEN, now=100.0)
    assert heartbeat.status(TOKEN, beat, now=102.25) == (True, f"its heartbeat {beat} is 2.2 s old")
    assert heartbeat.status(TOKEN, beat, now=130.0) == (True, f"its heartbeat {beat} is 30.0 s old")
    assert heartbeat.status(TOKEN, beat, now=130.5) == (
        False, f"its heartbeat {beat} is 30.5 s old, stale after 30 s")
    assert heartbeat.status(TOKEN, beat, now=110.0, stale=9.5) == (
        False, f"its heartbeat {beat} is 10.0 s old, stale after 9.5 s")
    assert heartbeat.status(OTHER, beat, now=101.0) == (
        False, f"its heartbeat {beat} names another run ({TOKEN}), 1.0 s old")
    beat.write_text("garbage")
    assert heartbeat.status(TOKEN, beat, now=100.0) == (
        False, f'its heartbeat {beat} is unreadable (not a heartbeat: {{"run": ..., "time": ...}})')
    heartbeat.write(beat, TOKEN)
    alive, how = heartbeat.status(TOKEN, beat)  # the clock of now
    assert alive and re.fullmatch(r"its heartbeat .* is 0\.\d s old", how)


def test_the_bound_is_three_periods_and_the_shared_filesystem_latency():
    assert heartbeat.HEARTBEAT_SECONDS == 5.0
    assert heartbeat.STALE_SECONDS == 5.0 * 3 + 15.0 == 30.0


# --- the publisher (the run's Snakemake) ---------------------------------------------------

def test_the_publisher_writes_at_once_then_every_period_until_stopped(beat, no_publisher):
    publisher = heartbeat.Publisher(TOKEN, beat, period=0.05)
    assert publisher.thread.daemon and publisher.thread.name == "attnrepro-heartbeat"
    publisher.start()
    assert heartbeat.read(beat)[0] == TOKEN  # before the thread's first period
    heartbeat.write(beat, TOKEN, now=1.0)  # stale: the thread's next write makes it fresh
    assert _wait(lambda: heartbeat.status(TOKEN, beat, stale=1.0)[0]), "not rewritten"
    first = heartbeat.read(beat)[1]
    assert _wait(lambda: heartbeat.read(beat)[1] > first), "rewritten once only"
    publisher.stop()
    assert not publisher.thread.is_alive() and not beat.exists()
    assert os.listdir(beat.parent) == ["run.lock"]  # the lock's file stays: its inode is the lock


def test_stopping_leaves_a_newer_runs_heartbeat(beat, no_publisher):
    publisher = heartbeat.Publisher(TOKEN, beat, period=60).start()
    heartbeat.write(beat, OTHER, now=5.0)
    publisher.stop()
    assert heartbeat.read(beat) == (OTHER, 5.0)
    publisher = heartbeat.Publisher(TOKEN, beat, period=60).start()
    beat.write_text("garbage")  # not a heartbeat: not removed either
    publisher.stop()
    assert beat.read_text() == "garbage"
    heartbeat.write(beat, TOKEN)
    heartbeat.Publisher(TOKEN, beat, period=60).stop()  # never started: nothing to join
    assert not beat.exists()


def test_a_failed_rewrite_is_logged_and_the_beat_goes_on(beat, no_publisher, caplog):
    publisher = heartbeat.Publisher(TOKEN, beat, period=0.05).start()
    beat.unlink()
    (beat.parent / heartbeat.LOCK_NAME).unlink()  # its open file holds the lock still
    beat.parent.rmdir()
    beat.parent.write_text("not a folder")  # every write fails now
    assert _wait(lambda: len(caplog.records) >= 2), "failures not logged"
    assert caplog.records[0].levelname == "WARNING"
    said = rf"heartbeat {re.escape(str(beat))} not written: \[Errno \d+\] \w.*"
    assert re.fullmatch(said, caplog.messages[0]), caplog.messages[0]
    beat.parent.unlink()
    assert _wait(beat.exists), "the thread stopped after a failure"
    publisher.stop()


def test_publish_once_per_process_and_hand_the_path_down(tmp_path, no_publisher, monkeypatch):
    monkeypatch.chdir(tmp_path)
    environ = {}
    publisher = heartbeat.publish(TOKEN, environ, period=60)
    path = tmp_path / ".snakemake/attnrepro/heartbeat.json"
    assert publisher.path == path and environ == {"ATTNREPRO_HEARTBEAT": str(path)}
    assert heartbeat.read(path)[0] == TOKEN and publisher.thread.is_alive()
    assert heartbeat.publish(OTHER, environ, period=60) is publisher
    heartbeat.stop(environ)
    assert environ == {} and not path.exists() and not publisher.thread.is_alive()
    assert heartbeat._state["publisher"] is None
    heartbeat.stop(environ)  # nothing published: nothing to do


def test_publish_rewrites_at_the_period_it_is_given(tmp_path, no_publisher):
    path = tmp_path / "heartbeat.json"
    heartbeat.publish(TOKEN, {}, path=path, period=0.05)
    first = heartbeat.read(path)[1]
    assert _wait(lambda: heartbeat.read(path)[1] > first, seconds=2.0), "not rewritten within 2 s"
    heartbeat.stop({})  # an environment the path was never handed down in: nothing to remove there
    assert not path.exists()


def test_stopping_tolerates_a_heartbeat_removed_after_it_was_read(beat, no_publisher, monkeypatch):
    publisher = heartbeat.Publisher(TOKEN, beat, period=60).start()
    beat.unlink()  # gone between the read and the unlink (say, by hand)
    monkeypatch.setattr(heartbeat, "read", lambda path: (TOKEN, 1.0))
    publisher.stop()
    assert not publisher.thread.is_alive()


def test_judge_names_the_other_run_it_finds_read_once_with_the_rest(beat):
    assert heartbeat.judge(TOKEN, beat, now=50.0) == (False, f"it has no heartbeat at {beat}", None)
    heartbeat.write(beat, OTHER, now=100.0)
    assert heartbeat.judge(TOKEN, beat, now=101.5) == (
        False, f"its heartbeat {beat} names another run ({OTHER}), 1.5 s old", (OTHER, 1.5))
    assert heartbeat.judge(OTHER, beat, now=131.0)[2] is None  # its own, stale: no other run
    assert heartbeat.judge(OTHER, beat, now=101.0) == (True, f"its heartbeat {beat} is 1.0 s old", None)
    beat.write_text("garbage")
    assert heartbeat.judge(TOKEN, beat)[2] is None


# --- the run lock (the run's Snakemake, before its heartbeat) -------------------------------------

HOLDER = """\
import subprocess, sys, time
from attnrepro.run import heartbeat
heartbeat.RunLock(sys.argv[1]).take(sys.argv[2])
job = subprocess.Popen(["sleep", "60"], close_fds=False)  # a job: outlives a killed run; no fd closed for it
print(job.pid, flush=True)
time.sleep(60)
"""


def _refusal(pid, started, host=None):
    who = f"pid {pid}" if host is None else f"pid {pid} on {host}"
    return (f"another Snakemake run ({who}, started {time.strftime('%H:%M:%S', time.localtime(started))}) "
            "is running in this folder: wait for it, or stop it")


def test_the_run_lock_is_exclusive_across_processes_and_freed_when_its_holder_is_killed(tmp_path):
    """A second process cannot take the lock while the first holds it; once the first is SIGKILLed,
    it can, though the first one's job runs on (the lock's descriptor is not inherited)."""
    path = tmp_path / heartbeat.LOCK_NAME
    env = {**os.environ, "PYTHONPATH": str(Path(heartbeat.__file__).parents[2])}
    first = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), TOKEN], env=env,
                             stdout=subprocess.PIPE, text=True)
    job = int(first.stdout.readline())
    try:
        started = json.loads(path.read_text())["started"]
        with pytest.raises(heartbeat.Busy) as refused:
            heartbeat.RunLock(path).take(OTHER)
        assert str(refused.value) == _refusal(first.pid, started)
        assert json.loads(path.read_text())["run"] == TOKEN  # the refused run wrote nothing
        first.kill()
        first.wait()
        assert ownership._stat(job)[0] not in "ZX"  # the killed run's job lives on ...
        lock = heartbeat.RunLock(path).take(OTHER)  # ... and holds no lock
        assert json.loads(path.read_text())["run"] == OTHER
        lock.release()
    finally:
        first.kill()
        first.wait()
        os.kill(job, signal.SIGKILL)


def test_the_lock_names_its_holder_and_is_free_once_released(tmp_path, monkeypatch):
    path = tmp_path / "deeper" / heartbeat.LOCK_NAME
    monkeypatch.setattr(heartbeat.time, "time", lambda: 1_000_000.25)
    lock = heartbeat.RunLock(path).take(TOKEN)  # its folder is made
    assert json.loads(path.read_text()) == {"pid": os.getpid(), "host": socket.gethostname(), "run": TOKEN,
                                            "started": 1_000_000.25}
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    second = heartbeat.RunLock(path)  # another open file: flock refuses it even in this process
    with pytest.raises(heartbeat.Busy, match=re.escape(f"(pid {os.getpid()}, started ")):
        second.take(OTHER)
    assert second.fd is None and json.loads(path.read_text())["run"] == TOKEN
    lock.release()
    assert lock.fd is None
    lock.release()  # released already: nothing to do
    second.take(OTHER)
    assert second.fd is not None and json.loads(path.read_text())["run"] == OTHER  # the name replaced whole
    second.release()
    assert path.exists()  # never removed: a run that opened it just before would lock another inode


def test_a_refusal_names_the_holder_host_and_day_and_reads_a_late_name_again(tmp_path, monkeypatch):
    path = tmp_path / heartbeat.LOCK_NAME
    now = time.time()
    path.write_text(json.dumps({"pid": 77, "host": socket.gethostname(), "run": OTHER, "started": now - 5}))
    assert heartbeat.holder(path, now=now) == _refusal(77, now - 5)
    path.write_text(json.dumps({"pid": 77, "host": "login2", "run": OTHER, "started": now - 5}))
    assert heartbeat.holder(path, now=now) == _refusal(77, now - 5, host="login2")
    assert heartbeat.holder(path, now=now + 2 * 86400) == _refusal(77, now - 5, host="login2").replace(
        "started ", f"started {time.strftime('%Y-%m-%d', time.localtime(now - 5))} ")  # another day: its date
    sleeps = []

    def holder_writes_late(seconds):
        sleeps.append(seconds)
        if len(sleeps) == 2:
            path.write_text(json.dumps({"pid": 78, "host": "login2", "run": OTHER, "started": now}))

    monkeypatch.setattr(heartbeat.time, "sleep", holder_writes_late)
    path.write_text("")  # taken, not written yet
    assert heartbeat.holder(path, now=now) == _refusal(78, now, host="login2") and sleeps == [0.1, 0.1]
    monkeypatch.setattr(heartbeat.time, "sleep", sleeps.append)
    nameless = (f"another Snakemake run is running in this folder (its lock {path} does not name it): wait "
                "for it, or stop it")
    for text in ("", "[]", '{"pid": 7}', '{"pid": "x", "host": "h", "started": 1}', "{"):
        path.write_text(text)
        assert heartbeat.holder(path, now=now, attempts=1) == nameless
    path.unlink()  # gone: read as often, in vain
    sleeps.clear()
    assert heartbeat.holder(path) == nameless and sleeps == [0.1] * heartbeat.LOCK_READS == [0.1] * 3
    assert heartbeat.holder(path, attempts=0) == nameless  # not read at all: named by nothing


def test_a_refusal_dates_the_holders_start_by_the_day_it_started_not_by_today(tmp_path):
    """The date is said when the holder started on another day than ``now``'s: the start's date."""
    path = tmp_path / heartbeat.LOCK_NAME
    started = time.mktime((2001, 2, 3, 12, 0, 0, 0, 0, -1))  # local noon, long before today
    path.write_text(json.dumps({"pid": 77, "host": socket.gethostname(), "run": OTHER, "started": started}))
    assert heartbeat.holder(path, now=started + 60) == _refusal(77, started)  # its own day: the time alone
    assert heartbeat.holder(path, now=started + 3 * 86400) == (
        "another Snakemake run (pid 77, started 2001-02-03 12:00:00) is running in this folder: wait for it, "
        "or stop it")


def test_a_filesystem_without_locks_is_said_and_the_run_goes_on(tmp_path, monkeypatch, caplog):
    path = tmp_path / heartbeat.LOCK_NAME
    for error, said in ((OSError(errno.ENOLCK, "No locks available"), "No locks available"),
                        (OSError("no lock daemon"), "no lock daemon")):
        def refuse(fd, how, error=error):
            raise error

        monkeypatch.setattr(heartbeat.fcntl, "flock", refuse)
        caplog.clear()
        lock = heartbeat.RunLock(path).take(TOKEN)
        assert lock.fd is None and caplog.records[0].levelname == "WARNING"
        assert caplog.messages == [f"run lock {path} not taken ({said}): a second run in this folder is not "
                                   "refused"]
        lock.release()


def test_a_second_run_is_refused_before_it_writes_a_heartbeat(tmp_path, no_publisher):
    path = tmp_path / "heartbeat.json"
    holder = heartbeat.RunLock(tmp_path / heartbeat.LOCK_NAME).take(TOKEN)  # the first run
    heartbeat.write(path, TOKEN, now=10.0)
    environ = {}
    with pytest.raises(heartbeat.Busy, match=f"^another Snakemake run \\(pid {os.getpid()}, started "):
        heartbeat.publish(OTHER, environ, path=path, period=0.05)
    assert heartbeat.read(path) == (TOKEN, 10.0) and environ == {} and heartbeat._state["publisher"] is None
    holder.release()  # the first run ends
    publisher = heartbeat.publish(OTHER, environ, path=path, period=60)
    assert heartbeat.read(path)[0] == OTHER and publisher.lock.fd is not None
    assert json.loads((tmp_path / heartbeat.LOCK_NAME).read_text())["run"] == OTHER  # the lock names its run
    with pytest.raises(heartbeat.Busy):  # held for the whole run
        heartbeat.RunLock(tmp_path / heartbeat.LOCK_NAME).take(TOKEN)
    heartbeat.stop(environ)
    assert publisher.lock.fd is None
    heartbeat.RunLock(tmp_path / heartbeat.LOCK_NAME).take(TOKEN).release()  # released at the run's end


# --- the jobs -------------------------------------------------------------------------------

@pytest.fixture()
def sleeper():
    """A child process sleeping until killed, and its Run as the run would hand it down."""
    child = subprocess.Popen(["sleep", "60"])
    me = ownership.this_process()
    yield child, ownership.Run(child.pid, ownership._stat(child.pid)[2], me.boot, me.host)
    child.kill()
    child.wait()


def _ended(run, beat):
    ended = ownership.verdict(run, beat)
    return None if ended is None else str(ended)


def test_a_job_on_another_host_lives_by_the_heartbeat_alone(beat):
    assert not ELSEWHERE.here()
    heartbeat.write(beat, ELSEWHERE.token(), now=time.time() - 2)
    assert ownership.verdict(ELSEWHERE, beat) is None
    ownership.check(ELSEWHERE, beat)
    heartbeat.write(beat, ELSEWHERE.token(), now=time.time() - 41)
    message = _ended(ELSEWHERE, beat)
    assert re.fullmatch(
        re.escape("the Snakemake run that started this job (pid 4242 on login1) has ended: its heartbeat "
                  f"{beat} is ") + r"41\.\d" + re.escape(" s old, stale after 30 s; this job's outputs are "
                                                         "not written"), message), message
    with pytest.raises(ownership.RunEnded) as raised:
        ownership.check(ELSEWHERE, beat)
    assert raised.value.run == ELSEWHERE
    heartbeat.write(beat, OTHER)  # a second run, alive by its fresh heartbeat
    assert re.fullmatch(
        re.escape("a second run (pid 4343 on login1) took over this folder's heartbeat from this job's run "
                  f"(pid 4242 on login1): its heartbeat {beat} names another run ({OTHER}), ")
        + r"0\.\d" + re.escape(" s old; this job's outputs are not written"), _ended(ELSEWHERE, beat))
    assert ownership.verdict(ELSEWHERE, beat).taker == ownership.parse(OTHER)
    heartbeat.write(beat, OTHER, now=time.time() - 31)  # ... or stale: the facts say nothing of a second run
    assert f"(pid 4242 on login1) has ended: its heartbeat {beat} names another run ({OTHER}), 31." in (
        _ended(ELSEWHERE, beat))
    assert ownership.verdict(ELSEWHERE, beat).taker is None
    beat.unlink()
    assert _ended(ELSEWHERE, beat) == ("the Snakemake run that started this job (pid 4242 on login1) has "
                                       f"ended: it has no heartbeat at {beat}; this job's outputs are not "
                                       "written")
    assert _ended(ELSEWHERE, None) == (
        "the Snakemake run that started this job (pid 4242 on login1) has ended: this job on "
        f"{socket.gethostname()} cannot see its process, and it hands down no heartbeat "
        "(ATTNREPRO_HEARTBEAT unset); this job's outputs are not written")
    assert ownership.verdict(None, beat) is None  # a job by hand checks nothing


def test_a_job_on_the_runs_host_needs_its_process_and_its_heartbeat(sleeper, beat):
    child, run = sleeper
    assert run.here()
    assert ownership.verdict(run, None) is None  # no heartbeat handed down: the process alone
    heartbeat.write(beat, run.token())
    assert ownership.verdict(run, beat) is None
    heartbeat.write(beat, run.token(), now=time.time() - 31)  # the process lives, beats no more
    assert re.search(f"\\(pid {run.pid} on {run.host}\\) has ended: its heartbeat .* is 31\\.\\d s old",
                     _ended(run, beat))
    heartbeat.write(beat, run.token())
    child.kill()
    child.wait()
    assert _ended(run, beat) == (f"the Snakemake run that started this job (pid {run.pid}) has ended; "
                                 "this job's outputs are not written")  # its process is gone


def test_handed_heartbeat_only_with_a_handed_run(beat):
    assert ownership.handed_heartbeat({ownership.RUN: TOKEN, heartbeat.HEARTBEAT: str(beat)}) == beat
    assert ownership.handed_heartbeat({heartbeat.HEARTBEAT: str(beat)}) is None
    assert ownership.handed_heartbeat({ownership.RUN: TOKEN, heartbeat.HEARTBEAT: ""}) is None
    assert ownership.handed_heartbeat({ownership.RUN: TOKEN}) is None


def test_a_job_of_a_remote_run_with_a_stale_or_foreign_heartbeat_does_not_begin(beat, unstarted, caplog):
    caplog.set_level("INFO", logger="attnrepro")
    environ = {ownership.RUN: ELSEWHERE.token(), heartbeat.HEARTBEAT: str(beat)}
    for token, age, said in ((ELSEWHERE.token(), 45, "has ended: its heartbeat"),
                             (OTHER, 1, "took over this folder's heartbeat from this job's run")):
        heartbeat.write(beat, token, now=time.time() - age)
        with pytest.raises(ownership.RunEnded, match=said):
            ownership.start(environ=environ)
        assert ownership.current() is None and ownership._state["watchdog"] is None
    beat.unlink()
    with pytest.raises(ownership.RunEnded, match="it has no heartbeat at"):
        ownership.start(environ=environ)
    with pytest.raises(ownership.RunEnded, match="hands down no heartbeat"):
        ownership.start(environ={ownership.RUN: ELSEWHERE.token()})
    assert ownership.current() is None and ownership._state["watchdog"] is None


# the watchdog's thread ends in SystemExit (os._exit replaced), which pytest would report
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_job_of_a_remote_run_proceeds_then_stops_when_the_heartbeat_goes_stale(
        beat, unstarted, monkeypatch, caplog, capsys, tmp_path):
    exits = []

    def leave(status):
        exits.append(status)
        raise SystemExit(status)  # ends the watchdog's thread only

    monkeypatch.setattr(ownership.os, "_exit", leave)
    caplog.set_level("INFO", logger="attnrepro")
    heartbeat.write(beat, ELSEWHERE.token(), now=time.time() - 3)
    environ = {ownership.RUN: ELSEWHERE.token(), heartbeat.HEARTBEAT: str(beat)}
    assert ownership.start(poll=0.02, environ=environ) == ELSEWHERE == ownership.current()
    assert ownership._state["heartbeat"] == beat
    assert re.fullmatch(
        re.escape("job of the Snakemake run pid 4242 on host login1 (handed down in ATTNREPRO_RUN), whose "
                  f"process this job ({socket.gethostname()}) cannot see: its heartbeat alone tells; its "
                  f"heartbeat {beat} is ") + r"3\.\d" + re.escape(f" s old (this job: pid {os.getpid()})"),
        caplog.messages[0]), caplog.messages
    tmp = io.temporary_beside(tmp_path / "x.parquet")
    time.sleep(0.2)  # polls while the heartbeat is fresh: the job goes on
    watchdog = ownership._state["watchdog"]
    assert watchdog.is_alive() and tmp.exists() and exits == []
    with ownership.publishing():
        pass
    heartbeat.write(beat, ELSEWHERE.token(), now=time.time() - 35)
    watchdog.join(10)
    assert not watchdog.is_alive() and exits == [1] and not tmp.exists()
    assert re.fullmatch(
        re.escape("attnrepro: the Snakemake run that started this job (pid 4242 on login1) has ended: its "
                  f"heartbeat {beat} is ") + r"35\.\d" + re.escape(" s old, stale after 30 s; this job's "
                                                                   "outputs are not written\n"),
        capsys.readouterr().err)


def test_no_output_is_renamed_once_another_run_beats(beat, tmp_path, monkeypatch):
    paths = {t: tmp_path / f"case{'' if t == 'main' else '.' + t}.parquet" for t in ("main", "curve")}
    for path in paths.values():  # what the newer run wrote
        io.write_parquet(pd.DataFrame({"steps": [400]}), path, {})
    outputs = io.OutputSet(paths)
    for name in paths:  # the orphan's tables, written while its run was alive
        outputs.stage(name, pd.DataFrame({"steps": [2500]}), {})
    monkeypatch.setitem(ownership._state, "run", ELSEWHERE)
    monkeypatch.setitem(ownership._state, "heartbeat", beat)
    heartbeat.write(beat, OTHER)  # ... and the newer run beats now, between two polls
    with pytest.raises(ownership.RunEnded, match=re.escape(f"names another run ({OTHER})")):
        with outputs:
            outputs.commit()
    assert [io.read_parquet(p)["steps"][0] for p in paths.values()] == [400, 400]
    assert not list(tmp_path.glob(".*.tmp"))
    heartbeat.write(beat, ELSEWHERE.token())  # its own, fresh: the write goes through
    io.write_text(tmp_path / "table.md", "fresh")
    assert (tmp_path / "table.md").read_text() == "fresh"
    heartbeat.write(beat, ELSEWHERE.token(), now=time.time() - 60)
    with pytest.raises(ownership.RunEnded, match="60\\.\\d s old, stale after 30 s"):
        io.write_text(tmp_path / "table.md", "stale")
    assert (tmp_path / "table.md").read_text() == "fresh"


# --- the workflow publishes it ---------------------------------------------------------------

@pytest.mark.full
def test_the_run_publishes_its_heartbeat_and_removes_it_at_its_end(tmp_path):
    """A dry run writes none (only a run that starts jobs does: onstart); a run overwrites one that a
    killed run left, its job logs its age, and the file is gone when the run ends."""
    root = copy_repo(tmp_path / "repo")
    target = "results/data/001/batched_attention/default.parquet"
    path = root / heartbeat.FILE
    proc = snakemake(root, "-n", target)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not path.exists()
    heartbeat.write(path, OTHER, now=time.time() - 3600)  # left by a run killed long ago
    proc = snakemake(root, target, cores=1)
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = (root / "results/logs/001/batched_attention/default.log").read_text()
    assert re.search(r"\(handed down in ATTNREPRO_RUN\); its heartbeat "
                     + re.escape(str(path.resolve())) + r" is \d+\.\d s old \(this job: pid \d+\)", log), log
    assert not path.exists()
    assert (root / target).exists()


@pytest.mark.full
@pytest.mark.timeout(120)
def test_two_runs_started_at_once_in_one_folder_one_runs_the_other_is_refused(tmp_path):
    """Both pass Snakemake's lock (``--nolock``: what its non-atomic lock lets two runs at once do);
    the run lock lets one run its job, and stops the other before any job, in one line."""
    root = copy_repo(tmp_path / "repo")
    target = "results/data/001/batched_attention/default.parquet"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", ownership.RUN,
                                                             heartbeat.HEARTBEAT)}
    env[ownership.FAULT] = "pause-after-table:main"  # the job outlasts the other run's start-up
    argv = [sys.executable, "-m", "snakemake", "--cores", "1", "--scheduler", "greedy", "--nolock", target,
            "--configfile", "config/small.yaml"]
    runs = [subprocess.Popen(argv, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(2)]
    said = [run.communicate(timeout=100) for run in runs]
    codes = sorted(run.returncode for run in runs)
    assert codes == [0, 1], [err[-2000:] for _, err in said]
    ran, refused = (0, 1) if runs[0].returncode == 0 else (1, 0)
    last = said[refused][1].strip().splitlines()[-1]
    assert re.fullmatch(re.escape(f"another Snakemake run (pid {runs[ran].pid}, started ") + r"\d\d:\d\d:\d\d"
                        + re.escape(") is running in this folder: wait for it, or stop it"), last), last
    assert "Execute 1 jobs" in said[ran][1] and "Execute" not in said[refused][1]  # no job of its own
    log = (root / "results/logs/001/batched_attention/default.log").read_text()
    assert f"job of the Snakemake run pid {runs[ran].pid} " in log and f"pid {runs[refused].pid} " not in log
    assert (root / target).exists() and not (root / heartbeat.FILE).exists()
