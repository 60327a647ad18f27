"""Entry of a figure job (rules ``figure_<name>``): one figure of the catalog, as SVG.

    python -m attnrepro.jobs.figure --pin PIN --expected-params JSON --sections JSON \
        --builder figures_checks:draw_scale_table_curves --article 001 --section "..." \
        --experiments scale_table --svg F.svg --inputs results/data/...

Its builder is imported by the name the catalog gives it (:mod:`attnrepro.report.products.builders`),
which its rule declares: :mod:`attnrepro.report.commands.figure`.
"""

import sys

from attnrepro.report import runner
from attnrepro.report.commands import figure


def main(argv=None):
    return runner.main(figure, "attnrepro.jobs.figure", argv)


if __name__ == "__main__":
    sys.exit(main())
