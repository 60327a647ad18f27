"""The one job harness (attnrepro.run.harness.run_job) and the entries that run their jobs through it.

Each step of the harness is seen to happen: the start (run ownership, thread limits, the pin, before
NumPy), the leftovers of the outputs removed, the inputs checked, an ended run or a corrupt or stale
input turned into status 1 and one stderr line with the entry's prefix, a usage error into status 2
and one line; any other error propagates.
"""

import json
import logging
import re
import subprocess
import sys

import pandas as pd
import pytest

from conftest import REPO

from attnrepro.evidence import sweep
from attnrepro.jobs import experiment as experiment_job
from attnrepro.jobs import ledger as ledger_job
from attnrepro.jobs import listings_run, sweep_case, sweep_probe
from attnrepro.numerics import canonical, threads
from attnrepro.report import cli as report_cli
from attnrepro.run import harness, io, ownership, usage
from attnrepro import cli

PLANNED = {"steps": 400, "seed": 0, "task": "copy", "L": 6}


@pytest.fixture
def steps(monkeypatch):
    """The start's steps recorded instead of done (no watchdog, no environment changed)."""
    done = []
    monkeypatch.setattr(ownership, "start", lambda: done.append("ownership") or None)
    monkeypatch.setattr(threads, "limit", lambda n: done.append(("threads", n)) or n)
    monkeypatch.setattr(canonical, "apply", lambda pin: done.append(("pin", pin)) or {"pin": pin})
    monkeypatch.setattr(canonical, "apply_setting", lambda s: done.append(("setting", s)))
    return done


def _ended():
    return ownership.RunEnded(ownership.Run(pid=4242, started=1, boot="b", host="h"))


def _training(tmp_path, steps_written):
    path = tmp_path / "results/data/001/train/copy-L6-seed0.parquet"
    io.write_parquet(pd.DataFrame({"a": [1]}), path, {"params": {**PLANNED, "steps": steps_written}})
    return path


def test_the_harness_starts_guards_then_works_and_returns_the_status(steps, tmp_path):
    out = tmp_path / "out.parquet"
    left = [tmp_path / ".out.parquet.x1.tmp", tmp_path / ".out.parquet.x2.tmp"]
    other = tmp_path / ".other.parquet.x1.tmp"  # another file's temporary: kept
    for path in (*left, other):
        path.write_text("")
    training = _training(tmp_path, 400)
    seen = []

    def job(state):
        seen.append(("job", state))
        return harness.Job(lambda: seen.append("work") or 3, outputs=[out], inputs=[training],
                           expected={"train": {"copy-L6-seed0": PLANNED}})

    assert harness.run_job(job, pin="native", n_threads=2) == 3
    assert steps == ["ownership", ("threads", 2), ("pin", "native")]
    assert seen == [("job", {"pin": "native"}), "work"]
    assert not any(p.exists() for p in left) and other.exists()
    assert harness.run_job(lambda _: harness.Job(lambda: None)) == 0  # None is status 0


def test_leftovers_go_before_the_work(steps, tmp_path):
    out = tmp_path / "sub" / "t.md"
    out.parent.mkdir()
    leftover = out.parent / ".t.md.abc.tmp"
    leftover.write_text("")
    seen = []
    harness.run_job(lambda _: harness.Job(lambda: seen.append(leftover.exists()), outputs=[str(out)]))
    assert seen == [False]


def test_a_removed_leftover_is_logged_by_the_entry_s_logger(steps, tmp_path, caplog):
    """One line per leftover removed, on the logger named by the entry's prefix (by default the
    package's), naming the file; no line where there was none."""
    out = tmp_path / "t.md"
    leftover = tmp_path / ".t.md.abc.tmp"
    for prefix, logger in ((None, "attnrepro"), ("attnrepro.report", "attnrepro.report")):
        leftover.write_text("")
        caplog.clear()
        with caplog.at_level(logging.INFO):
            if prefix is None:
                harness.guard([out])
            else:
                harness.run_job(lambda _: harness.Job(lambda: None, outputs=[out]), prefix=prefix)
        removed = [(r.name, r.getMessage()) for r in caplog.records if "removed" in r.getMessage()]
        assert removed == [(logger, f"removed {leftover}, left by a killed earlier attempt of this job")]
    caplog.clear()
    with caplog.at_level(logging.INFO):
        harness.guard([out])
    assert not [r for r in caplog.records if "removed" in r.getMessage()]


def test_a_stale_input_stops_the_job_with_status_1_and_the_prefix(steps, tmp_path, capsys):
    training = _training(tmp_path, 2500)
    worked = []
    status = harness.run_job(
        lambda _: harness.Job(lambda: worked.append(1), inputs=[training],
                              expected={"train": {"copy-L6-seed0": PLANNED}}),
        prefix="attnrepro.report")
    err = capsys.readouterr().err
    assert status == 1 and worked == []
    assert err.startswith(f"attnrepro.report: {training}: written with steps = 2500, but this run's config "
                          "plans steps = 400"), err
    assert err.count("\n") == 1


def test_a_corrupt_input_read_by_the_work_stops_the_job_with_status_1(steps, tmp_path, capsys):
    bad = tmp_path / "results/data/001/train/copy-L6-seed0.parquet"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"not parquet")
    status = harness.run_job(lambda _: harness.Job(lambda: io.read_parquet(bad)))
    err = capsys.readouterr().err
    assert status == 1 and err.startswith(f"attnrepro: {bad}") and err.count("\n") == 1, err


@pytest.mark.parametrize("where", ["start", "work"])
def test_an_ended_run_stops_the_job_with_status_1_and_the_prefix(steps, monkeypatch, capsys, where):
    worked = []

    def work():
        worked.append(1)
        raise _ended()

    if where == "start":
        monkeypatch.setattr(ownership, "start", lambda: (_ for _ in ()).throw(_ended()))
    status = harness.run_job(lambda _: harness.Job(work), prefix="attnrepro.report")
    assert status == 1 and worked == ([] if where == "start" else [1])
    assert capsys.readouterr().err == ("attnrepro.report: the Snakemake run that started this job (pid 4242) "
                                       "has ended; this job's outputs are not written\n")


def test_any_other_error_propagates(steps):
    def work():
        raise ValueError("a bug")

    with pytest.raises(ValueError, match="a bug"):
        harness.run_job(lambda _: harness.Job(work))


@pytest.mark.parametrize("where", ["job", "work"])
def test_a_usage_error_ends_the_job_with_status_2_and_one_line(steps, tmp_path, capsys, where):
    """Raised where the entry resolves its job or in the work: status 2, its message on one line
    after the entry's prefix; nothing after it runs (the guards, the work)."""
    out = tmp_path / "t.md"
    leftover = tmp_path / ".t.md.abc.tmp"
    leftover.write_text("")
    worked = []

    def refuse():
        raise usage.UsageError("--published p.yaml does not follow the schema:\n"
                               "  claim a, key b: 'x'\n  claim c")

    def job(_):
        if where == "job":
            refuse()
        return harness.Job(lambda: worked.append(1) or refuse(), outputs=[out])

    assert harness.run_job(job, prefix="attnrepro.report") == 2
    assert capsys.readouterr().err == ("attnrepro.report: --published p.yaml does not follow the schema: "
                                       "claim a, key b: 'x'; claim c\n")
    assert worked == ([] if where == "job" else [1])
    assert leftover.exists() == (where == "job")  # the guards ran only when the job was resolved


def test_a_bad_numerics_setting_is_a_usage_error(monkeypatch, capsys):
    monkeypatch.setattr(ownership, "start", lambda: None)
    monkeypatch.setattr(canonical, "apply_setting", canonical.environment)  # its check; NumPy is loaded here
    assert harness.run_job(lambda _: harness.Job(lambda: None), setting="bogus") == 2
    err = capsys.readouterr().err
    assert err.startswith("attnrepro: --numerics: unknown OpenBLAS kernel 'bogus'") and err.count("\n") == 1


def test_the_numerics_of_the_start(steps, monkeypatch):
    assert harness.start("haswell-noavx512", setting="sandybridge-noavx512", n_threads=1) is None
    assert steps[-2:] == [("threads", 1), ("setting", "sandybridge-noavx512")]
    steps.clear()
    assert harness.start(None) is None and steps == ["ownership"]  # a listings job: no pin of its own
    assert "numpy" in sys.modules  # loaded by this test process: an in-process caller keeps its numerics
    steps.clear()
    assert harness.start("native", keep_loaded=True) is None and steps == ["ownership"]
    assert harness.start("native") == {"pin": "native"} and steps[-1] == ("pin", "native")

    def refused(setting):
        raise ValueError(f"unknown setting {setting}")

    monkeypatch.setattr(canonical, "apply_setting", refused)
    with pytest.raises(usage.UsageError, match="^--numerics: unknown setting bogus$"):
        harness.start(setting="bogus")


def test_the_harness_sets_up_the_logging(steps, monkeypatch):
    calls = []
    monkeypatch.setattr(logging, "basicConfig", lambda **kw: calls.append(kw))
    harness.run_job(lambda _: harness.Job(lambda: None))
    assert calls == [{"level": logging.INFO, "stream": sys.stderr, "format": harness.LOG_FORMAT}]


def test_the_pin_comes_before_numpy_and_the_guards_after_it(tmp_path):
    """In a fresh interpreter: NumPy is not loaded when the pin is applied, and is (run.io) when
    the guards run."""
    code = (
        "import sys\n"
        "from attnrepro.run import harness, ownership\n"
        "from attnrepro.numerics import canonical\n"
        "seen = []\n"
        "canonical.apply = lambda pin: seen.append(('pin', 'numpy' in sys.modules)) or {}\n"
        "ownership.start = lambda: None\n"
        "work = lambda: seen.append(('work', 'numpy' in sys.modules))\n"
        "status = harness.run_job(lambda s: harness.Job(work))\n"
        "assert status == 0, status\n"
        "print(seen)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[('pin', False), ('work', True)]"


# --- every job entry runs its job through the harness, with its prefix ------------------------------

@pytest.fixture
def handed(monkeypatch):
    """harness.run_job replaced: records what each entry hands it, and the Job it resolves to."""
    calls = []

    def run_job(job, **options):
        calls.append({**options, "job": job(None)})
        return 7

    monkeypatch.setattr(harness, "run_job", run_job)
    return calls


def test_the_experiment_job_runs_through_the_harness(handed, tmp_path):
    out, extra = tmp_path / "m.parquet", tmp_path / "x.parquet"
    expected = {"train": {"copy-L6-seed0": PLANNED}}
    assert experiment_job.main(["attention_map", "--article", "001", "--section", "s", "--params-json", "{}",
                                "--out", str(out), "--table", f"extra={extra}", "--input", "main=in.parquet",
                                "--expected-params", json.dumps(expected), "--threads", "3"]) == 7
    (call,) = handed
    assert (call["pin"], call["setting"], call["n_threads"]) == (canonical.SETTING, None, 3)
    assert call.get("prefix", harness.PREFIX) == "attnrepro"
    assert sorted(map(str, call["job"].outputs)) == sorted([str(out), str(extra)])
    assert list(call["job"].inputs) == ["in.parquet"] and call["job"].expected == expected


def test_the_people_run_command_runs_through_the_harness(handed, tmp_path):
    out = tmp_path / "m.parquet"
    assert cli.main(["run", "scale_table", "--params-json", '{"d_k": [4], "scaled": [true]}',
                     "--out", str(out)]) == 7
    (call,) = handed
    assert call["pin"] == canonical.SETTING and call.get("prefix", harness.PREFIX) == "attnrepro"
    assert str(out) in map(str, call["job"].outputs)


def test_the_report_entries_run_through_the_harness_with_their_prefix(handed, tmp_path):
    md, csv, speed = tmp_path / "l.md", tmp_path / "l.csv", tmp_path / "speed.csv"
    ledger = ["--published", "p.yaml", "--csv", str(csv), "--md", str(md), "--speed", str(speed)]
    assert ledger_job.main(["--expected-params", "{}", *ledger]) == 7
    assert report_cli.main(["--expected-params", "{}", "ledger", *ledger]) == 7
    overview = ["--expected-params", "{}", "ledger-overview", "--ledger", "l.csv", "--published", "p.yaml",
                "--svg", str(tmp_path / "o.svg")]
    assert report_cli.main(overview) == 7
    machine = ["machine-speed", "--speed", str(speed), "--svg", str(tmp_path / "m.svg")]
    assert report_cli.main(machine) == 7  # its --speed is an input: not an output
    assert report_cli.main(["golden", "--out", str(tmp_path / "golden")]) == 7  # committed files: unguarded
    assert all(c["prefix"] == "attnrepro.report" and c["keep_loaded"] for c in handed)
    outputs = [sorted(map(str, c["job"].outputs)) for c in handed]
    assert outputs == [sorted([str(md), str(csv), str(speed)])] * 2 + [[str(tmp_path / "o.svg")],
                                                                       [str(tmp_path / "m.svg")], []]


def test_the_listings_job_runs_through_the_harness_without_a_pin_of_its_own(handed, tmp_path):
    text = tmp_path / "article.txt"
    text.write_text("")
    out = tmp_path / "001.json"
    assert listings_run.main(["--article", "001", "--text", str(text), "--out", str(out)]) == 7
    (call,) = handed
    assert call["pin"] is None and call.get("prefix", harness.PREFIX) == "attnrepro"
    assert list(call["job"].outputs) == [str(out)]


def test_a_sweep_job_runs_through_the_harness_with_its_setting_recorded(handed, tmp_path, monkeypatch):
    out = tmp_path / "m.parquet"
    assert sweep_case.main(["attention_map", "--article", "001", "--section", "s", "--params-json", "{}",
                            "--numerics", "haswell-noavx512", "--out", str(out)]) == 7
    (call,) = handed
    assert (call["pin"], call["setting"]) == (None, "haswell-noavx512")
    recorded = []
    monkeypatch.setattr("attnrepro.experiments.case_run.execute", lambda *a: recorded.append(a[-3:]))
    call["job"].work()
    assert recorded[0][0] == "haswell-noavx512" and recorded[0][1].__name__ == "recorded"
    assert recorded[0][2] is None  # no article's listing: not a timing job's


def test_the_sweep_probe_runs_through_the_harness_without_a_pin(handed, tmp_path, monkeypatch):
    out = tmp_path / "settings.json"
    assert sweep_probe.main(["--kernels", "Haswell", "--environments", "{}", "--out", str(out)]) == 7
    (call,) = handed
    assert call["pin"] is None and call.get("prefix", harness.PREFIX) == "attnrepro"
    assert list(call["job"].outputs) == [str(out)]
    probed = []
    monkeypatch.setattr(sweep, "write_probe", lambda *a: probed.append(a) or 0)
    assert call["job"].work() == 0
    assert probed == [(str(out), ["Haswell"], [canonical.DEFAULT], {})]


def test_the_sweep_probe_refuses_an_unknown_kernel_with_status_2(tmp_path, capsys):
    out = tmp_path / "settings.json"
    assert sweep_probe.main(["--kernels", "Nonesuch", "--out", str(out)]) == 2
    assert "unknown kernel or mask: Nonesuch" in capsys.readouterr().err and not out.exists()


def test_a_sweep_setting_replaces_the_pin(steps):
    seen = []
    assert harness.run_job(lambda state: harness.Job(lambda: seen.append(state)),
                           setting="sandybridge-noavx512", n_threads=1) == 0
    assert seen == [None]  # a sweep job has no pin's state
    assert steps == ["ownership", ("threads", 1), ("setting", "sandybridge-noavx512")]


def test_fewer_threads_than_asked_are_logged_on_the_entry_s_logger(steps, monkeypatch, caplog):
    """One line when the job gets fewer threads than asked, on the entry's logger; none otherwise."""
    monkeypatch.setattr(threads, "limit", lambda n: 1)
    monkeypatch.setattr(threads, "available", lambda: 1)
    for asked, lines in ((4, [("attnrepro.report", "threads: 4 asked, 1 CPU(s) available to this job: "
                                                    "its BLAS and OpenMP pools run 1")]), (1, [])):
        caplog.clear()
        with caplog.at_level(logging.INFO):
            harness.run_job(lambda _: harness.Job(lambda: None), prefix="attnrepro.report", n_threads=asked)
        assert [(r.name, r.getMessage()) for r in caplog.records if "threads" in r.getMessage()] == lines
    caplog.clear()
    with caplog.at_level(logging.INFO):
        harness.start(n_threads=4)
    assert [r.name for r in caplog.records if "threads" in r.getMessage()] == ["attnrepro"]


# --- usage errors: what the entries say, before the harness and through it ------------------------

def test_one_line_joins_the_lines_of_a_message():
    assert usage.one_line("a.yaml does not follow it:\n  claim x, key y: bad\n\n  claim z") == (
        "a.yaml does not follow it: claim x, key y: bad; claim z")
    assert usage.one_line(ValueError("one")) == "one"


@pytest.mark.parametrize("text, said", [
    ("{x", "--expected-params: not valid JSON: Expecting property name"),
    ("[1]", "--expected-params: a JSON object {...}, not '[1]'"),
])
def test_json_options_are_objects(text, said):
    assert usage.json_object(None, "--expected-params") == {}
    assert usage.json_object('{"a": 1}', "--expected-params") == {"a": 1}
    with pytest.raises(usage.UsageError, match=re.escape(said)):
        usage.json_object(text, "--expected-params")


def test_a_command_line_error_is_one_line_with_status_2(capsys):
    parser = usage.Parser(prog="attnrepro.x")
    parser.add_argument("--n", type=int)
    with pytest.raises(SystemExit) as stop:
        parser.parse_args(["--n", "x"])
    assert stop.value.code == 2
    assert capsys.readouterr().err == ("attnrepro.x: argument --n: invalid int value: 'x' "
                                       "(see attnrepro.x --help)\n")


@pytest.mark.parametrize("words, said", [
    (["--params-json", "{x"], "attnrepro: --params-json: not valid JSON"),
    (["--params-json", "{}", "--expected-params", "[]"], "attnrepro: --expected-params: a JSON object"),
    (["--params-json", "{}", "--table", "weights"], "attnrepro: --table takes NAME=FILE, got 'weights'"),
    (["--params-json", "{}", "--input", "=x.parquet"],
     "attnrepro: --input takes NAME=FILE, got '=x.parquet'"),
])
def test_the_experiment_job_refuses_a_malformed_option_before_the_harness(handed, tmp_path, capsys, words,
                                                                          said):
    argv = ["attention_map", "--article", "001", "--section", "s", "--out", str(tmp_path / "m.parquet"),
            *words]
    assert experiment_job.main(argv) == 2 and handed == []
    err = capsys.readouterr().err
    assert err.startswith(said) and err.count("\n") == 1, err


def test_a_report_job_refuses_bad_json_through_the_harness(steps, tmp_path, capsys):
    ledger = ["--published", "p.yaml", "--csv", str(tmp_path / "l.csv"), "--md", str(tmp_path / "l.md")]
    assert ledger_job.main(["--expected-params", "{x", *ledger]) == 2
    err = capsys.readouterr().err
    assert err.startswith("attnrepro.report: --expected-params: not valid JSON") and err.count("\n") == 1, err
