"""Where things are: the repository, and the results of a run as plain strings, shared by the
plan and the jobs.

    results/data/<article>/<experiment>/<case>[.<table>].parquet
    results/numerics/<setting>/data/<article>/<experiment>/<case>[.<table>].parquet

A job reads what a results path names from the path alone (:func:`parse_output`), without the
experiment registry of :mod:`attnrepro.dag.plan`, which Snakemake reads to build the DAG: editing the
plan then reruns no job that does not use it. A table name is an identifier
(``plan.Experiment.tables``, never ``main`` after a dot); a case name that holds a dot holds it in
a number (``eps-0.0001``), so what follows its last dot is never one
(``tests/test_code_inputs.py`` checks this against ``plan.parse_output`` for every file of the
shipped configs).
"""

from pathlib import Path

SRC = Path(__file__).resolve().parents[1]  # the folder that holds the package
REPO = SRC.parent  # the repository (the workflow's folder)
RESULTS = "results"
SWEEP_ROOT = f"{RESULTS}/numerics"  # the numerics sweep's data: results/numerics/<setting>/data/...
SETTINGS_FILE = f"{SWEEP_ROOT}/settings.json"  # the probe: the settings this machine runs


def parse_output(path):
    """(experiment, table, case) of a results path ``.../<experiment>/<case>[.<table>].parquet``."""
    parts = str(path).replace("\\", "/").split("/")
    if len(parts) < 2 or not parts[-1].endswith(".parquet"):
        raise ValueError(f"not a results file (.../<experiment>/<case>.parquet): {path}")
    name, experiment = parts[-1].removesuffix(".parquet"), parts[-2]
    case, dot, table = name.rpartition(".")  # a case name may hold dots itself: eps-0.0001
    if dot and table.isidentifier() and table != "main":
        return experiment, table, case
    return experiment, "main", name
