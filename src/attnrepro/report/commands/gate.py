"""The gate command: CI's fidelity gate of a finished run (``python -m attnrepro.report gate``).

It exits 1 on an empty ledger, a missing claim, an exact claim not reproduced or non-canonical
numerics (:mod:`attnrepro.report.ledger.golden`); with ``--golden``, on a change from the golden
files; with ``--tables``, on a printed cell of the run's tables that does not read as the ledger
(:mod:`attnrepro.report.ledger.agreement`). No rule runs it: `.ci/run` does, after the default run.
"""

from pathlib import Path

from attnrepro import paths
from attnrepro.report.ledger import claims_check

HELP = ("exit 1 on an empty ledger, a missing claim, an exact claim not reproduced, non-canonical numerics, "
        "or a change from the golden files")
OUTPUTS = ()  # it writes nothing


def add_options(parser):
    parser.add_argument("ledger", help="results/ledger.csv")
    parser.add_argument("--golden", help="the golden files' folder (tests/golden): compare the run with them")
    parser.add_argument("--data", default=paths.DATA, help="the run's Parquet folder (with --golden)")
    parser.add_argument("--tables", help="the run's results/tables: each claim's printed cell must read as "
                                         "the ledger's reproduced value (attnrepro.report.ledger.agreement)")
    parser.add_argument("--published", default="config/published.yaml",
                        help="the claims, which name their printed cells (with --tables)")


def run(args):
    """The gate over ``args.ledger``: the ledger's rules, then the golden files and the tables when
    given; status 0 when it passes, 1 (each problem printed) when not."""
    from attnrepro.report.ledger import golden  # loads NumPy: after the pin (the harness)

    if args.tables:  # the claims are read with --tables only
        claims_check.check(args.published)
    try:
        table = golden.read_ledger(args.ledger)
    except FileNotFoundError as error:
        print(f"gate: {error}")
        return 1
    if not table.empty:
        print(f"ledger: {len(table)} claims\n{table.groupby(['class', 'verdict']).size().to_string()}")
    problems = golden.ledger_problems(table)
    if args.golden:
        problems += golden.golden_problems(args.golden, table, args.data)
    if args.tables:
        problems += table_problems(args, table)
    if problems:
        print(f"gate: {len(problems)} problem(s)\n" + "\n".join(f"  {p}" for p in problems))
        return 1
    checked = f"; equal to the golden files in {args.golden}" if args.golden else ""
    checked += f"; every printed claim of {args.tables} reads as the ledger" if args.tables else ""
    print(f"gate passed: every claim present, every exact claim reproduced, canonical numerics{checked}")
    return 0


def table_problems(args, table):
    """Each claim's printed cell in the run's tables against the ledger (report.ledger.agreement)."""
    if not Path(args.tables).is_dir():
        return [f"no tables folder {args.tables}"]
    from attnrepro.report.ledger import agreement, claims

    return agreement.disagreements(claims.load_claims(args.published), table, args.tables)
