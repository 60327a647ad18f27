"""The guard of verify's rerun (:mod:`attnrepro.archive.rerun_guard`): which processes are alive and
descend from which, how they are ended, and the guard itself, in this process and as the process
verify starts; last, verify killed (SIGKILL) during a real rerun (the full tier). The processes are
real and small (tests/processes.py)."""

import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import pytest
import yaml

import hostile
from conftest import REPO, not_in_a_mutant
from attnrepro.archive import rerun_guard, verify_rerun
from attnrepro.dag import plan
from processes import (ENDED, LIFETIME, PYTHON, SLEEP, Started, alive, ignoring_ends, named_sleep, pids_in,
                       session, stat, tree, wait_until)

PR_GET_PDEATHSIG = 2


@pytest.fixture
def started():
    pids = Started()
    yield pids
    pids.kill()


# ---- the processes: which are alive, which descend from which --------------------------------

def test_a_process_is_alive_until_it_is_a_zombie(tmp_path, started):
    proc = subprocess.Popen([str(named_sleep(tmp_path)), LIFETIME])
    started.add(proc.pid)
    wait_until(lambda: stat(proc.pid) is not None, "the sleep")
    assert rerun_guard._alive(proc.pid) is True  # its name holds ") Z 1 (": the state is after the last ")"
    proc.kill()
    wait_until(lambda: stat(proc.pid)[0] == "Z", "the zombie")  # ended, not yet waited for
    assert rerun_guard._alive(proc.pid) is False
    proc.wait()
    assert rerun_guard._alive(int(open("/proc/sys/kernel/pid_max").read()) + 1) is False  # no such process


@pytest.mark.parametrize("line, living", [
    ("42 (sleep) S 1 42 42 0", True),
    ("42 (sleep) R 1 42 42 0", True),
    ("42 (sleep) D 1 42 42 0", True),
    ("42 (sleep) Z 1 42 42 0", False),
    ("42 (sleep) X 1 42 42 0", False),  # dead: seen for an instant while it is reaped
    ("42 (a) X 1 (b) S 1 42 42 0", True),
    ("42 (sleep", False),  # cut short
])
def test_the_state_of_a_process_is_read_from_its_stat_line(monkeypatch, line, living):
    read = []

    class Stat:
        def __init__(self, path):
            read.append(path)

        def read_text(self):
            return line

    monkeypatch.setattr(rerun_guard, "Path", Stat)
    assert rerun_guard._alive(42) is living
    assert read == ["/proc/42/stat"]


def test_descendants_are_every_generation_below_a_process(tmp_path, started):
    proc, pids = tree(tmp_path, started)
    try:
        assert sorted(rerun_guard.descendants(proc.pid)) == sorted(pids)
        middle, inner, apart = pids
        assert rerun_guard.descendants(middle) == [inner]
        assert rerun_guard.descendants(inner) == []
        assert {proc.pid, *pids} <= set(rerun_guard.descendants(os.getpid()))
    finally:
        proc.kill()
        proc.wait()


def test_descendants_are_read_from_each_stat_line_passing_over_what_ended(tmp_path, monkeypatch):
    """A /proc of stat lines (names holding ") S 1 (" and spaces): listed in this order, a
    process that ended between the listing and the reading of its stat line (no stat) comes
    first, and an entry that is no process ("self") is passed over."""
    proc = tmp_path / "proc"
    lines = {"self": "not a process", "15": None, "1": "1 (init) S 0 1 1", "20": "20 (a) S 1 (b c) S 1 20 20",
             "21": "21 (x) R 20 20 20", "22": "22 (y) S 21 20 20", "23": "23 (z) S 1 23 23",
             "24": "24 (w) S 20 20 20"}
    for name, line in lines.items():
        (proc / name).mkdir(parents=True)
        if line is not None:
            (proc / name / "stat").write_text(line + " 0 -1 4194304\n")
    listed = [proc / name for name in lines]

    def fake(path):
        assert path == "/proc"
        return types.SimpleNamespace(iterdir=lambda: iter(listed))

    monkeypatch.setattr(rerun_guard, "Path", fake)
    assert rerun_guard.descendants(20) == [21, 24, 22]  # depth first, from the last child
    assert rerun_guard.descendants(1) == [20, 23, 21, 24, 22]
    assert rerun_guard.descendants(22) == []
    assert rerun_guard.descendants(15) == []


# ---- ending the rerun -----------------------------------------------------------------------

def test_end_terminates_the_session_and_every_descendant(tmp_path, started):
    proc, pids = tree(tmp_path, started)
    start = time.monotonic()
    rerun_guard.end(proc)
    assert proc.returncode == -signal.SIGINT  # ended by SIGINT, long before SIGKILL
    assert time.monotonic() - start < rerun_guard.GRACE_SECONDS
    assert [pid for pid in pids if alive(pid)] == []  # the sleep in a session of its own too


def test_end_kills_what_ignores_sigterm_after_the_grace(started):
    proc = session([SLEEP, LIFETIME], started, preexec_fn=ignoring_ends)  # returns once it runs sleep
    start = time.monotonic()
    rerun_guard.end(proc, grace=0.5)
    assert time.monotonic() - start >= 0.5
    assert proc.returncode == -signal.SIGKILL


class Clock:
    """time for end(): sleep advances the clock; ``ready`` (if set) is waited for, in real time,
    before the first sleep returns."""

    def __init__(self, ready=None):
        self.now, self.ready, self.sleeps = 0.0, ready, []

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        if self.ready is not None:
            wait_until(self.ready, "the process to be ready")
            self.ready = None
        self.sleeps.append(seconds)
        self.now += seconds


def _signals_sent(monkeypatch, clock, proc=None):
    """[(time, signal to the group, signal to each descendant)] end() sends (and the state of
    ``proc`` then, if given), on ``clock``."""
    sent = []
    signal_all = rerun_guard._signal_all

    def recording(pids, group, signum, group_signum=None):
        first = signum if group_signum is None else group_signum
        sent.append((clock.now, first, signum) + (() if proc is None else ((stat(proc.pid) or ["gone"])[0],)))
        signal_all(pids, group, signum, group_signum)

    monkeypatch.setattr(rerun_guard, "_signal_all", recording)
    fake = types.SimpleNamespace(monotonic=clock.monotonic, sleep=clock.sleep)
    monkeypatch.setattr(rerun_guard, "time", fake)
    return sent


INT, TERM, KILL = signal.SIGINT, signal.SIGTERM, signal.SIGKILL


@pytest.mark.parametrize("grace, killed_at", [(None, 3.0), (0.5, 0.5), (0.25, 0.3)])
def test_sigkill_follows_sigterm_after_the_grace_to_a_tenth_of_a_second(monkeypatch, started, grace,
                                                                         killed_at):
    """On a clock that only sleeps move: SIGINT to the group and SIGTERM to each descendant at 0,
    SIGKILL at the first poll past the grace (3 s unless given), polled every 0.1 s; it waits for
    the process."""
    proc = session([SLEEP, LIFETIME], started, preexec_fn=ignoring_ends)
    clock = Clock()
    sent = _signals_sent(monkeypatch, clock)
    rerun_guard.end(proc, *([] if grace is None else [grace]))
    assert [(round(at, 9), *signums) for at, *signums in sent] == [(0, INT, TERM), (killed_at, KILL, KILL)]
    assert set(clock.sleeps) == {0.1}
    assert proc.returncode == -signal.SIGKILL


# the child of the rerun: on SIGINT or SIGTERM, it starts a sleep in a session of its own, and lives on
LATE = f"""
import os, signal, subprocess, time
def on_term(signum, frame):
    late = subprocess.Popen(["sleep", {LIFETIME!r}], start_new_session=True)
    open("late.tmp", "w").write(str(late.pid))
    os.rename("late.tmp", "late")
signal.signal(signal.SIGINT, on_term)
signal.signal(signal.SIGTERM, on_term)
open("ready", "w").close()
time.sleep({LIFETIME})
"""


def test_what_the_rerun_starts_during_the_grace_is_killed_too(tmp_path, monkeypatch, started):
    proc = session([*PYTHON, LATE], started, cwd=tmp_path)
    wait_until((tmp_path / "ready").exists, "the child")
    clock = Clock(ready=(tmp_path / "late").exists)
    sent = _signals_sent(monkeypatch, clock)
    rerun_guard.end(proc, grace=0.1)
    (late,) = pids_in(tmp_path / "late", 1, started)
    assert [signums for _, *signums in sent] == [[INT, TERM], [KILL, KILL]]
    assert proc.returncode == -signal.SIGKILL
    wait_until(lambda: not alive(late), "the sleep started during the grace to end", ENDED)


def test_end_waits_for_the_descendants_not_only_the_child(tmp_path, monkeypatch, started):
    """The child ends on SIGINT; a grandchild in a session of its own ignores SIGTERM: SIGKILL at the
    grace."""
    code = ("import subprocess, signal, sys, os; "
            f"g = subprocess.Popen([{SLEEP!r}, {LIFETIME!r}], start_new_session=True, "
            "preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN)); "
            "open('pid.tmp', 'w').write(str(g.pid)); os.rename('pid.tmp', 'pid'); g.wait()")
    proc = session([*PYTHON, code], started, cwd=tmp_path)
    (grandchild,) = pids_in(tmp_path / "pid", 1, started)
    clock = Clock(ready=lambda: stat(proc.pid)[0] == "Z")  # the child ended by SIGINT (not waited for)
    sent = _signals_sent(monkeypatch, clock, proc)
    rerun_guard.end(proc, grace=0.5)
    assert [(round(at, 9), *signums) for at, *signums, _ in sent] == [(0, INT, TERM), (0.5, KILL, KILL)]
    assert sent[1][3] == "Z"  # when SIGKILL is sent, the child's pid is still its own: not waited for
    assert proc.returncode == -signal.SIGINT
    wait_until(lambda: not alive(grandchild), "the grandchild to end", ENDED)


def test_a_process_or_group_that_is_gone_or_not_ours_is_no_error():
    none = int(open("/proc/sys/kernel/pid_max").read()) + 1  # no process has this pid
    rerun_guard._signal_all([none], none, signal.SIGTERM)  # ProcessLookupError, passed over
    rerun_guard._signal_all([1], none, 0)  # signal 0 (none sent) to init: PermissionError unless root
    rerun_guard._signal_all([none], None, signal.SIGTERM, signal.SIGINT)  # no group: none signalled


# ---- the child's requests -------------------------------------------------------------------

def _pdeathsig():
    value = ctypes.c_int()
    assert ctypes.CDLL(None).prctl(PR_GET_PDEATHSIG, ctypes.byref(value)) == 0
    return value.value


def test_the_rerun_asks_for_sigkill_when_its_guard_dies():
    before = _pdeathsig()
    try:
        rerun_guard._die_with(os.getppid())()
        assert _pdeathsig() == signal.SIGKILL
    finally:
        ctypes.CDLL(None).prctl(rerun_guard.PR_SET_PDEATHSIG, before)


def test_a_rerun_whose_guard_died_before_its_request_exits_at_once():
    child = os.fork()
    if child == 0:  # pragma: no cover (the child)
        rerun_guard._die_with(os.getpid())()  # not its parent: as if the guard had died
        os._exit(0)
    _, code = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(code) == 128 + signal.SIGKILL


START_PROBE = """
import ctypes, json, os
value = ctypes.c_int()
ctypes.CDLL(None).prctl(2, ctypes.byref(value))
json.dump([os.getsid(0) == os.getpid(), value.value, os.getcwd(), os.readlink("/proc/self/fd/0"),
           os.environ.get("PYTHONPATH"), os.environ.get("VIRTUAL_ENV"), os.environ.get("ATTNREPRO_PROBE")],
          open("probe.json", "w"))
"""


def test_the_rerun_starts_in_its_folder_and_session_without_stdin_pythonpath_or_venv(tmp_path, monkeypatch):
    for name, value in [("PYTHONPATH", "elsewhere"), ("VIRTUAL_ENV", "a venv"), ("ATTNREPRO_PROBE", "kept")]:
        monkeypatch.setenv(name, value)
    proc = rerun_guard.start([*PYTHON, START_PROBE], tmp_path)
    assert proc.wait() == 0
    assert json.loads((tmp_path / "probe.json").read_text()) == [True, signal.SIGKILL, str(tmp_path),
                                                                 "/dev/null", None, None, "kept"]


# ---- the guard, in this process -------------------------------------------------------------

@pytest.mark.parametrize("returncode, status", [(0, 0), (3, 3), (-signal.SIGKILL, 137),
                                                (-signal.SIGINT, 130)])
def test_an_end_by_signal_n_is_the_status_128_plus_n(returncode, status):
    assert rerun_guard.status(returncode) == status


def test_eof_is_what_closes_the_pipe_not_what_is_written_on_it():
    read, write = os.pipe()
    try:
        assert rerun_guard._closed(read, 0) is False  # nothing yet
        os.write(write, b"x" * 5000)
        assert rerun_guard._closed(read, 0) is False  # read and dropped (4096 bytes)
        assert rerun_guard._closed(read, 0) is False  # the rest
        assert rerun_guard._closed(read, 0) is False  # nothing again
        os.close(write)
        assert rerun_guard._closed(read, 0) is True
    finally:
        os.close(read)


def _folders(tmp_path):
    """(the rerun's folder, with a Snakemake lock and results; the temporary folder to remove)."""
    work, temporary = tmp_path / "work", tmp_path / "temporary"
    (work / rerun_guard.LOCKS).mkdir(parents=True)
    (work / rerun_guard.LOCKS / "0.input.lock").write_text("")
    (work / "results").mkdir()
    (temporary / "archive").mkdir(parents=True)
    return work, temporary


# the rerun, stubborn: SIGINT and SIGTERM ignored; "ready" written once they are
STUBBORN = f"""
import signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
open("ready", "w").close()
time.sleep({LIFETIME})
"""


def test_eof_ends_a_stubborn_rerun_at_the_grace_and_removes_the_folder_and_the_lock(tmp_path):
    work, temporary = _folders(tmp_path)
    read, write = os.pipe()
    closed = []

    def close_when_ready():
        wait_until((work / "ready").exists, "the rerun")
        closed.append(time.monotonic())
        os.close(write)

    closer = threading.Thread(target=close_when_ready)
    closer.start()
    try:
        code = rerun_guard.guard([*PYTHON, STUBBORN], work, read, temporary, grace=0.5)
    finally:
        closer.join()
        os.close(read)
    took = time.monotonic() - closed[0]
    assert code == 128 + signal.SIGKILL
    assert 0.5 <= took < 3, took  # the grace, a poll or two
    assert not temporary.exists()
    assert sorted(p.name for p in work.iterdir()) == [".snakemake", "ready", "results"]
    assert not (work / rerun_guard.LOCKS).exists()


@pytest.mark.parametrize("code, status", [("raise SystemExit(3)", 3),
                                          ("import os, signal; os.kill(os.getpid(), signal.SIGUSR1)", 138)])
def test_a_rerun_that_ends_by_itself_gives_its_status_and_nothing_is_removed(tmp_path, code, status):
    work, temporary = _folders(tmp_path)
    read, write = os.pipe()
    try:
        assert rerun_guard.guard([*PYTHON, code], work, read, temporary) == status
    finally:
        os.close(read)
        os.close(write)
    assert (temporary / "archive").is_dir() and (work / rerun_guard.LOCKS / "0.input.lock").is_file()


def test_eof_without_a_folder_to_remove_removes_only_the_lock(tmp_path):
    work, temporary = _folders(tmp_path)
    read, write = os.pipe()
    os.close(write)  # EOF at once: the rerun is ended however far it got
    try:
        assert rerun_guard.guard([SLEEP, LIFETIME], work, read, grace=0.5) == 128 + signal.SIGINT
    finally:
        os.close(read)
    assert (temporary / "archive").is_dir() and (work / "results").is_dir()
    assert not (work / rerun_guard.LOCKS).exists()


# a process whose two children sleep, the second ignoring SIGTERM; their pids in argv[1]
LEAVING = f"""
import os, signal, subprocess, sys
polite = subprocess.Popen([{SLEEP!r}, {LIFETIME!r}])
stubborn = subprocess.Popen([{SLEEP!r}, {LIFETIME!r}],
                            preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN))
open(sys.argv[1] + ".tmp", "w").write(f"{{polite.pid}} {{stubborn.pid}}")
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
print(polite.wait(), stubborn.wait(), flush=True)
"""


def test_what_the_rerun_left_is_ended_sigkill_after_the_grace(tmp_path, started):
    """After the rerun exited: every descendant of the guard gets SIGTERM, and what ignores it
    SIGKILL once the grace is over."""
    parent = subprocess.Popen([*PYTHON, LEAVING, str(tmp_path / "pids")], stdout=subprocess.PIPE, text=True)
    started.add(parent.pid)
    pids_in(tmp_path / "pids", 2, started)
    start = time.monotonic()
    rerun_guard._end_orphans(parent.pid, 0.5)
    assert 0.5 <= time.monotonic() - start < 3
    assert parent.communicate(timeout=ENDED)[0] == f"{-signal.SIGTERM} {-signal.SIGKILL}\n"


# a process whose child, on SIGTERM, starts a sleep (its pid in argv[1]) and lives on
STARTING_LATE = f"""
import subprocess, sys
child = subprocess.Popen([sys.executable, "-S", "-c", {LATE!r}], cwd=sys.argv[1])
child.wait()
"""


def test_what_the_rerun_left_starts_during_the_grace_is_killed_too(tmp_path, started):
    parent = subprocess.Popen([*PYTHON, STARTING_LATE, str(tmp_path)])
    started.add(parent.pid)
    wait_until((tmp_path / "ready").exists, "the child")
    rerun_guard._end_orphans(parent.pid, 0.5)
    (late,) = pids_in(tmp_path / "late", 1, started)
    wait_until(lambda: not alive(late), "the sleep started during the grace to end", ENDED)
    parent.kill()
    parent.wait()


# ---- the guard, as verify starts it ---------------------------------------------------------

# the rerun: a middle process starts a sleep in a session of its own that ignores SIGTERM and exits
# (the sleep, orphaned, is adopted by the guard); the sleep's pid in argv[1]; it exits at once if
# argv[2] says so, else waits
ORPHANING = f"""
import os, signal, subprocess, sys, time
middle = subprocess.Popen([sys.executable, "-S", "-c",
                           "import signal, subprocess, sys; "
                           "s = subprocess.Popen([{SLEEP!r}, {LIFETIME!r}], start_new_session=True, "
                           "stdout=subprocess.DEVNULL, "
                           "preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN)); "
                           "print(s.pid)"], stdout=subprocess.PIPE, text=True)
orphan = middle.stdout.read().strip()
middle.wait()
open(sys.argv[1] + ".tmp", "w").write(orphan)
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
if sys.argv[2] == "wait":
    time.sleep({LIFETIME})
"""


def _guard(tmp_path, started, then, grace="0.5"):
    """The guard (its module run as verify runs it) of ORPHANING; (the guard, its orphan)."""
    work, temporary = _folders(tmp_path)
    cmd = [sys.executable, "-m", rerun_guard.__name__, str(work), "--remove", str(temporary),
           "--grace", grace, "--", *PYTHON, ORPHANING, str(tmp_path / "orphan"), then]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, start_new_session=True)
    started.add(proc.pid)
    (orphan,) = pids_in(tmp_path / "orphan", 1, started)
    return proc, orphan


def test_on_eof_the_guard_ends_what_the_rerun_orphaned_too_and_removes_the_folder(tmp_path, started):
    proc, orphan = _guard(tmp_path, started, "wait")
    wait_until(lambda: open(f"/proc/{orphan}/stat").read().rsplit(")", 1)[1].split()[1] == str(proc.pid),
               "the guard to adopt the orphan")  # a subreaper
    proc.stdin.close()
    assert proc.wait(timeout=ENDED) == 128 + signal.SIGINT  # the rerun, ended as Snakemake ends on SIGINT
    assert not alive(orphan)  # SIGTERM ignored: killed at the grace
    assert not (tmp_path / "temporary").exists() and (tmp_path / "work/results").is_dir()


def test_when_the_rerun_exits_the_guard_ends_what_it_left_and_gives_its_status(tmp_path, started):
    proc, orphan = _guard(tmp_path, started, "exit")
    assert proc.wait(timeout=ENDED) == 0
    assert not alive(orphan)
    assert (tmp_path / "temporary/archive").is_dir()  # no EOF: nothing removed


def test_the_rerun_dies_with_its_guard(tmp_path, started):
    proc, orphan = _guard(tmp_path, started, "wait")
    rerun = [p for p in rerun_guard.descendants(proc.pid) if p != orphan]
    assert rerun  # the rerun's python
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    wait_until(lambda: not any(alive(p) for p in rerun), "the rerun to die with its guard", ENDED)
    proc.stdin.close()


# ---- verify killed during a real rerun (the full tier) --------------------------------------

def _training(pid):
    """A descendant of ``pid`` that runs the train experiment's job, or None."""
    for child in rerun_guard.descendants(pid):
        try:
            argv = Path(f"/proc/{child}/cmdline").read_text().split("\0")
        except OSError:
            continue
        if "attnrepro.jobs.experiment" in argv and "train" in argv:
            return child
    return None


@pytest.mark.full
def test_nothing_outlives_verify_killed_by_sigkill_during_a_real_rerun(tmp_path, started):
    """~20 s: verify reruns an archive whose config trains (config/small.yaml's train, every other
    experiment skipped) on one core; once a training job runs, verify is killed (SIGKILL). 10 s
    later, no process of the rerun lives and the temporary folder is gone."""
    not_in_a_mutant("runs Snakemake")
    small = yaml.safe_load((REPO / "config/small.yaml").read_text())
    config = {"skip": sorted(set(plan.EXPERIMENTS) - {"train"}), "train": small["train"],
              "seed_distribution": {"build": False},
              "numerics": {"sweep": False, "cases": small["numerics"]["cases"]}}
    archive = hostile.honest(tmp_path / "archive", config_text=yaml.safe_dump(config))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    with open(tmp_path / "verify.out", "w") as out:
        verify = subprocess.Popen([sys.executable, "-m", "attnrepro", "verify", str(archive), "--cores", "1"],
                                  env={**os.environ, "TMPDIR": str(temporary)}, stdout=out,
                                  stderr=subprocess.STDOUT)
    started.add(verify.pid)
    try:
        wait_until(lambda: _training(verify.pid) or verify.poll() is not None, "a training job", 90)
        assert verify.poll() is None, (tmp_path / "verify.out").read_text()[-3000:]
        rerun = rerun_guard.descendants(verify.pid)
        for pid in rerun:
            started.add(pid)
        assert [p for p in rerun if stat(p) is not None] != []
        assert len(list(temporary.glob("attnrepro-verify-*"))) == 1
        os.kill(verify.pid, signal.SIGKILL)
    finally:
        verify.kill()
        verify.wait()
    time.sleep(10)
    living = [pid for pid, start in started.items() if alive(pid) and stat(pid)[1] == start]
    assert living == [], [Path(f"/proc/{pid}/cmdline").read_text() for pid in living]
    assert list(temporary.iterdir()) == []


# ---- a guard without a command: verify's temporary folder -----------------------------------

HOLDER = ("import sys, time\n"
          "from attnrepro.archive import verify_rerun\n"
          "verify_rerun.removed(sys.argv[1]).__enter__()\n"
          "print('held', flush=True)\n"
          "time.sleep(60)\n")


def test_the_folder_is_removed_at_the_end_of_the_block(tmp_path):
    folder = tmp_path / "held"
    (folder / "sub").mkdir(parents=True)
    with verify_rerun.removed(folder) as held:
        (folder / "sub/file").write_text("x")
        assert held == folder and folder.is_dir()
    assert not folder.exists()


def test_the_folder_is_removed_when_its_holder_is_killed(tmp_path):
    folder = tmp_path / "held"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub/file").write_text("x")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    time.sleep(0.5)
    assert folder.is_dir()  # the guard waits while its holder lives
    holder.kill()
    holder.wait()
    deadline = time.monotonic() + 10
    while folder.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not folder.exists()
