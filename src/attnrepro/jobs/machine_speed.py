"""Entry of the machine-speed figure (rule ``machine_speed``): this machine against the articles'.

    python -m attnrepro.jobs.machine_speed --pin PIN --speed results/speed.csv --svg F.svg

:mod:`attnrepro.report.commands.machine_speed`.
"""

import sys

from attnrepro.report import runner
from attnrepro.report.commands import machine_speed


def main(argv=None):
    return runner.main(machine_speed, "attnrepro.jobs.machine_speed", argv)


if __name__ == "__main__":
    sys.exit(main())
