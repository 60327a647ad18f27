"""Entry of the listings' evidence job (target ``listings``): the articles' code against its output.

    python -m attnrepro.jobs.listings --pin PIN --published P.yaml --runs R.json ... --csv C \
        --listings-csv L --md M --svg F

:mod:`attnrepro.report.commands.listings`.
"""

import sys

from attnrepro.report import job
from attnrepro.report.ledger import claims_check


def _parser():
    parser = job.parser("attnrepro.jobs.listings")
    job.add_listings(parser)
    return parser


def _work(args):
    from attnrepro.report.commands import listings  # loads NumPy: after the pin (the harness)

    return listings.run(args)


def main(argv=None):
    return job.run(_parser().parse_args(argv), _work, check=claims_check.check)


if __name__ == "__main__":
    sys.exit(main())
