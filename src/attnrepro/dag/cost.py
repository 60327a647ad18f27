"""What a run of a config costs, estimated before any job: its jobs' seconds and largest memory.

Pure Python, no numerical import. The jobs are those that ``snakemake`` (the default target) runs
under the config: every case of every experiment not skipped, the seed distribution's trainings
beyond the run's own (``seed_distribution.build``), the numerics sweep's cases under every setting
the config names (``numerics.sweep``; the probe may keep fewer: an upper bound), each reproduced
article's listings (``listings.build``) and each article checked from its text. An experiment
job's seconds and memory are the project's own estimates, as its rule asks them of Snakemake
(:func:`attnrepro.resources.runtime.seconds`, :func:`attnrepro.dag.preflight.job_mem_mb`); a
listings job or an article's check counts its time limit, the most it may take (twice for a
check, which runs its listings twice). The report's jobs (tables, figures, ledger: seconds each)
are not counted.

The sum of the jobs' seconds is *core time*: each job runs one thread, so a run on N cores takes
about that sum divided by N, at best. The default run's: :func:`estimate` of config/config.yaml.
"""

import math
from typing import NamedTuple

from attnrepro.articles import bounded
from attnrepro.dag import plan, preflight
from attnrepro.dag import sweep_plan
from attnrepro.evidence import sweep
from attnrepro.resources import runtime

LISTINGS_TIMEOUT_S = 3600  # listings.timeout_s when the config has none (workflow/rules/evidence.smk)

# (suffix, seconds, name) of the units a duration is written and read in, largest first
UNITS = (("y", 365 * 86400, "year"), ("d", 86400, "day"), ("h", 3600, "hour"), ("m", 60, "minute"),
         ("s", 1, "second"))


class Job(NamedTuple):
    experiment: str  # an experiment's id, or "listings", "check"
    case: str  # its case, or the article's id
    seconds: float
    mem_mb: object  # what it asks of Snakemake; None where its rule asks nothing


class Estimate(NamedTuple):
    seconds: float  # the jobs' seconds, summed: core time
    jobs: int
    largest: object  # the Job of most seconds (None without jobs)
    largest_mem: object  # the Job asking the most memory (None when none asks)
    by_experiment: dict  # {experiment: seconds of its jobs}, most first


def _experiment_jobs(experiment_id, names, config):
    """A Job for each case of ``names`` (a case of the experiment's rules) under ``config``."""
    estimated = preflight.estimated_cases(experiment_id, config)
    return [Job(experiment_id, name, runtime.seconds(experiment_id, estimated[name]),
                preflight.job_mem_mb(experiment_id, estimated[name])) for name in names]


def _enabled(config, section, key):
    return bool((config.get(section) or {}).get(key))


def jobs(config):
    """[Job] of every job of ``snakemake`` under ``config`` that this module estimates (its
    docstring); a job that two targets share (a training of the run that the seed distribution
    reads) once."""
    out = [job for e in plan.enabled(config) for job in _experiment_jobs(e, plan.cases(e, config), config)]
    if _enabled(config, "seed_distribution", "build"):
        extra = plan.seed_extra_cases(config)
        if "train" not in plan.enabled(config):  # the run's own trainings are the seeds' too
            extra = plan.seed_distribution_cases(config)
        out += _experiment_jobs("train", list(extra), config)
    if _enabled(config, "numerics", "sweep"):
        settings = sweep.candidates(config.get("numerics") or {})
        for e, names in sweep_plan.sweep_cases(config).items():
            out += [job._replace(case=f"{setting}/{job.case}") for setting in settings
                    for job in _experiment_jobs(e, names, config)]
    reproduced = {exp.article for exp in plan.EXPERIMENTS.values()}
    articles = [a for a in config.get("articles") or [] if isinstance(a, dict)]
    if _enabled(config, "listings", "build"):
        timeout = (config.get("listings") or {}).get("timeout_s", LISTINGS_TIMEOUT_S)
        out += [Job("listings", a.get("id"), timeout, None) for a in articles if a.get("id") in reproduced]
    out += [Job("check", a.get("id"), 2 * (a.get("time_limit_s") or bounded.TIME_LIMIT_S),
                preflight.check_mem_mb(a.get("memory_limit_mib")))
            for a in articles if a.get("id") not in reproduced]
    return out


def estimate(config):
    """The :class:`Estimate` of a run of ``config`` (a valid config, merged over config/config.yaml)."""
    found = jobs(config)
    by_experiment = {}
    for job in found:
        by_experiment[job.experiment] = by_experiment.get(job.experiment, 0.0) + job.seconds
    asking = [job for job in found if job.mem_mb is not None]
    return Estimate(seconds=sum(job.seconds for job in found), jobs=len(found),
                    largest=max(found, key=lambda job: job.seconds, default=None),
                    largest_mem=max(asking, key=lambda job: job.mem_mb, default=None),
                    by_experiment=dict(sorted(by_experiment.items(), key=lambda kv: -kv[1])))


# ---- durations: written and read ---------------------------------------------------------

def shown(seconds, what="core"):
    """``seconds`` in the largest unit that holds at least one of it, to 2 significant digits or
    whole units: "8.3 core-days", "23 core-minutes", "802 core-years" (``what`` "": "8.3 days")."""
    for _, size, name in UNITS:
        if seconds >= size or size == 1:
            number = (f"{seconds / size:.2g}" if seconds < 10 * size  # pragma: no mutate (equivalent:
                      else f"{seconds / size:,.0f}")  # from 10 to 99 units, .2g and .0f write the same)
            prefix = f"{what}-" if what else ""
            return f"{number} {prefix}{name}{'' if number == '1' else 's'}"


def written(seconds):
    """The shortest duration of :func:`parse_duration`'s syntax, in whole units, that is at least
    ``seconds``: "9d", "2h", "90s"."""
    for suffix, size, _ in UNITS:
        if seconds >= size or size == 1:
            return f"{math.ceil(seconds / size)}{suffix}"


def parse_duration(text):
    """Seconds of a duration written as a positive number and one unit: ``90s``, ``30m``,
    ``2h``, ``1.5d``, ``1y`` (365 days). ValueError naming the text otherwise."""
    text = str(text).strip()
    sizes = {suffix: size for suffix, size, _ in UNITS}
    number, unit = text[:-1], text[-1:].lower()
    try:
        value = float(number) if unit in sizes else None
    except ValueError:
        value = None
    if value is None or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{text!r} is not a duration: a positive number and a unit, s, m, h, d or y "
                         "(90m, 2h, 3d)")
    return value * sizes[unit]
