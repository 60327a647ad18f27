"""Thread limits for BLAS and OpenMP: set before NumPy (or torch) is imported.

Small matrix products run faster on one thread, and a training run with two
BLAS threads is about three times slower here than with one. The command line
calls :func:`limit` first thing, with the thread count of the Snakemake job.
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


def limit(n):
    """Limit every BLAS/OpenMP pool of this process to ``n`` threads (call before importing numpy)."""
    if int(n) < 1:
        raise ValueError(f"threads must be >= 1, got {n}")
    for name in VARIABLES:
        os.environ[name] = str(int(n))


def current():
    """The thread count this process was limited to (1 when nothing was set)."""
    return int(os.environ.get("OMP_NUM_THREADS", "1"))
