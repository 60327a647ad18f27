"""Entry of the ledger's overview figure (rule ``ledger_overview``): claims, published against reproduced.

    python -m attnrepro.jobs.ledger_overview --pin PIN --ledger L.csv --published P.yaml --svg F.svg

:mod:`attnrepro.report.commands.ledger_overview`.
"""

import sys

from attnrepro.report import job
from attnrepro.report.ledger import claims_check


def _parser():
    parser = job.parser("attnrepro.jobs.ledger_overview")
    job.add_overview(parser)
    return parser


def _work(args):
    from attnrepro.report.commands import ledger_overview  # loads NumPy: after the pin (the harness)

    return ledger_overview.run(args)


def main(argv=None):
    return job.run(_parser().parse_args(argv), _work, check=claims_check.check)


if __name__ == "__main__":
    sys.exit(main())
