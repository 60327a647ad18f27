"""The rerun's cost before any job (:mod:`attnrepro.dag.cost`) against the verifier's budget
(:mod:`attnrepro.archive.verify_budget`, ``verify --budget``); Snakemake never runs here."""

import json

import pytest

import hostile
from attnrepro.archive import verify, verify_budget, verify_rerun
from attnrepro.articles import bounded
from attnrepro.dag import config as cfg, cost, plan, preflight
from attnrepro.resources import runtime

DEFAULT = cfg.load(cfg.DEFAULT)


def _run(over):
    """config/config.yaml with ``over``'s keys over it, as a rerun's merged config is."""
    return cfg.merge(DEFAULT, over)


# ---- the jobs of a run ------------------------------------------------------------------------

def test_the_default_runs_jobs_are_every_case_and_the_seed_trainings_beyond_the_runs_own():
    found = cost.jobs(DEFAULT)
    trainings = [job.case for job in found if job.experiment == "train"]
    assert len(found) == 116 and len(trainings) == 74  # 65 cases of the run, 51 seed trainings beyond
    assert sorted(trainings) == sorted(plan.seed_distribution_cases(DEFAULT) | plan.cases("train", DEFAULT))
    job = next(job for job in found if (job.experiment, job.case) == ("train", "sort-L8-seed19"))
    params = plan.seed_distribution_cases(DEFAULT)["sort-L8-seed19"]
    assert job.seconds == runtime.seconds("train", params)
    assert job.mem_mb == preflight.job_mem_mb("train", params)


def test_each_switch_adds_its_jobs():
    assert len(cost.jobs(_run({"seed_distribution": {"build": False}}))) == 65
    # skipped, the run's trainings are still the seed distribution's: its 60 trainings
    assert len(cost.jobs(_run({"skip": ["train"]}))) == 65 - 23 + 60
    swept = cost.jobs(_run({"numerics": {"sweep": True}}))
    assert len(swept) == 116 + 16 * 20  # 16 settings named (14 here, 2 of the article environment) x 20 cases
    assert ("train", "article.default/sort-L8-seed2") in {(job.experiment, job.case) for job in swept}
    found = cost.jobs(_run({"listings": {"build": True, "timeout_s": 100}}))
    assert len(found) == 116 + 3
    assert found[-3:] == [cost.Job("listings", a, 100, None) for a in ("000", "001", "003")]
    untimed = _run({"listings": {"build": True}})
    del untimed["listings"]["timeout_s"]  # as the workflow reads it: an hour
    assert cost.jobs(untimed)[-1] == cost.Job("listings", "003", 3600, None)


def test_an_article_checked_from_its_text_counts_its_two_runs_at_their_time_limit():
    post = {"id": "post", "text": "post.md", "sha256": "1" * 64, "title": "P", "time_limit_s": 30,
            "memory_limit_mib": 1024}
    checks = [job for job in cost.jobs(_run({"articles": [*DEFAULT["articles"], post, {**post, "id": "p2",
                                                                                     "time_limit_s": None}]}))
              if job.experiment == "check"]
    assert checks == [cost.Job("check", "post", 60, preflight.check_mem_mb(1024)),
                      cost.Job("check", "p2", 2 * bounded.TIME_LIMIT_S, preflight.check_mem_mb(1024))]
    assert preflight.check_mem_mb(1024) == 1494 != preflight.check_mem_mb(None)


def test_the_estimate_sums_the_jobs_and_names_the_largest():
    estimate = cost.estimate(_run({"train": {"steps": 1_000_000}}))
    found = cost.jobs(_run({"train": {"steps": 1_000_000}}))
    assert estimate.seconds == sum(job.seconds for job in found) and estimate.jobs == 116
    assert cost.shown(estimate.seconds) == "8.3 core-days"  # the project's estimate of 1,000,000 steps
    assert (estimate.largest.experiment, estimate.largest.case) == ("train", "copy-L8-seed0")
    assert list(estimate.by_experiment)[0] == "train"
    assert estimate.by_experiment["train"] == sum(job.seconds for job in found if job.experiment == "train")
    assert (estimate.largest_mem.experiment, estimate.largest_mem.mem_mb) == ("scale_sweep", 1782)
    assert cost.estimate({"skip": list(plan.EXPERIMENTS)}) == cost.Estimate(0, 0, None, None, {})


# ---- durations ---------------------------------------------------------------------------------

@pytest.mark.parametrize("seconds, shown, written", [
    (0.5, "0.5 core-seconds", "1s"), (1, "1 core-second", "1s"), (59.5, "60 core-seconds", "60s"),
    (60, "1 core-minute", "1m"), (1375.7, "23 core-minutes", "23m"), (5503, "1.5 core-hours", "2h"),
    (714_774, "8.3 core-days", "9d"), (86400 * 10, "10 core-days", "10d"),
    (25e9, "793 core-years", "793y"), (12_345 * 365 * 86400, "12,345 core-years", "12345y"),
])
def test_a_duration_is_shown_in_its_largest_unit_and_written_rounded_up(seconds, shown, written):
    assert (cost.shown(seconds), cost.written(seconds)) == (shown, written)
    assert cost.parse_duration(written) >= seconds
    assert cost.shown(7200, what="") == "2 hours"


@pytest.mark.parametrize("text, seconds", [("90s", 90), ("30m", 1800), ("2h", 7200), ("1.5d", 129600),
                                           ("1y", 365 * 86400), (" 2H ", 7200)])
def test_a_duration_is_a_number_and_a_unit(text, seconds):
    assert cost.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["5", "h", "-1h", "0s", "nanh", "infh", "2w", "", "2hh"])
def test_anything_else_is_not_a_duration(text):
    with pytest.raises(ValueError) as error:
        cost.parse_duration(text)
    assert str(error.value) == (f"{text.strip()!r} is not a duration: a positive number and a unit, s, m, "
                                "h, d or y (90m, 2h, 3d)")


# ---- the budget --------------------------------------------------------------------------------

def test_the_default_budget_is_four_times_the_default_runs_estimate():
    assert verify_budget.default_seconds() == 4 * cost.estimate(DEFAULT).seconds
    assert cost.shown(verify_budget.default_seconds()) == "1.5 core-hours"


def test_the_default_run_is_within_the_default_budget_and_says_so():
    estimate = cost.estimate(DEFAULT)
    assert verify_budget.check(DEFAULT, verify_budget.default_seconds(), DEFAULT) == (
        f"rerun estimate: {cost.shown(estimate.seconds)} in 116 jobs; its largest job asks 1782 MB "
        "(scale_sweep default); budget 1.5 core-hours (--budget)")
    assert verify_budget.check(DEFAULT, estimate.seconds, DEFAULT).startswith("rerun estimate: ")  # at it


def test_without_memory_asked_or_keys_to_name_the_lines_say_less():
    listings = cost.Estimate(7200, 1, cost.Job("listings", "000", 7200, None), None, {"listings": 7200})
    assert verify_budget.summary(listings, 14400) == (
        "rerun estimate: 2 core-hours in 1 jobs; budget 4 core-hours (--budget)")
    with pytest.raises(verify_budget.OverBudget) as refused:
        verify_budget.check(_run({"listings": {"build": True}}), 60, DEFAULT)
    assert str(refused.value) == (
        "the archive's config asks about 3.4 core-hours of jobs (119 jobs; listings 3 core-hours), beyond "
        "this verifier's budget of 1 core-minute: allow it with --budget 4h")


# within the schema's bounds (steps at most 10^6), 1,152 times the default run
THOUSANDFOLD = {"train": {"steps": 1_000_000}, "seed_distribution": {"seeds": list(range(50))}}
THOUSANDFOLD_TEXT = json.dumps(THOUSANDFOLD) + "\n"
REFUSED = ("the archive's config asks about 18 core-days of jobs (206 jobs; train 18 core-days; train.steps "
           "1000000 (here 1500), seed_distribution.seeds 50 values (here 20 values)), beyond this verifier's "
           "budget of 1.5 core-hours: allow it with --budget 19d")


def test_a_thousand_times_the_default_run_is_refused_naming_its_estimate_its_key_and_the_budget():
    merged = _run(THOUSANDFOLD)
    assert cost.estimate(merged).seconds > 1000 * cost.estimate(DEFAULT).seconds
    with pytest.raises(verify_budget.OverBudget) as refused:
        verify_budget.check(merged, verify_budget.default_seconds(), DEFAULT)
    assert str(refused.value) == REFUSED
    assert verify_budget.check(merged, cost.parse_duration("19d"), DEFAULT).startswith(
        "rerun estimate: 18 core-days in 206 jobs;")


def test_the_keys_named_are_those_of_the_experiments_sections_that_differ_at_most_three():
    merged = _run({"train": {"steps": 3, "batch": 2, "d": 8, "heads": 2},
                   "seed_distribution": {"seeds": [0]}})
    assert verify_budget.driving_keys("train", merged, DEFAULT) == [
        "train.steps 3 (here 1500)", "train.batch 2 (here 32)", "train.d 8 (here 32)", "2 more"]
    three = _run({"train": {"steps": 3, "batch": 2, "d": 8}})
    assert verify_budget.driving_keys("train", three, DEFAULT) == [
        "train.steps 3 (here 1500)", "train.batch 2 (here 32)", "train.d 8 (here 32)"]
    assert verify_budget.driving_keys("train", _run({"seed_distribution": {"seeds": [0, 1]}}), DEFAULT) == [
        "seed_distribution.seeds [0, 1] (here 20 values)"]
    crate = _run({"crate": {"title": "t" * 50}})
    assert verify_budget.driving_keys("crate", crate, DEFAULT) == []  # not an experiment
    assert verify_budget._short("t" * 50) == repr("t" * 50)[:37] + "..."
    assert verify_budget._short("t" * 38) == repr("t" * 38)  # 40 characters: whole
    assert verify_budget.driving_keys("listings", merged, DEFAULT) == []
    assert verify_budget.driving_keys("score_memory", merged, DEFAULT) == []


# ---- verify, its rerun stubbed -----------------------------------------------------------------

@pytest.fixture
def no_snakemake(tmp_path, monkeypatch):
    """verify with a checkout of one file to copy, and Snakemake replaced by a recorder that fails."""
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo/Snakefile").write_text("")
    monkeypatch.setattr(verify, "REPO", tmp_path / "repo")
    calls = []

    def run(cmd, workdir, remove=None):
        calls.append(json.loads((workdir / verify_rerun.CONFIG_JSON).read_text()))
        (workdir / verify_rerun.LOG).write_text("stubbed\n")
        return 1

    monkeypatch.setattr(verify_rerun, "run", run)
    return calls


def _verify(tmp_path, config_text, *args):
    (tmp_path / "built").mkdir()
    archive = hostile.honest(tmp_path / "built", config_text)
    return verify.main([str(archive), "--workdir", str(tmp_path / "rerun"), "--cores", "1", *args])


def test_verify_refuses_a_rerun_beyond_its_budget_before_any_job(tmp_path, capsys, no_snakemake):
    assert _verify(tmp_path, THOUSANDFOLD_TEXT) == 2
    out, err = capsys.readouterr()
    assert err.splitlines() == [f"verify: {REFUSED}"]
    assert no_snakemake == [] and "rerunning" not in out and not (tmp_path / "rerun").exists()


def test_verify_reruns_it_within_the_budget_given(tmp_path, capsys, no_snakemake):
    assert _verify(tmp_path, THOUSANDFOLD_TEXT, "--budget", "19d") == 2  # the stub failed
    out = capsys.readouterr().out.splitlines()
    assert [config["train"]["steps"] for config in no_snakemake] == [1_000_000]
    (line,) = [line for line in out if line.startswith("rerun estimate:")]
    assert line.endswith("; budget 19 core-days (--budget)")


def test_the_budget_is_a_time_in_the_help():
    assert "  --budget TIME      the most core time a rerun may take" in verify._parser().format_help()


def test_a_budget_that_is_not_a_duration_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as status:
        verify.main(["a.tar.gz", "--budget", "5"])
    (line,) = capsys.readouterr().err.splitlines()
    assert status.value.code == 2 and line == (
        "attnrepro verify: argument --budget: '5' is not a duration: a positive number and a unit, s, m, h, "
        "d or y (90m, 2h, 3d) (see attnrepro verify --help)")


def test_the_numerics_sweep_of_an_archive_is_replaced_with_a_warning_and_never_run(tmp_path, capsys,
                                                                                 no_snakemake):
    assert _verify(tmp_path, "numerics: {sweep: true}\nruntime_factor: 2.5\n") == 2  # the stub failed
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if "replaced by" in line] == [
        "warning: numerics.sweep: the archive's true replaced by this checkout's false (a key of the "
        "verifying machine, never of an archive)",
        "warning: runtime_factor: the archive's 2.5 replaced by this checkout's 1.0 (a key of the verifying "
        "machine, never of an archive)"]
    ((config),) = no_snakemake  # what Snakemake got
    assert (config["numerics"], config["runtime_factor"]) == ({"sweep": False}, 1.0)
    assert "rerun estimate: 23 core-minutes in 116 jobs" in "\n".join(out)  # the sweep's jobs not counted


def test_the_memory_limit_of_an_archive_does_not_lift_this_machines(tmp_path, capsys, no_snakemake,
                                                                   monkeypatch):
    monkeypatch.setattr(preflight, "machine_bytes", lambda: 8 << 30)
    text = "memory: {limit_gib: 1000000}\nscore_memory: {n: [256, 100000]}\n"
    assert _verify(tmp_path, text) == 2
    out, err = capsys.readouterr()
    (line,) = err.splitlines()
    assert line == (
        "verify: the archive's config attnrepro-results-hostile/config.resolved.yaml cannot be rerun: "
        "score_memory.n[1]: 100000 needs about 3.5e+11 bytes = 327 GiB (causal attention: 4 x (n, n) "
        "float64 and its mask) in one job; the limit is 6.4 GiB (80% of this machine's 8.0 GiB; "
        "memory.limit_gib sets another)")
    assert ("warning: memory.limit_gib: the archive's 1000000 replaced by this checkout's null (a key of the "
            "verifying machine, never of an archive)") in out.splitlines()
    assert no_snakemake == []
