"""Entry of the numerics sweep's probe (checkpoint ``numerics_settings``): which settings run here.

    python -m attnrepro.jobs.sweep_probe --kernels SkylakeX Haswell --masks default noavx512 \
        --environments '{}' --out results/numerics/settings.json

Each setting is probed in an interpreter of its own (:func:`attnrepro.evidence.sweep.write_probe`):
this process runs no numerics (no pin).
"""

import argparse
import sys

from attnrepro.evidence import sweep
from attnrepro.numerics import canonical
from attnrepro.run import harness, usage


def _parser():
    parser = usage.Parser(prog="attnrepro.jobs.sweep_probe", description=__doc__.split("\n")[0],
                          epilog=usage.EXIT_STATUS, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernels", nargs="*", default=[], help="OPENBLAS_CORETYPE names to try")
    parser.add_argument("--masks", nargs="*", default=[canonical.DEFAULT],
                        help=f"NumPy masks: {', '.join(canonical.MASKS)}")
    parser.add_argument("--environments", default="{}",
                        help="JSON: the side environments ({name: {python, packages, settings}})")
    parser.add_argument("--out", required=True, help="JSON file")
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)

    def job(_pinned):
        def work():
            environments = usage.json_object(args.environments, "--environments")
            return sweep.write_probe(args.out, args.kernels, args.masks, environments)

        return harness.Job(work, outputs=[args.out])

    return harness.run_job(job, pin=None)


if __name__ == "__main__":
    sys.exit(main())
