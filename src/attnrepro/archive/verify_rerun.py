"""Rerun an archive's config with this checkout's workflow: the config read as data, the rerun
owned by ``verify`` to its end.

- **The config is data.** The archive's ``config.resolved.yaml`` is read by the project's strict
  loader (:mod:`attnrepro.dag.yamlfile`: no anchors, aliases, tags or ``__use_yte__`` templating),
  merged over this checkout's ``config/config.yaml`` as Snakemake would merge it, validated as
  every run's config is (:func:`attnrepro.dag.config.validate`: the schema, the rules across keys,
  each job's memory against this machine), and refused if it names a program this checkout's
  config does not (``numerics.environments``: an interpreter, a make target) or an article it
  does not (``articles``: an article without experiments is checked by running its listings).
  Snakemake gets it as JSON, which it reads as JSON (never through YTE, which evaluates ``?``
  values as Python).
- **Nothing outlives verify.** Snakemake runs in a session of its own, told to end with verify
  (``PR_SET_PDEATHSIG``); on SIGINT, SIGTERM, SIGHUP or an error, verify ends that session's
  processes and every descendant of Snakemake, and its temporary folder is removed.
"""

import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from attnrepro import paths
from attnrepro.archive import verify_crate, verify_limits
from attnrepro.numerics import fingerprint

REPO = paths.REPO
# what a rerun needs: the workflow, its code and config, the lock, and the repository files that
# the code reads (the modules' READS, such as the golden fingerprint every job checks)
COPIED = ("Snakefile", "workflow", "src", "config", "envs", paths.REQUIREMENTS,
          *fingerprint.READS)
CONFIG_JSON = "verify-config.json"  # in the rerun's folder: the archive's config, as Snakemake reads it
LOG = "verify-snakemake.log"
PROGRAMS = ("numerics", "environments")  # the config's key that names programs to run
GRACE_SECONDS = 10.0  # between SIGTERM and SIGKILL of the rerun's processes
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class ConfigRefused(Exception):
    """The archive's config cannot be rerun: one line naming it and its first problems, by key."""


class Interrupted(BaseException):
    """verify received ``signum``: its rerun is ended and its temporary folder removed."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


# ---- the config --------------------------------------------------------------------------

def _plain(value, key=""):
    """``value`` if it holds only what JSON holds (mappings with string keys, lists, strings,
    numbers, booleans, null), else :class:`ConfigRefused` naming the key (a YAML date, bytes; a
    NaN is a float here, refused by the validation)."""
    if isinstance(value, dict):
        for k, item in value.items():
            if not isinstance(k, str):
                raise ConfigRefused(f"{key or '(top level)'}: the key {k!r} is not a string")
            _plain(item, f"{key}.{k}" if key else k)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _plain(item, f"{key}[{i}]")
    elif not (value is None or isinstance(value, (str, bool, int, float))):
        raise ConfigRefused(f"{key}: a {type(value).__name__} is not a config value")
    return value


def _programs(config):
    """The config's programs ({environment: entry} of ``numerics.environments``)."""
    section = config.get(PROGRAMS[0]) or {}
    return (section.get(PROGRAMS[1]) or {}) if isinstance(section, dict) else {}


def program_errors(theirs, ours):
    """[sentence] for each program the archive's config names that this checkout's does not."""
    mine = _programs(ours)
    return [f"{'.'.join(PROGRAMS)}.{name}: {entry!r} is not this checkout's {name!r} environment "
            f"({mine.get(name)!r}): an archive's config never chooses a program to run"
            for name, entry in sorted(_programs(theirs).items()) if mine.get(name) != entry]


def article_errors(theirs, ours):
    """[sentence] for each entry of the archive's config ``articles`` that this checkout's config
    does not hold as it is: an article without experiments is checked by running its listings, so
    a new entry would choose code to run."""
    mine = ours.get("articles") or []
    listed = theirs.get("articles") if isinstance(theirs.get("articles"), list) else []
    return [f"articles[{place}]: {entry!r} is not one of this checkout's articles: an archive's config "
            "never chooses code to run (an article's listings)"
            for place, entry in enumerate(listed) if entry not in mine]


def config_for_rerun(top):
    """The archive's config, read as data and checked (the module's docstring); the merged config
    as Snakemake will see it is valid. :class:`ConfigRefused` with every problem, by key."""
    from attnrepro.dag import config as cfg

    path = verify_crate.path(top, "config") or Path(top) / "config.resolved.yaml"
    if not path.is_file():
        raise ConfigRefused("the archive holds no config.resolved.yaml: nothing to rerun")
    shown = path.relative_to(Path(top).parent) if path.is_relative_to(Path(top).parent) else path
    if path.stat().st_size > (cap := verify_limits.Limits().config_bytes):  # before the loader reads it
        raise ConfigRefused(f"the archive's config {shown} holds more than {cap:,} bytes")
    try:
        theirs = cfg.load(path)
    except (cfg.ConfigError, ValueError) as error:
        raise ConfigRefused(f"the archive's config {shown}: {error}") from None
    ours = cfg.load(cfg.DEFAULT)
    try:
        errors = program_errors(_plain(theirs), ours) + article_errors(theirs, ours)
        cfg.validate(cfg.merge(ours, theirs))
    except ConfigRefused as error:
        errors = [str(error)]
    except cfg.ConfigError as error:
        errors += str(error).splitlines()[1:] or [
            str(error),  # pragma: no mutate (equivalent: validate lists its problems under a header)
        ]
    if errors:
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        listed = "; ".join(e.strip() for e in errors[:3])
        raise ConfigRefused(f"the archive's config {shown} cannot be rerun: {listed}{more}")
    return theirs


def texts_here(config, repo=REPO):
    """``config`` with each article's relative ``text`` read from this checkout (``repo``), not from
    the rerun's folder, where no article text is copied: the entries are this checkout's own
    (:func:`article_errors`; an archive's config without ``articles`` takes this checkout's), and a
    job that reads a text checks its SHA-256."""
    from attnrepro.dag import config as cfg

    entries = (config["articles"] if "articles" in config
               else cfg.load(Path(repo) / "config" / "config.yaml").get("articles"))
    if not isinstance(entries, list):
        return config
    here = [{**e, "text": str(Path(repo) / e["text"])}
            if isinstance(e, dict) and isinstance(e.get("text"), str) and not Path(e["text"]).is_absolute()
            else e for e in entries]
    return {**config, "articles": here}


def write_config(config, workdir):
    """The config as JSON in the rerun's folder (Snakemake reads a JSON file as JSON); its path."""
    out = Path(workdir) / CONFIG_JSON
    out.write_text(json.dumps(config, indent=1, sort_keys=True,
                              allow_nan=False,  # pragma: no mutate (equivalent: json reads None as False)
                              ) + "\n")
    return out


# ---- the workflow ------------------------------------------------------------------------

def workflow_files(repo=REPO):
    """The files a run of this checkout reads: the workflow, its code and config, the lock
    (as they are on disk, committed or not; no results, no caches)."""
    found = [p for name in COPIED for p in ([repo / name] if (repo / name).is_file() else
                                            sorted((repo / name).rglob("*")))]
    return [p.relative_to(repo).as_posix() for p in found
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]


def copy_workflow(workdir, repo=REPO):
    """Copy this checkout's workflow into ``workdir`` (links as links); OSError passes through."""
    for name in workflow_files(repo):
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / name, workdir / name,
                     follow_symlinks=False)  # pragma: no mutate (equivalent: None is False)


def check_workdir(workdir):
    """A rerun starts from nothing: ``workdir`` is new or an empty folder, else a sentence why not."""
    workdir = Path(workdir)
    if not workdir.exists():
        return None
    if not workdir.is_dir():
        return f"--workdir {workdir}: not a folder"
    if any(workdir.iterdir()):
        return (f"--workdir {workdir}: not empty; a rerun starts from nothing (an earlier run's "
                "results there would be compared instead of a rerun's): give a new or empty folder")
    return None


# ---- the process -------------------------------------------------------------------------

_LIBC = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1


def _die_with_parent():
    """In the child, before Snakemake starts: SIGTERM when verify dies (even by SIGKILL)."""
    _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


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


def _signal_all(pids, group, signum):
    for kill, target in [(os.killpg, group), *((os.kill, p) for p in pids)]:
        try:
            kill(target, signum)
        except (ProcessLookupError, PermissionError):
            pass


def end(proc, grace=GRACE_SECONDS):
    """End the rerun ``proc`` and everything it started: SIGTERM to its session's group and to
    every descendant, then SIGKILL to what remains after ``grace`` seconds."""
    pids = descendants(proc.pid)
    _signal_all(pids, proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    # _alive, not proc.poll(): ``proc`` is waited for last, so that its pid (and group) cannot be
    # another process's when SIGKILL is sent to them
    while time.monotonic() < deadline and (_alive(proc.pid) or any(_alive(p) for p in pids)):
        time.sleep(0.1)
    _signal_all(pids + descendants(proc.pid), proc.pid, signal.SIGKILL)
    proc.wait()


def _alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _raise(signum, _frame):
    raise Interrupted(signum)


class handling_signals:  # noqa: N801 (a context manager, used like a function)
    """``with handling_signals():``: SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted`, so that
    every ``finally`` runs (the rerun ended, the temporary folder removed); restored after."""

    def __enter__(self):
        self.previous = {s: signal.signal(s, _raise) for s in SIGNALS}
        return self

    def __exit__(self, *exc):
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)
        return False


def snakemake_command(cores, config_path):
    return [sys.executable, "-m", "snakemake", "--cores", str(cores), "--configfile", str(config_path)]


def run(cmd, workdir):
    """Run ``cmd`` in ``workdir`` in a session of its own, its output to the log; its exit status.
    Whatever stops the wait (a signal, an error) ends the session's processes first."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    with open(Path(workdir) / LOG, "w") as fh:
        proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True, preexec_fn=_die_with_parent)
        try:
            return proc.wait()
        finally:
            if proc.returncode is None:
                end(proc)
