"""Time as a resource: every experiment job asks Snakemake for its estimated wall time with the
margin (`resources: runtime`, workflow/rules/common.smk: job_runtime; attnrepro.resources.runtime), scaled
by the config's runtime_factor, and the estimates agree with measured wall times both ways within
the margin."""

import copy
import csv
import importlib
import math
import os
import statistics
import time

import pytest
from threadpoolctl import threadpool_limits

from attnrepro.dag import config as cfg
from attnrepro.dag import plan, preflight
from attnrepro.resources import runtime as runtimes
from attnrepro.dag import sweep_plan

from conftest import copy_repo, experiment_of, ours_only, planned_resource, snakemake

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

# A machine faster or slower than the one the prices were measured on (attnrepro.experiments._prices)
# scales every wall time by about one factor: an AVX-512 EPYC of our machine kind ran the small run's
# torch jobs in 1.4 s against 4.8 s estimated. What the estimates claim is their shape: each job's
# wall time within MARGIN of its estimate times this machine's factor (the median of the ratios). The
# factor itself is only bounded loosely: a machine SPEED_RANGE times faster or slower passes, and
# a gross error of every estimate fails (minutes taken for seconds: 60x).
SPEED_RANGE = 25


def machine_factor(times):
    """This machine's speed against the estimates: the median of measured / estimated seconds over
    ``times`` ({job: (measured, estimated)})."""
    return statistics.median(measured / estimated for measured, estimated in times.values())


def estimate_errors(times):
    """[sentence] for each job of ``times`` ({job: (measured, estimated)}) whose wall time is not
    within MARGIN, both ways, of its estimate times the machine's factor; and for a factor beyond
    SPEED_RANGE either way."""
    factor = machine_factor(times)
    errors = [] if 1 / SPEED_RANGE <= factor <= SPEED_RANGE else [f"this machine runs the jobs at "
                                                                  f"{factor:.2f} times their estimates, "
                                                                  f"beyond {SPEED_RANGE}x either way"]
    for job, (measured, estimated) in times.items():
        scaled = estimated * factor
        if not (measured <= runtimes.MARGIN * scaled and scaled <= runtimes.MARGIN * measured):
            errors.append(f"{job}: measured {measured:.2f} s, estimated {estimated:.2f} s, times this "
                          f"machine's {factor:.2f}: {scaled:.2f} s")
    return errors


def small_run_times(small_run):
    """{(experiment, case): (wall seconds from its benchmark, estimated seconds)} of the small run."""
    config = cfg.load(small_run / "results/config.resolved.yaml")
    times = {}
    for path in sorted((small_run / "results/benchmarks").rglob("*.tsv")):
        experiment, case = path.parent.name, path.stem
        with path.open() as fh:
            measured = float(next(csv.DictReader(fh, delimiter="\t"))["s"])
        params = preflight.estimated_cases(experiment, config)[case]
        times[experiment, case] = (measured, runtimes.seconds(experiment, params))
    return times


def test_the_estimates_agree_with_the_small_runs_wall_times(small_run):
    """Every job of the small run: its benchmark's wall seconds (column s) against its estimate,
    scaled by this machine's speed. Sensitive to load, as every timing is: the estimates are for two
    jobs on two cores (as the small run runs them); a machine loaded far beyond its cores stretches
    wall times past MARGIN."""
    load = os.getloadavg()[1]  # over the last 5 minutes: while the small run ran, or just after
    if load > 2 * os.cpu_count():
        pytest.skip(f"the machine is loaded ({load:.1f} on {os.cpu_count()} CPUs): wall times not comparable")
    times = small_run_times(small_run)
    assert len(times) > 30
    assert {experiment for experiment, _ in times} == set(plan.EXPERIMENTS)
    errors = estimate_errors(times)
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("speed", [4, 1 / 4])
def test_the_estimates_check_holds_on_a_machine_four_times_faster_or_slower(small_run, speed):
    """The same measurements, as a machine ``speed`` times slower would make them: the same verdict."""
    times = small_run_times(small_run)
    scaled = {job: (measured * speed, estimated) for job, (measured, estimated) in times.items()}
    assert machine_factor(scaled) == pytest.approx(machine_factor(times) * speed)
    jobs = [e.split(":")[0] for e in estimate_errors(times)]
    assert [e.split(":")[0] for e in estimate_errors(scaled)] == jobs


def test_the_estimates_check_finds_a_job_off_its_estimate_and_a_machine_beyond_the_range():
    times = {("a", "1"): (2.0, 1.0), ("b", "1"): (2.2, 1.1), ("c", "1"): (6.1, 1.0), ("d", "1"): (0.7, 1.0)}
    assert machine_factor(times) == 2.0
    assert estimate_errors(times) == [  # 6.1 > 3 x 2.0; 0.7 x 3 = 2.1 covers 2.0
        "('c', '1'): measured 6.10 s, estimated 1.00 s, times this machine's 2.00: 2.00 s"]
    assert estimate_errors({job: (60 * e, e) for job, (_, e) in times.items()}) == [
        "this machine runs the jobs at 60.00 times their estimates, beyond 25x either way"]
    assert estimate_errors({job: (e / 24.9, e) for job, (_, e) in times.items()}) == []


def within_margin(measured, estimated):
    """Both ways within MARGIN: the runtime covers the measurement, and asks no more than MARGIN
    times it."""
    return measured <= runtimes.MARGIN * estimated and estimated <= runtimes.MARGIN * measured


# medium cases, where the work, not the start-up, is most of a job's time (about 8 s of CPU in all)
MEDIUM = [
    ("train", "sort-L6-seed0", {"steps": 300, "eval_sequences": 200}),
    ("timing_exponent", "default", {"n": [512, 1024, 2048, 2896], "repeats": 4, "bootstrap": 200}),
    ("kv_speedup", "default", {"generated": [64, 96], "repeats": 1}),
]


@pytest.mark.full
@pytest.mark.parametrize("experiment, case, overrides", MEDIUM, ids=[m[0] for m in MEDIUM])
def test_the_work_estimate_agrees_with_a_measured_run(default_config, experiment, case, overrides):
    params = ours_only({**preflight.estimated_cases(experiment, default_config)[case], **overrides})
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
