"""Each job's peak memory, estimated from its parameters: one small function per experiment.

Pure Python, no numerical import (read by :mod:`attnrepro.dag.preflight` while Snakemake builds
the DAG). Each experiment module's ``peak_memory(params)`` lists the arrays that are alive
together at the job's peak, each as a *term* (:mod:`attnrepro.experiments._memory`): its bytes,
what it is (``scores (B, T, T) float64``) and the keys it grows with; :data:`ESTIMATES` holds
them, read from the modules by :mod:`attnrepro.experiments.declared`. The estimate of a job is
the sum of its terms (the largest phase, when the job has phases that free each other's arrays),
plus a fixed :data:`ALLOWANCE` for what no term counts.

What is estimated is the resident memory that ``run(params)`` adds to the process:
NumPy's and torch's buffers, Python rows and tables, and the freed blocks the heap keeps
where a job measurably leaves holes in it (tests/test_estimates.py measures every
experiment's peak resident memory and checks each estimate against it). Not counted: the
interpreter and the libraries (a few hundred MiB), and the writing of the tables to
Parquet after ``run`` (Arrow's buffers: 10 to 90 MiB measured, for tables of 10 thousand
to a million rows; per row, less than the run spent building the table), which the default
limit, 80% of the machine's memory, leaves room for.
"""

from attnrepro.experiments import declared
from attnrepro.experiments._memory import GIB, MIB, term, total  # noqa: F401  (GIB, MIB, total: the module's interface)

# what no term counts: small arrays and objects, the allocator's granularity, torch's kernel
# buffers (a few MiB in the measured peaks beyond the counted arrays)
ALLOWANCE = 8 * MIB
# {experiment: params of one case -> [term]}: each experiment module's peak_memory
ESTIMATES = declared.ESTIMATES


def terms(experiment_id, params):
    """[(bytes, what, {key: power})] of one case: the arrays alive at its peak, then the
    :data:`ALLOWANCE` (a term that no key drives)."""
    return ESTIMATES[experiment_id](params) + [
        term(ALLOWANCE, "small arrays and objects, the allocator's and the libraries' buffers")]


def estimate(experiment_id, params):
    """Estimated peak bytes of one job (one case's parameters)."""
    return total(terms(experiment_id, params))
