"""Time as a resource: every experiment job asks Snakemake for its estimated wall time with the
margin (`resources: runtime`, workflow/rules/common.smk: job_runtime; attnrepro.resources.runtime), scaled
by the config's runtime_factor, and the estimates agree with measured wall times both ways within
the margin."""

import copy
import csv
import importlib
import math
import os
import time

import pytest
from threadpoolctl import threadpool_limits

from attnrepro.dag import config as cfg
from attnrepro.dag import plan, preflight
from attnrepro.resources import runtime as runtimes
from attnrepro.dag import sweep_plan

from conftest import copy_repo, experiment_of, planned_resource, snakemake

NUMERICS_TARGET = sweep_plan.output_path("default", "grad_check", "post_ln-true_eps-1e-06")


def expected_min(experiment_id, params, factor=1.0):
    """MARGIN x (estimated seconds + JOB_STEP) x factor in minutes, rounded up, at least 1: computed
    here from the estimate functions."""
    seconds = runtimes.seconds(experiment_id, params) + runtimes.JOB_STEP
    return max(1, math.ceil(runtimes.MARGIN * seconds * factor / 60))


def test_every_experiment_has_its_runtime_function():
    assert set(runtimes.WORK) == set(plan.EXPERIMENTS)


@pytest.fixture(scope="module")
def default_run_jobs(tmp_path_factory):
    """[(rule, case, runtime)] of a dry run of the default config, with a job of the numerics sweep."""
    root = copy_repo(tmp_path_factory.mktemp("runtime_dry"))
    proc = snakemake(root, "-n", "all", "seeds", NUMERICS_TARGET, configfile=None)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return planned_resource(proc.stdout + proc.stderr, "runtime")


def test_every_experiment_job_asks_for_its_estimated_runtime(default_run_jobs, default_config):
    jobs = [(rule, case, runtime) for rule, case, runtime in default_run_jobs if experiment_of(rule)]
    rules = {rule for rule, _, _ in jobs}
    assert {"timing_exponent_case", "train_case", "seed_training_case", "numerics_grad_check_case"} <= rules
    assert len(jobs) > 100
    for rule, case, runtime in jobs:
        experiment = experiment_of(rule)
        params = preflight.estimated_cases(experiment, default_config)[case]
        assert runtime == expected_min(experiment, params), (rule, case)
    # the longest jobs ask for more than the one-minute floor
    asked = {(rule, case): runtime for rule, case, runtime in jobs}
    assert asked[("timing_exponent_case", "default")] == 2
    assert asked[("train_case", "copy-L8-seed0")] == 2


@pytest.mark.full
def test_a_profile_scales_every_runtime_by_runtime_factor_and_a_bad_one_is_refused(tmp_path, default_config):
    """The SLURM profile's way: `config: {runtime_factor: ...}` in a profile's config.yaml."""
    root = copy_repo(tmp_path / "run")
    for name, factor in (("slower", 2.5), ("bad", 0)):
        (root / name).mkdir()
        (root / name / "config.yaml").write_text(f"config:\n  runtime_factor: {factor}\n")
    targets = [plan.output_path("timing_exponent", "default"), plan.output_path("train", "copy-L8-seed0")]
    proc = snakemake(root, "-n", "--profile", "slower", *targets, configfile=None)
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = {rule: runtime for rule, _, runtime in planned_resource(proc.stdout + proc.stderr, "runtime")}
    for rule, experiment, case in (("timing_exponent_case", "timing_exponent", "default"),
                                   ("train_case", "train", "copy-L8-seed0")):
        params = preflight.estimated_cases(experiment, default_config)[case]
        assert jobs[rule] == expected_min(experiment, params, 2.5) > expected_min(experiment, params)
    proc = snakemake(root, "-n", "--profile", "bad", *targets, configfile=None)
    assert proc.returncode != 0
    assert "runtime_factor: 0 is less than or equal to the minimum of 0" in proc.stdout + proc.stderr


@pytest.mark.parametrize("value, expected", [
    (0, "runtime_factor: 0 is less than or equal to the minimum of 0"),
    (-1.5, "runtime_factor: -1.5 is less than or equal to the minimum of 0"),
    (float("inf"), "runtime_factor: .inf is not a finite number"),
    (float("nan"), "runtime_factor: .nan is not a finite number"),
    ("2", "runtime_factor: '2' is not of type 'number'"),
    (None, "runtime_factor: None is not of type 'number'"),
])
def test_a_bad_runtime_factor_is_refused_naming_the_key(default_config, value, expected):
    config = copy.deepcopy(default_config)
    config["runtime_factor"] = value
    with pytest.raises(cfg.ConfigError) as info:
        cfg.validate(config)
    assert expected in str(info.value)


def test_a_positive_runtime_factor_is_taken(default_config):
    for value in (0.5, 1, 2.5):
        config = {**copy.deepcopy(default_config), "runtime_factor": value}
        assert cfg.validate(config)["runtime_factor"] == value


# --- the estimates against measured wall times ---------------------------------------------------

def within_margin(measured, estimated):
    """Both ways within MARGIN: the runtime covers the measurement, and asks no more than MARGIN
    times it."""
    return measured <= runtimes.MARGIN * estimated and estimated <= runtimes.MARGIN * measured


def test_the_estimates_agree_with_the_small_runs_wall_times(small_run):
    """Every job of the small run: its benchmark's wall seconds (column s) against its estimate.
    Sensitive to load, as every timing is: the estimates are for two jobs on two cores (as the
    small run runs them); a machine loaded far beyond its cores stretches wall times past MARGIN."""
    load = os.getloadavg()[1]  # over the last 5 minutes: while the small run ran, or just after
    if load > 2 * os.cpu_count():
        pytest.skip(f"the machine is loaded ({load:.1f} on {os.cpu_count()} CPUs): wall times not comparable")
    config = cfg.load(small_run / "results/config.resolved.yaml")
    files = sorted((small_run / "results/benchmarks").rglob("*.tsv"))
    assert len(files) > 30
    seen, wrong = set(), []
    for path in files:
        experiment, case = path.parent.name, path.stem
        with path.open() as fh:
            measured = float(next(csv.DictReader(fh, delimiter="\t"))["s"])
        estimated = runtimes.seconds(experiment, preflight.estimated_cases(experiment, config)[case])
        seen.add(experiment)
        if not within_margin(measured, estimated):
            wrong.append(f"{experiment} {case}: measured {measured:.2f} s, estimated {estimated:.2f} s")
    assert seen == set(plan.EXPERIMENTS)
    assert not wrong, "\n".join(wrong)


# medium cases, where the work, not the start-up, is most of a job's time (about 8 s of CPU in all)
MEDIUM = [
    ("train", "sort-L6-seed0", {"steps": 300, "eval_sequences": 200}),
    ("timing_exponent", "default", {"n": [512, 1024, 2048, 2896], "repeats": 4, "bootstrap": 200}),
    ("kv_speedup", "default", {"generated": [64, 96], "repeats": 1}),
]


@pytest.mark.full
@pytest.mark.parametrize("experiment, case, overrides", MEDIUM, ids=[m[0] for m in MEDIUM])
def test_the_work_estimate_agrees_with_a_measured_run(default_config, experiment, case, overrides):
    params = {**preflight.estimated_cases(experiment, default_config)[case], **overrides}
    estimated = runtimes.work(experiment, params)
    assert estimated > runtimes.START  # the work term, more than the start-up, is what is checked here
    module = importlib.import_module(plan.EXPERIMENTS[experiment].module)
    # the work itself: CPU seconds on one BLAS thread, as the coefficients were measured (a
    # training's job runs so), without the waits that other processes add to a wall time under load
    # (the small run's wall times above carry those, and MARGIN covers them)
    with threadpool_limits(limits=1):
        started = time.process_time()
        module.run(params)
        measured = time.process_time() - started
    assert within_margin(measured, estimated), f"measured {measured:.2f} s, estimated {estimated:.2f} s"
