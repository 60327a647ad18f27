"""Code inputs that mean what the README promises: editing a module reruns the jobs that run it.

A job's code inputs are the import closure of its entry module (attnrepro.jobs.<command>) and of
the modules its command dispatches by a name from the config or the catalog. The modules a job
never runs (the archive's for every other job, the evidence's when it is switched off, the
config's validation but for the editions) must not be among them.
"""

import re

import pytest

from attnrepro.dag import code_inputs, plan
from attnrepro.numerics import fingerprint
from attnrepro import paths as layout

from conftest import (COPIED, REPO, copy_repo, copy_run, declared_inputs, link_articles, missing,
                      planned_jobs, planned_reasons, small_config, snakemake)

# file -> the rules of the small run (targets all and archive) that declare it: the jobs that run it.
# The figures are given their titles (--sections: report.products.style), and read neither the plan
# nor the catalog; the annotated editions (edition_<article>) read the plan, the catalog and the
# config: see _expected.
READ_BY_EDITIONS = {"src/attnrepro/dag/plan.py", "src/attnrepro/report/products/catalog.py",
                    "src/attnrepro/dag/config.py", "src/attnrepro/dag/sweep_plan.py",
                    "src/attnrepro/dag/preflight.py",
                    "workflow/schemas/published.schema.yaml"}
EXPECTED = {
    "src/attnrepro/dag/plan.py": {"index", "ledger", "seeds", "ledger_overview"},  # the ledger: the echoes
    "src/attnrepro/report/products/catalog.py": {"index"},
    "src/attnrepro/dag/config.py": set(),
    "src/attnrepro/dag/preflight.py": set(),
    "src/attnrepro/cli.py": set(),
    "src/attnrepro/archive/pack.py": {"archive"},
    "src/attnrepro/archive/crate.py": {"archive"},  # the archive's RO-Crate, and the jobs it describes
    "src/attnrepro/archive/crate_jobs.py": {"archive"},
    "Snakefile": {"archive"},  # the workflow's own files are in the archive
    "workflow/rules/archive.smk": {"archive"},
    # + the tables; the archive holds the workflow's schemas
    "workflow/schemas/published.schema.yaml": {"ledger", "index", "seeds", "ledger_overview", "archive"},
    "src/attnrepro/evidence/sweep.py": set(),  # the numerics sweep is off
    "src/attnrepro/dag/sweep_plan.py": set(),
    "src/attnrepro/report/evidence_tables/numerics_evaluate.py": set(),
    "src/attnrepro/report/evidence_tables/numerics_render.py": set(),
    # the seed distribution is on
    "src/attnrepro/report/evidence_tables/seeds_evaluate.py": {"seeds", "ledger"},
    "src/attnrepro/report/evidence_tables/seeds_render.py": {"seeds"},
}


def _declaring(rules, path):
    return {rule for rule, inputs in rules.items() if path in inputs}


def _expected(rules):
    editions = {rule for rule in rules if rule.startswith("edition_")}
    tables = {rule for rule in rules if rule.startswith("table_")}
    return {path: jobs | (editions if path in READ_BY_EDITIONS else set())
            | (tables if path.endswith("published.schema.yaml") else set())
            for path, jobs in EXPECTED.items()}


def test_the_modules_that_build_the_dag_are_code_inputs_only_of_the_jobs_that_run_them(tmp_path):
    root = copy_repo(tmp_path / "repo")
    rules = declared_inputs(root, "all", "archive")
    assert {"index", "archive", "ledger", "seeds", "scale_table_case", "table_scale_table"} <= set(rules)
    found = {path: _declaring(rules, path) for path in EXPECTED}
    assert found == _expected(rules)
    cases = {rule for rule in rules if rule.endswith("_case")}
    for rule in cases:  # every experiment job declares its entry and what it imports, and no more
        entries = {"src/attnrepro/jobs/experiment.py", "src/attnrepro/jobs/timed_experiment.py"}
        assert entries & set(rules[rule]), rule
        assert "src/attnrepro/run/io.py" in rules[rule], rule
        # read by canonical.check (attnrepro.numerics.fingerprint)
        assert fingerprint.GOLDEN in rules[rule], rule
    # its job runs it; the jobs importing the plan read its declaration (experiments.declared's READS)
    readers_of_declarations = _declaring(rules, "src/attnrepro/dag/plan.py")
    assert readers_of_declarations >= {"ledger", "index", "seeds", "ledger_overview"}
    assert _declaring(rules, "src/attnrepro/experiments/scale_table.py") == {"scale_table_case",
                                                                           *readers_of_declarations}
    assert not any(r.startswith(("figure_", "table_")) for r in readers_of_declarations)
    # its module imports the terms of its peak_memory and work: the job runs them
    assert {"src/attnrepro/experiments/_prices.py", "src/attnrepro/experiments/_memory.py"} <= rules[
        "scale_table_case"]
    # a report command's module (its options and its work) is an input of its own rules alone, the
    # runner of every report job's: editing the edition's help reruns the editions, nothing else
    commands = _report_commands(rules)
    assert {"table", "figure", "ledger", "seeds", "index", "edition", "ledger_overview",
            "machine_speed"} <= set(commands)
    for command, its_rules in commands.items():
        assert _declaring(rules, f"src/attnrepro/report/commands/{command}.py") == its_rules, command
    assert _declaring(rules, "src/attnrepro/report/commands/edition.py") == {
        r for r in rules if r.startswith("edition_")} != set()
    products = commands["table"] | commands["figure"]
    assert _declaring(rules, "src/attnrepro/report/commands/_product.py") == products
    report_jobs = set().union(*commands.values())
    assert _declaring(rules, "src/attnrepro/report/runner.py") == report_jobs | {"archive"}
    assert _declaring(rules, "src/attnrepro/report/cli.py") == set()


def _report_commands(rules):
    """{report command: the rules (of ``rules``) that run its entry}, by the rules' names."""
    by_prefix = {"table_": "table", "figure_": "figure", "edition_": "edition", "check_": "article_check"}
    commands = {}
    for rule in rules:
        prefixed = [c for prefix, c in by_prefix.items() if rule.startswith(prefix)]
        command = prefixed[0] if prefixed else rule
        if (REPO / "src/attnrepro/report/commands" / f"{command}.py").is_file():
            commands.setdefault(command, set()).add(rule)
    return commands


@pytest.mark.full
def test_the_ledger_declares_the_evidence_it_reads_only_when_switched_on(tmp_path):
    root = copy_repo(tmp_path / "repo")
    (root / "off.yaml").write_text("seed_distribution:\n  build: false\n")
    rules = declared_inputs(root, "all", configfile="config/small.yaml off.yaml")
    assert "seeds" not in rules
    # the ledger names the command that builds each product (the records, citations), no more
    evidence = ("src/attnrepro/evidence/", "src/attnrepro/report/evidence_tables/")
    assert {f for f in rules["ledger"] if f.startswith(evidence)} == {
        "src/attnrepro/evidence/__init__.py",
        "src/attnrepro/report/evidence_tables/__init__.py",
        "src/attnrepro/report/evidence_tables/citations.py"}
    products = {f"src/attnrepro/report/evidence_tables/{m}_{part}.py" for m in ("numerics", "seeds")
                for part in ("evaluate", "render")}
    assert {rule for rule, inputs in rules.items() if inputs & products} == set()


def test_a_data_file_that_a_module_reads_is_a_code_input_of_every_job_importing_it(tmp_path):
    """A module's ``READS`` (repository-relative paths) join deps.source_files, as its imports do."""
    package = tmp_path / "src" / "attnrepro"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "entry.py").write_text("from attnrepro import reader\n")
    (package / "reader.py").write_text('READS = ("tests/golden/x.json", "config/y.yaml")\n')
    assert code_inputs.source_files("attnrepro.entry", src=tmp_path / "src") == [
        "config/y.yaml", "src/attnrepro/__init__.py", "src/attnrepro/entry.py", "src/attnrepro/reader.py",
        "tests/golden/x.json"]
    (package / "named.py").write_text('PATH = "x.json"\nREADS = (PATH,)\n')
    with pytest.raises(ValueError, match="named.py: READS must be a tuple of string literals"):
        code_inputs.source_files("attnrepro.named", src=tmp_path / "src")
    # canonical.check reads it
    assert fingerprint.GOLDEN in code_inputs.source_files("attnrepro.jobs.experiment")


def test_a_changed_pin_reruns_exactly_the_jobs_whose_code_imports_it(small_run, tmp_path):
    """For real: a finished small run, torch's pin changed in the runtime lock, `snakemake -n`. The
    experiments that declare torch (EXPERIMENT["torch"]) rerun because their parameter `software`
    changed, and the dry run shows the pins; every other job listed only reads what they write."""
    root = copy_run(small_run, tmp_path / "run")
    lock = root / "requirements/runtime.lock"
    pinned = lock.read_text()
    assert pinned.count("\ntorch==2.13.0+cpu ") == 1
    lock.write_text(pinned.replace("\ntorch==2.13.0+cpu ", "\ntorch==2.13.1+cpu "))
    proc = snakemake(root, "-n")
    assert proc.returncode == 0, proc.stderr[-3000:]
    reasons = planned_reasons(proc)
    changed = {job.split("/")[0] for job, why in reasons.items() if why.startswith("Params have changed")}
    declared = {f"{e.id}_case" for e in plan.EXPERIMENTS.values() if e.torch}
    assert changed == declared & set(planned_jobs(proc)) and len(changed) >= 3, changed
    others = {job: r for job, r in reasons.items() if job.split("/")[0] not in changed}
    assert others and all(r.startswith("Input files updated by another job") for r in others.values()), others
    # the reason shows the new pin beside the old
    assert all("torch==2.13.0+cpu" in r and "torch==2.13.1+cpu" in r for j, r in reasons.items()
               if j.split("/")[0] in changed)


def _copy_of_the_default_run(dest):
    """A copy of this checkout's finished default run (`make reproduce`): the workflow, results/ and
    Snakemake's records, their times kept; a skip (a failure under ATTNREPRO_REQUIRE_ALL) without it."""
    import shutil

    from attnrepro.dag import config as cfg

    resolved = REPO / layout.RESULTS / "config.resolved.yaml"
    if not (REPO / layout.LEDGER_CSV).is_file() or not resolved.is_file():
        missing("the default run's results (make reproduce)")
    if cfg.load(resolved) != cfg.load(REPO / "config" / "config.yaml"):
        missing("results/ are not the default config's (make reproduce)")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in (*COPIED, layout.RESULTS, ".snakemake"):
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, dest / name, symlinks=True, ignore=ignore)
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    link_articles(dest)
    return dest


@pytest.mark.full
def test_editing_one_commands_help_reruns_only_that_commands_jobs(tmp_path):
    """For real, on the default run: in a copy with nothing to do, one help text of the edition
    command edited (its module, attnrepro.report.commands.edition), `snakemake -n` lists the
    editions alone: no table, figure, ledger or index (62 jobs while every report command's options
    lived in one module)."""
    root = _copy_of_the_default_run(tmp_path / "run")
    assert snakemake(root, "-n", configfile=None).stdout.count("Nothing to be done") == 1
    module = root / "src/attnrepro/report/commands/edition.py"
    text = module.read_text()
    assert text.count('help="results/ledger.csv"') == 1
    module.write_text(text.replace('help="results/ledger.csv"', 'help="the run\'s results/ledger.csv"'))
    proc = snakemake(root, "-n", configfile=None)
    assert proc.returncode == 0, proc.stderr[-3000:]
    editions = {rule for rule in planned_jobs(proc) if rule.startswith("edition_")}
    assert planned_jobs(proc) == {**{rule: 1 for rule in editions}, "all": 1} and len(editions) == 3


def test_the_report_layer_imports_nothing_from_the_model():
    """Tables, figures, the ledger and the evidence read results; they never run the model."""
    modules = [
        ".".join(p.relative_to(REPO / "src").with_suffix("").parts).removesuffix(".__init__")
        for folder in ("report", "evidence")
        for p in sorted((REPO / "src/attnrepro" / folder).rglob("*.py"))
    ]
    assert "attnrepro.report.products.tables_decoder" in modules
    assert "attnrepro.report.evidence_tables.seeds_render" in modules
    # the plan reads the experiments' declarations (experiments.declared, with the terms of their
    # peak_memory and work): no experiment's run
    declarations = {f"src/attnrepro/experiments/{m}.py"
                    for m in ("__init__", "declared", "_memory", "_prices")}
    imported = {m: [f for f in code_inputs.source_files(m, data=False)  # declarations read as text: data
                    if "/model/" in f or ("/experiments/" in f and f not in declarations)]
                for m in modules}
    assert {m: files for m, files in imported.items() if files} == {}


def test_a_results_path_says_what_it_holds_without_the_plan():
    """attnrepro.paths.parse_output (what the jobs and the plan use) inverts every output path the
    plan builds for the shipped configs: the run's, the seed distribution's and the numerics sweep's."""
    import yaml

    from attnrepro.dag import sweep_plan

    configs = [small_config()]
    default = yaml.safe_load((REPO / "config/config.yaml").read_text())
    evidence = {**default, **{k: {**default[k], **v} for k, v in
                              yaml.safe_load((REPO / "config/evidence.yaml").read_text()).items()}}
    configs += [default, evidence]
    built = {}  # path: (experiment, table, case) it was built from
    for config in configs:
        for exp_id in plan.enabled(config):
            for case in plan.cases(exp_id, config):
                for table in plan.EXPERIMENTS[exp_id].tables:
                    built[plan.output_path(exp_id, case, table)] = (exp_id, table, case)
        for case in plan.seed_distribution_cases(config):
            for table in plan.EXPERIMENTS["train"].tables:
                built[plan.output_path("train", case, table)] = ("train", table, case)
                built[plan.seed_output_path(case, table)] = ("train", table, case)
        for setting in ["default", "haswell-noavx512"]:
            for exp_id, cases in sweep_plan.sweep_cases(config).items():
                for case in cases:
                    for table in plan.EXPERIMENTS[exp_id].tables:
                        built[sweep_plan.output_path(setting, exp_id, case, table)] = (exp_id, table, case)
        assert set(plan.all_outputs(config)) <= set(built)
        assert set(sweep_plan.outputs(config, ["default", "haswell-noavx512"])) <= set(built)
    paths = set(built)
    assert any(".0001" in p for p in paths) and any("/numerics/" in p for p in paths)
    assert {p: layout.parse_output(p) for p in paths} == built
    assert all(t.isidentifier() for e in plan.EXPERIMENTS.values() for t in e.tables)


# --- one entry module per job command -----------------------------------------------------------

# The modules imported by a name (importlib.import_module), each a name from the config or a catalog:
# (file, the expression naming the module).
DISPATCH = {
    ("src/attnrepro/experiments/case_run.py", 'f"{EXPERIMENTS}.{experiment}"'),  # the plan's experiment id
    ("src/attnrepro/report/products/builders.py", 'f"{PACKAGE}.{module}"'),  # the catalog's builder
    ("src/attnrepro/report/evidence_tables/citations.py", "product.evaluate"),  # the evidence catalog's
}


def test_only_a_name_from_the_config_or_a_catalog_is_imported_by_name():
    """Every import_module of src/ (what `grep -rn import_module src` finds) dispatches by a name
    from the config or a catalog: a fixed module is imported plainly, where the scan sees it."""
    found = set()
    for path in sorted((REPO / "src").rglob("*.py")):
        text = path.read_text()
        if "import_module" not in text:
            continue
        calls = re.findall(r"import_module\((.+)\)", text)
        assert calls, f"{path}: import_module, but no call of it"
        found |= {(path.relative_to(REPO).as_posix(), call) for call in calls}
    assert found == DISPATCH


def _rules(configfile):
    """{rule: {"inputs": [...], "shell": ...}} of the workflow (tests/rule_inputs.py --shell)."""
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run([sys.executable, str(REPO / "tests/rule_inputs.py"), "--shell", configfile],
                          cwd=REPO, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _dispatched(rule, shell, config):
    """The modules the job of ``rule`` (its ``shell`` command) imports by a name from the config or
    a catalog."""
    from attnrepro import evidence
    from attnrepro.report.products import catalog

    on = evidence.enabled(config)
    if rule.endswith("_case"):  # <experiment>_case, numerics_<experiment>_case, seed_training_case
        named = re.search(r"-m attnrepro\.jobs\.\w+ (\w+)", shell)  # the experiment, unless a parameter
        experiment = named[1] if named else rule.removeprefix("numerics_").removesuffix("_case")
        return [plan.EXPERIMENTS[experiment].module]
    if rule.startswith(("table_", "figure_")):
        return [catalog.PRODUCTS[rule.partition("_")[2]].module]
    if rule == "ledger":
        return [product.evaluate for product in on.values()]
    if rule == evidence.NUMERICS.target and "listings" in on:
        return [evidence.LISTINGS.evaluate]
    return []


@pytest.mark.parametrize("configfile", ["config/small.yaml", "config/evidence.yaml"])
def test_every_rule_runs_its_entry_and_declares_what_it_imports(configfile):
    """Every rule that runs Python runs an entry of attnrepro.jobs, which exists; its code inputs
    (src/ and the files its modules read) are that entry's closure and its dispatched modules'."""
    import yaml

    default = yaml.safe_load((REPO / "config/config.yaml").read_text())
    config = small_config() if "small" in configfile else default
    if "evidence" in configfile:
        extra = yaml.safe_load((REPO / configfile).read_text())
        config = {**config, **{k: {**config.get(k, {}), **v} for k, v in extra.items()}}
    rules, checked = _rules(configfile), set()
    for rule, found in rules.items():
        modules = re.findall(r"-m (attnrepro[\w.{}]*)", found["shell"])
        python = re.search(r"\bpython\b|\{params\.python\}", found["shell"])
        assert bool(python) == bool(modules), (rule, found["shell"])
        if not modules:
            continue
        (entry,) = modules
        entry = entry.replace("{params.kind}", rule.partition("_")[0])
        timed = "src/attnrepro/jobs/timed_experiment.py" in found["inputs"]  # a timing job with article_code
        entry = entry.replace("{params.entry}", "timed_experiment" if timed else "experiment")
        assert entry.startswith("attnrepro.jobs.") and (REPO / _module_file(entry)).is_file(), (rule, entry)
        closure = set(code_inputs.source_files(entry, *_dispatched(rule, found["shell"], config)))
        declared = {f for f in found["inputs"] if f.startswith("src/")} | (closure & set(found["inputs"]))
        assert declared == closure, (rule, sorted(declared ^ closure))
        checked.add(entry)
    assert {e.removeprefix("attnrepro.jobs.") for e in checked} >= {
        "experiment", "table", "figure", "ledger", "index", "archive", "edition", "ledger_overview",
        "machine_speed", "seeds"} | ({"sweep_case", "sweep_probe", "numerics", "listings", "listings_run"}
                                     if "evidence" in configfile else set())


def _module_file(name):
    base = name.replace(".", "/")
    return f"src/{base}.py" if (REPO / "src" / f"{base}.py").is_file() else f"src/{base}/__init__.py"


ENTRIES = sorted(p.stem for p in (REPO / "src/attnrepro/jobs").glob("*.py") if p.stem != "__init__")


def test_no_entry_imports_numpy_before_the_harness_applies_the_pin():
    """Importing an entry and parsing its options loads no NumPy: the harness pins the numerics first."""
    import subprocess
    import sys

    code = ("import importlib, sys\n"
            f"for name in {ENTRIES!r}:\n"
            "    importlib.import_module('attnrepro.jobs.' + name)\n"
            "print(sorted(m for m in ('numpy', 'pandas', 'torch') if m in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(ENTRIES) == 17 and proc.stdout.strip() == "[]"


def _report_entries():
    """{entry: the report command it runs}: the entries of attnrepro.jobs built on the report's runner."""
    from attnrepro.report import cli

    commands = {c.__name__.rpartition(".")[2] for c in cli.COMMANDS} | {"article_check"}
    return {e: e for e in ENTRIES if e in commands}


def test_the_report_entries_and_the_command_line_derive_from_one_list_of_commands():
    """Every command of the report's command line (attnrepro.report.cli.COMMANDS) but CI's gate and
    golden has its entry, attnrepro.jobs.<module>, which runs that module; article_check's is the
    other report entry (`python -m attnrepro article check`). No entry imports the command line."""
    from attnrepro.report import cli

    listed = {c.__name__.rpartition(".")[2] for c in cli.COMMANDS}
    folder = REPO / "src/attnrepro/report/commands"
    assert listed | {"article_check"} == {p.stem for p in folder.glob("[!_]*.py")}
    assert set(_report_entries()) == listed - {"gate", "golden"} | {"article_check"}
    for entry in _report_entries():
        text = (REPO / f"src/attnrepro/jobs/{entry}.py").read_text()
        assert f'runner.main({entry}, "attnrepro.jobs.{entry}", argv)' in text, entry
    assert [e for e in ENTRIES if "src/attnrepro/report/cli.py" in code_inputs.source_files(
        f"attnrepro.jobs.{e}")] == []


def test_an_entry_imports_no_other_commands_module():
    """Editing a command's module (attnrepro.report.commands.<command>: its options and its work)
    reruns its jobs alone: no entry's import closure holds another command's module."""
    folder = REPO / "src/attnrepro/report/commands"
    commands = sorted(p.stem for p in folder.glob("[!_]*.py"))
    assert len(commands) == 13
    found = {}
    for entry in ENTRIES:
        closure = code_inputs.source_files(f"attnrepro.jobs.{entry}")
        found[entry] = {c for c in commands if f"src/attnrepro/report/commands/{c}.py" in closure}
    reports = _report_entries()
    assert {e: work for e, work in found.items() if work} == {e: {c} for e, c in reports.items()}


def test_the_listings_session_is_a_code_input_of_the_jobs_that_start_it():
    """The listings' interpreter runs ``python -m`` the session module by the name of the module
    object bounded imports plainly (never a name in a string, which no scan sees): the session is
    in the code inputs of the listings rule and of every article check, so editing it reruns them."""
    import inspect

    from attnrepro.articles import bounded, session

    assert bounded.SESSION == session.__name__ == "attnrepro.articles.session"
    assert '"-m", SESSION,' in inspect.getsource(bounded._Interpreter)
    file = "src/attnrepro/articles/session.py"
    for entry in ("listings_run", "article_check"):
        assert file in code_inputs.source_files(f"attnrepro.jobs.{entry}"), entry
    assert file not in code_inputs.source_files("attnrepro.jobs.experiment")
