"""Entry of a listings job (rule ``listings_article``): one article's listings, run as written.

    python -m attnrepro.jobs.listings_run --article ID --text TEXT --pin haswell-noavx512 \
        --out results/listings/runs/ID.json [--timeout 3600]

The listings run in an interpreter of their own, which gets the pin
(:mod:`attnrepro.evidence.listings_run`): this process runs no numerics.
"""

import argparse
import sys
from pathlib import Path

from attnrepro.evidence import listings_run
from attnrepro.numerics import canonical
from attnrepro.run import harness


def _parser():
    parser = argparse.ArgumentParser(prog="attnrepro.jobs.listings_run", description=__doc__.split("\n")[0])
    parser.add_argument("--article", required=True)
    parser.add_argument("--text", required=True, help="the article's text (its entry of config articles)")
    parser.add_argument("--pin", choices=canonical.PINS, default=canonical.SETTING)
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds for the whole session")
    parser.add_argument("--out", required=True, help="the run's JSON")
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    if not Path(args.text).is_file():
        print(f"attnrepro: no article text at {args.text}", file=sys.stderr)
        return 1

    def job(_pinned):  # this process runs no numerics: the pin goes to the session (pin=None)
        return harness.Job(lambda: listings_run.write(args.article, args.text, args.pin, args.timeout,
                                                      args.out), outputs=[args.out])

    return harness.run_job(job, pin=None)


if __name__ == "__main__":
    sys.exit(main())
