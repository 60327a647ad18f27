# Helpers for the .smk files: the validated config, the run plan, source-file inputs.
import json
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


from attnrepro import config as attnrepro_config  # noqa: E402
from attnrepro import deps, plan  # noqa: E402
from attnrepro.report import catalog  # noqa: E402

try:
    attnrepro_config.validate(config)
except attnrepro_config.ConfigError as error:
    raise WorkflowError(str(error))

CONDA_ENV = "../../envs/attnrepro.yaml"
CLI = "attnrepro.cli"


def all_outputs():
    """Every Parquet file of the run."""
    return plan.all_outputs(config)


def sources(*modules):
    """The files under src/ that a job running ``modules`` through the CLI imports."""
    return deps.source_files(CLI, *modules)


def report_sources(*modules):
    """The files under src/ that a report job running ``modules`` imports."""
    return deps.source_files("attnrepro.report.cli", *modules)


def report_outputs():
    """Every table, figure and ledger file of the run, and the index of results/."""
    return catalog.all_outputs(config) + [
        "results/ledger.csv",
        "results/LEDGER.md",
        "results/README.md",
    ]


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


def case_params(experiment_id):
    """An input function: the JSON parameters of the job's case."""
    all_cases = plan.runnable_cases(experiment_id, config)

    def params(wildcards):
        return json.dumps(all_cases[wildcards.case], sort_keys=True)

    return params


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
    that this config plans for the jobs writing them (only those: attnrepro.plan.expected_params).
    """
    return json.dumps(
        plan.expected_params(paths, config), sort_keys=True, separators=(",", ":")
    )


def case_pattern(experiment_id):
    """A wildcard constraint matching exactly the cases the rule can build."""
    names = plan.runnable_cases(experiment_id, config)
    return "|".join(sorted(names)) or "__none__"


def timing_threads():
    """Threads of a timing job: every core of the run. A cluster run without --cores
    (workflow/profiles/slurm) has no core count: there the job asks for a whole node
    (whole_node) and, evaluated again inside it with `--cores all`, takes all of it."""
    return workflow.resource_settings.cores or 1


def whole_node(exp):
    """Resources of a timing job: a node to itself on SLURM (a local run ignores them)."""
    return {"slurm_extra": "--exclusive"} if exp.timing else {}


# --- evidence for the ledger (workflow/rules/numerics.smk) ---------------------------------
from attnrepro import numerics  # noqa: E402

NUMERICS = config.get("numerics") or {}
NUMERICS_PRODUCTS = catalog.NUMERICS_PRODUCTS
SEED_PRODUCTS = catalog.SEED_PRODUCTS


def evidence_all():
    """The evidence products the config switches on, for the default target: numerics.sweep,
    seed_distribution.build."""
    return [
        path
        for products in catalog.evidence(config).values()
        for path in products.values()
    ]


def ledger_evidence():
    """The ledger's evidence inputs: the CSV of each product the config switches on."""
    return {
        name: products["csv"] for name, products in catalog.evidence(config).items()
    }


def evidence_options(wildcards, input):
    """`--numerics-evidence FILE --seed-evidence FILE` for the ledger's evidence inputs."""
    flags = {"numerics": "--numerics-evidence", "seeds": "--seed-evidence"}
    return " ".join(f"{flags[name]} {input[name]}" for name in ledger_evidence())


def numerics_data(wildcards):
    """Every Parquet file of the sweep, over the settings the probe kept (a checkpoint)."""
    probe = checkpoints.numerics_settings.get().output[0]
    return numerics.outputs(config, numerics.kept(probe))


def seed_trainings():
    """The main table of every training of the seed distribution (plan.seed_distribution_cases)."""
    return [
        plan.output_path("train", case) for case in plan.seed_distribution_cases(config)
    ]


def archive_files(wildcards):
    """Every output of the run and, when switched on, the evidence with the data it reads."""
    on = catalog.evidence(config)
    files = all_outputs() + report_outputs() + evidence_all()
    if "seeds" in on:
        # every table of those trainings: `attnrepro verify` compares every Parquet file
        files += [
            plan.output_path("train", case, table)
            for case in plan.seed_distribution_cases(config)
            for table in plan.EXPERIMENTS["train"].tables
        ]
    if "numerics" in on:
        files += [numerics.SETTINGS_FILE, *numerics_data(wildcards)]
    return sorted(set(files))


def alternatives(names):
    """A wildcard constraint matching exactly ``names``."""
    import re

    return "|".join(re.escape(n) for n in sorted(names)) or "__none__"
