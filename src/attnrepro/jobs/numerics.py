"""Entry of the numerics sweep's evidence job (target ``numerics``): the settings against the digits.

    python -m attnrepro.jobs.numerics --pin PIN --expected-params JSON --published P.yaml \
        --settings S.json [--article-code CSV] --csv C --md M --svg F --inputs results/numerics/...

:mod:`attnrepro.report.commands.numerics`.
"""

import sys

from attnrepro.report import runner
from attnrepro.report.commands import numerics


def main(argv=None):
    return runner.main(numerics, "attnrepro.jobs.numerics", argv)


if __name__ == "__main__":
    sys.exit(main())
