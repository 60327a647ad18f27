"""`python -m attnrepro run/list` for people: config, --config, --set and --case into parameters.

A single value works for every fan-out key (grid keys, train's tasks, lengths and seeds); a dotted
key goes into a mapping; cross-references between sections are checked when the experiment that
reads them is planned; --config goes before or after the subcommand and overrides
config/config.yaml as `snakemake --configfile` does.
"""

import argparse
import copy
import os
import re
import subprocess
import sys

import pytest

from attnrepro import cli
from attnrepro.dag import plan
from attnrepro.dag import config as cfg
from attnrepro.run import harness, usage

from conftest import REPO

TRAIN_LISTS = ("tasks", "lengths", "seeds")  # train's fan-out keys (plan.train_cases)


def overridden(experiment, *sets, config=None):
    """The validated config after ``--set`` of each item of ``sets`` for ``experiment``."""
    args = argparse.Namespace(set=list(sets))
    return cli._with_overrides(args, copy.deepcopy(config or cfg.resolve()), plan.EXPERIMENTS[experiment])


def attnrepro(tmp_path, *args):
    """`python -m attnrepro ARGS` from the checkout; the CompletedProcess."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-m", "attnrepro", *map(str, args)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def main_table(path):
    from attnrepro.run import io

    return io.read_parquet(path).iloc[0]


# --- a single value for a fan-out key -------------------------------------------------------

def _fan_out_keys():
    keys = [(e.id, k) for e in plan.EXPERIMENTS.values() for k in e.grid]
    return keys + [("train", k) for k in TRAIN_LISTS]


@pytest.mark.parametrize("experiment, key", _fan_out_keys(), ids=lambda v: str(v))
def test_a_single_value_for_every_fan_out_key(experiment, key):
    default = cfg.resolve()[experiment][key]
    value = default[-1]
    config = overridden(experiment, f"{key}={str(value).lower()}")
    assert config[experiment][key] == [value]
    full = [c for c in plan.cases(experiment, config).values() if c.get("ablation", "full") == "full"]
    before = [c for c in plan.cases(experiment, cfg.resolve()).values()
              if c.get("ablation", "full") == "full"]
    assert len(full) * len(default) == len(before)  # one value of this key instead of len(default)
    assert all(c[plan_key(experiment, key)] == value for c in full)


def plan_key(experiment, key):
    """The parameter a case receives for a fan-out key (train: task, L, seed)."""
    return dict(zip(TRAIN_LISTS, ("task", "L", "seed")))[key] if experiment == "train" else key


def test_train_with_single_values_writes_that_training(tmp_path):
    """The issue's command line: one training, sort, L = 5, seed 7 (shrunk to 20 steps)."""
    out = tmp_path / "x.parquet"
    proc = attnrepro(tmp_path, "run", "train", "--set", "tasks=sort", "--set", "lengths=5",
                     "--set", "seeds=7", "--set", "steps=20", "--set", "eval_sequences=20", "--out", out)
    assert proc.returncode == 0, proc.stderr
    row = main_table(out)
    assert (row.task, row.L, row.seed, row.ablation, row.steps) == ("sort", 5, 7, "full", 20)


def test_scale_table_with_single_values(tmp_path):
    out = tmp_path / "s.parquet"
    proc = attnrepro(tmp_path, "run", "scale_table", "--set", "d_k=16", "--set", "scaled=true",
                     "--set", "repetitions=20", "--out", out)
    assert proc.returncode == 0, proc.stderr
    row = main_table(out)
    assert (row.d_k, bool(row.scaled)) == (16, True)


# --- dotted keys, ablations, values ---------------------------------------------------------

def test_dotted_keys_go_into_mappings():
    config = overridden("train", "ablation_base.L=5", "ablations.no_scaling.lr=1e-3")
    cases = plan.cases("train", config)
    assert cases["ablation-no_position"]["L"] == 5
    assert cases["ablation-no_scaling"]["lr"] == 0.001 and cases["ablation-no_scaling"]["scale"] is False
    assert overridden("kv_cache", "realistic.kv_heads=8")["kv_cache"]["realistic"]["kv_heads"] == [8]


def test_ablations_replaced_then_added():
    config = overridden("train", "ablations={}", "ablations.wide.d=64", "tasks=sort", "lengths=5", "seeds=7")
    assert list(plan.cases("train", config)) == ["sort-L5-seed7", "ablation-wide"]
    assert plan.cases("train", config)["ablation-wide"]["d"] == 64


@pytest.mark.parametrize("item, message", [
    ("nope=1", "unknown parameter 'nope' of train"),
    ("steps.x=1", "train.steps is 1500, not a mapping"),
    ("steps", "--set takes KEY=VALUE"),
])
def test_bad_sets_are_refused(item, message):
    with pytest.raises(usage.UsageError, match=message):
        overridden("train", item)


def test_a_bad_value_names_its_key():
    with pytest.raises(cfg.ConfigError, match=r"train\.ablations\.no_scaling\.scale: 3 is not of type"):
        overridden("train", "ablations.no_scaling.scale=3")


# --- cross-references: checked when the experiment that reads them is planned ----------------

def _map_names_missing_case():
    config = cfg.resolve()
    config["attention_map"]["run"] = "copy-L7-seed0"  # not a case of train
    return config


def test_a_reference_is_checked_when_its_reader_is_planned():
    config = _map_names_missing_case()
    assert cfg.validate(copy.deepcopy(config), experiments=["scale_table", "train"])
    for experiments in (None, ["attention_map"]):  # None: the whole run, as Snakemake validates
        with pytest.raises(cfg.ConfigError) as info:
            cfg.validate(copy.deepcopy(config), experiments=experiments)
        assert "  attention_map.run: 'copy-L7-seed0' is not a case of train" in str(info.value)


def test_single_train_values_leave_out_what_other_experiments_read():
    """With train's grid cut to sort-L5-seed7, attention_map.run and numerics.cases name cases
    that are gone: a run of train accepts it, the whole run refuses it, naming both keys."""
    config = overridden("train", "tasks=sort", "lengths=5", "seeds=7")
    with pytest.raises(cfg.ConfigError) as info:
        cfg.validate(config)
    assert "attention_map.run: 'copy-L6-seed0' is not a case of train" in str(info.value)
    assert "numerics.cases.train[0]: 'sort-L4-seed0' is not a case of train" in str(info.value)


def test_a_one_off_run_ignores_a_bad_reference_elsewhere(tmp_path):
    """scale_table under a config whose attention_map.run names a missing case of train."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("attention_map:\n  run: copy-L7-seed0\n")
    out = tmp_path / "s.parquet"
    proc = attnrepro(tmp_path, "run", "scale_table", "--config", bad, "--set", "repetitions=20", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert main_table(out).d_k == 8
    refused = attnrepro(tmp_path, "run", "attention_map", "--config", bad, "--out", tmp_path / "a.parquet")
    assert refused.returncode == 2 and "attention_map.run: 'copy-L7-seed0'" in refused.stderr


# --- --config: before or after the subcommand, over config/config.yaml ----------------------

@pytest.mark.parametrize("words", [
    ["--config", "A.yaml", "run", "train", "--out", "o"],
    ["run", "train", "--out", "o", "--config", "A.yaml"],
    ["--config", "A.yaml", "list"],
    ["list", "--config", "A.yaml"],
])
def test_config_before_or_after_the_subcommand(words):
    assert cli._parser().parse_args(words).config == "A.yaml"
    assert cli._parser().parse_args([w for w in words if w not in ("--config", "A.yaml")]).config is None


def test_config_file_overrides_the_defaults_as_snakemake_does():
    from snakemake.utils import update_config

    small = cfg.load(REPO / "config" / "small.yaml")
    expected = cfg.load(REPO / "config" / "config.yaml")
    update_config(expected, small)
    assert cfg.resolve(REPO / "config" / "small.yaml") == expected
    assert cfg.resolve() == cfg.load(REPO / "config" / "config.yaml")


def test_run_with_config_after_the_subcommand(tmp_path):
    """config/small.yaml (train: lengths [6], seeds [0], eval_sequences 50) over the defaults."""
    out = tmp_path / "t.parquet"
    proc = attnrepro(tmp_path, "run", "train", "--config", "config/small.yaml", "--set", "steps=20",
                     "--out", out)
    assert proc.returncode == 0, proc.stderr
    row = main_table(out)
    assert (row.task, row.L, row.seed, row.steps, row.eval_sequences) == ("copy", 6, 0, 20, 50)


def test_a_key_given_twice_in_a_set_value_is_refused():
    from attnrepro.dag import yamlfile

    with pytest.raises(yamlfile.DuplicateKey, match=r"--set ablations, line 1: key a.lr given twice"):
        overridden("train", "ablations={a: {lr: 0.1, lr: 0.2}}")
    assert overridden("train", "ablations={a: {lr: 0.1}}")["train"]["ablations"] == {"a": {"lr": 0.1}}


# --- usage errors: one line naming the key or file, status 2, before anything runs -----------------

LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \S+ [A-Z]+ ")  # harness.LOG_FORMAT


def refused(proc, *named, prefix="attnrepro: ", logged=False):
    """The one line of a usage error: status 2, no traceback, the only line on stderr (``logged``:
    but the log's, of a report job refused inside the harness), after the entry's prefix, naming
    each of ``named``."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr, proc.stderr
    said = [line for line in proc.stderr.splitlines() if not (logged and LOG_LINE.match(line))]
    assert len(said) == 1 and said[0].startswith(prefix), proc.stderr
    assert all(n in said[0] for n in named), said[0]
    return said[0]


def at(text, tmp_path):
    """``text`` with ``{tmp}`` standing for the test's folder."""
    return text.replace("{tmp}", str(tmp_path))


USAGE_ERRORS = {  # the words after `run` (and `--out {tmp}/x.parquet`), what its line names
    "experiment": (["nope"], ["unknown experiment 'nope'; known: attention_vs_sdpa"]),
    "case": (["scale_table", "--case", "zz"], ["--case: unknown case 'zz' of scale_table"]),
    "parameter": (["scale_table", "--set", "zz=1"], ["--set zz: unknown parameter 'zz' of scale_table"]),
    "set-without-value": (["scale_table", "--set", "d_k"], ["--set takes KEY=VALUE, got 'd_k'"]),
    "set-yaml-syntax": (["scale_table", "--set", "d_k=[1,2"],
                        ["--set d_k: not valid YAML '[1,2': line 1, column 5: expected ',' or ']'"]),
    "set-tag": (["scale_table", "--set", "d_k=!!python/object:os.system"], ["--set d_k", "line 1"]),
    "set-key-twice": (["train", "--set", "ablations={a: {lr: 0.1, lr: 0.2}}"],
                      ["--set ablations, line 1: key a.lr given twice"]),
    "value": (["scale_table", "--set", "d_k=-5"], ["scale_table.d_k[0]: -5 is less than the minimum of 1"]),
    "params-json": (["scale_table", "--params-json", "{x"], ["--params-json: not valid JSON"]),
    "params-json-list": (["scale_table", "--params-json", "[1]"], ["--params-json: a JSON object"]),
    "expected-params": (["scale_table", "--expected-params", "{x"], ["--expected-params: not valid JSON"]),
    "table-name": (["attention_vs_sdpa", "--table", "nope={tmp}/n.parquet"], ["--table nope=", "(weights)"]),
    "table-main": (["attention_vs_sdpa", "--table", "main={tmp}/n.parquet"], ["--table main="]),
    "input-name": (["scale_table", "--input", "nope={tmp}/n.parquet"], ["--input nope", "its inputs: none"]),
    "input-missing": (["attention_map", "--input", "main={tmp}/none.parquet"],
                      ["--input main: no file {tmp}/none.parquet"]),
    "numerics": (["scale_table", "--numerics", "bogus"], ["--numerics: setting 'bogus' is not one of"]),
    "config-missing": (["scale_table", "--config", "{tmp}/none.yaml"],
                       ["config file not found: {tmp}/none.yaml"]),
    "config-yaml": (["scale_table", "--config", "{tmp}/bad.yaml"], ["{tmp}/bad.yaml: not valid YAML"]),
    "option": (["scale_table", "--threads", "x"], ["attnrepro run: argument --threads: invalid int value"]),
}


@pytest.mark.parametrize("name", USAGE_ERRORS)
def test_a_usage_error_is_one_line_naming_it_and_status_2(tmp_path, name):
    """Unknown names, bad values, malformed --set (YAML syntax included), bad JSON, missing files:
    all status 2, one line, nothing written."""
    (tmp_path / "bad.yaml").write_text("scale_table: [1,\n")
    words, named = USAGE_ERRORS[name]
    out = tmp_path / "x.parquet"
    proc = attnrepro(tmp_path, "run", *(at(w, tmp_path) for w in words), "--out", out)
    refused(proc, *(at(n, tmp_path) for n in named), prefix="attnrepro")  # `attnrepro run: ` for argparse's
    assert not out.exists()


def test_a_missing_option_is_one_line_too(tmp_path):
    refused(attnrepro(tmp_path, "run", "scale_table"), "the following arguments are required: --out",
            prefix="attnrepro run: ")


@pytest.mark.parametrize("words", [["--help"], ["run", "--help"]])
def test_the_help_says_the_exit_statuses(tmp_path, words):
    proc = attnrepro(tmp_path, *words)
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "exit status: 0 done; 1 stopped by the job harness (a corrupt or stale input" in text
    assert "2 a usage error (a bad value, a bad or missing file, an unknown name" in text


# --- run --out never clobbers ----------------------------------------------------------------------

def test_an_out_that_is_no_parquet_file_name_is_refused_and_left_alone(tmp_path):
    """The reviewer's case: `--out notes.txt` replaced notes.txt and wrote notes.weights.txt."""
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"my notes\n")
    refused(attnrepro(tmp_path, "run", "attention_vs_sdpa", "--out", tmp_path / "new.txt"),
            f"--out {tmp_path / 'new.txt'}: not a .parquet file name")
    refused(attnrepro(tmp_path, "run", "attention_vs_sdpa", "--out", notes),
            f"--out {notes}: not a .parquet file name")
    other = tmp_path / "x.parquet"
    refused(attnrepro(tmp_path, "run", "attention_vs_sdpa", "--out", other, "--table", f"weights={notes}"),
            f"table weights {notes}: not a .parquet file name")
    assert notes.read_bytes() == b"my notes\n" and sorted(tmp_path.iterdir()) == [notes]


def test_an_existing_output_is_refused_byte_for_byte_unless_forced(tmp_path):
    out, weights = tmp_path / "x.parquet", tmp_path / "y.weights.parquet"
    out.write_bytes(b"an earlier table")
    weights.write_bytes(b"an earlier weights table")
    refused(attnrepro(tmp_path, "run", "attention_vs_sdpa", "--out", out),
            f"--out {out}: exists; --force replaces it")
    # a table beside --out: job.table_paths names it, and it is checked as --out is
    refused(attnrepro(tmp_path, "run", "attention_vs_sdpa", "--out", tmp_path / "y.parquet"),
            f"table weights {weights}: exists; --force replaces it")
    assert out.read_bytes() == b"an earlier table" and weights.read_bytes() == b"an earlier weights table"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.parquet", "y.weights.parquet"]
    proc = attnrepro(tmp_path, "run", "scale_table", "--set", "repetitions=20", "--out", out, "--force")
    assert proc.returncode == 0, proc.stderr
    assert main_table(out).d_k == 8


UNWRITABLE = {  # the words after `attention_vs_sdpa`, what the line names ({tmp}: the test's folder)
    "out-a-folder": (["--out", "{tmp}/d.parquet"], "--out {tmp}/d.parquet: a folder"),
    "out-a-folder-forced": (["--out", "{tmp}/d.parquet", "--force"], "--out {tmp}/d.parquet: a folder"),
    "out-under-a-file": (["--out", "{tmp}/notes.txt/x.parquet"], "{tmp}/notes.txt is a file, not a folder"),
    "table-a-folder": (["--out", "{tmp}/x.parquet", "--table", "weights={tmp}/d.parquet"],
                       "table weights {tmp}/d.parquet: a folder"),
    "table-is-out": (["--out", "{tmp}/x.parquet", "--table", "weights={tmp}/x.parquet"],
                     "table weights {tmp}/x.parquet: the file of --out too"),
}


@pytest.mark.parametrize("name", UNWRITABLE)
def test_an_output_that_cannot_be_written_is_refused_before_the_case_runs(tmp_path, monkeypatch, capsys,
                                                                          name):
    """Refused before the harness starts: the case never runs (run_job is never called), where it
    used to fail with a traceback after computing."""
    (tmp_path / "d.parquet").mkdir()
    (tmp_path / "notes.txt").write_text("")
    words, named = UNWRITABLE[name]
    words, named = [at(w, tmp_path) for w in words], at(named, tmp_path)
    refused(attnrepro(tmp_path, "run", "attention_vs_sdpa", *words), named)
    ran = []
    monkeypatch.setattr(harness, "run_job", lambda job, **options: ran.append(job) or 0)
    assert cli.main(["run", "attention_vs_sdpa", *words]) == 2 and ran == []
    err = capsys.readouterr().err
    assert err.startswith("attnrepro: ") and named in err and err.count("\n") == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.parquet", "notes.txt"]


def test_the_case_is_resolved_and_checked_before_numpy_loads():
    """What moved before the harness (config, plan, --set, outputs, inputs) loads no NumPy: the pin
    still comes first."""
    code = ("import sys\n"
            "from attnrepro import cli\n"
            "for words in (['train', '--set', 'steps=20', '--config', 'config/small.yaml'],\n"
            "              ['attention_map', '--input', 'main=pyproject.toml',\n"
            "               '--input', 'parameters=Makefile']):\n"
            "    cli._case(cli._parser().parse_args(['run', *words, '--out', '/nonexistent/x.parquet']))\n"
            "print('numpy' in sys.modules)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "False"


# --- the report entries: a claims or config file that does not load --------------------------------

# the line of published.yaml's first echo claim, where "anchor" puts its anchor
ANCHOR_LINE = 1 + (REPO / "config" / "published.yaml").read_text().partition("class: echo")[0].count("\n")


def _claims(tmp_path, name):
    """config/published.yaml made bad one way (``name``); its path."""
    text = (REPO / "config" / "published.yaml").read_text()
    bad = {
        "wrong-value": lambda t: re.sub(r"class: \w+", "class: bogus", t, count=1),
        "key-twice": lambda t: t + "\nclaims: []\n",
        "yaml-syntax": lambda t: t + "\n  - [unclosed\n",
        "anchor": lambda t: t.replace("class: echo", "class: &c echo", 1),  # dag.yamlfile.Refused
        "template": lambda t: "__use_yte__: true\n" + t,
    }
    path = tmp_path / f"{name}.yaml"
    if name != "missing":
        path.write_text(bad[name](text))
    return path


BAD_CLAIMS = {
    "wrong-value": ["does not follow workflow/schemas/published.schema.yaml: claim 000.",
                    "key class: 'bogus'"],
    "key-twice": [", line ", "key claims given twice (first at line"],
    "yaml-syntax": ["not valid YAML: line "],
    "anchor": [f"line {ANCHOR_LINE}", "anchor &c"],
    "template": ["__use_yte__"],
    "missing": ["--published", "No such file or directory"],
}


def report(tmp_path, module, *args):
    """`python -m MODULE ARGS` from the checkout; the CompletedProcess."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize("name", BAD_CLAIMS)
def test_the_seeds_job_ends_a_bad_claims_file_with_one_line(tmp_path, name):
    """The rule's command (workflow/rules/evidence.smk, seeds) with a claims file that does not load:
    status 2, one line in its log (stderr) naming the file and the key, no traceback, no output."""
    published = _claims(tmp_path, name)
    outputs = [tmp_path / f"s.{ext}" for ext in ("csv", "md", "svg")]
    proc = report(tmp_path, "attnrepro.jobs.seeds", "--published", published,
                  *(w for out in outputs for w in (f"--{out.suffix[1:]}", out)))
    refused(proc, str(published), *BAD_CLAIMS[name], prefix="attnrepro.report: ", logged=True)
    assert not any(out.exists() for out in outputs)


@pytest.mark.parametrize("words, command", [
    (["attnrepro.jobs.ledger"], "ledger"), (["attnrepro.report", "seeds"], "seeds"),
    (["attnrepro.jobs.ledger_overview"], "ledger-overview"),
])
def test_every_report_entry_refuses_a_bad_claims_file_the_same_way(tmp_path, words, command):
    published = _claims(tmp_path, "wrong-value")
    options = {"ledger": ["--csv", tmp_path / "l.csv", "--md", tmp_path / "l.md"],
               "seeds": ["--csv", tmp_path / "s.csv", "--md", tmp_path / "s.md", "--svg", tmp_path / "s.svg"],
               "ledger-overview": ["--ledger", tmp_path / "l.csv", "--svg", tmp_path / "o.svg"]}[command]
    proc = report(tmp_path, *words, "--published", published, *options)
    refused(proc, str(published), *BAD_CLAIMS["wrong-value"], prefix="attnrepro.report: ", logged=True)


@pytest.mark.parametrize("command", ["index", "edition"])
def test_a_report_job_ends_a_bad_config_file_with_one_line(tmp_path, command):
    config = tmp_path / "config.resolved.yaml"
    config.write_text("train: [1,\n")
    words = {"index": ["attnrepro.jobs.index", "--config", config, "--out", tmp_path / "README.md"],
             "edition": ["attnrepro.jobs.edition", "001", "--text", tmp_path / "none.txt",
                         "--ledger", tmp_path / "l.csv", "--published", REPO / "config/published.yaml",
                         "--config", config, "--out", tmp_path / "e.html"]}[command]
    refused(report(tmp_path, *words), f"--config {config}: ", "not valid YAML", prefix="attnrepro.report: ",
            logged=True)


def test_the_published_claims_pass_the_check():
    from attnrepro.report.ledger import claims_check

    assert claims_check.check(REPO / "config" / "published.yaml") is None
