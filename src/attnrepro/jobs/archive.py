"""Entry of the archive job (rule ``archive``): every output, the workflow and an RO-Crate, one tarball.

    python -m attnrepro.jobs.archive --config results/config.resolved.yaml --out A.tar.gz \
        [--rules JSON] --files ...

Beside the files it is given, it holds the logs and per-job benchmarks that Snakemake writes and
the runtime lock (:func:`attnrepro.archive.pack.write`).
"""

import logging
import sys
from pathlib import Path

from attnrepro import paths
from attnrepro.report import runner
from attnrepro.run import usage

log = logging.getLogger(runner.PREFIX)
READS = ("requirements/runtime.lock",)  # paths.RUNTIME_LOCK: packed, for verify to compare with its own


def _parser():
    parser = runner.parser("attnrepro.jobs.archive", __doc__.split("\n")[0])
    parser.add_argument("--config", required=True, help="the resolved config (YAML)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--rules", metavar="JSON", default="{}",
                        help="{rule: the file that defines it}, for the archive's RO-Crate")
    parser.add_argument("--files", nargs="*", default=[],
                        help="the files to archive: the run's outputs and the workflow's own files")
    return parser


def _work(args):
    from attnrepro.archive import pack  # loads NumPy: after the pin (the harness)

    # the logs and per-job benchmarks are written by Snakemake itself, beside the declared outputs
    records = [str(p) for folder in (paths.LOGS, paths.BENCHMARKS) for p in Path(folder).rglob("*.*")]
    lock = Path(paths.RUNTIME_LOCK)  # what `python -m attnrepro verify` compares with its own
    out = pack.write(args.out, sorted(set(args.files) | set(records)), Path(args.config).read_text(),
                     lock_text=lock.read_text() if lock.is_file() else None,
                     rules=usage.json_object(args.rules, "--rules"))
    log.info("wrote %s", out)


def main(argv=None):
    args = _parser().parse_args(argv)
    return runner.run(args, _work, outputs=[args.out])


if __name__ == "__main__":
    sys.exit(main())
