"""Code inputs that mean what the README promises: editing a module reruns the jobs that run it.

A job's code inputs are the files its entry module (attnrepro.experiments.job, attnrepro.report.job) and the
modules it runs import. The modules that Snakemake reads to build the DAG (the plan, the catalog,
the config) and those a job never runs (the archive's for every other job, the evidence's when it
is switched off) must not be among them.
"""

import html
import re

import pytest

from attnrepro.dag import code_inputs, plan
from attnrepro.numerics import fingerprint
from attnrepro import paths as layout

from conftest import REPO, copy_repo, copy_run, planned_jobs, small_config, snakemake

# file -> the rules of the small run (targets all and archive) that declare it: the jobs that run it.
# The annotated editions (edition_<article>, workflow/rules/articles.smk) read the plan, the catalog
# and the config (attnrepro.report.editions.edition), where the articles are found: see _expected.
READ_BY_EDITIONS = {"src/attnrepro/dag/plan.py", "src/attnrepro/report/products/catalog.py",
                    "src/attnrepro/dag/config.py",
                    "src/attnrepro/dag/sweep_plan.py"}
EXPECTED = {
    "src/attnrepro/dag/plan.py": {"index", "ledger"},  # the ledger: the declarations that decide the echoes
    "src/attnrepro/report/products/catalog.py": {"index"},
    "src/attnrepro/dag/config.py": set(),
    "src/attnrepro/cli.py": set(),
    "src/attnrepro/archive/pack.py": {"archive"},
    "src/attnrepro/archive/crate.py": {"archive"},  # the archive's RO-Crate, and the jobs it describes
    "src/attnrepro/archive/crate_jobs.py": {"archive"},
    "Snakefile": {"archive"},  # the workflow's own files are in the archive
    "workflow/rules/report.smk": {"archive"},
    "src/attnrepro/evidence/sweep.py": set(),  # the numerics sweep is off
    "src/attnrepro/dag/sweep_plan.py": set(),
    "src/attnrepro/report/evidence/numerics_evaluate.py": set(),
    "src/attnrepro/report/evidence/numerics_render.py": set(),
    "src/attnrepro/report/evidence/seeds_evaluate.py": {"seeds", "ledger"},  # the seed distribution is on
    "src/attnrepro/report/evidence/seeds_render.py": {"seeds"},
}


def _filegraph(root, *targets, configfile="config/small.yaml"):
    """{rule: its declared input files} of the DAG of ``targets``, from `snakemake --filegraph`."""
    proc = snakemake(root, "--filegraph", *targets, configfile=configfile)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rules = {}
    for node in proc.stdout.split("label=<<table")[1:]:
        name = re.search(r'point-size="18">([^<]+)<', node).group(1)
        inputs = node.partition("&#8618; input")[2].partition("output &rarr;")[0]  # none: ""
        rules[name] = {html.unescape(f) for f in re.findall(r'face="monospace">([^<]+)<', inputs)}
    assert rules
    return rules


def _declaring(rules, path):
    return {rule for rule, inputs in rules.items() if path in inputs}


def _expected(rules):
    editions = {rule for rule in rules if rule.startswith("edition_")}
    return {path: jobs | (editions if path in READ_BY_EDITIONS else set()) for path, jobs in EXPECTED.items()}


def test_the_modules_that_build_the_dag_are_code_inputs_only_of_the_jobs_that_run_them(tmp_path):
    root = copy_repo(tmp_path / "repo")
    rules = _filegraph(root, "all", "archive")
    assert {"index", "archive", "ledger", "seeds", "scale_table_case", "table_scale_table"} <= set(rules)
    found = {path: _declaring(rules, path) for path in EXPECTED}
    assert found == _expected(rules)
    cases = {rule for rule in rules if rule.endswith("_case")}
    for rule in cases:  # every experiment job declares its entry and what it imports, and no more
        assert "src/attnrepro/experiments/job.py" in rules[rule], rule
        assert "src/attnrepro/run/io.py" in rules[rule], rule
        # read by canonical.check (attnrepro.numerics.fingerprint)
        assert fingerprint.GOLDEN in rules[rule], rule
    assert _declaring(rules, "src/attnrepro/experiments/scale_table.py") == {"scale_table_case"}
    report_jobs = {r for r in rules if r.startswith(("table_", "figure_"))} | {"ledger", "seeds", "index"}
    assert all("src/attnrepro/report/job.py" in rules[r] for r in report_jobs)


@pytest.mark.full
def test_the_ledger_declares_the_evidence_it_reads_only_when_switched_on(tmp_path):
    root = copy_repo(tmp_path / "repo")
    (root / "off.yaml").write_text("seed_distribution:\n  build: false\n")
    rules = _filegraph(root, "all", configfile="config/small.yaml off.yaml")
    assert "seeds" not in rules
    # the ledger names the command that builds each product (the records, citations), no more
    evidence = ("src/attnrepro/evidence/", "src/attnrepro/report/evidence/")
    assert {f for f in rules["ledger"] if f.startswith(evidence)} == {
        "src/attnrepro/evidence/__init__.py", "src/attnrepro/evidence/articles.py",
        "src/attnrepro/report/evidence/__init__.py", "src/attnrepro/report/evidence/citations.py"}
    products = {f"src/attnrepro/report/evidence/{m}_{part}.py" for m in ("numerics", "seeds")
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
    assert fingerprint.GOLDEN in code_inputs.source_files("attnrepro.experiments.job")


@pytest.mark.full
def test_editing_the_plan_the_catalog_or_the_archive_reruns_only_the_jobs_that_run_them(small_run, tmp_path):
    """For real: a finished small run, one file edited, `snakemake -n`."""
    for path, rerun in (("src/attnrepro/dag/plan.py", {"index", "ledger"}),
                        ("src/attnrepro/report/products/catalog.py", {"index"}),
                        ("src/attnrepro/archive/pack.py", set())):  # archive: not part of `all`
        root = tmp_path / path.replace("/", "_")
        copy_run(small_run, root)
        edited = root / path
        edited.write_text(edited.read_text() + "\n# edited by a test\n")
        proc = snakemake(root, "-n")
        assert proc.returncode == 0, proc.stderr[-3000:]
        jobs = set(planned_jobs(proc)) - {"all"}
        editions = {j for j in jobs if j.startswith("edition_")} if path in READ_BY_EDITIONS else set()
        # a rerun ledger reruns what reads it: every table (its cells' verdicts), the editions, and
        # the products that state the machine's speed factor
        readers = ({j for j in jobs if j.startswith(("table_", "figure_", "edition_"))
                    or j in ("ledger_overview", "machine_speed")} if "ledger" in rerun else set())
        assert not readers or any(j.startswith("table_") for j in readers), (path, jobs)
        assert jobs == rerun | editions | readers, (path, jobs)
        if not rerun:
            assert "Nothing to be done" in proc.stdout + proc.stderr


def _reasons(proc):
    """{rule[/case]: its reason} of every job a dry run's output lists."""
    jobs = {}
    for block in re.split(r"\n(?=(?:local)?(?:rule|checkpoint) )", proc.stdout + proc.stderr):
        rule = re.match(r"(?:local)?(?:rule|checkpoint) (\w+):", block)
        case, reason = re.search(r"\bcase=([^,\s]+)", block), re.search(r"reason: (.*)", block)
        if rule and reason:
            jobs[rule[1] + (f"/{case[1]}" if case else "")] = reason[1]
    return jobs


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
    reasons = _reasons(proc)
    changed = {job.split("/")[0] for job, why in reasons.items() if why.startswith("Params have changed")}
    declared = {f"{e.id}_case" for e in plan.EXPERIMENTS.values() if e.torch}
    assert changed == declared & set(planned_jobs(proc)) and len(changed) >= 3, changed
    others = {job: r for job, r in reasons.items() if job.split("/")[0] not in changed}
    assert others and all(r.startswith("Input files updated by another job") for r in others.values()), others
    # the reason shows the new pin beside the old
    assert all("torch==2.13.0+cpu" in r and "torch==2.13.1+cpu" in r for j, r in reasons.items()
               if j.split("/")[0] in changed)


def test_the_report_layer_imports_nothing_from_the_model():
    """Tables, figures, the ledger and the evidence read results; they never run the model."""
    modules = [
        ".".join(p.relative_to(REPO / "src").with_suffix("").parts).removesuffix(".__init__")
        for folder in ("report", "evidence")
        for p in sorted((REPO / "src/attnrepro" / folder).rglob("*.py"))
    ]
    assert "attnrepro.report.products.tables_decoder" in modules
    assert "attnrepro.report.evidence.seeds_render" in modules
    imported = {m: [f for f in code_inputs.source_files(m) if "/model/" in f or "/experiments/" in f]
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


# --- the declared list of DAG-only modules (attnrepro.dag.code_inputs.DAG_ONLY) ------------------

# The command line for people (`python -m attnrepro.report`, which three rules run) resolves a
# config, its plan and its catalog for people's commands; the rules that run it do not.
PEOPLE_READ = {"attnrepro.report.__main__": {"attnrepro.dag.config", "attnrepro.dag.plan",
                                             "attnrepro.report.products.catalog"}}


def _smk_imports():
    """The modules of this package that workflow/rules/*.smk import (what Snakemake reads)."""
    names = set()
    for smk in sorted((REPO / "workflow/rules").glob("*.smk")):
        for base, what in re.findall(r"^from (attnrepro[\w.]*) import ([^#\n]+)", smk.read_text(), re.M):
            for alias in what.split(","):
                name = f"{base}.{alias.split(' as ')[0].strip()}"
                names.add(name if (REPO / "src" / (name.replace(".", "/") + ".py")).is_file()
                          or (REPO / "src" / name.replace(".", "/")).is_dir() else base)
    return names


def _job_entries():
    """The modules the rules' jobs start (`python -m MODULE` in their shell commands)."""
    found = set()
    for smk in (REPO / "workflow/rules").glob("*.smk"):
        found.update(re.findall(r"-m (attnrepro[\w.]*)", smk.read_text()))
    return {m if (REPO / "src" / (m.replace(".", "/") + ".py")).is_file() else f"{m}.__main__" for m in found}


def _module_file(name):
    base = name.replace(".", "/")
    return f"src/{base}.py" if (REPO / "src" / f"{base}.py").is_file() else f"src/{base}/__init__.py"


def _closure(monkeypatch, dag_only, *modules):
    monkeypatch.setattr(code_inputs, "DAG_ONLY", dag_only)
    code_inputs.source_files.cache_clear()
    try:
        return set(code_inputs.source_files(*modules))
    finally:
        code_inputs.source_files.cache_clear()


def test_the_dag_only_list_is_the_modules_snakemake_reads_that_jobs_do_not_need(monkeypatch):
    declared, read, entries = dict(code_inputs.DAG_ONLY), _smk_imports(), _job_entries()
    # Snakemake also runs each experiment's peak_memory and work (attnrepro.experiments.declared)
    read |= {"attnrepro.experiments._memory", "attnrepro.experiments._prices"}
    assert {"attnrepro.report.job", "attnrepro.experiments.job", "attnrepro.report.__main__",
            "attnrepro.evidence.sweep", "attnrepro.evidence.listings_run"} == entries
    for name, reason in declared.items():  # each a real module that Snakemake reads, with its reason
        assert (REPO / _module_file(name)).is_file(), name
        assert name in read, f"{name}: no workflow/rules/*.smk imports it"
        assert isinstance(reason, str) and reason.strip(), name
    # every module Snakemake reads and the list leaves out is code that a job runs
    job_code = _closure(monkeypatch, declared, *entries)
    assert {m for m in read - set(declared) if _module_file(m) not in job_code} == set()
    # and no listed module is code that a job's entry runs (unlisted, it would be found there),
    # but for what the command line for people reads for its own commands
    for name in declared:
        unlisted = {k: v for k, v in declared.items() if k != name}
        needing = {e for e in entries if _module_file(name) in _closure(monkeypatch, unlisted, e)
                   and name not in PEOPLE_READ.get(e, ())}
        assert needing == set(), f"{name} is imported by the jobs of {needing}: it is not DAG-only"


# --- the rules' inputs do not depend on how a module is imported --------------------------------

FORMER_STRING_IMPORTS = ("src/attnrepro/cli.py", "src/attnrepro/dag/config.py",
                         "src/attnrepro/report/cli.py", "src/attnrepro/report/products/style.py")


def _rule_inputs(root):
    """{rule: its declared input files} of every rule of the workflow in ``root`` (tests/rule_inputs.py),
    for the default, small and evidence configs."""
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    found = {}
    for configfiles in ((), ("config/small.yaml",), ("config/evidence.yaml",)):
        proc = subprocess.run([sys.executable, str(REPO / "tests/rule_inputs.py"), *configfiles], cwd=root,
                              capture_output=True, text=True, env=env, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        found[configfiles] = json.loads(proc.stdout)
    assert all(len(rules) > 50 for rules in found.values())
    return found


def _hidden(text, src):
    """``text`` with each indented plain import of a module of this package (``from attnrepro.x
    import m [as n], ...``) turned into an import by name (importlib.import_module)."""
    def by_name(match):
        indent, base, names = match.groups()
        lines = []
        for alias in names.split(","):
            module, _, local = (part.strip() for part in alias.partition(" as "))
            if not (src / (f"{base}.{module}".replace(".", "/") + ".py")).is_file():
                return match.group(0)  # a name, not a module
            call = f'__import__("importlib").import_module("{base}.{module}")'
            lines.append(f"{indent}{local or module} = {call}")
        return "\n".join(lines)

    return re.sub(r"^( +)from (attnrepro[\w.]*) import ([\w ,]+)$", by_name, text, flags=re.M)


@pytest.mark.full
def test_how_a_module_is_imported_changes_no_rules_inputs(tmp_path):
    """In a scratch copy: every former import by name (of a DAG-only module, or in the command line
    for people) made one again, and every DAG-only module imported plainly by every job's entry,
    leave every rule's declared inputs as they are."""
    root = copy_repo(tmp_path / "repo")
    before = _rule_inputs(root)
    hidden = 0
    for path in FORMER_STRING_IMPORTS:
        file = root / path
        text = _hidden(file.read_text(), root / "src")
        hidden += text.count("import_module(")
        file.write_text(text)
    assert hidden >= 8, hidden  # cli verify; config preflight (and plan); report.cli 3; style 2
    plain = "".join(f"    import {name}  # noqa: F401\n" for name in code_inputs.DAG_ONLY)
    for entry in _job_entries():
        file = root / _module_file(entry)
        file.write_text(file.read_text() + "\n\nif False:  # a test: plain imports of every DAG-only module\n"
                        + plain)
    assert _rule_inputs(root) == before
