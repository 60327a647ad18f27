"""The table command: one table of the catalog, its builder over its results, as Markdown and CSV."""

from pathlib import Path

from attnrepro.report.commands import _product
from attnrepro.report.ledger import claims_check
from attnrepro.run import usage

HELP = "build one table of the catalog (Markdown and CSV)"
OUTPUTS = ("md", "csv")


def add_options(parser, by_name=False):
    """Its options (by its rule, or ``by_name`` by hand): the product's, its speed note, its printed cells."""
    _product.add_options(parser, OUTPUTS, by_name)
    parser.add_argument("--speed", dest="speed_csv",
                        help="results/speed.csv (the ledger's): the note says this machine's speed against "
                             "the article's (a table of machine-bound times)")
    parser.add_argument("--ledger", dest="ledger_csv",
                        help="results/ledger.csv: each cell that prints a claim shows its verdict and the "
                             "published value (with --published)")
    parser.add_argument("--published",
                        help="config/published.yaml: the claims, which name their printed cells")
    if not by_name:
        parser.add_argument("--name", help="the table's name in the catalog, which the claims' printed "
                                           "cells name (default: the stem of --md)")


def run(args):
    """Build the table of ``args.builder`` from ``args.inputs``; its note says non-canonical
    numerics and, with ``--speed``, this machine's speed factor; with ``--ledger`` and
    ``--published``, each cell that prints a claim shows its verdict (report.ledger.printed)."""
    from attnrepro.report.ledger import printed, speed  # load NumPy: after the pin (the harness)
    from attnrepro.report.products import builders, render, results

    if args.published:
        claims_check.check(args.published)
    if bool(args.ledger_csv) != bool(args.published):
        raise usage.UsageError("--ledger and --published go together: the ledger's verdicts and the claims' "
                               "cells")
    table = builders.find(args.builder)(results.Loader(args.inputs))
    if (status := results.numerics_status(args.inputs)) != "canonical":
        table.note = f"{table.note} Numerics: {status}.".strip()
    if args.speed_csv:  # a table of machine-bound times: the speed factor the ledger measured
        table.note = f"{table.note} {speed.note(args.speed_csv, args.article)}".strip()
    if args.ledger_csv:  # the published value and the ledger's verdict beside each printed cell
        printed.annotate_files(table, args.name or Path(args.md).stem, args.published, args.ledger_csv)
    source = render.trail(builders.qualified(args.builder), args.experiments, render.commit())
    render.write_table(table, args.md, args.csv, title=args.section, article=args.article, source=source)
