"""Entry of a figure job (rules ``figure_<name>``): one figure of the catalog, as SVG.

    python -m attnrepro.jobs.figure --pin PIN --expected-params JSON --sections JSON \
        --builder figures_checks:draw_scale_table_curves --article 001 --section "..." \
        --experiments scale_table --svg F.svg --inputs results/data/...

Its builder is imported by the name the catalog gives it (:mod:`attnrepro.report.products.builders`),
which its rule declares: :mod:`attnrepro.report.commands.figure`.
"""

import sys

from attnrepro.report import job


def _parser():
    parser = job.parser("attnrepro.jobs.figure")
    job.add_product(parser, ("svg",))
    return parser


def _work(args):
    from attnrepro.report.commands import figure  # loads NumPy: after the pin (the harness)

    return figure.run(args)


def main(argv=None):
    return job.run(_parser().parse_args(argv), _work)


if __name__ == "__main__":
    sys.exit(main())
