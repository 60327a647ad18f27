"""Thread limits for BLAS and OpenMP: set before NumPy (or torch) is imported.

Small matrix products run faster on one thread, and a training run with two
BLAS threads is about three times slower here than with one. The command line
calls :func:`limit` first thing, with the thread count of the Snakemake job.

A job never runs more threads than the CPUs it may use (its affinity mask, which a cgroup or
a SLURM allocation narrows): ``snakemake --cores 16`` on a 2-CPU machine gives a timing job 16
cores of the run to itself, and its BLAS 2 threads, not 16 threads on 2 CPUs. The provenance
records both numbers (:func:`asked`, :func:`current`) and, read back from the libraries, the
threads each BLAS pool really runs (``attnrepro.run.provenance.blas``).
"""

import os

VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
_ASKED = {"n": None}  # what the job asked for (limit), when it differs from what it got


def available():
    """The number of CPUs this process may run on (its affinity mask, else every CPU)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def limit(n, cpus=None):
    """Limit every BLAS/OpenMP pool of this process to ``n`` threads, at most the CPUs it may
    use (``cpus``, default :func:`available`); call before importing numpy. Returns the limit."""
    if int(n) < 1:
        raise ValueError(f"threads must be >= 1, got {n}")
    used = min(int(n), cpus or available())
    _ASKED["n"] = int(n)
    for name in VARIABLES:
        os.environ[name] = str(used)
    return used


def current():
    """The thread count this process was limited to (1 when nothing was set)."""
    return int(os.environ.get("OMP_NUM_THREADS", "1"))


def asked():
    """The thread count the job asked for (its rule's threads), before the cap to its CPUs."""
    return _ASKED["n"] if _ASKED["n"] is not None else current()
