"""The ledger's overview figure's work: every numeric claim, published against reproduced (SVG)."""

from attnrepro.report.ledger import overview_figure


def run(args):
    overview_figure.write(args.ledger, args.published, args.svg)
    return 0
