"""Entry of the numerics sweep's evidence job (target ``numerics``): the settings against the digits.

    python -m attnrepro.jobs.numerics --pin PIN --expected-params JSON --published P.yaml \
        --settings S.json [--article-code CSV] --csv C --md M --svg F --inputs results/numerics/...

:mod:`attnrepro.report.commands.numerics`.
"""

import sys

from attnrepro.report import job
from attnrepro.report.ledger import claims_check


def _parser():
    parser = job.parser("attnrepro.jobs.numerics")
    job.add_numerics(parser)
    return parser


def _work(args):
    from attnrepro.report.commands import numerics  # loads NumPy: after the pin (the harness)

    return numerics.run(args)


def main(argv=None):
    return job.run(_parser().parse_args(argv), _work, check=claims_check.check)


if __name__ == "__main__":
    sys.exit(main())
