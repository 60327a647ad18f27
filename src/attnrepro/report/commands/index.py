"""The index command: results/README.md, every output of the run, opening with the ledger's summary."""

from pathlib import Path

from attnrepro.report.ledger import claims_check
from attnrepro.run import usage

HELP = "write results/README.md"
OUTPUTS = ("out",)


def add_options(parser):
    parser.add_argument("--config", required=True, help="the resolved config (YAML)")
    parser.add_argument("--unbuilt", metavar="JSON", default="{}",
                        help="{article: why its annotated edition is not built} (the rule's, from "
                             "common.smk)")
    parser.add_argument("--ledger", help="results/ledger.csv: the index opens with its summary, as LEDGER.md")
    parser.add_argument("--published", help="config/published.yaml: the versions the articles state")
    parser.add_argument("--inputs", nargs="*", default=[], help="the results files: the run's versions")
    parser.add_argument("--out", required=True)


def run(args):
    """Write the index of the resolved config ``args.config`` to ``args.out``; with ``--ledger``,
    the same summary as LEDGER.md's (report.ledger.headline), with the run's versions and the
    articles' stated ones."""
    import yaml

    from attnrepro.report import index  # in the job: after the pin, its reads recorded (the harness)
    from attnrepro.report.ledger import headline  # loads NumPy
    from attnrepro.run import io

    if args.published:
        claims_check.check(args.published)
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
