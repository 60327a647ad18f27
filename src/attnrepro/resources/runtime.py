"""Each job's wall time, estimated from its parameters: one small function per experiment.

Pure Python, no numerical import (workflow/rules/common.smk reads it while Snakemake builds the
DAG, as it reads :mod:`attnrepro.resources.memory`). A job's seconds are a start-up (the
interpreter, the imports, the writing of the tables) plus its work: each experiment module's
``work(params)`` counts what its ``run(params)`` does (matrix products, attention cells, random
draws, table rows, training steps) and prices each with a measured coefficient of
:mod:`attnrepro.experiments._prices`; :data:`WORK` holds them, read from the modules by
:mod:`attnrepro.experiments.declared` (tests/test_runtime_resources.py checks the small run's and
a few medium cases).

What a job asks of a cluster (``resources: runtime``, minutes: :func:`job_runtime_min`) is these
seconds, plus the job step's own Snakemake, times :data:`MARGIN` and the config's runtime_factor.
"""

import math

from attnrepro.experiments import declared

# What a job asks for: MARGIN x (its seconds + JOB_STEP) x runtime_factor, in whole minutes, at
# least one. MARGIN: under load, wall times spread 2.6-fold around the estimates (the default run's
# jobs: 0.66 to 1.7 times their estimate; the same training, 21 to 32 s), and a job beside three
# busy processes per core takes twice its CPU time
MARGIN = 3
# on a cluster, the job step runs Snakemake again, which parses the workflow and builds the job's
# DAG before the job's command starts (`snakemake -n` of one target: 3.6 to 3.9 s of CPU)
JOB_STEP = 4.0

# --- start-up: the interpreter, the imports, the writing of the tables --------------------
# `python -c "import attnrepro.experiments.case_run, numpy, pandas, pyarrow.parquet"`: 0.35 to 0.5 s wall
# (2026-12-02, this machine kind, quiet; 0.9 to 1.2 s of CPU before the packages by concept); the small
# run's numpy jobs whose work is milliseconds: 0.4 s wall quiet, up to 2 s on a loaded machine
START = 0.9
# the same imports and torch: 3.8 to 4.3 s of CPU; the default run's torch jobs: 3.8 to 6.8 s
# wall, median 4.8
START_TORCH = 4.8
TORCH = declared.TORCH  # the experiments that declare torch: they call experiments._torch.load

# {experiment: params of one case -> seconds of its run}: each experiment module's work
WORK = declared.WORK


def start(experiment_id):
    """Seconds before and after the work: the interpreter, the imports, the tables written."""
    return START_TORCH if experiment_id in TORCH else START


def work(experiment_id, params):
    """Estimated seconds of ``run(params)`` of one case (``params`` as
    :func:`attnrepro.dag.preflight.estimated_cases` gives them)."""
    return WORK[experiment_id](params)


def seconds(experiment_id, params):
    """Estimated wall seconds of the job of one case: its start-up and its work."""
    return start(experiment_id) + work(experiment_id, params)


def job_runtime_min(experiment_id, params, factor=1.0):
    """``runtime`` of the job of one case, in minutes: :data:`MARGIN` x (its seconds +
    :data:`JOB_STEP`) x ``factor`` (the config's runtime_factor), rounded up, at least 1."""
    return max(1, math.ceil(MARGIN * (seconds(experiment_id, params) + JOB_STEP) * factor / 60))
