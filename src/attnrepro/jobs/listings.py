"""Entry of the listings' evidence job (target ``listings``): the articles' code against its output.

    python -m attnrepro.jobs.listings --pin PIN --published P.yaml --runs R.json ... --csv C \
        --listings-csv L --md M --svg F

:mod:`attnrepro.report.commands.listings`.
"""

import sys

from attnrepro.report import runner
from attnrepro.report.commands import listings


def main(argv=None):
    return runner.main(listings, "attnrepro.jobs.listings", argv)


if __name__ == "__main__":
    sys.exit(main())
