"""Entry of an edition job (rules ``edition_<article>``): an article annotated with the run's numbers.

    python -m attnrepro.jobs.edition --pin PIN ID --text TEXT --ledger L.csv \
        --published P.yaml --config results/config.resolved.yaml --speed S.csv --out A.html

:mod:`attnrepro.report.commands.edition`.
"""

import sys

from attnrepro.report import runner
from attnrepro.report.commands import edition


def main(argv=None):
    return runner.main(edition, "attnrepro.jobs.edition", argv)


if __name__ == "__main__":
    sys.exit(main())
