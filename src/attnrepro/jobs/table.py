"""Entry of a table job (rules ``table_<name>``): one table of the catalog, Markdown and CSV.

    python -m attnrepro.jobs.table --pin PIN --expected-params JSON \
        --builder tables_checks:build_scale_table --article 001 --section "..." \
        --experiments scale_table --md T.md --csv T.csv \
        [--speed S.csv] [--name NAME --ledger L.csv --published P.yaml] --inputs results/data/...

Its builder is imported by the name the catalog gives it (:mod:`attnrepro.report.products.builders`),
which its rule declares: :mod:`attnrepro.report.commands.table`.
"""

import sys

from attnrepro.report import job
from attnrepro.report.ledger import claims_check


def _parser():
    parser = job.parser("attnrepro.jobs.table")
    job.add_product(parser, ("md", "csv"))
    job.add_speed(parser)
    job.add_printed(parser)
    parser.add_argument("--name", help="the table's name in the catalog, which the claims' printed "
                                       "cells name (default: the stem of --md)")
    return parser


def _work(args):
    from attnrepro.report.commands import table  # loads NumPy: after the pin (the harness)

    return table.run(args)


def main(argv=None):
    return job.run(_parser().parse_args(argv), _work, check=claims_check.check)


if __name__ == "__main__":
    sys.exit(main())
