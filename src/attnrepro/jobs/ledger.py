"""Entry of the ledger job (rule ``ledger``): every published claim judged against the run.

    python -m attnrepro.jobs.ledger --pin PIN --expected-params JSON --published config/published.yaml \
        --csv L.csv --md L.md [--speed S.csv] [--article JSON] [--numerics-evidence CSV] \
        [--seed-evidence CSV] [--listings-evidence CSV] --inputs results/data/...

The evidence it cites is read by each product's evaluate module, imported by the name the
evidence catalog gives it (:mod:`attnrepro.report.evidence_tables.citations`), which its rule declares:
:mod:`attnrepro.report.commands.ledger`.
"""

import sys

from attnrepro.report import runner
from attnrepro.report.commands import ledger


def main(argv=None):
    return runner.main(ledger, "attnrepro.jobs.ledger", argv)


if __name__ == "__main__":
    sys.exit(main())
