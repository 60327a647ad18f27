"""The guard of verify's rerun: a small process that ends the rerun, whatever ends verify.

    python -m attnrepro.archive.rerun_guard WORKDIR [--remove DIR] [--grace S] -- SNAKEMAKE...
    python -m attnrepro.archive.rerun_guard WORKDIR --remove DIR

verify (:func:`attnrepro.archive.verify_rerun.run`) starts the guard in a session of its own, with
a pipe from verify on its stdin and the rerun's log on its stdout. The guard makes itself the
subreaper of what it starts (``PR_SET_CHILD_SUBREAPER``: a process orphaned below it becomes its
child, not init's), and starts Snakemake in ``WORKDIR``, in a session of its own, killed if the
guard dies (``PR_SET_PDEATHSIG`` SIGKILL). Then it waits for whichever comes first:

- **Snakemake exits.** The guard ends what it left behind (an orphan, if any) and exits with
  Snakemake's exit status (128+N if a signal N ended it).
- **EOF on stdin.** verify ended or died, however (SIGKILL included: the kernel closes its end of
  the pipe); it is also how verify ends the rerun on a signal of its own. The guard ends the rerun
  at once (:func:`end`): SIGINT to Snakemake's session, which Snakemake takes for "terminate
  now" (SIGTERM would make it wait for its running jobs), SIGTERM to every other descendant, and
  SIGKILL to whatever remains after a grace of :data:`GRACE_SECONDS`. Then it removes ``--remove``
  (verify's temporary folder; never a ``--workdir`` of the user's, where only a lock that the
  ended Snakemake left in ``.snakemake/locks`` goes) and exits.

Without a command, the guard only waits for EOF and removes ``--remove``: verify keeps one such
guard of its temporary folder from start to end (:func:`attnrepro.archive.verify_rerun.removed`),
so that a verify killed while it extracts or compares leaves no folder behind either.

Nothing but the standard library is imported: the guard starts fast, and runs no project code.
"""

import argparse
import ctypes
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

GRACE_SECONDS = 3.0  # between the first signals and SIGKILL of the rerun's processes
POLL_SECONDS = 0.1  # how often the guard looks at Snakemake, and end() at what is left
CLEARED = ("PYTHONPATH", "VIRTUAL_ENV")  # verify's environment, not the rerun's: Snakemake runs without
LOCKS = Path(".snakemake") / "locks"  # Snakemake's lock in its working directory
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36

_LIBC = ctypes.CDLL(None, use_errno=True)


# ---- the processes ------------------------------------------------------------------------

def descendants(pid):
    """The pids of every living descendant of ``pid`` (from /proc; none where there is none)."""
    children = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:  # it ended meanwhile
            continue
        parent = int(text[text.rindex(")") + 2:].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _signal_all(pids, group, signum, group_signum=None):
    """``signum`` to each of ``pids``, and ``group_signum`` (the same unless given) first to the
    process group ``group`` (if any); a process or group that is gone or not ours is passed over."""
    group_signum = signum if group_signum is None else group_signum
    first = [] if group is None else [(os.killpg, group, group_signum)]
    for kill, target, sent in [*first, *((os.kill, p, signum) for p in pids)]:
        try:
            kill(target, sent)
        except (ProcessLookupError, PermissionError):
            pass


def end(proc, grace=GRACE_SECONDS, root=None):
    """End the rerun ``proc`` and everything it started (every descendant of ``root``, ``proc``
    itself unless given): SIGINT to its session's group, Snakemake's "terminate now", SIGTERM to
    every other descendant, then SIGKILL to what remains after ``grace`` seconds."""
    root = proc.pid if root is None else root
    pids = [p for p in descendants(root) if p != proc.pid]
    _signal_all(pids, proc.pid, signal.SIGTERM, signal.SIGINT)
    deadline = time.monotonic() + grace
    # _alive, not proc.poll(): ``proc`` is waited for last, so that its pid (and group) cannot be
    # another process's when SIGKILL is sent to them
    while time.monotonic() < deadline and (_alive(proc.pid) or any(_alive(p) for p in pids)):
        time.sleep(POLL_SECONDS)
    _signal_all(pids + descendants(root), proc.pid, signal.SIGKILL)
    proc.wait()


def _end_orphans(root, grace):
    """After Snakemake exited by itself: end what it left below ``root`` (the guard, a subreaper)."""
    left = descendants(root)
    _signal_all(left, None, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while (time.monotonic() < deadline  # pragma: no mutate (equivalent: <= differs on one instant)
           and any(_alive(p) for p in left)):
        time.sleep(POLL_SECONDS)
    _signal_all(left + descendants(root), None, signal.SIGKILL)


def _die_with(parent):
    """What the child runs before Snakemake: SIGKILL when the guard (``parent``) dies, or exit at
    once if it died already (before the request)."""
    def request():
        _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(128 + signal.SIGKILL)
    return request


def start(cmd, workdir):
    """Start ``cmd`` in ``workdir``, in a session of its own, killed when this process dies;
    its output is this process's (the log), its stdin nothing, its environment this one's
    without :data:`CLEARED`."""
    env = {k: v for k, v in os.environ.items() if k not in CLEARED}
    return subprocess.Popen(cmd, cwd=workdir, env=env, stdin=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=_die_with(os.getpid()))


# ---- the guard ----------------------------------------------------------------------------

def _closed(fd, timeout):
    """Whether ``fd`` reached EOF within ``timeout`` seconds (what verify writes is read and dropped)."""
    readable, _, _ = select.select([fd], [], [], timeout)
    return bool(readable) and os.read(fd, 4096) == b""


def status(returncode):
    """An exit status for ``returncode`` of Popen: 128+N for an end by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def keep(fd, remove):
    """Without a command: wait for EOF on ``fd``, then remove ``remove``; 0."""
    while not _closed(fd, None):
        pass
    shutil.rmtree(remove, ignore_errors=True)
    return 0


def guard(cmd, workdir, fd, remove=None, grace=GRACE_SECONDS, root=None):
    """Run ``cmd`` in ``workdir`` until it exits or ``fd`` reaches EOF (the module's docstring);
    the exit status of ``cmd``. On EOF, ``cmd`` and every descendant of ``root`` (``cmd`` itself
    unless given) are ended, and ``remove`` (if given) and ``workdir``'s Snakemake locks removed."""
    proc = start(cmd, workdir)
    while proc.poll() is None:
        if _closed(fd, POLL_SECONDS):
            end(proc, grace, root)
            shutil.rmtree(Path(workdir) / LOCKS, ignore_errors=True)
            if remove is not None:
                shutil.rmtree(remove, ignore_errors=True)
            break
    return status(proc.returncode)


def _parser():
    parser = argparse.ArgumentParser(prog="python -m attnrepro.archive.rerun_guard",
                                     usage="%(prog)s WORKDIR [--remove DIR] [--grace S] [-- SNAKEMAKE...]",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("workdir", help="where Snakemake runs")
    parser.add_argument("--remove", help="a folder to remove once the rerun is ended on EOF")
    parser.add_argument("--grace", type=float, default=GRACE_SECONDS, help="seconds before SIGKILL")
    return parser


def main(argv=None):
    """Become the subreaper of the rerun, guard it; its exit status. Without a command after
    ``--``, only wait for EOF and remove ``--remove`` (:func:`keep`)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    split = argv.index("--") if "--" in argv else len(argv)
    args, cmd = _parser().parse_args(argv[:split]), argv[split + 1:]
    if not cmd:
        return keep(sys.stdin.fileno(), args.remove)
    _LIBC.prctl(PR_SET_CHILD_SUBREAPER, 1)
    code = guard(cmd, args.workdir, sys.stdin.fileno(), args.remove, args.grace, root=os.getpid())
    _end_orphans(os.getpid(), args.grace)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
