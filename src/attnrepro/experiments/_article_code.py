"""The article's own code as the yardstick of a time: its timing listing, run here beside ours.

A time means something only beside another taken on the same machine under the same conditions.
So a timing experiment whose job is given the article's listing (``article_code`` in its config
section; the program is built from the article's text by :mod:`attnrepro.articles.timed`) runs,
pass by pass, ours then theirs: ours, theirs, ours, theirs ... in one process, with one BLAS
thread and the allocator's steady state for both. :func:`run_once` runs the listing once, as
written, in a fresh namespace, its printed output kept, and observes ``time.perf_counter``: the
listing's own timed intervals are the differences of its calls taken two by two (start, end), at
full precision, whatever digits it prints. Beside each clock read it reads the process's CPU
time, outside the interval (before a start, after an end), so that each interval has a CPU share
as ours do (experiments._timing). The observation adds one Python call to each read, about a
tenth of a microsecond, to the listing's own ``perf_counter`` calls.

The listing runs with this job's rights, in this job's process: only a text whose SHA-256 the
config records reaches here (the job entry checks it), and only the listing the experiment names.
"""

import contextlib
import io
import logging
import time
from dataclasses import dataclass, field

from attnrepro.experiments._timing import Batch, one_minute_load
from attnrepro.run.io import ResultError

log = logging.getLogger("attnrepro")


class ArticleCodeError(ResultError):
    """The article's listing could not be timed: none was given, it failed, or its clock reads do
    not pair up. It stops the job in one line (run.harness.stopped)."""


@dataclass
class Timed:
    """One run of the listing: its timed intervals (wall and process CPU seconds) and what it printed."""

    seconds: list = field(default_factory=list)
    cpu_seconds: list = field(default_factory=list)
    printed: str = ""


class _Observed:
    """A stand-in for ``time.perf_counter`` that keeps every value it returns and the CPU time read
    beside it: before the wall clock on a start (even) call, after it on an end (odd) call."""

    def __init__(self, wall, cpu):
        self.wall, self.cpu, self.reads = wall, cpu, []

    def __call__(self):
        if len(self.reads) % 2 == 0:
            cpu = self.cpu()
            wall = self.wall()
        else:
            wall = self.wall()
            cpu = self.cpu()
        self.reads.append((wall, cpu))
        return wall


def run_once(program, expected=None, wall=None, cpu=None):
    """Run ``program`` (an :class:`attnrepro.articles.timed.Program`: its ``source`` and ``name``)
    once in a fresh namespace; its :class:`Timed`.
    ``expected``: how many intervals it must time (None: any even count of clock reads). Raises
    ArticleCodeError naming the listing when it fails or its clock reads do not pair up."""
    wall, cpu = wall or time.perf_counter, cpu or time.process_time
    observed, printed = _Observed(wall, cpu), io.StringIO()
    code = compile(program.source, program.name, "exec")
    real = time.perf_counter
    time.perf_counter = observed
    try:
        with contextlib.redirect_stdout(printed):
            exec(code, {"__name__": "__article__"})
    except Exception as error:  # the listing's own failure, said in one line
        raise ArticleCodeError(f"{program.name} failed: {type(error).__name__}: {error}") from None
    finally:
        time.perf_counter = real
    reads = observed.reads
    if len(reads) % 2 or (expected is not None and len(reads) != 2 * expected):
        want = "an even count" if expected is None else f"{2 * expected}"
        raise ArticleCodeError(f"{program.name} read time.perf_counter {len(reads)} times, not {want}: "
                               "its timed intervals cannot be told apart")
    starts, ends = reads[0::2], reads[1::2]
    return Timed([e[0] - s[0] for s, e in zip(starts, ends)], [e[1] - s[1] for s, e in zip(starts, ends)],
                 printed.getvalue())


def grouped(values, counts):
    """``values`` cut into consecutive groups of ``counts`` ([[...], ...]): the listing's intervals
    per size, in the order its loop visits them."""
    if sum(counts) != len(values):
        raise ArticleCodeError(f"{len(values)} timed intervals do not split into groups of {list(counts)}")
    out, start = [], 0
    for count in counts:
        out.append(list(values[start:start + count]))
        start += count
    return out


def batches(program, counts):
    """One run of ``program`` as [Batch], one per group of ``counts`` intervals (its sizes, in its
    loop's order): wall and CPU seconds, one attempt (a listing is not timed again in part), the
    load before and after. What it printed goes to the job's log."""
    if program is None:
        raise ArticleCodeError("article_code is on, but the job was given no listing to time "
                               "(--article-text): its rule runs attnrepro.jobs.timed_experiment")
    before = one_minute_load()
    timed = run_once(program, expected=sum(counts))
    after = one_minute_load()
    log.info("%s printed:\n%s", program.name, timed.printed.rstrip())
    return [Batch(s, c, 1, before, after)
            for s, c in zip(grouped(timed.seconds, counts), grouped(timed.cpu_seconds, counts))]
