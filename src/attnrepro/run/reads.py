"""What a job read, recorded for its whole life, and the check that it declared all of it.

The job harness (:func:`attnrepro.run.harness.run_job`) records, from the job entry's first import
(:func:`begin`, which ``attnrepro.jobs`` calls; the harness takes it over, :func:`start`) to the
job's end:

- the **files** of the project (the repository, :data:`attnrepro.paths.REPO`) that the job opened
  in a mode that can read what it held (``"r"``, ``"r+"``, ``"a+"``; :func:`_reading`): Python's
  ``open`` audit event (``open``, ``os.open``, ``io.open_code``; a module imported from its
  bytecode cache counts as its source), the :data:`READ_EVENT` that pyarrow's readers raise once
  wrapped (:mod:`attnrepro.run.native_reads`: pyarrow opens a path in C++, where no audit event is
  raised; ``pandas.read_parquet`` goes through them), a ``sqlite3`` database connected to, and the
  reads of its child processes (:mod:`attnrepro.run.child_reads`: forked, fresh Python, and the
  files named on the command line of any program it starts);
- the **modules** of the package it imported: ``sys.modules`` at the job's end, by their file.

Still unseen: a program other than Python reading a file its command line does not name (a
script reading a fixed path, a shell's glob or redirection ``< FILE``); a Python child started
without the job's environment (``env=`` without :data:`attnrepro.run.child_reads.SIDE_ENV` and
``PYTHONPATH``), with ``-I``, ``-E`` or ``-S``, or in which the package cannot be imported;
files a Python child opens before its ``site`` startup; a file opened in C++ by another library
than pyarrow's wrapped readers (:data:`attnrepro.run.native_reads.READERS`), or by a pyarrow
reader imported by a name before the recording began (``from pyarrow.parquet import
read_table``); a forkserver started before the recording.

Not inputs (:func:`is_input`): a file the job wrote before reading it (its outputs and their
temporaries), the run's records (``.snakemake/``, ``results/logs/``, ``results/benchmarks/``),
compiled bytecode (``__pycache__``), the interpreter and its packages (``sys.prefix``: a venv may
sit in the repository), and anything outside the run (the standard library, ``/tmp``). A path is
in the run when its real path or its absolute path lies in the repository, or its real path in the
real folder of ``results/`` (a link to a cluster's scratch is checked as a folder is).

Under Snakemake the rule's shell sets :data:`RULE_ENV` (its name, as Snakemake knows it) and
:data:`DECLARED_ENV` (every file of its ``input:``, results files included, in the compact form of
:func:`compact`): ``job_env`` in workflow/rules/common.smk. The command line declares nothing: a
file passed through a rule's ``params:`` is no input of it. A job that read a project file its
rule does not declare then fails (:func:`undeclared`), with one line naming the rule and each file
with its fix (:func:`fix`). By hand (no :data:`RULE_ENV`) nothing is checked.
The record is written beside the job's log, the file its stderr goes to (a rule's ``2> {log}``,
:func:`stderr_log`; :func:`attnrepro.paths.reads_of_log`); by hand, nowhere when stderr is no log.
An earlier run's record is removed first, and a job that cannot write its own fails (under
Snakemake, a job whose stderr is no log among them: attnrepro.run.harness).
"""

import atexit
import importlib.util
import json
import os
import posixpath
import sys
from pathlib import Path

from attnrepro import paths
from attnrepro.run import child_reads, native_reads

READ_EVENT = native_reads.READ_EVENT  # sys.audit(READ_EVENT, path): a file read outside Python's open
RULE_ENV = "ATTNREPRO_RULE"
DECLARED_ENV = "ATTNREPRO_DECLARED"
# the longest DECLARED_ENV value handed down: one string of a process's environment holds at most
# 128 KiB on Linux (MAX_ARG_STRLEN), its name and the end of the string included
DECLARED_MAX = 120_000
RECORDS = (".snakemake", ".git", paths.LOGS, paths.BENCHMARKS)  # the run's records, not inputs
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
SQLITE_FLAGS = os.O_RDWR | os.O_CREAT  # sqlite3.connect reads its database, or makes it
EVENTS = frozenset({"open", READ_EVENT, "sqlite3.connect", *child_reads.COMMAND_EVENTS})
_active = []  # the recording in progress (at most one: a nested job records into it)


class Recording:
    """The project files one job opened (read or written) and the modules it imported."""

    def __init__(self, root=None):
        root = paths.REPO if root is None else root  # read now: a test may move the repository
        self.root = Path(os.path.realpath(root))
        self.places = _places(root)
        self.read, self.written = {}, set()  # read: repository-relative paths, in the order first read
        self.job = True  # False: begun at import (begin), until a job takes it over (start)
        self.owner = os.getpid()  # the process whose record it is (None: a child's, joined)
        self.side = None  # its children's side file (attnrepro.run.child_reads.Side), in its owner
        self.relay = None  # the side file another process (a child) appends its reads to

    def relative(self, path):
        """``path`` relative to the repository (POSIX), or None when it lies outside the run: by its
        real path, else by its absolute path (:func:`_places`)."""
        for where in (os.path.realpath(path), os.path.abspath(path)):
            for folder, name in self.places:
                inside = _inside(where, folder)
                if inside is not None:
                    return posixpath.normpath(posixpath.join(name, inside))
        return None

    def opened(self, path, writing, reading):
        """Note an open of ``path``: a read of a file the job did not write first is an input's."""
        name = self.relative(path)
        if name is None:
            return
        if reading and name not in self.written and name not in self.read:
            self.read[name] = None  # pragma: no mutate (equivalent: an ordered set, its values unread)
            if self.relay is not None and self.owner != os.getpid():  # a child's: for its job
                child_reads.append(self.relay, name)
        if writing:
            self.written.add(name)

    def modules(self):
        """{module name: repository-relative file} of the package's modules loaded now."""
        found = {}
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            if name.split(".")[0] == "attnrepro" and file:
                relative = self.relative(file)
                if relative is not None:
                    found[name] = relative
        return dict(sorted(found.items()))

    def files(self, outputs=()):
        """The project files read that are inputs (:func:`is_input`), in the order first read."""
        own = {name for name in map(self.relative, outputs) if name is not None}  # outside: not ours
        return [f for f in self.read if is_input(f, own) and (self.root / f).is_file()]


def _places(root):
    """The folders of the run and the repository-relative name each stands for: the repository
    (its real and its absolute path) and the real folder of its ``results/``, which may be a link
    out of it (to a cluster's scratch): a results file there is a file of the run all the same."""
    real = os.path.realpath(root)
    return ((real, ""), (os.path.realpath(os.path.join(real, paths.RESULTS)), paths.RESULTS),
            (os.path.abspath(root), ""))


def _inside(path, folder):
    """``path`` relative to ``folder`` (POSIX; "." for the folder itself), or None outside it."""
    try:
        return Path(path).relative_to(folder).as_posix()
    except ValueError:
        return None


def _writing(flags):
    """Whether an ``open`` event opens for writing, by its flags (``open`` and ``os.open`` give
    them: "w" and "r+" alike set one of WRITE_FLAGS)."""
    return isinstance(flags, int) and bool(flags & WRITE_FLAGS)


def _reading(flags, path):
    """Whether an ``open`` event may read what the file held before, by its flags (none: the
    READ_EVENT's, a read): a mode that can read ("r", "r+", "a+"), of a file not truncated ("w+")
    that was there (``O_CREAT`` may make it); a write-only mode ("w", "a", "x") reads nothing."""
    if not isinstance(flags, int):
        return True
    if flags & os.O_ACCMODE == os.O_WRONLY or flags & os.O_TRUNC:
        return False
    return not flags & os.O_CREAT or os.path.exists(path)


def _source(path):
    """The module a bytecode cache file is compiled from (an import opens only the cache when it is
    current), else ``path``."""
    cached = path.endswith(".pyc") and "__pycache__" in path  # pragma: no mutate (equivalent: a quick look)
    if cached:  # a quick look first: source_from_cache refuses any other path (ValueError) all the same
        try:
            return importlib.util.source_from_cache(path)
        except ValueError:
            return path
    return path


def _sqlite(database):
    """The file of a ``sqlite3.connect`` database (a ``file:`` URI's path), None in memory."""
    name = os.fsdecode(database)
    if name.startswith("file:"):
        name = name[len("file:"):].partition("?")[0]
    return None if name in ("", ":memory:") else name


def _opens(event, args):
    """[(path, flags)] of the files an audit event opens (flags None: a read): Python's ``open``
    (a module's cache stands for its source), READ_EVENT, ``sqlite3.connect``, and the files
    named on the command line of a program started (attnrepro.run.child_reads)."""
    if event == "open":
        path = args[0]
        if isinstance(path, int) or path is None:  # a file descriptor: opened already
            return []
        return [(_source(os.fsdecode(path)), args[2])]
    if event == READ_EVENT:
        return [(os.fsdecode(args[0]), None)]
    if event == "sqlite3.connect":
        database = _sqlite(args[0])
        return [] if database is None else [(database, SQLITE_FLAGS)]
    return [(path, None) for path in child_reads.named_files(event, args)]


def _hook(event, args):
    """The audit hook: add the files an event opens (:func:`_opens`) to the recording in progress."""
    if not _active or event not in EVENTS:
        return
    for path, flags in _opens(event, args):
        _active[-1].opened(path, _writing(flags), _reading(flags, path))


_installed = []


def _install():
    """The audit hook, installed once per process (hooks cannot be removed)."""
    if not _installed:
        sys.addaudithook(_hook)
        _installed.append(_hook)  # pragma: no mutate (equivalent: any item marks it installed)


def _open(root, job):
    """A new recording, for a job (``job``) or until one takes it over; an earlier one begun in
    this process is taken over by a job; else (a job in progress here or in the parent of this
    process) None: the recording in progress records for both."""
    _install()
    if _active:
        top = _active[-1]
        if job and not top.job and top.owner == os.getpid():
            top.job = True
            return top
        return None
    recording = Recording(root)
    recording.job = job
    recording.side = child_reads.Side(recording.root if root is None else root)
    recording.relay = recording.side.path
    recording.side.enter()
    atexit.register(recording.side.close)  # begun and never taken over: its folder removed
    _active.append(recording)
    native_reads.watch()
    return recording


def start(root=None):
    """Begin the recording of a job (run_job): the one begun at import (:func:`begin`) if any;
    None if a job is running in this process or its parent already (it records for both)."""
    return _open(root, job=True)


def begin(entry, argv=None):
    """Begin recording before the job entry ``entry`` (a package) imports anything, when this
    process runs one of its modules (``python -m <entry>.<command>``: :data:`sys.orig_argv`);
    :func:`start` takes the recording over. The recording, or None."""
    argv = sys.orig_argv if argv is None else argv
    named = [argv[i + 1] for i, word in enumerate(argv[:-1]) if word == "-m"]
    if not named or not named[0].startswith(entry + "."):
        return None
    return _open(None, job=False)  # pragma: no mutate (equivalent: None is as false)


def join():
    """In a fresh Python child of a job (its startup: attnrepro.run.child_reads.STARTUP): record
    what it reads into the job's side file; a job started here is nested in that one."""
    relay, root = os.environ.get(child_reads.SIDE_ENV), os.environ.get(child_reads.ROOT_ENV)
    if not relay or not root or _active:
        return None
    _install()
    recording = Recording(root)
    recording.owner, recording.relay = None, relay
    _active.append(recording)
    native_reads.watch()
    return recording


def stop(recording):
    """End ``recording`` (None: a nested job's, which ends with its outer job), with what its
    children read (its side file)."""
    if recording is not None and _active and _active[-1] is recording:
        _active.pop()
        if recording.side is not None:
            atexit.unregister(recording.side.close)
        for name in recording.side.close() if recording.side is not None else ():
            if name not in recording.written:
                recording.read.setdefault(name)


def _temporary_of(name, outputs):
    """Whether ``name`` is the temporary ``.<output>.<random>.tmp`` of one of ``outputs``."""
    folder, _, base = name.rpartition("/")
    return any(base.startswith(f".{Path(o).name}.") and base.endswith(".tmp")
               and Path(o).parent.as_posix() == (folder or ".") for o in outputs)


def is_input(name, outputs=()):
    """Whether reading the repository-relative file ``name`` makes it an input of the job that
    wrote ``outputs`` (repository-relative): the module's docstring says what is not."""
    parts = name.split("/")
    if "__pycache__" in parts or name in outputs or _temporary_of(name, outputs):
        return False
    if any(paths.under(name, folder) for folder in RECORDS):
        return False
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    where = os.path.join(os.path.realpath(paths.REPO), name)  # and where a link there points (a venv)
    return not any(paths.under(w, p) for w in (where, os.path.realpath(where)) for p in prefixes)


def record(recording, outputs=(), entry=None):
    """The record of what the job of ``recording`` read: its rule, its entry, the files it read
    (the modules' among them) and its modules ({name: file})."""
    modules = recording.modules()
    return {"rule": os.environ.get(RULE_ENV), "entry": entry,
            "files": sorted(set(recording.files(outputs)) | set(modules.values())),
            "modules": modules}


def compact(names):
    """The files ``names`` as :data:`DECLARED_ENV` holds them: sorted, each written as the length of
    the start it shares with the one before, a space and the rest (``src/a.py``, ``src/b.py``:
    ``0 src/a.py:4 b.py``), joined by ``os.pathsep``: a rule's thousands of results files take a
    few bytes each. ValueError for a name holding ``os.pathsep``."""
    entries, previous = [], ""
    for name in sorted(set(map(str, names))):
        if os.pathsep in name:
            raise ValueError(f"{name}: an input whose name holds {os.pathsep!r} cannot be declared")
        shared = len(os.path.commonprefix([previous, name]))
        entries.append(f"{shared} {name[shared:]}")
        previous = name
    return os.pathsep.join(entries)


def expand(text):
    """The file names that :func:`compact` wrote as ``text``, in its order. ValueError, naming
    :data:`DECLARED_ENV`, for a text :func:`compact` does not write (set by hand, or cut short)."""
    names, previous = [], ""  # pragma: no mutate (equivalent: compact's first entry shares 0 characters)
    for entry in filter(None, text.split(os.pathsep)):
        shared, space, rest = entry.partition(" ")
        if not (space and shared.isdecimal() and int(shared) <= len(previous)):
            raise ValueError(f"{DECLARED_ENV} is not as its rule's job_env writes it, at {entry[:60]!r}: "
                             "the job's inputs are unknown")
        previous = previous[:int(shared)] + rest
        names.append(previous)
    return names


def declared(environ=None):
    """The project files the job's rule declares (repository-relative): the files of its ``input:``
    that :data:`DECLARED_ENV` hands down (:func:`expand`); none without it. Never the command line:
    a file a rule passes through ``params:`` is no input of it."""
    environ = os.environ if environ is None else environ
    recording = Recording()
    found = map(recording.relative, expand(environ.get(DECLARED_ENV, "")))
    return {name for name in found if name is not None}


def undeclared(found, declared_files):
    """The files of the record ``found`` that are not among ``declared_files``, sorted."""
    return sorted(set(found["files"]) - set(declared_files))


def fix(name):
    """How to declare the repository-relative file ``name`` that a job read undeclared: a module of
    the package, by a plain import in the entry (a rule's code inputs are its entry's import
    closure, attnrepro.dag.code_inputs); a data file, in its rule's ``input:`` (a repository file
    the package reads may instead be named in the reading module's ``READS``)."""
    if paths.under(name, paths.SRC.name) and name.endswith(".py"):
        return "import it with a plain import in the entry, so the rule's code inputs see it"
    if paths.under(name, paths.RESULTS):
        return "add it to its rule's input:"
    return "add it to its rule's input:, or name it in the READS of the module that reads it"


def refusal(rule, files):
    """The one line that stops a job that read ``files`` its ``rule`` does not declare: each file
    with its own fix (:func:`fix`)."""
    fixes = "; ".join(f"{name} ({fix(name)})" for name in files)
    return f"rule {rule} read files not among its inputs: {fixes}"


def stderr_log(root=None):
    """The log the job's stderr is written to (Linux's /proc/self/fd/2), when it is a ``.log`` under
    ``results/logs`` of the repository ``root``; else None (a terminal, a pipe, another file)."""
    try:
        target = Path(os.readlink("/proc/self/fd/2"))
    except OSError:
        return None
    name = Recording(root).relative(target)
    if name is None or not name.endswith(".log") or not paths.under(name, paths.LOGS):
        return None
    return Path(os.path.realpath(paths.REPO if root is None else root)) / name


def write(found, log):
    """Write the record ``found`` beside ``log`` (None: nowhere); its path. A record of an earlier
    run is removed first: a job that cannot write its own leaves none that looks current (OSError)."""
    if log is None:
        return None
    target = Path(paths.reads_of_log(str(log)))
    target.unlink(missing_ok=True)
    target.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    return target
