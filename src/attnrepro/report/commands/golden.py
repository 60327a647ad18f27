"""The golden command: the deliberate update of the golden files from a finished canonical run.

``python -m attnrepro.report golden`` after ``make reproduce`` (CONTRIBUTING.md, "Golden values"):
it writes ``tests/golden`` (:mod:`attnrepro.report.ledger.golden`), whose diff a reviewer reads.
No rule runs it.
"""

from attnrepro import paths

HELP = "write the golden files from a finished canonical run (review the diff)"
OUTPUTS = ()  # its --out is a folder of committed files: no leftovers of its own to remove


def add_options(parser):
    parser.add_argument("--ledger", default=paths.LEDGER_CSV)
    parser.add_argument("--data", default=paths.DATA)
    parser.add_argument("--out", default="tests/golden")


def run(args):
    """Write the golden files; status 1, nothing written, when the run's files do not agree on one
    canonical fingerprint (report.ledger.golden.Refused) or its ledger is missing."""
    from attnrepro.report.ledger import golden  # loads NumPy: after the pin (the harness)

    try:
        out = golden.write(args.out, golden.read_ledger(args.ledger), args.data)
    except golden.Refused as error:
        lines = str(error).splitlines()
        print(f"golden: refused, nothing written: {len(lines)} problem(s)")
        print("\n".join(f"  {line}" for line in lines))
        return 1
    except FileNotFoundError as error:
        print(f"golden: {error}")
        return 1
    print(f"wrote {', '.join(f'{out}/{name}' for name in golden.FILES)}: review `git diff {out}`")
