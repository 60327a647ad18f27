"""Every kind of read a job can make is recorded (attnrepro.run.reads): pyarrow's and pandas'
Parquet readers (C++), sqlite3, child processes (forked, fresh Python, any program) and a read at
import time. For each: a rule's job that reads an undeclared project file that way fails with one
line naming it and its fix; declared, it passes; its record lists the file."""

import json
import multiprocessing
import os
import pathlib
import sqlite3
import subprocess
import sys
import textwrap

import pandas as pd
import pyarrow.parquet as pq
import pytest

from conftest import REPO, not_in_a_mutant

from attnrepro import paths
from attnrepro.numerics import canonical, threads
from attnrepro.run import child_reads, harness, native_reads, ownership, reads

RULE = "kinds"
LOG = "results/logs/report/kinds.log"


@pytest.fixture
def root(monkeypatch, tmp_path):
    """A repository in tmp_path/repo holding data/x.parquet, data/x.db and data/x.txt; the
    harness's start without its effects; the job's record written beside LOG."""
    root = tmp_path / "repo"
    (root / "data").mkdir(parents=True)
    (root / LOG).parent.mkdir(parents=True)
    pd.DataFrame({"a": [1.0, 2.0]}).to_parquet(root / "data/x.parquet")
    with sqlite3.connect(root / "data/x.db") as db:
        db.execute("create table t (a)")
    (root / "data/x.txt").write_text("read by the job")
    monkeypatch.setattr(paths, "REPO", root)
    monkeypatch.setattr(ownership, "start", lambda: None)
    monkeypatch.setattr(threads, "limit", lambda n: n)
    monkeypatch.setattr(canonical, "apply", lambda pin: {"pin": pin})
    monkeypatch.setattr(reads, "stderr_log", lambda: root / LOG)
    monkeypatch.setattr("sys.argv", ["entry"])
    monkeypatch.setenv(reads.RULE_ENV, RULE)
    monkeypatch.chdir(root)
    return root


def _refusal(name):
    return f"attnrepro: rule {RULE} read files not among its inputs: {name} ({reads.fix(name)})\n"


def _checked(root, monkeypatch, capsys, work, name):
    """Run ``work`` as a rule's job twice, ``name`` undeclared then declared: the first fails with
    one line naming it, the second passes; both records list it."""
    monkeypatch.setenv(reads.DECLARED_ENV, "")
    assert harness.run_job(lambda state: harness.Job(work)) == 1
    assert capsys.readouterr().err == _refusal(name)
    assert json.loads((root / "results/logs/report/kinds.reads.json").read_text())["files"] == [name]
    monkeypatch.setenv(reads.DECLARED_ENV, reads.compact([name]))
    assert harness.run_job(lambda state: harness.Job(work)) == 0, capsys.readouterr().err
    assert json.loads((root / "results/logs/report/kinds.reads.json").read_text())["files"] == [name]


def test_pyarrow_read_table(root, monkeypatch, capsys):
    _checked(root, monkeypatch, capsys, lambda: pq.read_table("data/x.parquet") and None, "data/x.parquet")


def test_pyarrow_parquet_file(root, monkeypatch, capsys):
    _checked(root, monkeypatch, capsys, lambda: pq.ParquetFile(root / "data/x.parquet").read() and None,
             "data/x.parquet")


def test_pandas_read_parquet(root, monkeypatch, capsys):
    _checked(root, monkeypatch, capsys, lambda: pd.read_parquet("data/x.parquet").empty, "data/x.parquet")


def test_a_parquet_folder_is_each_of_its_files(root, monkeypatch, capsys):
    (root / "data/x.txt").unlink()
    (root / "data/x.db").unlink()
    _checked(root, monkeypatch, capsys, lambda: pd.read_parquet(root / "data").empty, "data/x.parquet")


def test_sqlite3(root, monkeypatch, capsys):
    def work():
        with sqlite3.connect("data/x.db") as db:
            db.execute("select * from t").fetchall()
    _checked(root, monkeypatch, capsys, work, "data/x.db")


def test_a_python_child(root, monkeypatch, capsys):
    def work():
        subprocess.run([sys.executable, "-c", "open('data/x.txt').read()"], check=True)
    _checked(root, monkeypatch, capsys, work, "data/x.txt")


def test_a_module_a_python_child_imports_from_its_cache(root, monkeypatch, capsys):
    """An import opens the module's bytecode cache only (when current): its source is the read."""
    import importlib.util
    import py_compile

    (root / "helper.py").write_text("VALUE = 1\n")
    py_compile.compile(root / "helper.py", cfile=importlib.util.cache_from_source(str(root / "helper.py")))

    def work():
        subprocess.run([sys.executable, "-c", "import helper"], check=True)
    _checked(root, monkeypatch, capsys, work, "helper.py")
    assert reads._source("a/__pycache__/b.cpython-311.opt-1.pyc") == "a/b.py"
    assert reads._source("a/b.pyc") == "a/b.pyc"
    assert reads._source("a/__pycache__/b.pyc") == "a/__pycache__/b.pyc"  # no cache tag: no source


def test_a_program_named_the_file_on_its_command_line(root, monkeypatch, capsys):
    def work():
        subprocess.run(["cat", "data/x.txt"], check=True, stdout=subprocess.DEVNULL)
    _checked(root, monkeypatch, capsys, work, "data/x.txt")


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_pool_worker(root, monkeypatch, capsys, method):
    if method == "spawn":  # its worker runs mutmut's trampolines outside mutmut's process, and dies
        not_in_a_mutant("a spawned pool worker")
    def work():
        with multiprocessing.get_context(method).Pool(1) as pool:
            assert pool.map(pathlib.Path.read_text, [root / "data/x.txt"]) == ["read by the job"]
    _checked(root, monkeypatch, capsys, work, "data/x.txt")


def test_the_children_environment_is_the_jobs_own_and_restored(root, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/before")
    recording = reads.start()
    try:
        folder = recording.side.folder
        assert os.environ["PYTHONPATH"] == f"{folder}{os.pathsep}/before"
        assert os.environ[child_reads.SIDE_ENV] == f"{folder}/reads.txt"
        assert os.environ[child_reads.ROOT_ENV] == str(root)
        assert (pathlib.Path(folder) / "sitecustomize.py").read_text() == child_reads.STARTUP
        assert pathlib.Path(folder).name.startswith(f"attnrepro-reads-{os.getpid()}-")  # remove_stale's
        assert pathlib.Path(folder).parent == root / ".snakemake/attnrepro-reads"  # goes with the run
        (root / "data/x.txt").read_text()
        assert (pathlib.Path(folder) / "reads.txt").read_text() == ""  # the job's own: in its recording
    finally:
        reads.stop(recording)
    assert recording.files() == ["data/x.txt"]  # the side folder's files, read above, are the run's records
    assert recording.side.close() == []  # once
    assert os.environ["PYTHONPATH"] == "/before" and child_reads.SIDE_ENV not in os.environ
    assert not os.path.exists(folder)


# ---- a read at import time, in an entry run as `python -m attnrepro.jobs.<command>` ----
ENTRY = '''\
import sys

from attnrepro.run import harness

DATA = open("data/x.txt").read()  # at import, before the harness starts


def main():
    return harness.run_job(lambda state: harness.Job(lambda: None), pin=None)


if __name__ == "__main__":
    sys.exit(main())
'''


def _entry(root, environ):
    """Run the entry attnrepro.jobs.reads_at_import of the copy ``root``, its stderr to its log."""
    env = {**os.environ, "PYTHONPATH": str(root / "src"), **environ}
    with open(root / LOG, "w") as log:
        done = subprocess.run([sys.executable, "-m", "attnrepro.jobs.reads_at_import"], cwd=root, env=env,
                              stderr=log)
    return done.returncode, (root / LOG).read_text().splitlines()[-1:]


def test_a_read_at_import_time(tmp_path):
    import shutil

    root = tmp_path / "repo"
    shutil.copytree(REPO / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "src/attnrepro/jobs/reads_at_import.py").write_text(textwrap.dedent(ENTRY))
    (root / "data").mkdir()
    (root / "data/x.txt").write_text("read at import")
    (root / LOG).parent.mkdir(parents=True)
    environ = {reads.DECLARED_ENV: ""}
    assert _entry(root, environ)[0] == 0  # by hand: recorded, not checked
    record = root / "results/logs/report/kinds.reads.json"
    found = json.loads(record.read_text())["files"]
    assert "data/x.txt" in found and "src/attnrepro/jobs/reads_at_import.py" in found
    modules = [f for f in found if f != "data/x.txt"]
    environ = {reads.RULE_ENV: RULE, reads.DECLARED_ENV: reads.compact(modules)}
    assert _entry(root, environ) == (1, [_refusal("data/x.txt").strip()])
    environ[reads.DECLARED_ENV] = reads.compact(found)
    assert _entry(root, environ)[0] == 0
    assert json.loads(record.read_text())["files"] == found


def test_the_recording_begins_only_for_an_entry_of_the_package():
    assert reads.begin("attnrepro.jobs", ["python", "-m", "pytest"]) is None
    assert reads.begin("attnrepro.jobs", ["python", "-c", "x", "-m"]) is None
    assert reads.begin("attnrepro.jobs", ["python", "-m", "attnrepro.jobsx"]) is None
    begun = reads.begin("attnrepro.jobs", ["python", "-m", "attnrepro.jobs.x"])  # the argv given
    reads.stop(begun)
    assert begun is not None and not begun.job


def test_native_readers_are_wrapped_once():
    native_reads.watch()
    wrapped = pq.read_table
    assert getattr(wrapped, native_reads.MARK) and native_reads.wrapped(wrapped) is wrapped
    assert native_reads.files_of(["a", 3, pathlib.Path("b")]) == ["a", "b"]


def test_a_sqlite_database_is_its_file_and_none_in_memory():
    assert reads._sqlite(":memory:") is None and reads._sqlite("") is None
    assert reads._sqlite("file::memory:?cache=shared") is None
    assert reads._sqlite("file:data/x.db?mode=ro") == "data/x.db"
    assert reads._sqlite("file:data/x.db?mode=ro&vfs=a?b") == "data/x.db"
    assert reads._sqlite(b"data/x.db") == "data/x.db"


def test_the_files_a_command_line_names(root):
    (root / "data/y y.txt").write_text("")
    data = str(root / "data")
    line = ["cat", "x.txt", "--db=x.db", "z"]
    named = child_reads.named_files("subprocess.Popen", ("cat", line, data, None))
    assert named == [f"{data}/x.txt", f"{data}/x.db"]
    (root / "data/3").write_text("")
    (root / "data/k=x.txt").write_text("")
    line = ["cat", "'x.txt'", 3, "--in=k=x.txt"]  # a quoted word is a name with quotes
    named = child_reads.named_files("subprocess.Popen", ("cat", line, data, None))
    assert named == [f"{data}/3", f"{data}/k=x.txt"]
    shell = ["/bin/sh", "-c", "wc -l data/x.txt 'data/y y.txt' > out"]
    assert child_reads.named_files("subprocess.Popen", ("/bin/sh", shell, None, None)) == [
        "/bin/sh", f"{root}/data/x.txt", f"{root}/data/y y.txt"]  # the shell: outside the run
    assert child_reads.named_files("os.system", (b"cat data/x.txt",)) == [f"{root}/data/x.txt"]
    assert child_reads.named_files("os.system", ("cat 'data/x.txt",)) == []  # an unclosed quote: no such word
    assert child_reads.named_files("os.posix_spawn", ("/bin/cat", ["cat", "data/x.db"], {})) == [
        f"{root}/data/x.db"]
    assert child_reads.named_files("os.spawn", (0, "/bin/cat", ["cat", "data/x.db"], {})) == [
        f"{root}/data/x.db"]
    assert child_reads.named_files("os.exec", ("/bin/cat", ("cat", root / "data/x.db", 3), {})) == [
        f"{root}/data/x.db"]


def test_the_side_folder_of_a_killed_job_is_removed_by_the_next(monkeypatch, tmp_path):
    dead, alive, others = 1000001, 1000002, 1000003

    def kill(pid, signal):
        assert signal == 0  # asks only whether it is a process
        if pid == dead:
            raise ProcessLookupError(pid)
        if pid == others:
            raise PermissionError(pid)

    monkeypatch.setattr(child_reads.os, "kill", kill)
    names = [f"attnrepro-reads-{pid}-abc" for pid in (dead, alive, others)]
    for name in (*names, "attnrepro-reads-x-abc", f"other-{dead}-abc"):
        (tmp_path / name).mkdir()
    (tmp_path / f"attnrepro-reads-{dead}-file").write_text("")
    assert child_reads.remove_stale(tmp_path) == [str(tmp_path / names[0])]
    assert {p.name for p in tmp_path.iterdir()} == {
        f"attnrepro-reads-{dead}-file", *names[1:], "attnrepro-reads-x-abc", f"other-{dead}-abc"}
    (tmp_path / f"attnrepro-reads-{dead}-a-b").mkdir()  # the pid is the word after the prefix
    assert child_reads.remove_stale(tmp_path) == [str(tmp_path / f"attnrepro-reads-{dead}-a-b")]


def test_a_stale_side_folder_another_job_removed_first_is_no_error(monkeypatch, tmp_path):
    stale = tmp_path / "attnrepro-reads-1000001-abc"
    stale.mkdir()

    def kill(pid, signal):  # the other job's start removes it while this one asks
        stale.rmdir()
        raise ProcessLookupError(pid)

    monkeypatch.setattr(child_reads.os, "kill", kill)
    assert child_reads.remove_stale(tmp_path) == [str(stale)]


def test_a_jobs_start_removes_the_side_folders_killed_jobs_left(root):
    where = root / child_reads.FOLDER
    stale = where / "attnrepro-reads-4194305-abc"  # beyond Linux's largest pid: no process
    stale.mkdir(parents=True)
    side = child_reads.Side(root)
    try:
        assert not stale.exists() and pathlib.Path(side.folder).parent == where
    finally:
        side.close()


def test_a_recording_begun_at_import_is_taken_over_by_the_job(root, monkeypatch):
    monkeypatch.setattr("sys.orig_argv", ["python", "-m", "attnrepro.jobs.table", "--x"])
    begun = reads.begin("attnrepro.jobs")
    try:
        assert begun is not None and not begun.job and reads._active == [begun]
        assert reads.begin("attnrepro.jobs", ["python", "-m", "attnrepro.jobs.table"]) is None  # once
        assert reads.start() is begun and begun.job
        assert reads.start() is None  # a nested job's
    finally:
        reads.stop(begun)
    assert reads._active == []
    assert reads.begin("attnrepro.jobs", ["python", "-X", "dev", "-m", "attnrepro.jobs.x"]) is not None
    reads.stop(reads._active[-1])


def test_a_fresh_child_joins_the_recording_through_its_environment(root, monkeypatch, tmp_path):
    side = tmp_path / "side.txt"
    side.write_text("")
    monkeypatch.setenv(child_reads.SIDE_ENV, str(side))
    monkeypatch.delenv(child_reads.ROOT_ENV, raising=False)
    assert reads.join() is None  # no repository named: nothing to join
    monkeypatch.setenv(child_reads.ROOT_ENV, str(root))
    monkeypatch.setattr(paths, "REPO", tmp_path / "elsewhere")  # the root is the environment's
    joined = reads.join()
    try:
        assert joined.owner is None and joined.relay == str(side) and reads.join() is None
        (root / "data/x.txt").read_text()
        (root / "data/x.txt").read_text()  # once
        native_reads.announce((), {"where": root / "data/x.db"})
    finally:
        reads._active.remove(joined)
    assert side.read_text() == "data/x.txt\ndata/x.db\n"
    child_reads.append(tmp_path / "gone.txt", "x")  # the job has ended: nothing
    assert not (tmp_path / "gone.txt").exists()


@pytest.mark.parametrize("keyword", native_reads.PATH_KEYWORDS)
def test_a_reader_given_its_path_by_keyword(tmp_path, keyword):
    recording = reads.start(tmp_path)
    try:
        native_reads.announce((), {"columns": "a", keyword: tmp_path / "x.parquet"})
        native_reads.announce((), {"columns": "a"})
    finally:
        reads.stop(recording)
    assert list(recording.read) == ["x.parquet"]


def test_a_reader_is_wrapped_once_a_python_class_in_place_an_extension_type_subclassed():
    import pyarrow as pa

    def read(path):
        return path

    once = native_reads.wrapped(read)
    assert getattr(once, native_reads.MARK) is True and native_reads.wrapped(once) is once
    assert once.__wrapped__ is read and once("p") == "p"

    class Reader:
        def __init__(self, path):
            self.path = path

    original = Reader.__init__
    assert native_reads.wrapped(Reader) is Reader and Reader.__init__.__wrapped__ is original
    assert getattr(Reader.__init__, native_reads.MARK) is True
    assert native_reads.wrapped(Reader) is Reader and Reader.__init__.__wrapped__ is original
    assert Reader("p").path == "p"
    native = native_reads.wrapped(pa.lib.OSFile)
    assert native is not pa.lib.OSFile and issubclass(native, pa.lib.OSFile)
    assert native_reads.wrapped(native) is native


def test_a_module_of_the_readers_imported_later_is_wrapped(monkeypatch, tmp_path):
    (tmp_path / "later_reader.py").write_text("def read(path):\n    return 'read'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(native_reads.READERS, "later_reader", ("read",))
    monkeypatch.delitem(sys.modules, "later_reader", raising=False)
    recording = reads.start(tmp_path)  # watches the imports (native_reads.watch)
    try:
        import later_reader  # wrapped as it is loaded

        assert later_reader.read(tmp_path / "x.parquet") == "read"
    finally:
        reads.stop(recording)
        sys.modules.pop("later_reader", None)
    assert list(recording.read) == ["later_reader.py", "x.parquet"]  # its import is a read too
    assert later_reader.__loader__.get_source("later_reader").startswith("def read")  # the loader's own
    assert sum(isinstance(f, native_reads._Finder) for f in sys.meta_path) == 1


def test_an_open_by_descriptor_and_a_database_in_memory_read_no_file(tmp_path):
    (tmp_path / "f").write_text("x")
    recording = reads.start(tmp_path)
    try:
        fd = os.open(tmp_path / "f", os.O_RDONLY)  # the file's read: its open
        with open(fd) as opened:  # by its descriptor: opened already
            assert opened.read() == "x"
        sqlite3.connect(":memory:").close()
    finally:
        reads.stop(recording)
    assert list(recording.read) == ["f"]
