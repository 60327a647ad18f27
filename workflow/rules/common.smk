# What every theme needs: the validated config, the run plan, the result paths (attnrepro.paths:
# every path under results/ is built there), the run's identity and memory, the code inputs of a
# job and the helpers of the experiment jobs (experiments.smk, evidence.smk). Each theme's own
# helpers live in its own file (experiments, evidence, report, articles), which names its rules
# with `name:` (`snakemake --lint` flags a named `rule` beside a `def`); none reads another's
# helpers while the files are read, so their include order in the Snakefile does not matter.
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


from attnrepro import paths  # noqa: E402
from attnrepro.articles import catalog as articles_catalog  # noqa: E402
from attnrepro.dag import config as attnrepro_config  # noqa: E402
from attnrepro.dag import code_inputs, plan, preflight  # noqa: E402
from attnrepro.dag import declared as declared_inputs  # noqa: E402
from attnrepro.dag import software as software_pins  # noqa: E402
from attnrepro.resources import runtime  # noqa: E402
from attnrepro.run import heartbeat as attnrepro_heartbeat  # noqa: E402
from attnrepro.run import ownership as attnrepro_ownership  # noqa: E402
from attnrepro.report.ledger import claims_check  # noqa: E402
from attnrepro.run import usage  # noqa: E402

# A bad config or claims file stops Snakemake here, before any job, with its message alone (naming
# file and key on each line): sys.exit prints just that; a WorkflowError adds the line of this file
# and a line of traceback.
try:  # the config files Snakemake loaded are read again: a key given twice is refused
    attnrepro_config.validate(config, files=workflow.configfiles)
except attnrepro_config.ConfigError as error:
    sys.exit(str(error))

# The articles of the run (config `articles`): {id: its entry}, as listed. Those with experiments
# of their own (the seeds) are reproduced by them; every other is checked from its text alone, its
# listings run (articles.smk, rules check_<article>).
ARTICLES = articles_catalog.from_config(config)
REPRODUCED = {
    a: article
    for a, article in ARTICLES.items()
    if a in {exp.article for exp in plan.EXPERIMENTS.values()}
}
CHECKED = {a: article for a, article in ARTICLES.items() if a not in REPRODUCED}
# {article: why it cannot be checked}: its text is missing, or has another SHA-256 than its entry
# records; the default target leaves it out (articles.smk warns), asked for by name its job refuses
UNCHECKED = articles_catalog.problems(CHECKED)
CHECKABLE = {a: article for a, article in CHECKED.items() if a not in UNCHECKED}

# The claims are data too: read strictly and checked against their schema before any job runs, so
# that a bad file stops the run here, in one message naming file, claim and key, not in each job
# that reads it (the ledger, the seeds, the numerics, the editions).
PUBLISHED = "config/published.yaml"
try:  # as every job reading the claims loads them (attnrepro.report.ledger.claims_check)
    claims_check.check(PUBLISHED)
except usage.UsageError as error:
    sys.exit(str(error))

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
# First this process takes the folder's run lock (.snakemake/attnrepro/run.lock, flock: atomic,
# where Snakemake's own lock is not, and released by the OS when this process dies). A second
# run that finds it held stops here, before any job, with one line naming the holder: sys.exit
# prints just that line (a WorkflowError adds the Snakefile's line and a traceback line).
onstart:
    if workflow.is_main_process and RUN is not None:
        try:
            attnrepro_heartbeat.publish(RUN.token())
        except attnrepro_heartbeat.Busy as busy:
            sys.exit(str(busy))


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


def all_outputs():
    """Every Parquet file of the run."""
    return plan.all_outputs(config)


# Code inputs: the files under src/ that a job imports, from its entry module
# (`python -m attnrepro.jobs.<command>`, which imports statically what its command runs) and the
# modules its command dispatches by a name from the config or the catalog (an experiment's, a
# product's builder, an evidence product's evaluate module), and the repository files those
# modules read (their READS, such as tests/golden/numerics.json). Editing a module reruns exactly
# the jobs that run it.
def job_code(command, *dispatched):
    """The files under src/ that a job of ``command`` (attnrepro.jobs.<command>) imports, with the
    ``dispatched`` modules it imports by name."""
    return code_inputs.source_files(f"attnrepro.jobs.{command}", *dispatched)


def pinned(command, *dispatched):
    """A rule's parameter `software`: the runtime lock's pins of the distributions that the modules
    a job of ``command`` imports (job_code without the files they read as data) import
    (attnrepro.dag.software), so that changing one pin reruns exactly the jobs that import it
    ("params changed"). A value, not a function of the job's input: Snakemake records no
    parameter derived from a job's input."""
    code = code_inputs.source_files(
        f"attnrepro.jobs.{command}", *dispatched, data=False
    )
    try:
        return software_pins.pinned(code)
    except software_pins.MissingPin as error:
        raise WorkflowError(str(error))


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
        return runtime.job_runtime_min(experiment_id, estimated[wildcards.case], factor)

    return minutes


def extra_tables(wildcards, output):
    """`--table NAME=FILE` for every output but the main table."""
    return " ".join(f"--table {k}={v}" for k, v in output.items() if k != "main")


def expected_params(files):
    """The JSON of `--expected-params` for a job reading ``files``: {experiment: {case: params}}
    that this config plans for the jobs writing them (only those: attnrepro.dag.plan.expected_params).
    """
    return json.dumps(
        plan.expected_params(files, config), sort_keys=True, separators=(",", ":")
    )


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


# What a job read (src/attnrepro/run/reads.py): every shell that runs a job entry opens with
# {params.job} (job_env: the rule's name and every file of its input, results files included)
# and ends with `2> {log}`, where the job's record of what it read is written beside it. A job
# reading a project file that is not among those inputs fails, naming the rule and the file; a
# file passed through params is no input of it.
def job_env():
    """A params function: `ATTNREPRO_RULE=<its rule's name> ATTNREPRO_DECLARED=<every input file
    of the job, compacted>` (attnrepro.dag.declared). The name is Snakemake's own, that of the
    one rule whose params hold this function (each call makes a new one), never written twice (a
    shell's `{rule}` would give it too, but `snakemake --lint` takes it for a global variable). A
    job with more inputs than one variable of its environment holds is refused here, naming the
    config keys that multiply them."""

    def job(wildcards, input):
        (rule,) = [r.name for r in workflow.rules if any(p is job for p in r.params)]
        try:
            return declared_inputs.handed_down(rule, input, config)
        except ValueError as error:
            raise WorkflowError(str(error))

    return job
