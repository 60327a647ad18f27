"""The verifier's budget: what a rerun may cost this machine, set by the person verifying.

An archive's config is valid data and may still ask for days of computing (``train.steps:
1000000``). Before any job, the rerun's cost is estimated with the project's own estimates
(:func:`attnrepro.dag.cost.estimate`: the jobs' seconds summed, in core time) and compared with
the budget of ``verify --budget`` (:func:`attnrepro.dag.cost.parse_duration`: ``90m``, ``2h``,
``3d``); its default is :data:`FACTOR` times the default run's estimate (config/config.yaml's).
Beyond it, verify stops with one line naming the estimate, the keys of the archive that drive it
and the ``--budget`` that allows it. Memory is the pre-flight's (this machine's limit, whatever
the archive's: :data:`attnrepro.archive.verify_rerun.MACHINE`); disk, the extraction's check of
the archive's results against the rerun folder's room (:mod:`attnrepro.archive.verify_extract`).
"""

import functools

from attnrepro.dag import config as cfg
from attnrepro.dag import cost, plan

# the default budget: the default run's estimate times this (its wall times spread 2.6-fold
# around the estimates under load, attnrepro.resources.runtime.MARGIN)
FACTOR = 4
SHOWN_KEYS = 3  # keys of the archive named in the refusal, at most


class OverBudget(Exception):
    """The rerun's estimate is beyond the budget: one line, its estimate and how to allow it."""


@functools.cache
def default_seconds():
    """The default budget, in core seconds: :data:`FACTOR` times the default run's estimate."""
    return FACTOR * cost.estimate(cfg.load(cfg.DEFAULT)).seconds


def parse(text):
    """``--budget``'s value in core seconds (:func:`attnrepro.dag.cost.parse_duration`)."""
    return cost.parse_duration(text)


# the sections beside an experiment's own whose keys add to its jobs
SECTIONS = {"train": ("train", "seed_distribution")}


def driving_keys(experiment, config, ours):
    """["train.steps 1000000 (here 1500)", ...]: the keys of the sections of ``experiment`` whose
    values in ``config`` are not ``ours``'s, at most :data:`SHOWN_KEYS`."""
    found = []
    for section in SECTIONS.get(experiment, (experiment,)) if experiment in plan.EXPERIMENTS else ():
        theirs, mine = config.get(section) or {}, ours.get(section) or {}
        for key, value in theirs.items():  # a valid config: each section a mapping
            if value != mine.get(key):
                found.append(f"{section}.{key} {_short(value)} (here {_short(mine.get(key))})")
    return found[:SHOWN_KEYS] + ([f"{len(found) - SHOWN_KEYS} more"] if len(found) > SHOWN_KEYS else [])


def _short(value, width=40):
    """``value`` as a message shows it: its repr, a long list's length, a long text's start."""
    text = repr(value)
    if len(text) <= width:
        return text
    return f"{len(value)} values" if isinstance(value, list) else f"{text[:width - 3]}..."


def summary(estimate, budget):
    """One line: the rerun's estimate, its largest job's memory, and the budget."""
    memory = ("" if estimate.largest_mem is None else
              f"; its largest job asks {estimate.largest_mem.mem_mb} MB ({estimate.largest_mem.experiment} "
              f"{estimate.largest_mem.case})")
    return (f"rerun estimate: {cost.shown(estimate.seconds)} in {estimate.jobs} jobs{memory}; "
            f"budget {cost.shown(budget)} (--budget)")


def check(merged, budget, ours):
    """The :func:`summary` line of the rerun of ``merged`` (the archive's config over this
    checkout's, as Snakemake sees it) when its estimate is within ``budget`` (core seconds), else
    :class:`OverBudget` naming the estimate, the experiment that takes most of it and the keys of
    the archive that drive it, and the ``--budget`` that allows it."""
    estimate = cost.estimate(merged)
    if estimate.seconds <= budget:
        return summary(estimate, budget)
    experiment, seconds = next(iter(estimate.by_experiment.items()))
    keys = driving_keys(experiment, merged, ours)
    driven = f"; {', '.join(keys)}" if keys else ""
    raise OverBudget(
        f"the archive's config asks about {cost.shown(estimate.seconds)} of jobs ({estimate.jobs} jobs; "
        f"{experiment} {cost.shown(seconds)}{driven}), beyond this verifier's budget of "
        f"{cost.shown(budget)}: allow it with --budget {cost.written(estimate.seconds)}")
