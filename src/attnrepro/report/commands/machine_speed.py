"""The machine-speed command: this machine's speed against the articles' (SVG)."""

HELP = "draw this machine's speed against the articles' (SVG)"
OUTPUTS = ("svg",)  # its --speed is an input, the ledger's


def add_options(parser):
    parser.add_argument("--speed", required=True, help="results/speed.csv (the ledger's)")
    parser.add_argument("--svg", required=True)


def run(args):
    from attnrepro.report.ledger import speed_figure  # loads NumPy: after the pin (the harness)

    speed_figure.write(args.speed, args.svg)
    return 0
