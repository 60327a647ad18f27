"""The one harness every job entry runs its job through: :func:`run_job`.

A job entry (``python -m attnrepro.jobs.<command>``, one per command a rule runs;
``attnrepro.report`` and ``attnrepro`` by hand) parses its own command line, then hands its job
to :func:`run_job`, which does, in this order:

1. the logging (:func:`setup_logging`: INFO and up, to stderr);
2. before NumPy is imported (:func:`start`): the Snakemake run the job belongs to
   (:func:`attnrepro.run.ownership.start`; none by hand), the thread limits
   (:func:`attnrepro.numerics.threads.limit`) and the numerics: the pin
   (:func:`attnrepro.numerics.canonical.apply`) or a numerics-sweep setting;
3. the entry says what its job writes, reads and does (a :class:`Job`), given the pin's state;
4. the guards (:func:`guard`): the temporaries of its outputs that a killed earlier attempt left
   are removed, and its inputs' provenance parameters are compared with what the run plans for
   them (``attnrepro.run.io.check_inputs``; that module loads NumPy, so it is imported only now);
5. the work; its status (None is 0);
6. what the job read, recorded from the entry's first import (``attnrepro.jobs`` begins the
   recording, the harness takes it over) or else from the start (:mod:`attnrepro.run.reads`),
   with its child processes' reads, written beside its log
   (a job whose record cannot be written ends with status 1: its earlier record is removed first;
   so does a Snakemake job whose stderr is no log, which leaves its record nowhere);
   under Snakemake, a read of a project file its rule does not declare ends it with status 1 and
   one line naming the rule and each file with its fix.

An ended run (:class:`attnrepro.run.ownership.RunEnded`) or a corrupt or stale input
(``attnrepro.run.io.ResultError``), at any step, stops the job with status 1 and one line on
stderr: the entry's prefix (``attnrepro``, ``attnrepro.report``) and the error's message. A usage
error (:class:`attnrepro.run.usage.UsageError`: a bad value, a bad or missing file, an unknown
name) ends it with status 2 and its message on one line. Any other error propagates to the entry.
"""

import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from attnrepro import paths
from attnrepro.numerics import canonical, threads
from attnrepro.run import ownership, reads, usage

PREFIX = "attnrepro"  # of the stderr line of a stopped job, and the logger of the harness's lines
LOG_FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"


@dataclass
class Job:
    """What a job entry hands the harness once the pin is applied: the ``work`` (no argument; its
    exit status, None for 0), the ``outputs`` it writes (their leftovers are removed first), the
    ``inputs`` it reads and what the run plans for them (``expected``: {experiment: {case:
    params}}; an input of other parameters stops the job)."""

    work: Callable[[], Any]
    outputs: Iterable = ()
    inputs: Iterable = ()
    expected: dict = field(default_factory=dict)


def setup_logging():
    """The jobs' logging: INFO and up, to stderr (once per process: later calls change nothing)."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format=LOG_FORMAT)


def start(pin=canonical.SETTING, setting=None, n_threads=None, keep_loaded=False, log=None):
    """Before NumPy is imported: the Snakemake run this job belongs to, the thread limits
    (``n_threads``, if given), then the numerics: a sweep ``setting``, else the ``pin`` (None: this
    process runs none: a listings job gives its pin to the interpreter it starts). ``keep_loaded``:
    a caller in whose process NumPy is loaded already keeps its numerics (the report's commands,
    called in-process). Returns the pin's state (canonical.apply), else None."""
    log = log or logging.getLogger(PREFIX)
    ownership.start()
    if n_threads is not None:
        used = threads.limit(n_threads)
        if used != int(n_threads):
            log.info("threads: %d asked, %d CPU(s) available to this job: its BLAS and OpenMP pools run %d",
                     int(n_threads), threads.available(), used)
    if setting is not None:
        try:
            canonical.apply_setting(setting)
        except ValueError as error:
            raise usage.UsageError(f"--numerics: {error}") from None
        return None
    if pin is None or (keep_loaded and "numpy" in sys.modules):
        return None
    return canonical.apply(pin)


def guard(outputs=(), inputs=(), expected=None, log=None):
    """After the pin: remove the temporaries of ``outputs`` that a killed earlier attempt of the
    job left, then check ``inputs`` against ``expected`` (attnrepro.run.io.check_inputs)."""
    from attnrepro.run import io  # loads NumPy: after the pin

    log = log or logging.getLogger(PREFIX)
    for leftover in io.remove_leftovers(list(outputs)):
        log.info("removed %s, left by a killed earlier attempt of this job", leftover)
    io.check_inputs(list(inputs), expected or {})


def stopped(error):
    """The message of an error that stops a job with status 1 (an ended run, a corrupt or stale
    input), else None (attnrepro.run.io is not imported here: it loads NumPy, after the pin)."""
    io = sys.modules.get("attnrepro.run.io")
    if isinstance(error, ownership.RunEnded) or (io is not None and isinstance(error, io.ResultError)):
        return str(error)
    return None


def run_job(job, *, prefix=PREFIX, pin=canonical.SETTING, setting=None, n_threads=None, keep_loaded=False):
    """Run one job (the module's docstring); its exit status. ``job``: a function of the pin's
    state (what :func:`start` returns) that gives the :class:`Job`, called after the start: an
    entry may resolve its paths from a config there. ``prefix``: the entry's, on the stderr line of
    a stopped job (status 1) or a usage error (status 2); the harness's log lines go to the logger
    of that name. ``pin``, ``setting``, ``n_threads``, ``keep_loaded``: as :func:`start` takes them."""
    setup_logging()
    log = logging.getLogger(prefix)
    recording, outputs = reads.start(), []
    try:
        state = start(pin, setting, n_threads, keep_loaded, log)
        spec = job(state)
        outputs = list(spec.outputs)
        guard(outputs, spec.inputs, spec.expected, log)
        status = spec.work() or 0
    except usage.UsageError as error:
        return usage.refuse(error, prefix)
    except Exception as error:
        message = stopped(error)
        if message is None:
            raise
        print(f"{prefix}: {message}", file=sys.stderr)
        return 1
    finally:
        found, written = finish(recording, outputs, prefix)
    if status or found is None:
        return status
    return checked(found, prefix) if written else 1


def finish(recording, outputs, prefix=PREFIX):
    """End ``recording`` (attnrepro.run.reads) and write its record beside the job's log; the
    record (None for a nested job: its outer job records both) and whether it was written. A record
    that cannot be written (its earlier one is removed first), or under Snakemake a job whose stderr
    is no log (reads.stderr_log: the record would be nowhere), is said in one line on stderr."""
    reads.stop(recording)
    if recording is None:
        return None, True  # pragma: no mutate (equivalent: run_job reads no "written" of a nested job)
    main = sys.modules.get("__main__")
    entry = getattr(getattr(main, "__spec__", None), "name", None)
    found = reads.record(recording, outputs, entry)
    log = reads.stderr_log()
    if log is None and os.environ.get(reads.RULE_ENV):
        print(f"{prefix}: cannot write the record of what the job read: its stderr is no .log under "
              f"{paths.LOGS} (its rule's shell ends with 2> {{log}})", file=sys.stderr)
        return found, False
    try:
        reads.write(found, log)
    except OSError as error:
        print(f"{prefix}: cannot write the record of what the job read: {error}", file=sys.stderr)
        return found, False
    return found, True


def checked(found, prefix):
    """0, or 1 with one line on stderr when a Snakemake job (its rule set reads.RULE_ENV) read a
    project file its rule does not declare (attnrepro.run.reads)."""
    rule = os.environ.get(reads.RULE_ENV)
    try:
        missing = reads.undeclared(found, reads.declared()) if rule else []
    except ValueError as error:  # the declared inputs cannot be read: nothing is taken as declared
        print(f"{prefix}: rule {rule}: {error}", file=sys.stderr)
        return 1
    if not missing:
        return 0
    print(f"{prefix}: {reads.refusal(rule, missing)}", file=sys.stderr)
    return 1
