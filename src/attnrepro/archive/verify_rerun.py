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
- **The machine is the verifier's.** The keys that govern the machine rather than the science
  (:data:`MACHINE`: the memory limit, what installs or runs unvetted code, a cluster's speed) take
  this checkout's values, whatever the archive's are, before the config is validated (the
  memory pre-flight then holds this machine's limit); each value replaced is one warning.
- **Nothing outlives verify.** Snakemake runs under a guard (:mod:`attnrepro.archive.rerun_guard`)
  whose stdin is a pipe from verify. When verify ends or dies (SIGKILL included: the kernel closes
  the pipe), or closes the pipe on SIGINT, SIGTERM, SIGHUP or an error, the guard ends Snakemake
  and every process below it within seconds, and removes verify's temporary folder.
"""

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

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
# The keys that govern the verifying machine, not the science: taken from this checkout's config,
# never from an archive's (docs/archive.md lists each, and the keys left to the archive, with why)
MACHINE = (
    ("memory", "limit_gib"),  # the memory pre-flight's limit: this machine's
    ("numerics", "sweep"),  # installs the articles' environment (about 4 GiB, over the network)
    ("listings", "build"),  # runs the articles' code verbatim (Pool(16), sockets), up to an hour each
    ("listings", "timeout_s"),  # how long this machine lets that code run
    ("runtime_factor",),  # how much slower than the project's machine a cluster's cores are
)
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class ConfigRefused(Exception):
    """The archive's config cannot be rerun: one line naming it and its first problems, by key;
    ``warnings``: the keys of the machine replaced before it was validated (:func:`this_machine`)."""

    def __init__(self, message, warnings=()):
        super().__init__(message)
        self.warnings = list(warnings)


class Interrupted(BaseException):
    """verify received ``signum``: its rerun, if one was running (``during_rerun``, set by
    :func:`run`), is ended and its temporary folder removed."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.during_rerun = False


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


_ABSENT = object()


def _at(config, key):
    """The value of ``config`` at ``key`` (a path of names), or _ABSENT."""
    for name in key:
        if not isinstance(config, dict) or name not in config:
            return _ABSENT
        config = config[name]
    return config


def _shown_value(value):
    return "absent" if value is _ABSENT else json.dumps(value)


def this_machine(theirs, ours):
    """(``theirs`` with each :data:`MACHINE` key it holds set to ``ours``'s value, or left out
    where ``ours`` has none; [one warning per key whose value was not ``ours``'s]). ``theirs`` is
    not changed."""
    config, warnings = dict(theirs), []
    for key in MACHINE:
        value, mine = _at(config, key), _at(ours, key)
        if value is _ABSENT or value == mine and isinstance(value, bool) is isinstance(mine, bool):
            continue
        parent = config
        for name in key[:-1]:
            parent[name] = dict(parent[name])
            parent = parent[name]
        if mine is _ABSENT:
            del parent[key[-1]]
        else:
            parent[key[-1]] = mine
        warnings.append(f"{'.'.join(key)}: the archive's {_shown_value(value)} replaced by this checkout's "
                        f"{_shown_value(mine)} (a key of the verifying machine, never of an archive)")
    return config, warnings


class ForRerun(NamedTuple):
    config: dict  # the archive's config, its machine's keys this checkout's: what Snakemake gets
    merged: dict  # over config/config.yaml, as Snakemake sees it (valid)
    warnings: list  # one per key of the machine replaced


def config_for_rerun(top):
    """The archive's config, read as data and checked (the module's docstring), its keys of the
    machine this checkout's (:func:`this_machine`): a :class:`ForRerun`, whose merged config is
    valid. :class:`ConfigRefused` with every problem, by key."""
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
    replaced = []
    try:
        errors = program_errors(_plain(theirs), ours) + article_errors(theirs, ours)
        theirs, replaced = this_machine(theirs, ours)
        merged = cfg.validate(cfg.merge(ours, theirs))
    except ConfigRefused as error:
        errors = [str(error)]
    except cfg.ConfigError as error:
        errors += str(error).splitlines()[1:] or [
            str(error),  # pragma: no mutate (equivalent: validate lists its problems under a header)
        ]
    if errors:
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        listed = "; ".join(e.strip() for e in errors[:3])
        raise ConfigRefused(f"the archive's config {shown} cannot be rerun: {listed}{more}", replaced)
    return ForRerun(theirs, merged, replaced)


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

GUARD = "attnrepro.archive.rerun_guard"


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


def guard_command(cmd, workdir, remove=None):
    """The guard's command line (:mod:`attnrepro.archive.rerun_guard`): it runs ``cmd`` in ``workdir``
    and removes ``remove`` if verify ends first."""
    removed = [] if remove is None else ["--remove", str(remove)]
    return [sys.executable, "-m", GUARD, str(workdir), *removed, *(["--", *cmd] if cmd else [])]


def run(cmd, workdir, remove=None):
    """Run ``cmd`` in ``workdir`` under its guard, in a session of its own, its output to the log;
    its exit status (128+N if a signal N ended it). Whatever stops the wait (a signal, an error)
    closes the guard's stdin, which ends the rerun's processes and removes ``remove``, and waits
    for the guard; so does verify's death, however it dies."""
    with open(Path(workdir) / LOG, "w") as fh:
        guard = subprocess.Popen(guard_command(cmd, workdir, remove), stdin=subprocess.PIPE, stdout=fh,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return guard.wait()
        except Interrupted as stop:
            stop.during_rerun = True
            raise
        finally:
            guard.stdin.close()  # EOF: the guard ends the rerun, if it still runs
            guard.wait()


class removed:  # noqa: N801 (a context manager, used like a function)
    """``with removed(folder):``: ``folder`` is removed when the block ends, and also when verify
    dies meanwhile, however (SIGKILL included): a guard without a command holds the other end of a
    pipe, and removes the folder at its EOF (:func:`attnrepro.archive.rerun_guard.keep`)."""

    def __init__(self, folder):
        self.folder = folder

    def __enter__(self):
        self.guard = subprocess.Popen(guard_command([], self.folder, self.folder), stdin=subprocess.PIPE,
                                      start_new_session=True)
        return self.folder

    def __exit__(self, *exc):
        self.guard.stdin.close()
        self.guard.wait()
        return False
