"""Entry of a table job (rules ``table_<name>``): one table of the catalog, Markdown and CSV.

    python -m attnrepro.jobs.table --pin PIN --expected-params JSON \
        --builder tables_checks:build_scale_table --article 001 --section "..." \
        --experiments scale_table --md T.md --csv T.csv \
        [--speed S.csv] [--name NAME --ledger L.csv --published P.yaml] --inputs results/data/...

Its builder is imported by the name the catalog gives it (:mod:`attnrepro.report.products.builders`),
which its rule declares: :mod:`attnrepro.report.commands.table`.
"""

import sys

from attnrepro.report import runner
from attnrepro.report.commands import table


def main(argv=None):
    return runner.main(table, "attnrepro.jobs.table", argv)


if __name__ == "__main__":
    sys.exit(main())
