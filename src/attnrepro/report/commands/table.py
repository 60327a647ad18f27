"""A table's work: its builder (named by the catalog) over its results, written as Markdown and CSV."""

from pathlib import Path

from attnrepro.report.ledger import printed, speed
from attnrepro.report.products import builders, render, results
from attnrepro.run import usage


def run(args):
    """Build the table of ``args.builder`` from ``args.inputs``; its note says non-canonical
    numerics and, with ``--speed``, this machine's speed factor; with ``--ledger`` and
    ``--published``, each cell that prints a claim shows its verdict (report.ledger.printed)."""
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
