"""The ledger-overview command: every numeric claim, published against reproduced (SVG)."""

from attnrepro.report.ledger import claims_check

HELP = "draw the ledger's overview figure (SVG)"
OUTPUTS = ("svg",)


def add_options(parser):
    parser.add_argument("--ledger", required=True, help="results/ledger.csv")
    parser.add_argument("--published", required=True, help="config/published.yaml (bands, tolerances)")
    parser.add_argument("--svg", required=True)


def run(args):
    from attnrepro.report.ledger import overview_figure  # loads NumPy: after the pin (the harness)

    claims_check.check(args.published)
    overview_figure.write(args.ledger, args.published, args.svg)
    return 0
