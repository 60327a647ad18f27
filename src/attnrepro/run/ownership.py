"""The Snakemake run a job belongs to: a job never outlives it, and never writes after it.

Snakemake starts each job as a shell child of its own process. SIGKILLed (an out-of-memory
killer, ``kill -9``, a closed terminal's hard kill), Snakemake cannot stop its jobs: they are
re-parented to PID 1 and run on. A rerun started meanwhile (``--unlock``, a changed config)
writes the new results, and the orphan, when it finishes, would rename its old ones over them
with nothing to notice. So:

- The run hands its identity to every job it spawns: ``workflow/rules/common.smk`` calls
  :func:`hand_down` while Snakemake reads the workflow, which puts the identity of the Snakemake
  process itself (:class:`Run`: its pid, its start time from field 22 of ``/proc/<pid>/stat``, so
  that a recycled pid is not taken for it, the boot and the host) into the environment variable
  ``ATTNREPRO_RUN``, which every job's shell inherits (on a cluster through sbatch, which exports
  the environment). Only the main Snakemake process does: a job step (the Snakemake that a
  cluster job runs again on its node, ``--mode remote``, which reads the workflow too) keeps the
  identity of the run that submitted it. A job therefore knows its run from the moment it is
  spawned, even when the run is killed before the job has looked: :func:`start` (called by the
  job harness, :func:`attnrepro.run.harness.run_job`, which every job entry and the command lines
  that run the same code by hand go through) reads it and checks at once that the run still lives.
- Without that variable, a job looks for a Snakemake ancestor in its parent chain (a Snakefile
  other than ours, an executor that clears the environment); with none, it is a run by hand,
  and says so in its log: there is no run to watch.
- The run also publishes a heartbeat in the shared working directory (:mod:`attnrepro.run.heartbeat`:
  rewritten every 5 s, its path handed down in ``ATTNREPRO_HEARTBEAT``). A job whose run hands
  one down needs both: the run's process alive where the job can see it (this host and boot),
  and its heartbeat naming that run, at most ``heartbeat.STALE_SECONDS`` old. On another host
  (a cluster's compute node) the heartbeat alone tells; a run there that hands none down cannot
  be watched, and the job does not begin.
- A watchdog thread checks once a second that the run's process still lives (same pid, same
  start time, same boot, not a zombie) and its heartbeat is fresh. When it has ended (the message
  then names the heartbeat and its age when that is what tells), the job removes its temporary files
  (those :func:`register`\\ ed by ``attnrepro.run.io``) and exits with status 1 and the message of
  :class:`RunEnded`: "the Snakemake run that started this job (pid N) has ended; this job's
  outputs are not written".
- A heartbeat that names another run which is alive (its process, where the job sees it, else
  its heartbeat fresh: a second run in this folder, which the run lock of
  :mod:`attnrepro.run.heartbeat` should have refused) stops the job just the same, and says so:
  "a second run (pid M) took over this folder's heartbeat while this job's run (pid N) is alive".
- Right before any output is renamed into place (``io.atomic_path``, ``io.OutputSet.commit``),
  :func:`publishing` checks again (process and heartbeat), under the lock the watchdog takes too,
  and raises :class:`RunEnded` instead: between two polls an orphan cannot rename either.

A system without ``/proc`` hands no identity down: its jobs check nothing. :func:`alive`,
:func:`verdict` and :func:`check` take a recorded identity (and a heartbeat file), so that the
check is tested without killing a Snakemake process.

Test hooks (fault injection, used by ``tests/test_operations.py`` and ``tests/test_jobs.py``; no
effect when unset): ``ATTNREPRO_FAULT=kill-after-table:<table>`` SIGKILLs the job right after the
temporary file of that table is written (:func:`fault_point`, called by ``io.OutputSet.stage``),
before anything is renamed; ``crash-after-table:<table>`` first SIGKILLs the Snakemake run too, as
a machine crash would: then nobody cleans up; ``pause-after-table:<table>`` sleeps
:data:`PAUSE_SECONDS` there, so that a test can end the run while the job holds a written table.
"""

import logging
import os
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from attnrepro.run import heartbeat

log = logging.getLogger("attnrepro")

FAULT = "ATTNREPRO_FAULT"
RUN = "ATTNREPRO_RUN"  # the identity of the run that spawned this job (hand_down)
POLL_SECONDS = 1.0
PAUSE_SECONDS = 3.0  # pause-after-table (module docstring)
FAULT_ACTIONS = ("kill-after-table", "crash-after-table", "pause-after-table")
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
_LOCK = threading.RLock()
_TEMPORARIES = set()  # files to remove if the run ends under us
_state = {"run": None, "heartbeat": None, "watchdog": None}


@dataclass(frozen=True)
class Run:
    """The Snakemake process of a run: pid, start time (clock ticks after boot), and the boot and
    host it runs on ("" where unknown: a process found among this job's ancestors is on its host)."""

    pid: int
    started: int
    boot: str = ""
    host: str = ""

    def token(self):
        """The value of ATTNREPRO_RUN that names this run (:func:`parse`)."""
        return f"{self.pid}:{self.started}:{self.boot}@{self.host}"

    def here(self):
        """Whether this process can see the run: on this host and this boot."""
        return self.host in ("", socket.gethostname()) and self.boot in ("", _boot())


class RunEnded(Exception):
    """The Snakemake process that started this job is gone, or no longer the folder's run: the job
    must not write. ``why``: how its heartbeat tells (the run is then named with its host), or ""
    when its process is gone. ``taker``: the live :class:`Run` whose heartbeat has replaced the
    run's (a second run in the folder), None when there is none."""

    def __init__(self, run, why="", taker=None):
        super().__init__(f"{_ended(run, why) if taker is None else _taken(run, taker, why)}; "
                         "this job's outputs are not written")
        self.run, self.taker = run, taker


def _ended(run, why):
    who = f"pid {run.pid} on {run.host}" if why and run.host else f"pid {run.pid}"
    return f"the Snakemake run that started this job ({who}) has ended{': ' + why if why else ''}"


def _taken(run, taker, why):
    """A second run took over the heartbeat: while ``run`` lives where this job sees it, else from it."""
    if run.here():
        return (f"a second run ({_named(taker)}) took over this folder's heartbeat while this job's "
                f"run (pid {run.pid}) is alive: {why}")
    return (f"a second run ({_named(taker)}) took over this folder's heartbeat from this job's run "
            f"({_named(run)}): {why}")


def _named(run):
    """``pid N``, and ``on HOST`` where this job cannot see the run."""
    return f"pid {run.pid}" if run.here() else f"pid {run.pid} on {run.host}"


def _stat(pid):
    """(state, parent pid, start time) of a process, or None when it does not exist."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # the command name may hold spaces and ")"
    return fields[0], int(fields[1]), int(fields[19])


def _boot():
    try:
        return BOOT_ID.read_text().strip()
    except OSError:
        return ""


def _argv(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def runs_snakemake(argv):
    """Whether a command line runs Snakemake: ``snakemake``, ``python .../snakemake``,
    ``python -m snakemake`` (``-m`` among its first three words: an interpreter option such as
    ``-u`` may precede it; one further on is another program's)."""
    head = argv[:4]
    if any(os.path.basename(a) == "snakemake" for a in head[:2]):
        return True
    return any(a == "-m" and i + 1 < len(head) and head[i + 1] == "snakemake" for i, a in enumerate(head))


def find_run(pid=None):
    """The :class:`Run` of the nearest Snakemake ancestor of ``pid`` (default: this process), or None.
    Every ancestor counts, pid 1 too (Snakemake is pid 1 in a container that runs it alone); the
    walk ends above pid 1, whose parent, pid 0, has no ``/proc`` entry."""
    stat = _stat(pid or os.getpid())
    while stat is not None:
        parent = stat[1]
        stat = _stat(parent)
        if stat is not None and runs_snakemake(_argv(parent)):
            return Run(parent, stat[2])
    return None


def this_process():
    """The :class:`Run` identity of this process (None without /proc)."""
    stat = _stat(os.getpid())
    return None if stat is None else Run(os.getpid(), stat[2], _boot(), socket.gethostname())


def hand_down(environ=os.environ):
    """Name this process (the Snakemake run, reading the workflow) in ``environ``'s ATTNREPRO_RUN,
    which the shells of its jobs inherit; the :class:`Run`, or None where it has no identity."""
    run = this_process()
    if run is None:
        environ.pop(RUN, None)
    else:
        environ[RUN] = run.token()
    return run


def parse(token):
    """The :class:`Run` of an ATTNREPRO_RUN value ``pid:started:boot@host``; ValueError if malformed."""
    ident, _, host = token.partition("@")
    parts = ident.split(":")
    if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit():
        raise ValueError(f"{RUN}={token!r} is not pid:start:boot@host (set by workflow/rules/common.smk)")
    return Run(int(parts[0]), int(parts[1]), parts[2], host)


def alive(run):
    """Whether the process recorded as ``run`` still lives (a recycled pid has another start time)."""
    stat = _stat(run.pid)
    return stat is not None and stat[0] not in ("Z", "X") and stat[2] == run.started


def verdict(run, beat=None):
    """The :class:`RunEnded` of ``run`` (a :class:`Run`, or None: nothing to check) once it has
    ended, else None: its process is gone (where this job can see it), or its heartbeat at ``beat``
    (a path, or None where the run hands none down) is missing, another run's or stale. Another
    run's heartbeat names that run as the taker when it is alive (:func:`second_run`). A run on
    another host that hands no heartbeat down cannot be seen: it counts as ended."""
    if run is None:
        return None
    if run.here() and not alive(run):
        return RunEnded(run)
    if beat is not None:
        fresh, how, other = heartbeat.judge(run.token(), beat)
        return None if fresh else RunEnded(run, how, second_run(other))
    if not run.here():
        return RunEnded(run, f"this job on {socket.gethostname()} cannot see its process, and it hands "
                             f"down no heartbeat ({heartbeat.HEARTBEAT} unset)")
    return None


def second_run(other):
    """The :class:`Run` of another run's heartbeat ``other`` (token, age; None: there is none) when
    that run is alive: its process, where this job sees it, else its heartbeat fresh. Else None."""
    if other is None:
        return None
    try:
        run = parse(other[0])
    except ValueError:
        return None
    if run.here():
        return run if alive(run) else None
    return run if other[1] <= heartbeat.STALE_SECONDS else None


def check(run, beat=None):
    """Raise :class:`RunEnded` when ``run`` has ended (:func:`verdict`)."""
    ended = verdict(run, beat)
    if ended is not None:
        raise ended


def current():
    """The run recorded by :func:`start` (None: by hand, or not started)."""
    return _state["run"]


def belongs_to(environ=os.environ):
    """(run, how): the run this job belongs to, and a sentence saying how it was found. The run is
    None for a run by hand."""
    token = environ.get(RUN)
    if token:
        run = parse(token)
        if not run.here():
            return run, (f"job of the Snakemake run pid {run.pid} on host {run.host or '?'} (handed down "
                         f"in {RUN}), whose process this job ({socket.gethostname()}) cannot see: "
                         "its heartbeat alone tells")
        return run, f"job of the Snakemake run pid {run.pid} (handed down in {RUN})"
    run = find_run()
    if run is not None:
        return run, f"job of the Snakemake run pid {run.pid} (its ancestor; {RUN} unset)"
    return None, (f"run by hand: no Snakemake run handed this job its identity ({RUN} unset), "
                  "none is its ancestor")


def handed_heartbeat(environ=os.environ):
    """The heartbeat file of the run handed down in ``environ`` (None: no run, or it publishes none)."""
    path = environ.get(heartbeat.HEARTBEAT)
    return Path(path) if environ.get(RUN) and path else None


def start(poll=POLL_SECONDS, environ=os.environ):
    """Record the run this job belongs to and watch it (once per process); the run, or None.
    Raises :class:`RunEnded` when the run has already ended: the job must not even begin."""
    if _state["watchdog"] is None:  # a recorded run always has its watchdog
        run, how = belongs_to(environ)
        beat = handed_heartbeat(environ)
        if beat is not None:
            how += "; " + heartbeat.status(run.token(), beat)[1]
        log.info("%s (this job: pid %d)", how, os.getpid())
        check(run, beat)
        _state["run"], _state["heartbeat"] = run, beat
        if run is not None:
            thread = threading.Thread(target=_watch, args=(run, beat, poll), name="attnrepro-run-watchdog",
                                      daemon=True)
            _state["watchdog"] = thread
            thread.start()
    return _state["run"]


def _watch(run, beat, poll):
    event = threading.Event()
    while not event.wait(poll):
        with _LOCK:
            ended = verdict(run, beat)
            if ended is not None:
                _remove_temporaries()
                print(f"attnrepro: {ended}", file=sys.stderr)
                sys.stderr.flush()  # os._exit flushes nothing
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
            check(current(), _state["heartbeat"])
        except BaseException:
            _LOCK.release()
            raise
        return self

    def __exit__(self, *exc):
        _LOCK.release()
        return False


def fault_point(table):
    """The test hook of ATTNREPRO_FAULT (module docstring), after ``table``'s temporary is written."""
    fault = os.environ.get(FAULT)
    if fault not in [f"{action}:{table}" for action in FAULT_ACTIONS]:
        return
    action = fault.removesuffix(f":{table}")
    if action == "pause-after-table":
        log.warning("%s=%s: pausing %g s after writing the temporary of table %s",
                    FAULT, fault, PAUSE_SECONDS, table)
        time.sleep(PAUSE_SECONDS)
        return
    log.warning("%s=%s: killing this job after writing the temporary of table %s", FAULT, fault, table)
    if action == "crash-after-table":
        run = current() or find_run()
        if run is not None and run.here() and alive(run):
            os.kill(run.pid, signal.SIGKILL)
    logging.shutdown()
    os.kill(os.getpid(), signal.SIGKILL)
