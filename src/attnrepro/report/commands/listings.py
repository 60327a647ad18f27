"""The listings command: the articles' own code as run here against their published output (evidence)."""

from attnrepro.report.ledger import claims_check

HELP = "set the articles' listings as run here against their output"
OUTPUTS = ("csv", "listings_csv", "md", "svg")


def add_options(parser):
    parser.add_argument("--published", required=True)
    parser.add_argument("--runs", nargs="+", required=True, help="one JSON per article (listings_run)")
    parser.add_argument("--csv", required=True, help="one row per claim: the article code's value here")
    parser.add_argument("--listings-csv", required=True, help="one row per listing")
    parser.add_argument("--md", required=True)
    parser.add_argument("--svg", required=True)


def run(args):
    from attnrepro.report.evidence_tables import listings_render  # loads NumPy: after the pin (the harness)
    from attnrepro.report.products import style

    claims_check.check(args.published)
    style.use_sections_json(args.sections)
    return listings_render.write(args.published, args.runs, args.csv, args.listings_csv, args.md, args.svg)
