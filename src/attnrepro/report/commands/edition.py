"""An edition's work: one article re-rendered with this run's numbers (results/articles/<article>.html)."""

import sys

from attnrepro.dag import config
from attnrepro.report.editions import edition
from attnrepro.run import usage


def run(args):
    """Write the annotated edition of ``args.article``; status 1 when a claim's location is not
    in the text (edition.LocationError), 2 for a config that does not load."""
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
