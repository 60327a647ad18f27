"""Entry of the index job (rule ``index``): results/README.md.

    python -m attnrepro.jobs.index --config results/config.resolved.yaml --unbuilt JSON \
        [--ledger L.csv --published P.yaml --inputs ...] --out results/README.md

:mod:`attnrepro.report.commands.index`.
"""

import sys

from attnrepro.report import runner
from attnrepro.report.commands import index


def main(argv=None):
    return runner.main(index, "attnrepro.jobs.index", argv)


if __name__ == "__main__":
    sys.exit(main())
