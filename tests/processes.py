"""Real processes for the tests of verify's rerun and its guard: small ones (sleep, python -S), started
in sessions of their own; every wait has a deadline, and what a failing test leaves running is killed
after it (:class:`Started`)."""

import os
import shutil
import signal
import subprocess
import sys
import time

DEADLINE = 30  # seconds: the longest wait for a process to start, on a loaded machine
ENDED = 10  # seconds: the longest wait for a killed process to be gone (a mutant leaving it fails fast)
LIFETIME = "60"  # seconds a test's sleeping process lives if a test fails to end it
SLEEP = shutil.which("sleep")
PYTHON = [sys.executable, "-S", "-c"]  # the standard library only: fast to start


def wait_until(predicate, what, seconds=DEADLINE):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"{what}: not within {seconds} s"
        time.sleep(0.02)


def stat(pid):
    """(state, start time) of ``pid`` from /proc, or None: read apart from the module under test."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[0], fields[19]


def alive(pid):
    state = stat(pid)
    return state is not None and state[0] not in ("Z", "X")


class Started(dict):
    """{pid: its start time} of the processes a test started, to kill after it those still running
    (only the same process: a pid is reused once its process is gone)."""

    def add(self, pid):
        state = stat(pid)
        if state is not None:
            self[pid] = state[1]

    def kill(self):
        for pid, start in self.items():
            state = stat(pid)
            if state is not None and state[0] not in ("Z", "X") and state[1] == start:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def pids_in(path, count, started):
    """The ``count`` pids a test's process wrote to ``path`` (written whole: renamed into place)."""
    wait_until(path.exists, f"the pids in {path.name}")
    pids = [int(p) for p in path.read_text().split()]
    for pid in pids:
        started.add(pid)
    assert len(pids) == count, pids
    return pids


def session(cmd, started, **kwargs):
    """``cmd`` started as run() starts it: in a session of its own."""
    proc = subprocess.Popen(cmd, start_new_session=True, **kwargs)
    started.add(proc.pid)
    return proc


# a process tree: the child (python) starts a grandchild (python) whose child is a sleep named like a
# /proc stat line, "a) Z 1 (b" (a reader must take the last ")"), and a sleep in a session of its own
# (out of the child's process group); it writes their pids to the file argv[2] and waits
TREE = f"""
import os, subprocess, sys
named, out = sys.argv[1], sys.argv[2]
middle = subprocess.Popen([sys.executable, "-S", "-c",
                           "import subprocess, sys; g = subprocess.Popen([sys.argv[1], {LIFETIME!r}]); "
                           "print(g.pid, flush=True); g.wait()", named], stdout=subprocess.PIPE, text=True)
inner = int(middle.stdout.readline())
apart = subprocess.Popen(["sleep", {LIFETIME!r}], start_new_session=True)
open(out + ".tmp", "w").write(f"{{middle.pid}} {{inner}} {{apart.pid}}")
os.rename(out + ".tmp", out)
middle.wait()
"""


def named_sleep(tmp_path):
    named = tmp_path / "a) Z 1 (b"
    named.symlink_to(SLEEP)
    return named


def tree(tmp_path, started):
    """(the child, [its grandchild, the grandchild's child, the grandchild in its own session])."""
    proc = session([*PYTHON, TREE, str(named_sleep(tmp_path)), str(tmp_path / "pids")], started,
                    cwd=tmp_path)
    return proc, pids_in(tmp_path / "pids", 3, started)


def ignoring_ends():
    """In a child before exec: SIGINT and SIGTERM ignored, kept across exec (a sleep ignores them too)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
