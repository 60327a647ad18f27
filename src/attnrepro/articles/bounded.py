"""An article's listings run in a fresh interpreter, bounded in time, memory and place.

:func:`run_listings` runs the listings in order in :mod:`attnrepro.articles.session`, a new Python
process (``python -s -m``: no user site; ``PYTHONPATH`` keeps the package's ``src`` so the session
module itself imports, and the working folder stays first on ``sys.path`` as in a notebook), with
the user's rights and the environment given. What bounds it:

- **its own working folder**: a new temporary folder (under ``workdir`` if given), the session's
  current directory, removed afterwards, also when the interpreter was killed; two calls share
  nothing; no file it writes may pass :data:`FILE_LIMIT_MIB` (Python then raises OSError, "File
  too large": the listing's failure);
- **time**: ``time_limit_s``, the article's budget, and ``listing_limit_s`` per listing (default:
  the budget). A listing past its limit ends its interpreter (its process group, SIGKILL) and is
  ``failed`` "exceeded its time limit of N s". Its interpreter's state is lost with it, so a new
  interpreter first runs again, in order and with their output discarded, every earlier listing
  that ran in an interpreter (failed ones too: they fail again, keeping what they bound before
  their error), then goes on with the next listing. A listing whose interpreter was killed under
  it, the first time or when run again, is never run again. Once the budget is spent, the listings
  left are ``skipped``: "the article's time limit of N s was spent before it";
- **memory**: ``memory_limit_mib`` (None: no limit), a resource limit of the interpreter set
  before it runs Python, and inherited by each process it starts (a ``multiprocessing.Pool``'s
  workers get one each). An allocation past it raises MemoryError, the listing's failure (what it
  bound before stays bound, and holds its memory, as in a notebook); an interpreter killed by a
  signal fails its running listing ("the interpreter was killed by signal 9 (memory limit 512
  MiB?)") and a new one goes on as above.

As in a notebook, a failed listing never stops the next: each listing runs in the namespace the
earlier ones left, and one that reads a name a failed listing did not bind fails with its own
``NameError``. An interpreter that ends by itself between two listings leaves the rest
``skipped``, "not run: the interpreter exited with status N": a new one would end the same way.
A listing's IPython lines (``%matplotlib inline``, ``!pip install x``) are made Python in the
session (:func:`attnrepro.articles.listings.runnable`); a shell command is never run.

RLIMIT_DATA, not RLIMIT_AS, measured 2026-12-07 on the 2-core test machine (Linux 6.18, 24 GiB,
Python 3.11, NumPy 2.4.6, torch 2.13.0+cpu): under RLIMIT_AS at 512 MiB ``import numpy`` itself
dies (OpenBLAS cannot allocate its buffers); under RLIMIT_DATA at 512 MiB ``import torch; import
numpy`` starts (1.1 s). At 4096 MiB both start, and under RLIMIT_DATA ``bytearray(10**11)`` and
``np.ones((10**5, 10**5))`` raise MemoryError at once, ``torch.ones`` of that size a RuntimeError
(1.0 s), and a list growing by ``bytearray(10**7)`` a MemoryError after 428 of them (4.2 s; 53 in
0.5 s at 512 MiB). No core file is written (RLIMIT_CORE 0).

The outcome (:class:`Outcome`): one record per listing in order (the session's: name, status
``ran``, ``failed`` or ``skipped``, error, seconds, stdout, stderr, defined, notes), what the libraries
ran (``numerics``, from the last interpreter that ended by itself) and one line per listing that
did not run ("listing 3: ModuleNotFoundError: No module named 'tiktoken' (line 1)").

The defaults, :data:`TIME_LIMIT_S` and :data:`MEMORY_LIMIT_MIB`, are these; an entry of config
``articles`` sets its own (``time_limit_s``, ``memory_limit_mib``: :mod:`attnrepro.articles.catalog`).
"""

import contextlib
import ctypes
import json
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from attnrepro import paths
from attnrepro.articles import session

SESSION = session.__name__  # run by its name: python -m attnrepro.articles.session
TIME_LIMIT_S = 600  # an article's budget: ten minutes of listings, each run
MEMORY_LIMIT_MIB = 4096  # room for torch and NumPy and a small model (see the measurements above)
FILE_LIMIT_MIB = 1024  # the largest file a listing may write (RLIMIT_FSIZE): past it, "File too large"
POLL_S = 0.5  # how often the interpreter's end is checked while no event comes


@dataclass
class Outcome:
    """The listings' records in order, what the libraries ran, and one line per problem."""

    results: list
    numerics: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    interpreters: int = 0


@dataclass
class _Limits:
    time_limit_s: float
    listing_limit_s: float
    memory_limit_mib: int | None
    deadline: float  # the article's, on time.monotonic()


def _in_child(memory_limit_mib):
    """In the interpreter before it runs Python: die with the caller, no core file, the largest file
    it may write (:data:`FILE_LIMIT_MIB`) and the memory limit."""
    try:
        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    size = FILE_LIMIT_MIB * 2**20
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    if memory_limit_mib is not None:
        limit = int(memory_limit_mib) * 2**20
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def environment(env=None):
    """``env`` (default: this process's) with the package's ``src`` first on ``PYTHONPATH``."""
    env = dict(os.environ if env is None else env)
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if str(paths.SRC) not in parts:
        env["PYTHONPATH"] = os.pathsep.join([str(paths.SRC), *parts])
    return env


def _ended(returncode, memory_limit_mib):
    """Why the interpreter ended while a listing ran, from its return code."""
    if returncode >= 0:
        return f"the interpreter exited with status {returncode}"
    number = -returncode
    by_limit = memory_limit_mib is not None and number == signal.SIGKILL
    hint = f"memory limit {memory_limit_mib} MiB?" if by_limit else signal.Signals(number).name
    return f"the interpreter was killed by signal {number} ({hint})"


class _Interpreter:
    """One session process: started on a plan, watched for its events, killed at a limit."""

    def __init__(self, plan, scratch, number, python, env, limits):
        self.plan_path = scratch / f"plan-{number}.json"
        self.results_path = scratch / f"results-{number}.json"
        self.plan_path.write_text(json.dumps(plan))
        self.limits = limits
        read, write = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [python, "-s", "-m", SESSION, str(self.plan_path), str(self.results_path),
                 "--events", str(write)],
                # its standard output records nothing (each listing's is captured): none of it
                # reaches the terminal unasked
                stdout=subprocess.DEVNULL, cwd=scratch / "work", env=env, start_new_session=True,
                pass_fds=(write,),
                preexec_fn=lambda: _in_child(limits.memory_limit_mib))
        finally:
            os.close(write)
        os.set_blocking(read, False)
        self.events = read
        self.running, self.started = None, None  # ("run" | "replay", index), its start
        self.why = None  # why it was killed, or None

    def _deadline(self):
        if self.running is None:
            return self.limits.deadline, "article"
        mine = self.started + self.limits.listing_limit_s
        return (mine, "listing") if mine < self.limits.deadline else (self.limits.deadline, "article")

    def _take(self, data):
        for line in data.decode().splitlines():
            kind, index = line.split()
            self.running = None if kind == "done" else (kind, int(index))
            self.started = time.monotonic()

    def _read(self, buffer):
        """``buffer`` with what the interpreter sent since; its complete lines taken."""
        with contextlib.suppress(BlockingIOError):
            while data := os.read(self.events, 4096):
                buffer += data
        complete, _, rest = buffer.rpartition(b"\n")
        self._take(complete)
        return rest

    def watch(self):
        """Wait for the interpreter's end, killing it at a limit; the plan's records after it."""
        buffer = b""
        while self.proc.poll() is None:
            deadline, which = self._deadline()
            left = deadline - time.monotonic()
            if left <= 0:
                self.why = which
                self.kill()
                break
            if select.select([self.events], [], [], min(left, POLL_S))[0]:
                buffer = self._read(buffer)
        self.proc.wait()
        self._read(buffer)
        if self.results_path.is_file():
            return json.loads(self.results_path.read_text())
        return {"results": [], "replayed": [], "numerics": {}}

    def kill(self):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def close(self):
        if self.proc.poll() is None:
            self.kill()
        os.close(self.events)

    def failure(self):
        """Why the running listing failed, when the interpreter ended under it."""
        if self.why == "listing":
            return f"exceeded its time limit of {self.limits.listing_limit_s:g} s"
        if self.why == "article":
            return f"exceeded the article's time limit of {self.limits.time_limit_s:g} s"
        return _ended(self.proc.returncode, self.limits.memory_limit_mib)


def _check(listings):
    for i, listing in enumerate(listings, 1):
        display = listing.get("display", "print")
        if display not in session.DISPLAYS:
            raise ValueError(f"listing {i} ({listing.get('name')}): display {display!r} is not one of "
                             f"{', '.join(session.DISPLAYS)}")


def run_listings(listings, *, time_limit_s=TIME_LIMIT_S, memory_limit_mib=MEMORY_LIMIT_MIB, env=None,
                 python=sys.executable, workdir=None, listing_limit_s=None):
    """Run ``listings`` ([{name, first, code, display}]) as the module's docstring says; an
    :class:`Outcome`."""
    _check(listings)
    per_listing = time_limit_s if listing_limit_s is None else listing_limit_s
    limits = _Limits(time_limit_s, per_listing, memory_limit_mib, time.monotonic() + time_limit_s)
    results, ran_here, lost, outcome = [None] * len(listings), set(), set(), Outcome([])
    env = environment(env)
    with tempfile.TemporaryDirectory(prefix="attnrepro-article-", dir=workdir) as scratch:
        (Path(scratch) / "work").mkdir()
        start = 0
        while start < len(listings) and time.monotonic() < limits.deadline:
            plan = {"listings": listings, "start": start, "replay": sorted(ran_here - lost)}
            outcome.interpreters += 1
            interpreter = _Interpreter(plan, Path(scratch), outcome.interpreters, python, env, limits)
            try:
                record = interpreter.watch()
            finally:
                interpreter.close()
            for done in record["results"]:
                results[done["index"]] = {k: v for k, v in done.items() if k != "index"}
                ran_here.add(done["index"])
            moved = _after_end(interpreter, listings, results, lost)
            outcome.numerics = record["numerics"] or outcome.numerics
            if moved is None:
                break
            start = moved
    spent = f"the article's time limit of {time_limit_s:g} s was spent before it"
    outcome.results = [r or session.blank(listing, "skipped", spent) for r, listing in zip(results, listings)]
    outcome.problems = [f"listing {i}: {r['error']}" for i, r in enumerate(outcome.results, 1)
                        if r["status"] != "ran"]
    return outcome


def _after_end(interpreter, listings, results, lost):
    """Account for how the interpreter ended: the listing it ran fails (a replay's is lost: not run
    again); the position a new interpreter starts from, or None when none is needed or none would
    help."""
    running = interpreter.running
    if running is not None:
        kind, index = running
        if kind == "replay":
            lost.add(index)
        elif results[index] is None:
            seconds = time.monotonic() - interpreter.started
            results[index] = session.blank(listings[index], "failed", interpreter.failure(), seconds)
    left = [i for i, r in enumerate(results) if r is None]
    if not left:
        return None
    if running is None and interpreter.why is None:
        # it ended between listings without a limit: a new one would end the same way
        for i in left:
            results[i] = session.blank(listings[i], "skipped", f"not run: {interpreter.failure()}")
        return None
    return left[0]
