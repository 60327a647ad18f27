"""The edition command: one article re-rendered with this run's numbers (results/articles/<article>.html)."""

import sys

from attnrepro.report.ledger import claims_check
from attnrepro.run import usage

HELP = "write an article's annotated edition (HTML)"
OUTPUTS = ("out",)


def add_options(parser):
    parser.add_argument("article", help="the article's id (its entry of config articles)")
    parser.add_argument("--text", required=True, help="the article's text (its entry of config articles)")
    parser.add_argument("--ledger", required=True, help="results/ledger.csv")
    parser.add_argument("--published", required=True, help="the article's claims file (the locations)")
    parser.add_argument("--config", required=True, help="the resolved config (YAML): the data files")
    parser.add_argument("--out", required=True)
    parser.add_argument("--speed", help="results/speed.csv: this machine's speed against the article's")


def run(args):
    """Write the annotated edition of ``args.article``; status 1 when a claim's location is not
    in the text (edition.LocationError), 2 for a config that does not load."""
    from attnrepro.dag import config  # in the job: after the pin, its reads recorded (the harness)
    from attnrepro.report.editions import edition  # loads NumPy

    claims_check.check(args.published)
    try:
        config.load(args.config)
    except ValueError as error:  # config.ConfigError, or attnrepro.dag.yamlfile.Refused
        raise usage.UsageError(f"--config {args.config}: {usage.one_line(error)}") from None
    try:
        edition.write(args.article, args.text, args.ledger, args.published, args.config, args.out, args.speed)
    except edition.LocationError as error:
        print(f"attnrepro.report edition: {error}", file=sys.stderr)
        return 1
    return 0
