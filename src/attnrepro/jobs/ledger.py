"""Entry of the ledger job (rule ``ledger``): every published claim judged against the run.

    python -m attnrepro.jobs.ledger --pin PIN --expected-params JSON --published config/published.yaml \
        --csv L.csv --md L.md [--speed S.csv] [--article JSON] [--numerics-evidence CSV] \
        [--seed-evidence CSV] [--listings-evidence CSV] --inputs results/data/...

The evidence it cites is read by each product's evaluate module, imported by the name the
evidence catalog gives it (:mod:`attnrepro.report.evidence_tables.citations`), which its rule declares:
:mod:`attnrepro.report.commands.ledger`.
"""

import sys

from attnrepro.report import job
from attnrepro.report.ledger import claims_check


def _parser():
    parser = job.parser("attnrepro.jobs.ledger")
    job.add_ledger(parser)
    return parser


def _work(args):
    from attnrepro.report.commands import ledger  # loads NumPy: after the pin (the harness)

    return ledger.run(args)


def main(argv=None):
    return job.run(_parser().parse_args(argv), _work, check=claims_check.check)


if __name__ == "__main__":
    sys.exit(main())
