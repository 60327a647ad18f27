"""The ledger's work: every published claim judged against the run (results/ledger.csv, LEDGER.md)."""

from attnrepro.report import ledger_io
from attnrepro.report.ledger import comparable
from attnrepro.report.products import results


def run(args):
    """Write the ledger of ``args.published`` over ``args.inputs`` and the evidence given; its
    status (1 with ``--gate`` when an exact claim is not reproduced)."""
    article = comparable.Article.from_json(args.article) if args.article else None
    return ledger_io.write(
        args.published, results.Loader(args.inputs), args.csv, args.md, gate=args.gate,
        numerics_csv=args.numerics_evidence, seeds_csv=args.seed_evidence, speed_csv=args.speed_out,
        article=article, listings_csv=args.listings_evidence, checked_csvs=args.checked)
