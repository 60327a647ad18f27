# Helpers for the .smk files: the validated config, the run plan, source-file inputs.
import json
import math
import os
import sys
from pathlib import Path

SRC_DIR = str(Path(workflow.basedir) / "src")
sys.path.insert(0, SRC_DIR)
# Jobs import the package from this checkout, and `python` in a job is the interpreter
# running Snakemake (a venv need not be activated); with --use-conda, conda's comes first.
os.environ.update(
    PYTHONPATH=os.pathsep.join(filter(None, [SRC_DIR, os.environ.get("PYTHONPATH")])),
    PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]),
)


envvars:
    "PYTHONPATH",


from attnrepro.dag import config as attnrepro_config  # noqa: E402
from attnrepro.dag import code_inputs, plan, preflight  # noqa: E402
from attnrepro.resources import runtime  # noqa: E402
from attnrepro.run import heartbeat as attnrepro_heartbeat  # noqa: E402
from attnrepro.run import ownership as attnrepro_ownership  # noqa: E402
from attnrepro.report.products import catalog  # noqa: E402
from attnrepro.report import job as report_job  # noqa: E402
from attnrepro.report import cli as report_cli  # noqa: E402

try:  # the config files Snakemake loaded are read again: a key given twice is refused
    attnrepro_config.validate(config, files=workflow.configfiles)
except attnrepro_config.ConfigError as error:
    raise WorkflowError(str(error))

# Every job's shell inherits the identity of this Snakemake process (ATTNREPRO_RUN): from the
# moment it is spawned, a job knows its run, and writes nothing once that run has ended
# (src/attnrepro/run/ownership.py). Only the main process: a job step (the Snakemake that a cluster job
# runs on its node, --mode remote, reading this file again) keeps the identity handed down by
# the run that submitted it (sbatch exports the environment), and publishes no heartbeat.
RUN = attnrepro_ownership.hand_down() if workflow.is_main_process else None


# The run's heartbeat (src/attnrepro/run/heartbeat.py): .snakemake/attnrepro/heartbeat.json, rewritten
# every 5 s by a thread of this process, which every job checks on any node (stale after 30 s).
# Written from the time the jobs are about to run (onstart: never in a dry run, nor in a job
# step, which runs with --no-hooks), never by the Snakemake that only reads the workflow
# (`-n`, `--lint`, `--unlock`): its heartbeat would name another run and stop a live one's jobs.
onstart:
    if workflow.is_main_process and RUN is not None:
        attnrepro_heartbeat.publish(RUN.token())


onsuccess:
    attnrepro_heartbeat.stop()


onerror:
    attnrepro_heartbeat.stop()


# Memory as a resource: every experiment job asks for its estimated peak with a margin
# (job_memory), and a local run gets a budget equal to the pre-flight's limit (memory.limit_gib,
# default 80% of this machine's memory): Snakemake never runs together jobs whose mem_mb sum
# exceeds it (a job asking more than all of it runs alone; one whose estimate exceeds the limit
# was refused above). `--resources mem_mb=N` sets another budget. A run with a job count for a
# cluster (`--jobs`, workflow/profiles/slurm) gets none: there each job is an sbatch job of its
# own size.
if (
    "mem_mb" not in workflow.global_resources
    and workflow.resource_settings.nodes is None
):
    MEMORY_BUDGET = preflight.budget_mb(config)
    if MEMORY_BUDGET is not None:
        workflow.register_resource("mem_mb", MEMORY_BUDGET)

CONDA_ENV = "../../envs/attnrepro.yaml"
NUMERICS = config.get("numerics") or {}
# the ledger's speed factor per article (attnrepro.report.ledger.speed): LEDGER.md, the editions, the
# machine_speed figure and the notes of the tables of machine-bound times read it
SPEED_CSV = "results/speed.csv"


def all_outputs():
    """Every Parquet file of the run."""
    return plan.all_outputs(config)


# Code inputs: the files under src/ that a job imports, from its entry module and the modules its
# command runs (dispatched by name), and the repository files those modules read (their READS,
# such as tests/golden/numerics.json). The modules that Snakemake alone reads to build the DAG
# (the plan, the catalog, the config: code_inputs.DAG_ONLY) are followed only where a rule names
# them. Editing a module reruns exactly the jobs that run it.
def sources(*modules):
    """The files under src/ that an experiment job (attnrepro.experiments.job) running ``modules`` imports."""
    return code_inputs.source_files("attnrepro.experiments.job", *modules)


def report_code(command, *modules):
    """The files under src/ that a report job (attnrepro.report.job) of ``command`` imports, with
    ``modules`` (a builder's, the evidence the ledger reads)."""
    return code_inputs.source_files(
        "attnrepro.report.job", *report_job.RUNS[command], *modules
    )


def report_sources(command):
    """The files under src/ that `python -m attnrepro.report` (attnrepro.report.cli) of
    ``command`` imports (the command line for people; most rules run attnrepro.report.job).
    """
    return code_inputs.source_files("attnrepro.report.cli", *report_cli.RUNS[command])


def figure_sections(product):
    """`--sections JSON` of a figure's job: the article and section of its experiments
    and its own, which its title names (report.style); "" for a table."""
    import shlex

    if product.kind != "figure":
        return ""
    experiments = {
        e: [plan.EXPERIMENTS[e].article, plan.EXPERIMENTS[e].section]
        for e in product.experiments
    }
    sections = {
        "experiments": experiments,
        "products": {product.name: [product.article, product.section]},
    }
    return f"--sections {shlex.quote(json.dumps(sections, sort_keys=True))}"


def report_outputs():
    """Every table, figure and ledger file of the run, and the index of results/."""
    return catalog.all_outputs(config) + [
        "results/ledger.csv",
        "results/LEDGER.md",
        SPEED_CSV,
        "results/README.md",
    ]


def article_comparison():
    """The ledger's `--article` JSON (attnrepro.report.ledger.comparable.Article): the parameters the
    article's config (config/config.yaml) plans for the run's cases, the run's list values
    (plan.selectors), and each experiment section whose keys differ from the article's.
    """
    article = attnrepro_config.load(attnrepro_config.DEFAULT)
    sections = {}
    for name in plan.EXPERIMENTS:
        mine, theirs = config.get(name) or {}, article.get(name) or {}
        keys = sorted(
            k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k)
        )
        if keys:
            sections[name] = keys
    upstream = {
        name: [
            list(case)
            for case in dict.fromkeys(
                plan.output_case(p) for p in plan.input_paths(name, config).values()
            )
        ]
        for name in plan.enabled(config)
    }
    comparison = {
        "params": plan.expected_params(all_outputs(), article),
        "grid": plan.selectors(config),
        "sections": sections,
        "upstream": {name: cases for name, cases in upstream.items() if cases},
    }
    return json.dumps(comparison, sort_keys=True, separators=(",", ":"))


def yaml_text(cfg):
    """The resolved config as YAML (a param: changing any value rewrites it)."""
    import yaml

    return yaml.safe_dump(cfg, sort_keys=True)


def git_sha():
    """The checkout's commit (short), with -dirty when tracked files differ from it."""
    import subprocess

    def git(*args):
        return subprocess.run(
            ["git", "-C", workflow.basedir, *args], capture_output=True, text=True
        ).stdout.strip()

    sha = git("rev-parse", "--short=12", "HEAD") or "unversioned"
    return sha + (
        "-dirty" if git("status", "--porcelain", "--untracked-files=no") else ""
    )


GIT_SHA = git_sha()


def workflow_files():
    """The workflow's own files that the archive holds: the Snakefile, the rule files, the
    config schema and the conda environment."""
    base = Path(workflow.basedir)
    rules = sorted(
        p.relative_to(base).as_posix() for p in (base / "workflow/rules").glob("*.smk")
    )
    return [
        "Snakefile",
        *rules,
        "workflow/schemas/config.schema.yaml",
        CONDA_ENV.removeprefix("../../"),
    ]


def rule_files(wildcards):
    """A params function: the JSON {rule: the file that defines it} of every rule, for the
    archive's RO-Crate."""
    base = Path(workflow.basedir)
    return json.dumps(
        {
            r.name: Path(r.snakefile).resolve().relative_to(base.resolve()).as_posix()
            for r in workflow.rules
        },
        sort_keys=True,
    )


def case_params(experiment_id, all_cases=None):
    """An input function: the JSON parameters of the job's case (among ``all_cases``, default
    every case the experiment's rules can build)."""
    all_cases = (
        plan.runnable_cases(experiment_id, config) if all_cases is None else all_cases
    )

    def params(wildcards):
        return json.dumps(all_cases[wildcards.case], sort_keys=True)

    return params


def job_memory(experiment_id):
    """A resources function: ``mem_mb`` of the job of a case (wildcards.case), its estimated peak
    with the margin (attnrepro.dag.preflight.job_mem_mb: MARGIN and OVERHEAD are set there).
    """
    estimated = preflight.estimated_cases(experiment_id, config)

    def mem_mb(wildcards):
        return preflight.job_mem_mb(experiment_id, estimated[wildcards.case])

    return mem_mb


def job_runtime(experiment_id):
    """A resources function: ``runtime`` (minutes) of the job of a case (wildcards.case), its
    estimated seconds with the margin, times the config's runtime_factor
    (attnrepro.resources.runtime.job_runtime_min: MARGIN and the coefficients are set there).
    """
    estimated = preflight.estimated_cases(experiment_id, config)
    factor = config.get("runtime_factor", 1.0)

    def minutes(wildcards):
        return runtime.job_runtime_min(
            experiment_id, estimated[wildcards.case], factor
        )

    return minutes


def extra_tables(wildcards, output):
    """`--table NAME=FILE` for every output but the main table."""
    return " ".join(f"--table {k}={v}" for k, v in output.items() if k != "main")


def upstream_inputs(experiment_id):
    """A params function: `--input NAME=FILE` for each upstream results file, and
    `--expected-params` (what the config plans for them: a stale file stops the job)."""
    import shlex

    paths = plan.input_paths(experiment_id, config)
    expected = (
        f" --expected-params {shlex.quote(expected_params(paths.values()))}"
        if paths
        else ""
    )

    def inputs(wildcards, input):
        return " ".join(f"--input {n}={input[n]}" for n in paths) + expected

    return inputs


def expected_params(paths):
    """The JSON of `--expected-params` for a job reading ``paths``: {experiment: {case: params}}
    that this config plans for the jobs writing them (only those: attnrepro.dag.plan.expected_params).
    """
    return json.dumps(
        plan.expected_params(paths, config), sort_keys=True, separators=(",", ":")
    )


def case_pattern(experiment_id):
    """A wildcard constraint matching exactly the run's cases of the experiment (the seed
    distribution's other trainings have a rule of their own, evidence.smk)."""
    names = plan.cases(experiment_id, config)
    return "|".join(sorted(names)) or "__none__"


def timing_threads():
    """Threads of a timing job: every core of the run, so that no other job runs beside it; the
    job's BLAS then runs min(these, the CPUs it may use) threads (src/attnrepro/numerics/threads.py:
    `--cores 16` on 2 CPUs runs 2, and its provenance says so). A cluster run without --cores
    (workflow/profiles/slurm) has no core count: there the job asks for a whole node
    (whole_node) and, evaluated again inside it with `--cores all`, takes all of it."""
    return workflow.resource_settings.cores or 1


def whole_node(exp):
    """Resources of a timing job: a node to itself on SLURM (a local run ignores them)."""
    return {"slurm_extra": "--exclusive"} if exp.timing else {}


def alternatives(names):
    """A wildcard constraint matching exactly ``names``."""
    import re

    return "|".join(re.escape(n) for n in sorted(names)) or "__none__"


# --- the annotated articles (workflow/rules/articles.smk) ----------------------------------
from snakemake.logging import logger  # noqa: E402

from attnrepro.evidence import articles  # noqa: E402

ARTICLES_CATEGORY = "Articles, annotated"


ARTICLES_FOLDER = articles.folder_of(config)
# {article: why its edition is not built}: its text is missing, or is not the text whose SHA-256
# config/published.yaml records (the locations of the claims would mark other words)
UNBUILT = articles.problems(ARTICLES_FOLDER)
for why in UNBUILT.values():
    logger.warning(f"annotated edition not built: {why}")


def article_outputs():
    """The editions of the articles found with their recorded text, and the ledger's overview and
    speed figures, for `all`."""
    editions = [
        articles.edition_path(a)
        for a in articles.ARTICLES
        if a not in UNBUILT
    ]
    return editions + [articles.OVERVIEW, articles.SPEED]
