"""Memory as a resource: every experiment job asks Snakemake for its estimated peak with the
margin (`resources: mem_mb`, workflow/rules/common.smk: job_memory), and a local run never runs
together jobs whose mem_mb sum exceeds its budget, the pre-flight's limit (memory.limit_gib)."""

import math
import re
import subprocess
import sys

import pytest

from attnrepro.resources import memory
from attnrepro.dag import plan, preflight
from attnrepro.archive.crate_jobs import snakemake_records
from attnrepro.experiments._memory import MIB
from attnrepro.dag import sweep_plan

from conftest import copy_repo, experiment_of, planned_resource, small_config, snakemake

NUMERICS_TARGET = sweep_plan.output_path("default", "grad_check", "post_ln-true_eps-1e-06")


def expected_mb(experiment_id, params):
    """The estimate with the margin, computed here from the estimate functions: MARGIN x peak +
    OVERHEAD, in megabytes rounded up."""
    peak = memory.estimate(experiment_id, params)
    return math.ceil((preflight.MARGIN * peak + preflight.OVERHEAD) / 1e6)


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    """The jobs of a dry run of the small config, with a job of the numerics sweep."""
    root = copy_repo(tmp_path_factory.mktemp("memory_dry"))
    proc = snakemake(root, "-n", "all", "seeds", NUMERICS_TARGET)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return planned_resource(proc.stdout + proc.stderr, "mem_mb")


def test_every_experiment_job_asks_for_its_estimate_with_the_margin(dry_run):
    config = small_config()
    jobs = [(rule, case, mem) for rule, case, mem in dry_run if experiment_of(rule)]
    rules = {rule for rule, _, _ in jobs}
    assert {"scale_table_case", "train_case", "seed_training_case", "numerics_grad_check_case"} <= rules
    assert len(jobs) > 30
    for rule, case, mem in jobs:
        experiment = experiment_of(rule)
        params = preflight.estimated_cases(experiment, config)[case]
        assert mem == expected_mb(experiment, params), (rule, case)
    # the attention map reads its training's model back: its estimate counts it (not the allowance)
    ((case, mem),) = [(c, m) for r, c, m in jobs if r == "attention_map_case"]
    assert mem > expected_mb("attention_map", plan.cases("attention_map", config)[case])


@pytest.mark.full
def test_the_margin_covers_what_no_estimate_counts():
    """OVERHEAD holds the interpreter with the libraries a job loads (measured in a fresh one),
    and a job of a large estimate asks MARGIN times it."""
    # the interpreter's own high-water mark (VmHWM: a new address space at exec). Not ru_maxrss,
    # which Linux keeps across fork and exec: it would count the test process that forked it.
    code = ("import attnrepro.experiments.case_run, numpy, pandas, pyarrow.parquet, torch;"
            "print(next(int(line.split()[1]) * 1024 for line in open('/proc/self/status')"
            " if line.startswith('VmHWM:')))")
    loaded = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                check=True).stdout)
    assert 200 * MIB < loaded < preflight.OVERHEAD
    big = {"keys": 10**6, "d": [512]}  # saturation: 4 GB of keys
    peak = memory.estimate("saturation", big)
    asked = preflight.job_mem_mb("saturation", big) * 1e6
    assert 1.2 * peak + loaded < asked <= preflight.MARGIN * peak + preflight.OVERHEAD + 1e6


@pytest.mark.full
def test_a_budget_of_one_job_runs_the_jobs_one_after_the_other(tmp_path):
    """Two one-thread jobs on two cores, with a memory.limit_gib whose budget (the pre-flight's
    limit) holds either job but not both: Snakemake never runs them together."""
    root = copy_repo(tmp_path / "run")
    config = small_config()
    cases = ["d_k-8_scaled-false", "d_k-64_scaled-true"]
    params = preflight.estimated_cases("scale_table", config)
    asked = [preflight.job_mem_mb("scale_table", params[c]) for c in cases]
    budget_gib = (max(asked) + 10) * 1e6 / 2**30
    assert max(asked) < budget_gib * 2**30 / 1e6 < sum(asked)
    (root / "budget.yaml").write_text(f"memory: {{limit_gib: {budget_gib!r}}}\n")
    targets = [plan.output_path("scale_table", c) for c in cases]
    proc = snakemake(root, *targets, configfile="config/small.yaml budget.yaml", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    budget = preflight.budget_mb({"memory": {"limit_gib": budget_gib}})
    (provided,) = [line for line in proc.stderr.splitlines() if line.startswith("Provided resources:")]
    assert re.search(rf"mem_mb\W+(mem_mb\W+)?{budget}\b", provided), provided
    records = snakemake_records(root)
    spans = sorted((records[t]["starttime"], records[t]["endtime"]) for t in targets)
    assert spans[0][1] <= spans[1][0], f"the two jobs ran together: {spans}"
