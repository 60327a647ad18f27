"""Entry of the machine-speed figure (rule ``machine_speed``): this machine against the articles'.

    python -m attnrepro.jobs.machine_speed --pin PIN --speed results/speed.csv --svg F.svg

:mod:`attnrepro.report.commands.machine_speed`.
"""

import sys

from attnrepro.report import job


def _parser():
    parser = job.parser("attnrepro.jobs.machine_speed")
    job.add_machine_speed(parser)
    return parser


def _work(args):
    from attnrepro.report.commands import machine_speed  # loads NumPy: after the pin (the harness)

    return machine_speed.run(args)


def main(argv=None):
    return job.run(_parser().parse_args(argv), _work)


if __name__ == "__main__":
    sys.exit(main())
