"""What a job read (attnrepro.run.reads), recorded by the job harness, and the check that fails a
Snakemake job on a read its rule does not declare."""

import functools
import json
import os
import sys

import pandas as pd
import pytest

from conftest import REPO, copy_repo, copy_run, small_config, snakemake

from attnrepro import paths
from attnrepro.dag import plan
from attnrepro.numerics import canonical, threads
from attnrepro.run import harness, io, ownership, reads

CONFIG = "config/config.yaml"  # a project file every test may read
SCHEMA = "workflow/schemas/config.schema.yaml"


@pytest.fixture
def quiet(monkeypatch):
    """The harness's start without its effects (no watchdog, no pin applied)."""
    monkeypatch.setattr(ownership, "start", lambda: None)
    monkeypatch.setattr(threads, "limit", lambda n: n)
    monkeypatch.setattr(canonical, "apply", lambda pin: {"pin": pin})
    monkeypatch.setattr(reads, "stderr_log", lambda: None)
    for name in (reads.RULE_ENV, reads.DECLARED_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(REPO)


def _job(work, outputs=()):
    return lambda state: harness.Job(work, outputs=outputs)


def _read(*names):
    def work():
        for name in names:
            (REPO / name).read_text()
    return work


def test_a_job_records_the_project_files_it_read_and_its_modules(quiet, monkeypatch, tmp_path):
    log = tmp_path / "results/logs/report/x.log"
    log.parent.mkdir(parents=True)
    monkeypatch.setattr(reads, "stderr_log", lambda: log)
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("not the project's")
    assert harness.run_job(_job(lambda: _read(SCHEMA, CONFIG)() or outside.read_text() and None)) == 0
    found = json.loads((tmp_path / "results/logs/report/x.reads.json").read_text())
    assert found["rule"] is None
    assert CONFIG in found["files"] and SCHEMA in found["files"]
    assert "src/attnrepro/run/harness.py" in found["files"]  # a module imported is a file read
    assert "attnrepro.run.reads" in found["modules"] and "attnrepro.paths" in found["modules"]
    assert not [f for f in found["files"] if not (REPO / f).is_file() or "elsewhere" in f]


@pytest.fixture
def logged(quiet, monkeypatch, tmp_path):
    """The job's stderr goes to a log under results/logs (as a rule's ``2> {log}`` sends it): the
    record lands beside it, in tmp_path."""
    log = tmp_path / "results/logs/report/x.log"
    log.parent.mkdir(parents=True)
    monkeypatch.setattr(reads, "stderr_log", lambda: log)
    return log


def _declare(monkeypatch, *names):
    """Declare the modules loaded now and ``names``, as a rule's job_env hands them down."""
    modules = reads.record(reads.Recording())["files"]
    monkeypatch.setenv(reads.DECLARED_ENV, reads.compact([*modules, *names]))


def test_a_rule_job_that_reads_an_undeclared_file_fails_naming_rule_file_and_fix(logged, monkeypatch, capsys):
    monkeypatch.setenv(reads.RULE_ENV, "table_scale")
    _declare(monkeypatch, SCHEMA)
    monkeypatch.setattr("sys.argv", ["entry"])
    assert harness.run_job(_job(_read(SCHEMA, CONFIG))) == 1
    line = capsys.readouterr().err.strip()
    assert "\n" not in line
    assert line == (f"attnrepro: rule table_scale read files not among its inputs: {CONFIG} (add it to its "
                    "rule's input:, or name it in the READS of the module that reads it)")


def test_a_file_on_the_command_line_is_no_input_one_handed_down_is(logged, monkeypatch, capsys):
    """A file a rule passes through params: (on the command line, not in input:) is read undeclared."""
    monkeypatch.setenv(reads.RULE_ENV, "ledger")
    _declare(monkeypatch, SCHEMA)
    for argv in (["--input", f"config={CONFIG}"], ["--inputs", CONFIG], [CONFIG]):
        monkeypatch.setattr("sys.argv", ["entry", *argv])
        assert harness.run_job(_job(_read(SCHEMA, CONFIG))) == 1
        assert capsys.readouterr().err == (
            f"attnrepro: rule ledger read files not among its inputs: {CONFIG} (add it to its rule's input:, "
            "or name it in the READS of the module that reads it)\n")
    _declare(monkeypatch, SCHEMA, CONFIG)
    assert harness.run_job(_job(_read(SCHEMA, CONFIG))) == 0, capsys.readouterr().err
    assert json.loads(logged.with_suffix(".reads.json").read_text())["rule"] == "ledger"


def test_an_undeclared_module_fails_with_the_import_fix(logged, monkeypatch, capsys):
    monkeypatch.setenv(reads.RULE_ENV, "ledger")
    monkeypatch.setenv(reads.DECLARED_ENV, "")
    monkeypatch.setattr("sys.argv", ["entry"])
    assert harness.run_job(_job(lambda: None)) == 1
    line = capsys.readouterr().err
    assert ("src/attnrepro/run/harness.py (import it with a plain import in the entry, so the rule's code "
            "inputs see it)") in line
    assert "input:" not in line


def test_a_snakemake_job_whose_stderr_is_no_log_fails_as_its_record_cannot_be_written(quiet, monkeypatch,
                                                                                      capsys):
    monkeypatch.setenv(reads.RULE_ENV, "ledger")
    _declare(monkeypatch)
    monkeypatch.setattr("sys.argv", ["entry"])
    assert harness.run_job(_job(lambda: None), prefix="attnrepro.report") == 1
    assert capsys.readouterr().err == ("attnrepro.report: cannot write the record of what the job read: its "
                                       "stderr is no .log under results/logs (its rule's shell ends with "
                                       "2> {log})\n")
    monkeypatch.delenv(reads.RULE_ENV)
    assert harness.run_job(_job(lambda: None)) == 0  # by hand: no record, and no matter


def test_by_hand_nothing_is_checked(quiet, monkeypatch):
    monkeypatch.setattr("sys.argv", ["entry"])
    assert harness.run_job(_job(_read(CONFIG))) == 0


def test_own_outputs_temporaries_and_records_are_not_inputs():
    out = "results/tables/x.md"
    assert not reads.is_input(out, {out})
    assert not reads.is_input("results/tables/.x.md.a1b2.tmp", {out})
    assert reads.is_input("results/tables/.y.md.a1b2.tmp", {out})  # another file's temporary
    assert reads.is_input("results/figures/.x.md.a1b2.tmp", {out})  # another folder
    assert not reads.is_input("results/logs/report/ledger.log")
    assert not reads.is_input("results/benchmarks/report/ledger.tsv")
    assert not reads.is_input(".snakemake/attnrepro/heartbeat.json")
    assert not reads.is_input("src/attnrepro/__pycache__/paths.cpython-311.pyc")
    assert reads.is_input("results/ledger.csv") and reads.is_input(CONFIG)


def test_outputs_outside_the_repository_are_no_concern_of_the_record(tmp_path):
    recording = reads.Recording(tmp_path / "repo")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo/a.txt").write_text("")
    recording.opened(tmp_path / "repo/a.txt", writing=False, reading=True)
    assert recording.files([tmp_path / "out.parquet", tmp_path / "repo/b.md"]) == ["a.txt"]
    assert recording.files([tmp_path / "repo/a.txt"]) == []


def test_a_temporary_at_the_top_and_the_interpreter_in_the_repository_are_no_inputs(monkeypatch):
    assert not reads.is_input(".x.md.a1b2.tmp", {"x.md"}) and reads.is_input(".y.md.a1b2.tmp", {"x.md"})
    venv = str(REPO / ".venv-here")
    for name in ("prefix", "base_prefix", "exec_prefix"):
        monkeypatch.setattr(f"sys.{name}", venv if name == "prefix" else "/usr")
    assert not reads.is_input(".venv-here/lib/python3.11/site-packages/numpy/__init__.py")
    assert reads.is_input(".venv-there/lib/x.py")


def test_the_record_names_rule_entry_files_and_modules(monkeypatch, tmp_path):
    monkeypatch.setenv(reads.RULE_ENV, "ledger")
    recording = reads.Recording()
    recording.opened(REPO / CONFIG, writing=False, reading=True)
    found = reads.record(recording, entry="attnrepro.jobs.ledger")
    assert found["rule"] == "ledger" and found["entry"] == "attnrepro.jobs.ledger"
    assert found["modules"]["attnrepro.run.reads"] == "src/attnrepro/run/reads.py"
    assert "conftest" not in found["modules"] and "numpy" not in found["modules"]  # ours only
    assert set(found["files"]) == {CONFIG, *found["modules"].values()}
    assert list(found) == ["rule", "entry", "files", "modules"]


def test_the_refusal_gives_each_file_its_own_fix_word_for_word():
    assert reads.refusal("index", ["src/attnrepro/x.py", CONFIG, "results/data/a.parquet"]) == (
        "rule index read files not among its inputs: src/attnrepro/x.py (import it with a plain import "
        "in the entry, so the rule's code inputs see it); config/config.yaml (add it to its rule's "
        "input:, or name it in the READS of the module that reads it); results/data/a.parquet (add it "
        "to its rule's input:)")


@pytest.mark.parametrize("name, fixed", [
    ("src/attnrepro/x.py", "import"), ("src/attnrepro/data/table.csv", "READS"), ("src.py", "READS"),
    ("tests/src/x.py", "READS"), ("results/x.py", "input:"), ("results/data/a.parquet", "input:"),
    (CONFIG, "READS"), ("results.csv", "READS"),
])
def test_a_module_under_src_is_imported_and_a_data_file_declared(name, fixed):
    found = reads.fix(name)
    assert found == {"import": "import it with a plain import in the entry, so the rule's code inputs see it",
                     "input:": "add it to its rule's input:",
                     "READS": "add it to its rule's input:, or name it in the READS of the module that "
                              "reads it"}[fixed]


def test_stopping_nothing_or_another_recording_changes_nothing(tmp_path):
    reads.stop(None)  # no job in progress
    assert reads._active == []
    active = reads.start(tmp_path)
    try:
        reads.stop(reads.Recording(tmp_path))
        assert reads._active == [active]
    finally:
        reads.stop(active)
    assert reads._active == []


def test_the_log_of_stderr_in_this_process(tmp_path):
    log = tmp_path / "results/logs/report/table_x.log"
    log.parent.mkdir(parents=True)
    saved = os.dup(2)
    try:
        with open(log, "w") as stderr:
            os.dup2(stderr.fileno(), 2)
        found, elsewhere = reads.stderr_log(tmp_path), reads.stderr_log(tmp_path / "results")
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    assert found == log.resolve() and elsewhere is None


def test_the_record_names_the_entry_the_job_ran_as(quiet, monkeypatch, tmp_path):
    import types

    log = tmp_path / "results/logs/report/x.log"
    log.parent.mkdir(parents=True)
    monkeypatch.setattr(reads, "stderr_log", lambda: log)
    monkeypatch.setitem(sys.modules, "__main__",
                        types.SimpleNamespace(__spec__=types.SimpleNamespace(name="attnrepro.jobs.table")))
    assert harness.run_job(_job(lambda: None)) == 0
    assert json.loads((tmp_path / "results/logs/report/x.reads.json").read_text())["entry"] == (
        "attnrepro.jobs.table")
    monkeypatch.setitem(sys.modules, "__main__", types.SimpleNamespace())
    assert harness.run_job(_job(lambda: None)) == 0
    assert json.loads((tmp_path / "results/logs/report/x.reads.json").read_text())["entry"] is None


def test_a_file_written_before_it_is_read_is_the_jobs_own(tmp_path):
    recording = reads.Recording(tmp_path)
    recording.opened(tmp_path / "a", writing=True, reading=False)
    recording.opened(tmp_path / "a", writing=False, reading=True)
    recording.opened(tmp_path / "b", writing=False, reading=True)
    recording.opened(tmp_path / "b", writing=True, reading=False)  # read first: an input all the same
    recording.opened("/elsewhere/c", writing=False, reading=True)
    assert list(recording.read) == ["b"]


@pytest.mark.parametrize("flags, writing", [
    (os.O_RDONLY, False), (os.O_RDONLY | os.O_CLOEXEC, False), (os.O_WRONLY, True), (os.O_RDWR, True),
    (os.O_RDWR | os.O_CREAT | os.O_EXCL, True), (os.O_RDONLY | os.O_APPEND, True),
    (os.O_RDONLY | os.O_TRUNC, True), (os.O_RDONLY | os.O_CREAT, True), (None, False),
])
def test_an_open_for_writing_is_told_from_a_read_by_its_flags(flags, writing):
    assert reads._writing(flags) is writing


@pytest.mark.parametrize("mode, read", [("r", True), ("rb", True), ("r+", True), ("r+b", True), ("a+", True),
                                        ("w", False), ("a", False), ("ab", False), ("w+", False)])
def test_an_open_that_can_read_an_existing_file_is_a_read(tmp_path, mode, read):
    (tmp_path / "f").write_text("before")
    recording = reads.start(tmp_path)
    try:
        open(tmp_path / "f", mode).close()  # the open is the event: what follows it is no matter
    finally:
        reads.stop(recording)
    assert list(recording.read) == (["f"] if read else [])
    assert recording.written == (set() if mode in ("r", "rb") else {"f"})


@pytest.mark.parametrize("flags, read", [
    (os.O_RDONLY, True), (os.O_RDWR, True), (os.O_RDWR | os.O_APPEND | os.O_CREAT, True), (None, True),
    (os.O_WRONLY, False), (os.O_WRONLY | os.O_APPEND | os.O_CREAT, False), (os.O_RDWR | os.O_TRUNC, False),
])
def test_an_open_reads_when_its_mode_can_read_and_the_file_was_there(tmp_path, flags, read):
    (tmp_path / "there").write_text("")
    assert reads._reading(flags, tmp_path / "there") is read
    assert reads._reading(flags, tmp_path / "made") is (read and not (flags or 0) & os.O_CREAT)


def test_the_hook_tells_writes_from_reads_for_open_and_os_open(tmp_path):
    recording = reads.start(tmp_path)
    try:
        fd = os.open(tmp_path / "written", os.O_WRONLY | os.O_CREAT)
        os.close(fd)
        (tmp_path / "written").read_text()
        (tmp_path / "appended").write_text("")  # written first: the job's own
        with open(tmp_path / "appended", "r+") as updated:
            updated.read()
        (tmp_path / "outside-made").write_text("x")
    finally:
        reads.stop(recording)
    reads.stop(recording)  # twice: nothing more
    other = reads.start(tmp_path)
    try:
        (tmp_path / "outside-made").read_text()
        fd = os.open(tmp_path / "outside-made", os.O_RDONLY)
        os.close(fd)
    finally:
        reads.stop(other)
    assert list(recording.read) == [] and recording.written == {"written", "appended", "outside-made"}
    assert list(other.read) == ["outside-made"]


def test_a_parquet_file_read_through_io_is_recorded(tmp_path):
    data = tmp_path / "results/data/001/scale_table/d_k-8.parquet"
    io.write_parquet(pd.DataFrame({"a": [1.0]}), data, {"params": {}})
    recording = reads.start(tmp_path)
    try:
        io.read_parquet(data)
    finally:
        reads.stop(recording)
    assert list(recording.read) == ["results/data/001/scale_table/d_k-8.parquet"]


def test_a_nested_job_records_into_its_outer_job(tmp_path):
    outer = reads.start(tmp_path)
    try:
        assert reads.start(tmp_path) is None
        reads.stop(None)
        (tmp_path / "f").write_text("")
        (tmp_path / "g").write_text("x")
        os.remove(tmp_path / "f")
        (tmp_path / "g").read_text()
    finally:
        reads.stop(outer)
    assert reads._active == []
    assert list(outer.read) == []  # g was written first: the job's own


def test_declared_is_the_environment_alone_never_the_command_line(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.setattr("sys.argv", ["entry", CONFIG, "--input", "x=results/a.parquet"])
    monkeypatch.delenv(reads.DECLARED_ENV, raising=False)
    assert reads.declared() == set() and reads.declared({}) == set()
    names = [SCHEMA, str(REPO / CONFIG), "results/data/a.parquet", "/tmp/y", "../shared/seeds/000.txt"]
    assert reads.declared({reads.DECLARED_ENV: reads.compact(names)}) == {
        SCHEMA, CONFIG, "results/data/a.parquet"}
    monkeypatch.setenv(reads.DECLARED_ENV, reads.compact([CONFIG]))
    assert reads.declared() == {CONFIG}


def test_the_declared_files_are_handed_down_compact_and_read_back_whole():
    names = ["src/b.py", "src/a.py", "results/data/001/train/copy-L4-seed1.parquet",
             "results/data/001/train/copy-L4-seed10.parquet", "src/a.py", "results/a b.csv", "/abs/x"]
    text = reads.compact(names)
    assert text == ("0 /abs/x:0 results/a b.csv:8 data/001/train/copy-L4-seed1.parquet:"
                    "36 0.parquet:0 src/a.py:4 b.py")
    assert reads.expand(text) == sorted(set(names))
    assert reads.compact([]) == "" and reads.expand("") == []
    assert reads.compact(["XXXX/b", "XXXX/a"]) == "0 XXXX/a:5 b"  # the first shares nothing
    with pytest.raises(ValueError, match=r"^results/a:b.csv: an input whose name holds ':' cannot be "):
        reads.compact(["results/a:b.csv"])



@pytest.mark.parametrize("text, at", [
    ("src/a.py", "src/a.py"),  # the plain form: no length before the name
    ("0 src/a.py:x b.py", "x b.py"),  # a length that is no number
    ("0 src/a.py:9 b.py", "9 b.py"),  # longer than the name before it
    ("0 src/a.py:-1 b.py", "-1 b.py"),
    ("z" * 61, "z" * 60)])  # shown to its 60th character
def test_a_declared_list_not_as_compact_writes_it_is_refused_naming_the_variable(text, at):
    with pytest.raises(ValueError) as raised:
        reads.expand(text)
    assert str(raised.value) == (f"{reads.DECLARED_ENV} is not as its rule's job_env writes it, at {at!r}: "
                                 "the job's inputs are unknown")
    assert reads.expand("0 src/a.py:8 b.py") == ["src/a.py", "src/a.pyb.py"]  # as long as the name: kept


def test_a_rule_job_whose_declared_list_cannot_be_read_fails_in_one_line(quiet, monkeypatch, capsys,
                                                                          tmp_path):
    log = tmp_path / "results/logs/report/x.log"
    log.parent.mkdir(parents=True)
    monkeypatch.setattr(reads, "stderr_log", lambda: log)
    monkeypatch.setenv(reads.RULE_ENV, "table_x")
    monkeypatch.setenv(reads.DECLARED_ENV, CONFIG)
    assert harness.run_job(_job(_read(CONFIG))) == 1
    assert capsys.readouterr().err == (
        f"attnrepro: rule table_x: {reads.DECLARED_ENV} is not as its rule's job_env writes it, at "
        f"{CONFIG!r}: the job's inputs are unknown\n")

def test_the_record_lands_beside_the_log(tmp_path):
    log = tmp_path / "results/logs/001/train/copy.log"
    log.parent.mkdir(parents=True)
    target = reads.write({"files": ["b", "a"], "entry": None}, log)
    assert target == tmp_path / "results/logs/001/train/copy.reads.json"
    assert target.read_text() == '{\n "entry": null,\n "files": [\n  "b",\n  "a"\n ]\n}\n'  # sorted keys
    assert paths.reads_of_log("results/logs/x.log") == "results/logs/x.reads.json"
    assert reads.write({"files": []}, None) is None


@pytest.mark.parametrize("where, found", [("results/logs/report/ledger.log", True),
                                          ("results/logs/report/ledger.txt", False),
                                          ("results/tables/x.log", False), ("elsewhere.log", False)])
def test_the_log_is_where_stderr_goes_when_it_is_a_log_under_results_logs(tmp_path, where, found):
    import subprocess
    import sys

    root = tmp_path / "repo"
    target = (root if where != "elsewhere.log" else tmp_path) / where
    target.parent.mkdir(parents=True, exist_ok=True)
    code = f"from attnrepro.run import reads; print(reads.stderr_log({str(root)!r}))"
    with open(target, "w") as stderr:
        out = subprocess.run([sys.executable, "-c", code], stderr=stderr, capture_output=False,
                             stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    assert out == (str(target.resolve()) if found else "None")
    piped = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert piped.stdout.strip() == "None"


# ---- on the small run: every job recorded what it read, and read only what its rule declares ----
NO_ENTRY = {"results/logs/report/config_resolved.log"}  # its shell writes the config with printf


def _snakemake_records(root):
    """{log: (rule, inputs)} of every job Snakemake ran in ``root`` (.snakemake/metadata)."""
    jobs = {}
    for path in (root / ".snakemake/metadata").iterdir():
        record = json.loads(path.read_text())
        for log in record.get("log") or []:
            jobs[log] = (record["rule"], set(record.get("input") or []))
    return jobs


def test_every_job_of_the_small_run_recorded_its_reads_all_declared(small_run):
    """The small run passed with the check on (conftest.small_run); here, independently of the
    harness's own check, each job's record is compared with the inputs Snakemake recorded for it."""
    jobs = _snakemake_records(small_run)
    logs = sorted(str(p.relative_to(small_run)) for p in (small_run / paths.LOGS).rglob("*.log"))
    records = {log: small_run / paths.reads_of_log(log) for log in logs}
    assert {log for log, record in records.items() if not record.is_file()} == NO_ENTRY
    checked = {log: json.loads(record.read_text()) for log, record in records.items() if record.is_file()}
    assert len(checked) >= 90
    for log, found in checked.items():
        rule, inputs = jobs[log]
        assert found["rule"] == rule and found["entry"].startswith("attnrepro."), log
        assert found["modules"] and any(f.startswith("src/") for f in found["files"]), log
        assert set(found["files"]) <= inputs, (log, sorted(set(found["files"]) - inputs))
    ledger = checked[paths.report_log("ledger")]
    assert {"config/published.yaml", paths.LEDGER_CSV} & set(ledger["files"]) == {"config/published.yaml"}
    assert any(f.startswith("results/data/") for f in ledger["files"])


@pytest.mark.full
def test_a_job_that_reads_an_undeclared_file_fails_in_the_workflow(tmp_path):
    """One experiment module made to read config/config.yaml: its job fails, naming rule and file."""
    root = copy_repo(tmp_path / "repo")
    module = root / "src/attnrepro/experiments/scale_table.py"
    text = module.read_text()
    module.write_text(text.replace("\ndef run(", '\nimport pathlib\n\n\ndef run(', 1)
                      .replace("\ndef run(params):\n", '\ndef run(params):\n'
                               '    pathlib.Path("config/config.yaml").read_text()\n', 1))
    assert 'pathlib.Path("config/config.yaml")' in module.read_text()
    target = plan.experiment_outputs("scale_table", small_config())[0]
    proc = snakemake(root, target)
    assert proc.returncode != 0
    logs = list((root / paths.LOGS / "001/scale_table").glob("*.log"))
    assert logs
    line = logs[0].read_text().strip().splitlines()[-1]
    assert line == ("attnrepro: rule scale_table_case read files not among its inputs: config/config.yaml "
                    "(add it to its rule's input:, or name it in the READS of the module that reads it)")
    assert not list((root / "results/data/001/scale_table").glob("*.parquet"))  # removed by Snakemake


@pytest.mark.full
def test_a_file_a_rule_passes_through_params_fails_its_job(small_run, tmp_path):
    """machine_speed given results/speed.csv through params: (on its command line) and no longer in
    its input: reads it undeclared: the job fails, naming the file, and writes no figure."""
    root = copy_run(small_run, tmp_path / "run")
    rules = root / "workflow/rules/articles.smk"
    text = rules.read_text()
    edited = (text.replace("        speed=paths.SPEED_CSV,\n        code=job_code(\"machine_speed\"),",
                           "        code=job_code(\"machine_speed\"),", 1)
              .replace("        software=pinned(\"machine_speed\"),",
                       "        software=pinned(\"machine_speed\"),\n        speed=paths.SPEED_CSV,", 1)
              .replace("--speed {input.speed}\"\n        \" --svg {output} 2> {log}",
                       "--speed {params.speed}\"\n        \" --svg {output} 2> {log}", 1))
    assert edited.count("{params.speed}") == 1 and edited.count("speed=paths.SPEED_CSV") == text.count(
        "speed=paths.SPEED_CSV")
    rules.write_text(edited)
    proc = snakemake(root, "--force", "machine_speed")
    assert proc.returncode != 0, proc.stderr[-3000:]
    log = (root / paths.report_log("machine_speed")).read_text().strip().splitlines()
    assert log[-1] == ("attnrepro.report: rule machine_speed read files not among its inputs: "
                       "results/speed.csv (add it to its rule's input:)")
    assert not (root / paths.SPEED).exists()  # removed by Snakemake


JOB_SHELL = '"{params.job} '  # how the shell of a job opens, in a rule file


def _rule_blocks():
    """(rule file, the text of one rule or checkpoint) of every rule file."""
    import re

    for smk in sorted((REPO / "workflow/rules").glob("*.smk")):
        for block in re.split(r"\n(?=\s*(?:rule|checkpoint)\b)", smk.read_text())[1:]:
            yield smk.name, block


@functools.lru_cache(maxsize=None)
def _rules(configfile):
    """{rule: {"inputs", "shell", "log", "job"}} of the workflow under ``configfile``
    (tests/rule_inputs.py --shell: the workflow read as Snakemake reads it, each rule's job_env given
    no input)."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run([sys.executable, str(REPO / "tests/rule_inputs.py"), "--shell", configfile],
                          cwd=REPO, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.mark.parametrize("configfile", ["config/small.yaml", "config/evidence.yaml"])
def test_every_rule_gives_its_job_its_own_name(configfile):
    """No rule writes its name for its job: each calls ``job_env()`` with no argument and opens its
    shell with ``{params.job}``, which names the rule Snakemake defined it as (job_env finds it);
    here, each rule's params.job as Snakemake evaluates it. The small run checks the records' rules
    against Snakemake's (test_every_job_of_the_small_run_recorded_its_reads_all_declared)."""
    import re
    import shlex

    blocks = list(_rule_blocks())
    given = [(smk, call) for smk, block in blocks for call in re.findall(r"job=job_env\((.*)\)", block)]
    assert len(given) >= 15 and {call for _, call in given} == {""}
    assert [smk for smk, block in blocks if reads.RULE_ENV in block or reads.DECLARED_ENV in block] == []
    jobs = {name: rule["job"] for name, rule in _rules(configfile).items() if rule["job"] is not None}
    assert len(jobs) >= 15 and {"ledger", "archive", "train_case", "numerics_settings"} <= set(jobs)
    named = {name: shlex.split(job) for name, job in jobs.items()}
    assert {name: words for name, words in named.items()
            if words != [f"ATTNREPRO_RULE={name}", "ATTNREPRO_DECLARED="]} == {}


# ---- wherever results/ lives: a link out of the repository (a cluster's scratch) ----
def _linked_results(tmp_path):
    """A repository in tmp_path/repo whose results/ is a link to tmp_path/scratch."""
    root, scratch = tmp_path / "repo", tmp_path / "scratch"
    (scratch / "logs/report").mkdir(parents=True)
    (scratch / "data").mkdir()
    root.mkdir()
    (root / "results").symlink_to(scratch)
    return root


def test_a_file_under_a_linked_results_is_a_file_of_the_run(tmp_path):
    root = _linked_results(tmp_path)
    (tmp_path / "scratch/data/a.parquet").write_text("x")
    recording = reads.start(root)
    try:
        (root / "results/data/a.parquet").read_text()
        (root / "results/data/b.parquet").write_text("mine")
        (tmp_path / "scratch/data/b.parquet").read_text()  # by its real path: written first
        (tmp_path / "elsewhere").write_text("")
        (tmp_path / "elsewhere").read_text()
    finally:
        reads.stop(recording)
    assert list(recording.read) == ["results/data/a.parquet"]
    assert recording.written == {"results/data/b.parquet"}
    assert recording.relative(tmp_path / "scratch") == "results"
    assert recording.relative(root / "results/../results/data/c") == "results/data/c"
    assert recording.files([root / "results/data/a.parquet"]) == []


def test_a_log_under_a_linked_results_is_found_and_its_record_written_there(monkeypatch, tmp_path):
    root = _linked_results(tmp_path)
    log = root / "results/logs/report/table_x.log"
    monkeypatch.setattr(paths, "REPO", root)
    saved = os.dup(2)
    try:
        with open(log, "w") as stderr:
            os.dup2(stderr.fileno(), 2)
        found, by_default = reads.stderr_log(root), reads.stderr_log()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    assert found == by_default == root.resolve() / "results/logs/report/table_x.log"
    reads.write({"files": []}, found)
    assert (tmp_path / "scratch/logs/report/table_x.reads.json").read_text() == '{\n "files": []\n}\n'


def test_a_rule_job_reading_another_jobs_output_under_a_linked_results_fails(quiet, monkeypatch, capsys,
                                                                            tmp_path):
    root = _linked_results(tmp_path)
    monkeypatch.setattr(paths, "REPO", root)
    monkeypatch.setenv(reads.RULE_ENV, "table_scale")
    monkeypatch.setattr("sys.argv", ["entry"])
    (tmp_path / "scratch/data/other.parquet").write_text("another job's")
    record = tmp_path / "scratch/logs/report/table_scale.reads.json"
    record.write_text('{"files": []}\n')  # an earlier run's
    monkeypatch.setattr(reads, "stderr_log", lambda: root / "results/logs/report/table_scale.log")
    assert harness.run_job(_job(_read(root / "results/data/other.parquet"))) == 1
    assert capsys.readouterr().err == ("attnrepro: rule table_scale read files not among its inputs: "
                                       "results/data/other.parquet (add it to its rule's input:)\n")
    assert json.loads(record.read_text())["files"] == ["results/data/other.parquet"]


def test_a_job_that_cannot_write_its_record_fails_and_leaves_no_earlier_one(quiet, monkeypatch, capsys,
                                                                           tmp_path):
    log = tmp_path / "results/logs/report/x.log"
    log.parent.mkdir(parents=True)
    record = tmp_path / "results/logs/report/x.reads.json"
    record.write_text('{"files": []}\n')  # an earlier run's

    class Full(type(tmp_path)):
        def write_text(self, *args, **kwargs):
            raise OSError(28, "No space left on device", str(self))

    monkeypatch.setattr(reads, "stderr_log", lambda: log)
    monkeypatch.setattr(reads, "Path", Full)
    monkeypatch.setattr("sys.argv", ["entry"])
    assert harness.run_job(_job(lambda: None), prefix="attnrepro.report") == 1
    assert capsys.readouterr().err == ("attnrepro.report: cannot write the record of what the job read: "
                                       f"[Errno 28] No space left on device: '{record}'\n")
    assert not record.exists()


def test_the_interpreter_linked_into_the_repository_is_no_input(monkeypatch, tmp_path):
    root, venv = tmp_path / "repo", tmp_path / "venv"
    (venv / "lib").mkdir(parents=True)
    root.mkdir()
    (root / ".venv").symlink_to(venv)
    monkeypatch.setattr(paths, "REPO", root)
    for name in ("prefix", "base_prefix", "exec_prefix"):
        monkeypatch.setattr(f"sys.{name}", str(venv) if name == "prefix" else "/usr")
    assert reads.Recording().relative(root / ".venv/lib/x.py") == ".venv/lib/x.py"  # by its absolute path
    (tmp_path / "link").symlink_to(root)  # the repository reached through a link: the same
    assert reads.Recording(tmp_path / "link").relative(tmp_path / "link/.venv/lib/x.py") == ".venv/lib/x.py"
    assert not reads.is_input(".venv/lib/x.py") and reads.is_input(".venv-other/lib/x.py")


def test_the_jobs_outputs_are_not_its_inputs_though_it_did_not_write_them_in_python(quiet, monkeypatch,
                                                                                 tmp_path):
    """An output written where no audit event is raised (pyarrow's C++, a subprocess), then read:
    the job's own all the same, by the outputs it names."""
    root = tmp_path / "repo"
    (root / "results/logs/report").mkdir(parents=True)
    monkeypatch.setattr(paths, "REPO", root)
    monkeypatch.setattr(reads, "stderr_log", lambda: root / "results/logs/report/x.log")
    (root / "results/out.txt").write_text("written by the job's C++")
    (root / "results/other.txt").write_text("another job's")
    work = _read(root / "results/out.txt", root / "results/other.txt")
    assert harness.run_job(_job(work, outputs=[root / "results/out.txt"])) == 0
    found = json.loads((root / "results/logs/report/x.reads.json").read_text())
    assert found["files"] == ["results/other.txt"]


@pytest.mark.parametrize("configfile", ["config/small.yaml", "config/evidence.yaml"])
def test_every_job_sends_its_stderr_to_a_log_under_results_logs(configfile):
    """Every rule whose shell runs a job (opens with JOB_SHELL) ends it with ``2> {log}``, its log a
    ``.log`` under results/logs: the job's record is written beside it (a Snakemake job whose stderr is
    no log fails: its record would be nowhere, and an older one would stay in its place)."""
    rules = _rules(configfile)
    jobs = {name: rule for name, rule in rules.items() if rule["shell"].startswith(JOB_SHELL[1:])}
    assert {name for name, rule in rules.items() if rule["job"] is not None} == set(jobs)
    assert len(jobs) >= 15 and {"ledger", "archive", "train_case", "numerics_settings"} <= set(jobs)
    wrong = {name: (rule["shell"][-12:], rule["log"]) for name, rule in jobs.items()
             if not rule["shell"].endswith(" 2> {log}") or len(rule["log"]) != 1
             or not rule["log"][0].endswith(".log") or not paths.under(rule["log"][0], paths.LOGS)}
    assert wrong == {}
