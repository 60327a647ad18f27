"""Entry of the index job (rule ``index``): results/README.md.

    python -m attnrepro.jobs.index --config results/config.resolved.yaml --unbuilt JSON \
        [--ledger L.csv --published P.yaml --inputs ...] --out results/README.md

:mod:`attnrepro.report.commands.index`.
"""

import sys

from attnrepro.report import job
from attnrepro.report.ledger import claims_check


def _parser():
    parser = job.parser("attnrepro.jobs.index")
    job.add_index(parser)
    return parser


def _work(args):
    from attnrepro.report.commands import index  # loads NumPy: after the pin (the harness)

    return index.run(args)


def main(argv=None):
    return job.run(_parser().parse_args(argv), _work, check=claims_check.check)


if __name__ == "__main__":
    sys.exit(main())
