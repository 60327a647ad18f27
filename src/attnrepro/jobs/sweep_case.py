"""Entry of a numerics-sweep job (rules ``numerics_<experiment>_case``): one case under one setting.

    python -m attnrepro.jobs.sweep_case EXPERIMENT --article 001 --section "..." --threads N \
        --numerics SETTING --params-json JSON --out MAIN.parquet [--table NAME=FILE ...]

An experiment job (:mod:`attnrepro.experiments.case_run`) whose setting replaces the pin, and whose
tables and provenance record it (:func:`attnrepro.evidence.sweep.recorded`).
"""

import sys

from attnrepro.evidence import sweep
from attnrepro.experiments import case_run


def main(argv=None):
    args = case_run.parser("attnrepro.jobs.sweep_case", sweep=True).parse_args(argv)
    return case_run.run(args, recorded=sweep.recorded)


if __name__ == "__main__":
    sys.exit(main())
