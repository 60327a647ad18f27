"""Entry of the ledger's overview figure (rule ``ledger_overview``): claims, published against reproduced.

    python -m attnrepro.jobs.ledger_overview --pin PIN --ledger L.csv --published P.yaml --svg F.svg

:mod:`attnrepro.report.commands.ledger_overview`.
"""

import sys

from attnrepro.report import runner
from attnrepro.report.commands import ledger_overview


def main(argv=None):
    return runner.main(ledger_overview, "attnrepro.jobs.ledger_overview", argv)


if __name__ == "__main__":
    sys.exit(main())
