"""The index's work: results/README.md, every output of the run, opening with the ledger's summary."""

from pathlib import Path

import yaml

from attnrepro.report import index
from attnrepro.report.ledger import headline
from attnrepro.run import io, usage


def run(args):
    """Write the index of the resolved config ``args.config`` to ``args.out``; with ``--ledger``,
    the same summary as LEDGER.md's (report.ledger.headline), with the run's versions and the
    articles' stated ones."""
    try:
        config = yaml.safe_load(Path(args.config).read_text()) or {}
    except yaml.YAMLError as error:
        problem = usage.yaml_problem(error)
        raise usage.UsageError(f"--config {args.config}: not valid YAML: {problem}") from None
    except OSError as error:
        raise usage.UsageError(f"--config {args.config}: {error.strerror or error}") from None
    verdict = None
    if args.ledger:  # the same summary as LEDGER.md's, from the same function
        import pandas as pd

        table = pd.read_csv(args.ledger, dtype=str, keep_default_na=False)
        stated = headline.stated_environment(args.published) if args.published else {}
        verdict = [*headline.lines(table, headline.run_environment(args.inputs), stated),
                   "The ledger in full: `LEDGER.md`, `ledger.csv`.", ""]
    io.write_text(args.out, index.lines(config, usage.json_object(args.unbuilt, "--unbuilt"), verdict))
