"""Entry of an experiment job (rules ``<experiment>_case``): one case, its tables written.

    python -m attnrepro.jobs.experiment EXPERIMENT --article 001 --section "..." --threads N \
        --pin PIN --params-json JSON --out MAIN.parquet [--table NAME=FILE ...] [--input NAME=FILE ...]

The experiment's module is imported by its name (the plan's, from the rule's command line):
:mod:`attnrepro.experiments.case_run`.
"""

import sys

from attnrepro.experiments import case_run


def main(argv=None):
    return case_run.run(case_run.parser("attnrepro.jobs.experiment").parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
