"""Entry of the seed distribution's evidence job (target ``seeds``): the published figures among the seeds.

    python -m attnrepro.jobs.seeds --pin PIN --expected-params JSON --sections JSON --published P.yaml \
        --csv C --md M --svg F --inputs results/data/001/train/...

:mod:`attnrepro.report.commands.seeds`.
"""

import sys

from attnrepro.report import job
from attnrepro.report.ledger import claims_check


def _parser():
    parser = job.parser("attnrepro.jobs.seeds")
    job.add_seeds(parser)
    return parser


def _work(args):
    from attnrepro.report.commands import seeds  # loads NumPy: after the pin (the harness)

    return seeds.run(args)


def main(argv=None):
    return job.run(_parser().parse_args(argv), _work, check=claims_check.check)


if __name__ == "__main__":
    sys.exit(main())
