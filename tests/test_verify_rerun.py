"""verify's rerun in-process (:mod:`attnrepro.archive.verify_rerun`): the archive's config read as
data and checked, then written as JSON; the rerun run under its guard, in a session of its own, and
ended with every descendant on a signal or an error (the guard itself: tests/test_rerun_guard.py).
The processes are real and small (tests/processes.py)."""

import datetime
import json
import math
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from attnrepro.archive import verify_rerun
from processes import DEADLINE, LIFETIME, PYTHON, Started, alive, pids_in
from attnrepro.archive.verify_rerun import ConfigRefused
from attnrepro.dag import config as cfg



@pytest.fixture
def started():
    pids = Started()
    yield pids
    pids.kill()


# ---- the config: only what JSON holds -------------------------------------------------------

def test_a_config_of_plain_data_is_returned_as_it_is():
    config = {"a": None, "b": "text", "c": True, "d": 3, "e": 0.5, "f": [1, [], {"g": [None, "x"]}], "h": {}}
    assert verify_rerun._plain(config) is config


@pytest.mark.parametrize("value, message", [
    ({1: "x"}, "(top level): the key 1 is not a string"),
    ({"a": {"b": {2.5: 1}}}, "a.b: the key 2.5 is not a string"),
    ({"a": [{("k",): 1}]}, "a[0]: the key ('k',) is not a string"),
    ({"a": {"b": datetime.date(2024, 1, 1)}}, "a.b: a date is not a config value"),
    ({"d": datetime.date(2024, 1, 1)}, "d: a date is not a config value"),
    ({"a": [1, {"b": [None, b"x"]}]}, "a[1].b[1]: a bytes is not a config value"),
    ({"a": ["x", [0, (1, 2)]]}, "a[1][1]: a tuple is not a config value"),
    ([0, {"a": {1}}], "[1].a: a set is not a config value"),
])
def test_what_json_cannot_hold_is_refused_by_its_key(value, message):
    with pytest.raises(ConfigRefused) as refused:
        verify_rerun._plain(value)
    assert str(refused.value) == message


# ---- the config: no program of its own ------------------------------------------------------

@pytest.mark.parametrize("config, programs", [
    ({}, {}),
    ({"numerics": None}, {}),
    ({"numerics": "text"}, {}),
    ({"numerics": [1]}, {}),
    ({"numerics": {}}, {}),
    ({"numerics": {"environments": None}}, {}),
    ({"numerics": {"environments": {"a": {"python": "p"}}}, "environments": {"b": 1}},
     {"a": {"python": "p"}}),
])
def test_the_programs_of_a_config_are_its_numerics_environments(config, programs):
    assert verify_rerun._programs(config) == programs


def test_each_program_the_archive_names_and_this_checkout_does_not_is_a_sentence():
    ours = {"numerics": {"environments": {"article": {"python": "p"}, "other": "o"}}}
    theirs = {"numerics": {"environments": {"zeta": "z", "other": "o", "article": {"python": "evil"}}}}
    assert verify_rerun.program_errors(theirs, ours) == [
        "numerics.environments.article: {'python': 'evil'} is not this checkout's 'article' environment "
        "({'python': 'p'}): an archive's config never chooses a program to run",
        "numerics.environments.zeta: 'z' is not this checkout's 'zeta' environment (None): an archive's "
        "config never chooses a program to run"]
    assert verify_rerun.program_errors(ours, ours) == []
    assert verify_rerun.program_errors({}, ours) == []


def test_each_article_the_archive_names_and_this_checkout_does_not_is_a_sentence():
    seed = {"id": "000", "text": "a.txt", "sha256": "0" * 64, "title": "A"}
    ours = {"articles": [seed]}
    post = {"id": "post", "text": "/home/x/post.md", "sha256": "1" * 64, "title": "P"}
    assert verify_rerun.article_errors({"articles": [seed, post]}, ours) == [
        f"articles[1]: {post!r} is not one of this checkout's articles: an archive's config never "
        "chooses code to run (an article's listings)"]
    assert verify_rerun.article_errors({"articles": [{**seed, "sha256": "2" * 64}]}, ours) != []
    assert verify_rerun.article_errors(ours, ours) == []
    assert verify_rerun.article_errors({}, ours) == []
    assert verify_rerun.article_errors({"articles": "x"}, ours) == []  # the schema's to refuse


# ---- the config: read, checked, one line of its problems -------------------------------------

TOP = "attnrepro-results-x"


def _archive(tmp_path, text, name="config.resolved.yaml"):
    top = tmp_path / TOP
    (top / name).parent.mkdir(parents=True, exist_ok=True)
    (top / name).write_text(text)
    return top


def _refused(top):
    with pytest.raises(ConfigRefused) as refused:
        verify_rerun.config_for_rerun(top)
    return str(refused.value)


def _article():
    """This checkout's 'article' environment, as a message shows it."""
    return repr(cfg.load(cfg.DEFAULT)["numerics"]["environments"]["article"])


NOT_A_PROGRAM = ("numerics.environments.article: {'python': 'x'} is not this checkout's 'article' "
                 "environment ({article}): an archive's config never chooses a program to run")


def test_a_valid_config_is_the_archives_own_not_merged(tmp_path):
    checked = verify_rerun.config_for_rerun(_archive(tmp_path, "skip: [train]\n"))
    assert checked == ({"skip": ["train"]}, {**cfg.load(cfg.DEFAULT), "skip": ["train"]}, [])


REPLACED = ("{}: the archive's {} replaced by this checkout's {} (a key of the verifying machine, never of "
            "an archive)")


def test_the_keys_of_the_machine_are_this_checkouts_a_warning_each_the_science_the_archives(tmp_path):
    text = ("memory: {limit_gib: 1000000}\nnumerics: {sweep: true, pin: native}\nlistings: {build: true, "
            "timeout_s: 86400}\nruntime_factor: 2.5\ntrain: {steps: 10}\nseed_distribution: {build: false}\n")
    checked = verify_rerun.config_for_rerun(_archive(tmp_path, text))
    assert checked.config == {"memory": {"limit_gib": None}, "numerics": {"sweep": False, "pin": "native"},
                              "listings": {"build": False, "timeout_s": 3600}, "runtime_factor": 1.0,
                              "train": {"steps": 10}, "seed_distribution": {"build": False}}
    assert checked.warnings == [REPLACED.format("memory.limit_gib", "1000000", "null"),
                                REPLACED.format("numerics.sweep", "true", "false"),
                                REPLACED.format("listings.build", "true", "false"),
                                REPLACED.format("listings.timeout_s", "86400", "3600"),
                                REPLACED.format("runtime_factor", "2.5", "1.0")]
    assert checked.merged == cfg.merge(cfg.load(cfg.DEFAULT), checked.config)  # what Snakemake sees


def test_a_key_of_the_machine_equal_to_this_checkouts_is_left_as_it_is_without_a_word():
    ours = {"memory": {"limit_gib": None}, "runtime_factor": 1.0, "numerics": {"sweep": False}}
    theirs = {"memory": {"limit_gib": None, "x": 1}, "runtime_factor": 1, "numerics": {"pin": "native"}}
    assert verify_rerun.this_machine(theirs, ours) == (theirs, [])
    assert verify_rerun.this_machine({}, ours) == ({}, [])


def test_a_value_equal_but_of_another_kind_is_replaced():
    config, warnings = verify_rerun.this_machine({"numerics": {"sweep": 0}}, {"numerics": {"sweep": False}})
    assert config == {"numerics": {"sweep": False}}
    assert warnings == [REPLACED.format("numerics.sweep", "0", "false")]
    config, _ = verify_rerun.this_machine({"numerics": {"sweep": False}}, {"numerics": {"sweep": 0}})
    assert config == {"numerics": {"sweep": 0}}


def test_a_key_of_the_machine_this_checkout_has_not_is_left_out_and_the_archives_config_unchanged():
    theirs = {"memory": {"limit_gib": 5}, "listings": {"build": True, "timeout_s": 9}, "runtime_factor": 3}
    kept = json.loads(json.dumps(theirs))
    config, warnings = verify_rerun.this_machine(theirs, {"listings": {"build": True}})
    assert config == {"memory": {}, "listings": {"build": True}}
    assert warnings == [REPLACED.format("memory.limit_gib", "5", "absent"),
                        REPLACED.format("listings.timeout_s", "9", "absent"),
                        REPLACED.format("runtime_factor", "3", "absent")]
    assert theirs == kept


def test_a_section_that_is_not_a_mapping_is_left_to_the_schema():
    assert verify_rerun.this_machine({"memory": 5, "listings": None}, cfg.load(cfg.DEFAULT)) == (
        {"memory": 5, "listings": None}, [])


def test_the_archives_memory_limit_never_lifts_this_machines(tmp_path, monkeypatch):
    from attnrepro.dag import preflight

    monkeypatch.setattr(preflight, "machine_bytes", lambda: 8 << 30)
    top = _archive(tmp_path, "memory: {limit_gib: 1000000}\nscore_memory: {n: [256, 100000]}\n")
    with pytest.raises(ConfigRefused) as refused:
        verify_rerun.config_for_rerun(top)
    assert str(refused.value) == (
        f"the archive's config {TOP}/config.resolved.yaml cannot be rerun: score_memory.n[1]: 100000 needs "
        "about 3.5e+11 bytes = 327 GiB (causal attention: 4 x (n, n) float64 and its mask) in one job; the "
        "limit is 6.4 GiB (80% of this machine's 8.0 GiB; memory.limit_gib sets another)")
    assert refused.value.warnings == [REPLACED.format("memory.limit_gib", "1000000", "null")]


def test_an_archive_without_a_config_has_nothing_to_rerun(tmp_path):
    (tmp_path / TOP / "config.resolved.yaml").mkdir(parents=True)  # a folder is no config
    assert _refused(tmp_path / TOP) == "the archive holds no config.resolved.yaml: nothing to rerun"


def test_a_config_that_is_not_plain_yaml_is_refused_with_the_loaders_line(tmp_path):
    top = _archive(tmp_path, "a: &x 1\nb: *x\n")
    assert _refused(top) == (
        f"the archive's config {TOP}/config.resolved.yaml: {top}/config.resolved.yaml, line 1: an anchor &x "
        "(and 1 more): attnrepro reads YAML as plain data: write each value out, without anchors, aliases "
        "or merge keys")


def _crate(top, config):
    """An RO-Crate in ``top`` whose run started from the file named ``config``."""
    crate = {"@graph": [
        {"@id": "./", "mainEntity": {"@id": "Snakefile"}},
        {"@id": "#run", "@type": "CreateAction", "instrument": {"@id": "Snakefile"},
         "object": [{"@id": config}]},
        {"@id": config, "@type": "File"}]}
    (top / "ro-crate-metadata.json").write_text(json.dumps(crate))


def test_the_config_the_crate_names_is_the_one_read(tmp_path):
    top = _archive(tmp_path, "skip: 1\n", "run/config.yaml")
    (top / "config.resolved.yaml").write_text("skip: [train]\n")  # not the run's, by the crate
    _crate(top, "run/config.yaml")
    assert _refused(top) == (f"the archive's config {TOP}/run/config.yaml cannot be rerun: "
                             "skip: 1 is not of type 'array'")


def test_a_config_path_not_under_the_archives_parent_is_shown_whole(tmp_path, monkeypatch):
    """``top`` relative, the crate's name of the config absolute (a file inside ``top``)."""
    monkeypatch.chdir(tmp_path)
    config = _archive(tmp_path, "skip: 1\n", "run/config.yaml") / "run/config.yaml"
    _crate(tmp_path / TOP, str(config))
    assert _refused(Path(TOP)) == (f"the archive's config {config} cannot be rerun: "
                                   "skip: 1 is not of type 'array'")


def test_a_value_json_cannot_hold_is_the_one_problem_named(tmp_path):
    top = _archive(tmp_path, "a: 2024-01-01\nnumerics: {environments: {article: {python: x}}}\nskip: 1\n")
    assert _refused(top) == (f"the archive's config {TOP}/config.resolved.yaml cannot be rerun: "
                             "a: a date is not a config value")


@pytest.mark.parametrize("text, listed", [
    ("skip: [1]\n", ["skip[0]: 1 is not of type 'string'"]),
    ("a: .nan\nb: .nan\n", ["a: .nan is not a finite number", "b: .nan is not a finite number",
                            "(top level): Additional properties are not allowed ('a', 'b' were unexpected)"]),
    ("a: .nan\nb: .nan\nc: .nan\n", ["a: .nan is not a finite number", "b: .nan is not a finite number",
                                     "c: .nan is not a finite number (and 1 more)"]),
    ("a: .nan\nb: .nan\nc: .nan\nnumerics: {environments: {article: {python: x}}}\n",
     [NOT_A_PROGRAM, "a: .nan is not a finite number", "b: .nan is not a finite number (and 2 more)"]),
    ("numerics: {environments: {article: {python: x}}}\n", [NOT_A_PROGRAM]),
])
def test_the_first_three_problems_are_named_and_the_others_counted(tmp_path, text, listed):
    expected = "; ".join(listed).replace("{article}", _article())
    assert _refused(_archive(tmp_path, text)) == (
        f"the archive's config {TOP}/config.resolved.yaml cannot be rerun: {expected}")


def test_an_archive_naming_an_article_this_checkout_does_not_is_refused(tmp_path):
    ours = cfg.load(cfg.DEFAULT)["articles"]
    post = {"id": "post", "text": "post.md", "sha256": "1" * 64, "title": "P"}
    text = yaml.safe_dump({"articles": [*ours, post]}, sort_keys=False)
    assert _refused(_archive(tmp_path, text)) == (
        f"the archive's config {TOP}/config.resolved.yaml cannot be rerun: articles[3]: {post!r} is not "
        "one of this checkout's articles: an archive's config never chooses code to run (an article's "
        "listings)")


# ---- the config, as Snakemake reads it -------------------------------------------------------

def test_the_config_is_written_as_json_with_sorted_keys(tmp_path):
    out = verify_rerun.write_config({"b": [1, {"d": None, "c": "é"}], "a": 1.5, "e": True}, tmp_path)
    assert out == tmp_path / "verify-config.json"
    assert out.read_text() == ('{\n "a": 1.5,\n "b": [\n  1,\n  {\n   "c": "\\u00e9",\n   "d": null\n'
                               '  }\n ],\n "e": true\n}\n')


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_a_number_json_cannot_hold_is_refused_writing_nothing(tmp_path, number):
    with pytest.raises(ValueError, match="not JSON compliant"):
        verify_rerun.write_config({"a": [number]}, tmp_path)
    assert list(tmp_path.iterdir()) == []


# ---- the folder ----------------------------------------------------------------------------

def test_a_rerun_starts_in_a_new_or_empty_folder(tmp_path):
    assert verify_rerun.check_workdir(tmp_path / "new") is None
    assert verify_rerun.check_workdir(str(tmp_path)) is None
    (tmp_path / ".hidden").write_text("")
    assert verify_rerun.check_workdir(str(tmp_path)) == (
        f"--workdir {tmp_path}: not empty; a rerun starts from nothing (an earlier run's results there "
        "would be compared instead of a rerun's): give a new or empty folder")
    file = tmp_path / ".hidden"
    assert verify_rerun.check_workdir(file) == f"--workdir {file}: not a folder"


# ---- signals -------------------------------------------------------------------------------

class Before(Exception):
    """Raised by the handlers a test installs before handling_signals."""


def _before(signum, frame):
    raise Before(signum)


@pytest.fixture
def handlers():
    """Handlers of SIGINT, SIGTERM and SIGHUP that raise Before; the previous ones restored after."""
    previous = {s: signal.signal(s, _before) for s in verify_rerun.SIGNALS}
    yield
    for s, handler in previous.items():
        signal.signal(s, handler)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_raises_interrupted_through_the_block_and_the_handlers_are_restored(handlers, signum):
    with pytest.raises(verify_rerun.Interrupted) as raised:
        with verify_rerun.handling_signals() as handling:
            assert isinstance(handling, verify_rerun.handling_signals)
            signal.raise_signal(signum)
    assert raised.value.signum == signum
    assert str(raised.value) == signal.Signals(signum).name
    assert not isinstance(raised.value, Exception)  # no `except Exception` swallows it
    assert [signal.getsignal(s) for s in verify_rerun.SIGNALS] == [_before] * 3
    with pytest.raises(Before):
        signal.raise_signal(signum)


def test_the_handlers_are_restored_after_a_block_without_a_signal(handlers):
    with verify_rerun.handling_signals():
        assert {signal.getsignal(s) for s in verify_rerun.SIGNALS} == {verify_rerun._raise}
    assert {signal.getsignal(s) for s in verify_rerun.SIGNALS} == {_before}


# ---- run: the rerun under its guard, its log, its end ------------------------------------------

PROBE = """
import ctypes, json, os, sys
value = ctypes.c_int()
ctypes.CDLL(None).prctl(2, ctypes.byref(value))
guard = os.getppid()
print(json.dumps([os.getsid(0) == os.getpid(), os.getsid(guard) == guard, value.value, os.getcwd(),
                  os.environ.get("PATH"), os.environ.get("PYTHONPATH"), os.environ.get("VIRTUAL_ENV"),
                  open(f"/proc/{guard}/cmdline").read().split("\\0")[1:4]]), flush=True)
print("to stderr", file=sys.stderr, flush=True)
sys.exit(3)
"""


def test_run_runs_the_rerun_under_its_guard_each_in_a_session_of_its_own_its_output_logged(tmp_path,
                                                                                          monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "elsewhere")
    monkeypatch.setenv("VIRTUAL_ENV", "another venv")
    (tmp_path / "verify-snakemake.log").write_text("an earlier log\n")
    assert verify_rerun.run([*PYTHON, PROBE], tmp_path) == 3
    first, second = (tmp_path / "verify-snakemake.log").read_text().splitlines()
    assert json.loads(first) == [True, True, signal.SIGKILL, str(tmp_path), os.environ["PATH"], None, None,
                                 ["-m", "attnrepro.archive.rerun_guard", str(tmp_path)]]
    assert second == "to stderr"


def test_the_guards_command_names_the_folder_to_remove_before_the_reruns():
    assert verify_rerun.guard_command(["snakemake", "--cores", "1"], Path("w"), Path("/tmp/x")) == [
        sys.executable, "-m", "attnrepro.archive.rerun_guard", "w", "--remove", "/tmp/x", "--",
        "snakemake", "--cores", "1"]
    assert verify_rerun.guard_command(["a"], "w") == [sys.executable, "-m", verify_rerun.GUARD, "w", "--",
                                                      "a"]


# the rerun: a sleep in its group, a sleep in a session of its own; their pids and its own in argv[1]
RERUN = f"""
import os, signal, subprocess, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
group = subprocess.Popen(["sleep", {LIFETIME!r}])
apart = subprocess.Popen(["sleep", {LIFETIME!r}], start_new_session=True)
open(sys.argv[1] + ".tmp", "w").write(f"{{os.getpid()}} {{group.pid}} {{apart.pid}}")
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
group.wait()
"""


class Stop(Exception):
    pass


def _stop(signum, frame):
    raise Stop


def test_what_stops_run_ends_the_rerun_removes_the_folder_and_passes_through(tmp_path, started):
    """A signal whose handler raises, while run waits: run closes the guard's stdin and waits for
    it; the rerun's processes are gone and the folder removed when it passes."""
    previous = signal.signal(signal.SIGUSR1, _stop)
    written, returned = tmp_path / "pids", threading.Event()
    work, removed = tmp_path / "work", tmp_path / "temporary"
    work.mkdir()
    (removed / "rerun").mkdir(parents=True)

    def stop_when_started():
        deadline = time.monotonic() + DEADLINE
        while not written.exists() and time.monotonic() < deadline:
            if returned.wait(0.02):
                return  # run() returned or raised by itself
        signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR1)  # to the thread in run()

    stopper = threading.Thread(target=stop_when_started)
    stopper.start()
    try:
        with pytest.raises(Stop):
            verify_rerun.run([*PYTHON, RERUN, str(written)], work, removed)
    finally:
        returned.set()
        stopper.join()
        signal.signal(signal.SIGUSR1, previous)
    pids = pids_in(written, 3, started)
    assert [pid for pid in pids if alive(pid)] == []
    assert not removed.exists() and work.is_dir()


def test_the_reruns_articles_are_read_from_this_checkout(tmp_path):
    """The rerun's folder holds no article text: each relative ``text`` is read from this checkout,
    an absolute one is kept, and an archive's config without ``articles`` takes this checkout's."""
    repo = Path(__file__).resolve().parents[1]
    given = {"articles": [{"id": "a", "text": "../t/a.txt"}, {"id": "b", "text": "/abs/b.md"}, "odd"],
             "x": 1}
    here = verify_rerun.texts_here(given, repo=tmp_path)
    assert here["articles"] == [{"id": "a", "text": str(tmp_path / "../t/a.txt")},
                                {"id": "b", "text": "/abs/b.md"}, "odd"]
    assert here["x"] == 1 and given["articles"][0]["text"] == "../t/a.txt"  # the archive's own is untouched
    mine = cfg.load(repo / "config/config.yaml")["articles"]
    taken = verify_rerun.texts_here({"x": 1}, repo=repo)["articles"]
    assert [e["id"] for e in taken] == [e["id"] for e in mine]
    assert [e["text"] for e in taken] == [str(repo / e["text"]) for e in mine]
    assert verify_rerun.texts_here({"articles": "not a list"}, repo=repo) == {"articles": "not a list"}
    assert all(Path(e["text"]).is_absolute() for e in taken)
