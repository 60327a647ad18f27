"""The run of a report command: the options before the command's own, and its job through the harness.

A report command is one module of :mod:`attnrepro.report.commands`, which holds its options and its
work. Its entry (``python -m attnrepro.jobs.<command>``, which its rules run) hands that module to
:func:`main`; the command line for people (:mod:`attnrepro.report.cli`) hands it to :func:`run`
after resolving what a rule would pass. This module names no command, so that editing one command's
module reruns that command's jobs alone (:mod:`attnrepro.dag.code_inputs`).

Through the job harness, as an experiment job (:mod:`attnrepro.run.harness`), a report command writes
nothing once the Snakemake run that started it has ended, removes the temporaries of its outputs that a
killed earlier attempt left, reads every result through ``io.read_parquet`` (checksums and content
hash verified) and, given ``--expected-params JSON`` ({experiment: {case: params}}), first compares
each input's provenance parameters with them. A corrupt or stale input stops it with status 1 and a
message naming the file and the command that rebuilds it, never a "missing" or "differs" verdict.
A usage error (a claims file that does not load, a malformed option, an unknown builder) ends it with
status 2 and one line in its log naming the file, the claim and the key (:mod:`attnrepro.run.usage`).
"""

import argparse

from attnrepro.numerics import canonical
from attnrepro.run import harness, usage

PREFIX = "attnrepro.report"  # of the stderr line of a stopped job (attnrepro.run.harness) and the logger


def add_options(parser):
    """The options before the command's own: every report entry's, and attnrepro.report.cli's."""
    parser.add_argument("--pin", choices=canonical.PINS, default=canonical.SETTING,
                        help="canonical numerics of the summary statistics (attnrepro.numerics.canonical)")
    parser.add_argument("--expected-params", metavar="JSON",
                        help="{experiment: {case: params}} this run plans for the --inputs: a file "
                             "written with other parameters stops the job")
    parser.add_argument("--sections", metavar="JSON",
                        help='{"experiments": {id: [article, section]}, "products": {name: [...]}}: '
                             "the titles a figure names (default: read from the plan and the catalog)")


def parser(prog, description, epilog=usage.EXIT_STATUS):
    """The command line ``prog``, with the options before the command's own."""
    parser = usage.Parser(prog=prog, description=description, epilog=epilog,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    add_options(parser)
    return parser


def outputs(args, names):
    """The files that the options ``names`` (dests) of the parsed ``args`` name: the outputs whose
    leftovers of a killed earlier attempt the harness removes."""
    return [getattr(args, name) for name in names if getattr(args, name, None)]


def run(args, work, outputs=()):
    """The job of the parsed ``args`` through the job harness; its exit status. ``work``: a function
    of ``args`` (a command's ``run``); ``outputs``: the files it writes. The pin is applied unless
    NumPy is loaded (in-process callers keep theirs)."""
    def job(_pinned):
        expected = usage.json_object(args.expected_params, "--expected-params")
        return harness.Job(lambda: work(args), outputs=outputs, inputs=getattr(args, "inputs", []),
                           expected=expected)

    return harness.run_job(job, prefix=PREFIX, pin=args.pin, keep_loaded=True)


def main(command, prog, argv=None):
    """The entry of ``command`` (a module of attnrepro.report.commands) run as ``prog``: its options
    parsed from ``argv`` (described by its ``HELP``, or its ``DESCRIPTION`` and ``EPILOG`` when it has
    them), its work run through the harness, writing the files its ``OUTPUTS`` name."""
    line = parser(prog, getattr(command, "DESCRIPTION", command.HELP),
                  getattr(command, "EPILOG", usage.EXIT_STATUS))
    command.add_options(line)
    args = line.parse_args(argv)
    return run(args, command.run, outputs(args, command.OUTPUTS))
