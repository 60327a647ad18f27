"""The heartbeat of a Snakemake run: a file in the shared working directory that every node sees.

A cluster job runs on a compute node, which cannot see the login node's processes: when the
Snakemake run that submitted it is killed there (``kill -9``, a dropped ssh session), nothing on
the node notices, and the job would rename its outputs over whatever a newer run wrote. So the
run's own Snakemake process (the main one: never a job step, the Snakemake that a cluster job
runs again on its node) publishes its heartbeat in the working directory, which the nodes share:

- :func:`publish`, called by the ``onstart:`` handler of ``workflow/rules/common.smk`` (after the
  DAG is built, before the first job is spawned; never in a dry run, nor in a job step, which
  Snakemake starts with ``--no-hooks``), first takes the folder's run lock (:class:`RunLock`,
  :data:`LOCK_NAME` beside the heartbeat), then writes :data:`FILE` at once, then a daemon thread of that
  process rewrites it every :data:`HEARTBEAT_SECONDS`: the run's identity (``jobs.Run.token()``) and
  the time of writing, as JSON, through a temporary file renamed over it (a reader sees the old
  heartbeat or the new one, never half of one). It hands the file's path down to the jobs in the
  environment variable ``ATTNREPRO_HEARTBEAT`` (sbatch exports the environment to the job's node).
  :func:`stop` (``onsuccess:``, ``onerror:``) ends the thread, removes the file if it is still
  this run's, and releases the lock.
- The run lock makes the run the folder's only one. Snakemake's own lock is not atomic: two runs
  started at once may both pass it, and each run's heartbeat would then stop the other's jobs.
  ``flock(LOCK_EX | LOCK_NB)`` is atomic, and the OS releases it when its process dies, however
  it dies (its descriptor is not inherited by the jobs): a killed run never blocks the next one.
  A second run that finds it held raises :class:`Busy`, naming the holder from the file's
  content (its pid, host and start time), before any job of its own runs.
- A job (:mod:`attnrepro.run.ownership`) reads it at its start, in its watchdog every second and right
  before renaming any output: :func:`status` says the run lives only while the heartbeat names
  that run and is at most :data:`STALE_SECONDS` old. A missing or unreadable file, a heartbeat of
  another run (a newer run has started in this directory: the file is its own now) or a stale one
  (left by a run killed since, or by one that ended) stops the job without writing.

The age is the reader's clock minus the writer's: the nodes' clocks must agree (NTP) to well
within the bound. A run suspended (Ctrl-Z) longer than the bound stops its jobs.
"""

import fcntl
import json
import logging
import os
import socket
import threading
import time
from pathlib import Path

log = logging.getLogger("attnrepro")

HEARTBEAT = "ATTNREPRO_HEARTBEAT"  # the heartbeat file's path, handed down to every job by publish
FILE = Path(".snakemake/attnrepro/heartbeat.json")  # in the run's working directory
LOCK_NAME = "run.lock"  # the run lock, beside the heartbeat (never removed: its inode is the lock)
LOCK_READS = 3  # a holder writes its name just after it takes the lock: a refused run reads again
HEARTBEAT_SECONDS = 5.0  # the period of the rewrites
# Stale after three periods (two beats missed: a loaded login node, a slow write to the shared
# filesystem), plus the time a shared filesystem may take to show another node the renamed file
# (NFS revalidates a file on open, close-to-open, but may serve a directory's cached entries for
# some seconds): 3 x 5 + 15 = 30 s. A job of a killed run stops within this (and a poll) of the kill.
MISSED_PERIODS = 3
LATENCY_SECONDS = 15.0
STALE_SECONDS = HEARTBEAT_SECONDS * MISSED_PERIODS + LATENCY_SECONDS
_state = {"publisher": None}


def write(path, token, now=None):
    """Write the heartbeat of the run ``token`` at ``path`` atomically (a temporary renamed over it)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"run": token, "time": time.time() if now is None else now}))
    os.replace(tmp, path)


def _text(path, attempts=3):
    """The text of ``path``, read again on an error: on NFS, a file renamed over between the open and
    the read answers ESTALE once. None when there is no such file."""
    for attempt in range(attempts):
        try:
            return Path(path).read_text()
        except FileNotFoundError:
            return None
        except OSError as error:
            if attempt + 1 == attempts:
                raise ValueError(error.strerror or str(error)) from None
            time.sleep(0.1)


def read(path):
    """(token, time) of the heartbeat at ``path``; None when there is none; ValueError if unreadable."""
    text = _text(path)
    if text is None:
        return None
    try:
        beat = json.loads(text)
        token, written = beat["run"], beat["time"]
    except (ValueError, TypeError, KeyError):
        raise ValueError("not a heartbeat: {\"run\": ..., \"time\": ...}") from None
    if not isinstance(token, str) or isinstance(written, bool) or not isinstance(written, (int, float)):
        raise ValueError("not a heartbeat: {\"run\": ..., \"time\": ...}")
    return token, float(written)


def status(token, path, now=None, stale=STALE_SECONDS):
    """(alive, sentence): whether the heartbeat at ``path`` shows the run ``token`` alive (its own,
    at most ``stale`` seconds old), and a sentence naming the file and its age, or what is wrong."""
    return judge(token, path, now, stale)[:2]


def judge(token, path, now=None, stale=STALE_SECONDS):
    """(alive, sentence, other): :func:`status`, and ``other``, the (token, age) of the heartbeat
    found when it names another run (else None), read once with the rest."""
    try:
        beat = read(path)
    except ValueError as error:
        return False, f"its heartbeat {path} is unreadable ({error})", None
    if beat is None:
        return False, f"it has no heartbeat at {path}", None
    age = (time.time() if now is None else now) - beat[1]
    if beat[0] != token:
        return False, f"its heartbeat {path} names another run ({beat[0]}), {age:.1f} s old", (beat[0], age)
    if age > stale:
        return False, f"its heartbeat {path} is {age:.1f} s old, stale after {stale:g} s", None
    return True, f"its heartbeat {path} is {age:.1f} s old", None


class Busy(Exception):
    """Another run holds this folder's run lock, so it is alive: this run must not start a job."""


def holder(path, now=None, attempts=LOCK_READS):
    """The sentence that refuses a second run: the run that holds the lock at ``path``, named by
    the file's content (:meth:`RunLock.take` writes it just after taking the lock: read again)."""
    held = None
    for _ in range(attempts):
        held = _holder(path)
        if held is not None:
            break
        time.sleep(0.1)
    if held is None:
        return (f"another Snakemake run is running in this folder (its lock {path} does not name it): "
                "wait for it, or stop it")
    pid, host, started = held
    who = f"pid {pid}" if host == socket.gethostname() else f"pid {pid} on {host}"
    return (f"another Snakemake run ({who}, started {_clock(started, now)}) is running in this folder: "
            "wait for it, or stop it")


def _holder(path):
    """(pid, host, start time) that the lock file at ``path`` names; None when it names none."""
    try:
        held = json.loads(Path(path).read_text())
        return int(held["pid"]), str(held["host"]), float(held["started"])
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _clock(when, now=None):
    """``when`` as HH:MM:SS of the local time, its date first if it is not today's."""
    day = time.strftime("%Y-%m-%d ", time.localtime(when))
    today = time.strftime("%Y-%m-%d ", time.localtime(now))
    return ("" if day == today else day) + time.strftime("%H:%M:%S", time.localtime(when))


class RunLock:
    """The folder's run lock: the file ``path``, held with ``flock(LOCK_EX | LOCK_NB)`` by the run's
    Snakemake from :meth:`take` to :meth:`release`, or to its death (the OS releases it then)."""

    def __init__(self, path):
        self.path = Path(path)
        self.fd = None

    def take(self, token):
        """Hold the lock and write who holds it: this process (pid, host), the run ``token``, the
        time. Raises :class:`Busy` when another process holds it. Where the filesystem has no
        locks (ENOLCK), a warning says that a second run is not refused, and the run goes on."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise Busy(holder(self.path)) from None
        except OSError as error:
            os.close(fd)
            log.warning("run lock %s not taken (%s): a second run in this folder is not refused",
                        self.path, error.strerror or error)
            return self
        self.fd = fd
        os.ftruncate(fd, 0)  # pragma: no mutate (equivalent: the name written next at offset 0 is longer)
        os.write(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "run": token,
                                 "started": time.time()}).encode())
        return self

    def release(self):
        """Let the next run take the lock (closing the file releases it; the file stays)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class Publisher:
    """Rewrites the heartbeat of the run ``token`` at ``path`` every ``period`` seconds, in a daemon
    thread of the process that calls :meth:`start` (the run's Snakemake)."""

    def __init__(self, token, path=FILE, period=HEARTBEAT_SECONDS):
        self.token, self.path, self.period = token, Path(path).absolute(), period
        self.lock = RunLock(self.path.with_name(LOCK_NAME))
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, name="attnrepro-heartbeat", daemon=True)

    def start(self):
        """Take the run lock (:class:`Busy` if another run holds it), then beat."""
        self.lock.take(self.token)  # before the heartbeat: a refused run never overwrites the holder's
        write(self.path, self.token)  # before the first job is spawned: it finds a heartbeat
        self.thread.start()
        return self

    def _beat(self):
        while not self._stop.wait(self.period):
            try:
                write(self.path, self.token)
            except OSError as error:  # the jobs stop once it is stale: say why
                log.warning("heartbeat %s not written: %s", self.path, error)

    def stop(self):
        """End the rewrites; remove the file if it is still this run's (not a newer run's); then
        release the run lock."""
        self._stop.set()
        if self.thread.is_alive():
            self.thread.join()
        self._remove()
        self.lock.release()

    def _remove(self):
        try:
            beat = read(self.path)
        except ValueError:
            return
        if beat is not None and beat[0] == self.token:
            self.path.unlink(missing_ok=True)


def publish(token, environ=os.environ, path=FILE, period=HEARTBEAT_SECONDS):
    """Take the run lock and start the heartbeat of the run ``token`` (once per process), and hand
    its path down in ``environ``'s ATTNREPRO_HEARTBEAT; the :class:`Publisher`. Raises
    :class:`Busy` when another run holds the lock: then nothing is written or handed down."""
    if _state["publisher"] is None:
        _state["publisher"] = Publisher(token, path, period).start()
    environ[HEARTBEAT] = str(_state["publisher"].path)
    return _state["publisher"]


def stop(environ=os.environ):
    """Stop this process's heartbeat, if it publishes one (``onsuccess:``, ``onerror:``)."""
    publisher = _state["publisher"]
    if publisher is not None:
        publisher.stop()
        _state["publisher"] = None
        environ.pop(HEARTBEAT, None)
