"""The Snakemake run a job belongs to: a job never outlives it, and never writes after it.

Snakemake starts each job as a shell child of its own process. SIGKILLed (an out-of-memory
killer, ``kill -9``, a closed terminal's hard kill), Snakemake cannot stop its jobs: they are
re-parented to PID 1 and run on. A rerun started meanwhile (``--unlock``, a changed config)
writes the new results, and the orphan, when it finishes, would rename its old ones over them
with nothing to notice. So:

- At start (:func:`start`, called by ``python -m attnrepro.job`` and ``python -m
  attnrepro.report.job``, and by the command lines that run the same code by hand) a job walks its
  parent chain in ``/proc`` up to the first process whose
  command line runs Snakemake (``snakemake ...``, ``python .../bin/snakemake ...``, ``python -m
  snakemake ...``; on a SLURM node that is the job's own Snakemake) and records its identity,
  :class:`Run`: the pid and the start time of ``/proc/<pid>/stat`` (field 22), so that a
  recycled pid is not taken for it.
- A watchdog thread checks once a second that this process still lives (same pid, same start
  time, not a zombie). When it has ended, the job removes its temporary files (those
  :func:`register`\\ ed by ``attnrepro.io``) and exits with status 1 and the message of
  :class:`RunEnded`: "the Snakemake run that started this job (pid N) has ended; this job's
  outputs are not written".
- Right before any output is renamed into place (``io.atomic_path``, ``io.OutputSet.commit``),
  :func:`publishing` checks again, under the lock the watchdog takes too, and raises
  :class:`RunEnded` instead: between two polls an orphan cannot rename either.

A job with no Snakemake ancestor (a run by hand, an in-process test) records no run and checks
nothing; so does a system without ``/proc``. :func:`alive` and :func:`check` take a recorded
identity, so that the check is tested without killing a Snakemake process.

Test hook (fault injection, used by ``tests/test_operations.py``; no effect when unset):
``ATTNREPRO_FAULT=kill-after-table:<table>`` SIGKILLs the job right after the temporary file of
that table is written (:func:`fault_point`, called by ``io.OutputSet.stage``), before anything
is renamed; ``crash-after-table:<table>`` first SIGKILLs the Snakemake run too, as a machine
crash would: then nobody cleans up.
"""

import logging
import os
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("attnrepro")

FAULT = "ATTNREPRO_FAULT"
POLL_SECONDS = 1.0
_LOCK = threading.RLock()
_TEMPORARIES = set()  # files to remove if the run ends under us
_state = {"run": None, "watchdog": None}


@dataclass(frozen=True)
class Run:
    """The Snakemake process of a run: pid and start time (clock ticks after boot)."""

    pid: int
    started: int


class RunEnded(Exception):
    """The Snakemake process that started this job is gone: the job must not write."""

    def __init__(self, run):
        super().__init__(f"the Snakemake run that started this job (pid {run.pid}) has ended; "
                         "this job's outputs are not written")
        self.run = run


def _stat(pid):
    """(state, parent pid, start time) of a process, or None when it does not exist."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # the command name may hold spaces and ")"
    return fields[0], int(fields[1]), int(fields[19])


def _argv(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def runs_snakemake(argv):
    """Whether a command line runs Snakemake: ``snakemake``, ``python .../snakemake``,
    ``python -m snakemake``."""
    head = argv[:4]
    if any(os.path.basename(a) == "snakemake" for a in head[:2]):
        return True
    return any(a == "-m" and i + 1 < len(head) and head[i + 1] == "snakemake" for i, a in enumerate(head))


def find_run(pid=None):
    """The :class:`Run` of the nearest Snakemake ancestor of ``pid`` (default: this process), or None."""
    stat = _stat(pid or os.getpid())
    while stat is not None and stat[1] > 1:
        parent = stat[1]
        stat = _stat(parent)
        if stat is not None and runs_snakemake(_argv(parent)):
            return Run(parent, stat[2])
    return None


def alive(run):
    """Whether the process recorded as ``run`` still lives (a recycled pid has another start time)."""
    stat = _stat(run.pid)
    return stat is not None and stat[0] not in ("Z", "X") and stat[2] == run.started


def check(run):
    """Raise :class:`RunEnded` when ``run`` (a :class:`Run`, or None: nothing to check) has ended."""
    if run is not None and not alive(run):
        raise RunEnded(run)


def current():
    """The run recorded by :func:`start` (None: not started by Snakemake, or not started)."""
    return _state["run"]


def start(poll=POLL_SECONDS):
    """Record the run this job belongs to and watch it (once per process); the run, or None."""
    if _state["run"] is None and _state["watchdog"] is None:
        run = find_run()
        _state["run"] = run
        if run is not None:
            log.info("job of the Snakemake run pid %d (pid %d)", run.pid, os.getpid())
            thread = threading.Thread(target=_watch, args=(run, poll), name="attnrepro-run-watchdog",
                                      daemon=True)
            _state["watchdog"] = thread
            thread.start()
    return _state["run"]


def _watch(run, poll):
    event = threading.Event()
    while not event.wait(poll):
        with _LOCK:
            if not alive(run):
                _remove_temporaries()
                print(f"attnrepro: {RunEnded(run)}", file=sys.stderr, flush=True)
                os._exit(1)


def register(path):
    """A temporary file to remove if the run ends before it is renamed."""
    with _LOCK:
        _TEMPORARIES.add(str(path))


def unregister(path):
    with _LOCK:
        _TEMPORARIES.discard(str(path))


def _remove_temporaries():
    for path in list(_TEMPORARIES):
        Path(path).unlink(missing_ok=True)
    _TEMPORARIES.clear()


class publishing:  # noqa: N801 (used as a context manager, like a function)
    """``with publishing(): os.replace(...)``: holds the watchdog off; raises RunEnded if the run ended."""

    def __enter__(self):
        _LOCK.acquire()
        try:
            check(current())
        except BaseException:
            _LOCK.release()
            raise
        return self

    def __exit__(self, *exc):
        _LOCK.release()
        return False


def fault_point(table):
    """The test hook of ATTNREPRO_FAULT (module docstring), after ``table``'s temporary is written."""
    action, _, name = os.environ.get(FAULT, "").partition(":")
    if name != table or action not in ("kill-after-table", "crash-after-table"):
        return
    log.warning("%s=%s: killing this job after writing the temporary of table %s",
                FAULT, os.environ[FAULT], table)
    if action == "crash-after-table":
        run = current() or find_run()
        if run is not None and alive(run):
            os.kill(run.pid, signal.SIGKILL)
    logging.shutdown()
    os.kill(os.getpid(), signal.SIGKILL)
