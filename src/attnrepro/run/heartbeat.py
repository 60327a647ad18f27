"""The heartbeat of a Snakemake run: a file in the shared working directory that every node sees.

A cluster job runs on a compute node, which cannot see the login node's processes: when the
Snakemake run that submitted it is killed there (``kill -9``, a dropped ssh session), nothing on
the node notices, and the job would rename its outputs over whatever a newer run wrote. So the
run's own Snakemake process (the main one: never a job step, the Snakemake that a cluster job
runs again on its node) publishes its heartbeat in the working directory, which the nodes share:

- :func:`publish`, called by the ``onstart:`` handler of ``workflow/rules/common.smk`` (after the
  DAG is built, before the first job is spawned; never in a dry run, nor in a job step, which
  Snakemake starts with ``--no-hooks``), writes :data:`FILE` at once, then a daemon thread of that
  process rewrites it every :data:`HEARTBEAT_SECONDS`: the run's identity (``jobs.Run.token()``) and
  the time of writing, as JSON, through a temporary file renamed over it (a reader sees the old
  heartbeat or the new one, never half of one). It hands the file's path down to the jobs in the
  environment variable ``ATTNREPRO_HEARTBEAT`` (sbatch exports the environment to the job's node).
  :func:`stop` (``onsuccess:``, ``onerror:``) ends the thread and removes the file if it is still
  this run's.
- A job (:mod:`attnrepro.run.ownership`) reads it at its start, in its watchdog every second and right
  before renaming any output: :func:`status` says the run lives only while the heartbeat names
  that run and is at most :data:`STALE_SECONDS` old. A missing or unreadable file, a heartbeat of
  another run (a newer run has started in this directory: the file is its own now) or a stale one
  (left by a run killed since, or by one that ended) stops the job without writing.

The age is the reader's clock minus the writer's: the nodes' clocks must agree (NTP) to well
within the bound. A run suspended (Ctrl-Z) longer than the bound stops its jobs.
"""

import json
import logging
import os
import threading
import time
from pathlib import Path

log = logging.getLogger("attnrepro")

HEARTBEAT = "ATTNREPRO_HEARTBEAT"  # the heartbeat file's path, handed down to every job by publish
FILE = Path(".snakemake/attnrepro/heartbeat.json")  # in the run's working directory
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
    try:
        beat = read(path)
    except ValueError as error:
        return False, f"its heartbeat {path} is unreadable ({error})"
    if beat is None:
        return False, f"it has no heartbeat at {path}"
    age = (time.time() if now is None else now) - beat[1]
    if beat[0] != token:
        return False, f"its heartbeat {path} names another run ({beat[0]}), {age:.1f} s old"
    if age > stale:
        return False, f"its heartbeat {path} is {age:.1f} s old, stale after {stale:g} s"
    return True, f"its heartbeat {path} is {age:.1f} s old"


class Publisher:
    """Rewrites the heartbeat of the run ``token`` at ``path`` every ``period`` seconds, in a daemon
    thread of the process that calls :meth:`start` (the run's Snakemake)."""

    def __init__(self, token, path=FILE, period=HEARTBEAT_SECONDS):
        self.token, self.path, self.period = token, Path(path).absolute(), period
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, name="attnrepro-heartbeat", daemon=True)

    def start(self):
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
        """End the rewrites; remove the file if it is still this run's (not a newer run's)."""
        self._stop.set()
        if self.thread.is_alive():
            self.thread.join()
        try:
            beat = read(self.path)
        except ValueError:
            return
        if beat is not None and beat[0] == self.token:
            self.path.unlink(missing_ok=True)


def publish(token, environ=os.environ, path=FILE, period=HEARTBEAT_SECONDS):
    """Start the heartbeat of the run ``token`` (once per process) and hand its path down in
    ``environ``'s ATTNREPRO_HEARTBEAT; the :class:`Publisher`."""
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
