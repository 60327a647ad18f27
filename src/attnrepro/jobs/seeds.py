"""Entry of the seed distribution's evidence job (target ``seeds``): the published figures among the seeds.

    python -m attnrepro.jobs.seeds --pin PIN --expected-params JSON --sections JSON --published P.yaml \
        --csv C --md M --svg F --inputs results/data/001/train/...

:mod:`attnrepro.report.commands.seeds`.
"""

import sys

from attnrepro.report import runner
from attnrepro.report.commands import seeds


def main(argv=None):
    return runner.main(seeds, "attnrepro.jobs.seeds", argv)


if __name__ == "__main__":
    sys.exit(main())
