"""Entry of an edition job (rules ``edition_<article>``): an article annotated with the run's numbers.

    python -m attnrepro.jobs.edition --pin PIN ID --text TEXT --ledger L.csv \
        --published P.yaml --config results/config.resolved.yaml --speed S.csv --out A.html

:mod:`attnrepro.report.commands.edition`.
"""

import sys

from attnrepro.report import job
from attnrepro.report.ledger import claims_check


def _parser():
    parser = job.parser("attnrepro.jobs.edition")
    job.add_edition(parser)
    return parser


def _work(args):
    from attnrepro.report.commands import edition  # loads NumPy: after the pin (the harness)

    return edition.run(args)


def main(argv=None):
    return job.run(_parser().parse_args(argv), _work, check=claims_check.check)


if __name__ == "__main__":
    sys.exit(main())
