"""The machine-speed figure's work: this machine's speed against the articles' (SVG)."""

from attnrepro.report.ledger import speed_figure


def run(args):
    speed_figure.write(args.speed, args.svg)
    return 0
