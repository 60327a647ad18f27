"""What a job's child processes read, carried to the job's record (:mod:`attnrepro.run.reads`).

- A **forked** child (``os.fork``, a ``multiprocessing`` pool that forks) inherits the audit hook
  and the recording; it appends each file it reads first to the recording's side file, at once
  (a pool worker ends by ``os._exit``: nothing runs at its end).
- A **fresh Python** child (``subprocess`` running ``python``, a ``multiprocessing`` pool that
  spawns) inherits the environment the recording set (:meth:`Side.enter`): the side file's path
  (:data:`SIDE_ENV`), the repository (:data:`ROOT_ENV`), and first on ``PYTHONPATH`` a folder whose
  ``sitecustomize`` (:data:`STARTUP`, run by Python's ``site`` at its start) joins the recording
  (``attnrepro.run.reads.join``).
- **Any program** (``cat FILE``, ``os.system``, ``os.exec*``, ``os.posix_spawn``, ``os.spawn*``):
  the files its command line names (:func:`named_files`, from the audit event of its start).

The job's process reads the side file when its recording stops (:meth:`Side.close`), and removes
its folder; a killed job cannot, and the next job's start removes it (:func:`remove_stale`). The
folder lies in the repository's ``.snakemake/`` (:data:`FOLDER`), not in the temporary folder: it
goes with the run's working folder (verify's rerun removes its own whole), and is no input.
"""

import os
import shlex
import shutil
import tempfile

SIDE_ENV = "ATTNREPRO_READS_SIDE"  # the side file: a child appends each file it read, one a line
ROOT_ENV = "ATTNREPRO_READS_ROOT"  # the repository the job records for
PYTHONPATH = "PYTHONPATH"
PREFIX = "attnrepro-reads-"  # a side folder's name: PREFIX, its job's pid, "-", random letters
FOLDER = os.path.join(".snakemake", "attnrepro-reads")  # where the side folders are, in the repository
STARTUP = '''"""Written by attnrepro.run.child_reads: a Python process started by a job records what it
reads into the job's record."""
try:
    from attnrepro.run import reads
except ImportError:  # the package is not importable here: nothing to record with
    pass
else:
    reads.join()
'''
COMMAND_EVENTS = {  # audit event of a program's start: (index of its command line, of its folder)
    "subprocess.Popen": (1, 2), "os.system": (0, None), "os.exec": (1, None),
    "os.posix_spawn": (1, None), "os.spawn": (2, None),
}


class Side:
    """The side file of one job's recording, in a folder of its own with the children's startup;
    the environment the job's children inherit is set by :meth:`enter`, restored by :meth:`close`."""

    def __init__(self, root):
        self.root = os.fspath(root)
        where = os.path.join(self.root, FOLDER)
        os.makedirs(where, exist_ok=True)
        remove_stale(where)
        self.folder = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=where)
        self.path = os.path.join(self.folder, "reads.txt")
        with open(self.path, "w"):
            pass
        with open(os.path.join(self.folder, "sitecustomize.py"), "w") as startup:
            startup.write(STARTUP)
        self.owner, self.saved = os.getpid(), None

    def enter(self):
        """Set the environment the job's children inherit (the module's docstring)."""
        self.saved = {name: os.environ.get(name) for name in (SIDE_ENV, ROOT_ENV, PYTHONPATH)}
        os.environ[SIDE_ENV], os.environ[ROOT_ENV] = self.path, self.root
        os.environ[PYTHONPATH] = os.pathsep.join(filter(None, [self.folder, self.saved[PYTHONPATH]]))

    def close(self):
        """The files the children read (repository-relative, in the order written), once; the
        environment restored and the folder removed. Nothing in another process (a forked child)."""
        if self.owner != os.getpid() or not os.path.isdir(self.folder):
            return []
        for name, value in (self.saved or {}).items():
            if value is None:
                os.environ.pop(name, None)  # pragma: no mutate (equivalent: enter set it)
            else:
                os.environ[name] = value
        with open(self.path) as side:
            names = [name for name in side.read().splitlines() if name]
        shutil.rmtree(self.folder, ignore_errors=True)  # pragma: no mutate (equivalent: it is ours)
        return names


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale(where):
    """Remove the side folders left in the folder ``where`` (:data:`FOLDER`) by jobs that were
    killed (a killed process removes nothing): those whose job's pid is no process now. The folders
    removed."""
    removed = []
    for entry in os.scandir(where):
        pid = entry.name.removeprefix(PREFIX).partition("-")[0]
        if entry.name.startswith(PREFIX) and pid.isdigit() and entry.is_dir() and not _alive(int(pid)):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
    return removed


def append(path, name):
    """Append the file ``name`` a child read to the side file ``path`` (gone: the job has ended)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    except OSError:
        return
    try:
        os.write(fd, (name + "\n").encode())
    finally:
        os.close(fd)


def _text(arg):
    try:
        return os.fsdecode(arg)
    except TypeError:
        return str(arg)


def _words(text):
    try:
        return shlex.split(text)
    except ValueError:  # an unclosed quote: words all the same
        return text.split()


def named_files(event, args):
    """The existing files that the command line of a program started (``event``, one of
    COMMAND_EVENTS, with its audit ``args``) names: a word, what follows "=" in one, each word of
    an argument that holds several (a shell's command), relative to the program's folder."""
    line_at, folder_at = COMMAND_EVENTS[event]
    line = args[line_at]
    line = [line] if isinstance(line, (str, bytes, os.PathLike)) else list(line or ())
    folder = _text(args[folder_at]) if folder_at is not None and args[folder_at] is not None else os.getcwd()
    words = []
    for text in map(_text, line):
        words += [text, *(_words(text) if len(text.split()) > 1 else [])]
    words += [word.partition("=")[2] for word in words if "=" in word]
    found = (os.path.join(folder, word) for word in dict.fromkeys(words) if word)
    return [path for path in found if os.path.isfile(path)]
