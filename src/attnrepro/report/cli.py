"""Command line of the report layer: a table, a figure, the ledger, its evidence, the index, the CI gate.

    python -m attnrepro.report table scale_table --md t.md --csv t.csv --inputs results/data/001/scale_table/*
    python -m attnrepro.report figure attention_heatmap --svg f.svg --inputs results/data/001/attention_map/*
    python -m attnrepro.report ledger --published config/published.yaml --csv l.csv --md L.md \
        --inputs results/data/*/*/*.parquet
    python -m attnrepro.report numerics --published config/published.yaml --settings s.json \
        --csv c.csv --md t.md --svg f.svg --inputs results/numerics/*/data/*/*/*.parquet
    python -m attnrepro.report seeds --published config/published.yaml --csv s.csv --md s.md \
        --svg s.svg --inputs results/data/001/train/sort-L*-seed*.parquet

The command line for people, over the same modules as the rules' entries: each command's options
and work are its module of :mod:`attnrepro.report.commands`, run through the job harness by
:mod:`attnrepro.report.runner` (which says what that guards). A table or figure is named: its
builder, article and section come from the catalog. Its inputs are checked as a rule checks its
own: without ``--expected-params``, against what ``--configfile FILE`` (over config/config.yaml;
default config/config.yaml) plans for them, so that a ledger by hand does not judge trainings of
another config; the ledger also refuses evidence (``--seed-evidence``, ``--numerics-evidence``)
computed with other parameters than its inputs (:mod:`attnrepro.report.ledger.consistency`).
``gate`` and ``golden`` are CI's and no rule's: a finished run against ``tests/golden``, and the
deliberate update of those files.
"""

import argparse
import json
import logging

from attnrepro.report import runner
from attnrepro.report.commands import (edition, figure, gate, golden, index, ledger, ledger_overview,
                                       listings, machine_speed, numerics, seeds, table)
from attnrepro.run import harness, usage

log = logging.getLogger(runner.PREFIX)

# The report's commands, each one module of attnrepro.report.commands (its options and its work),
# here under its name with "-" for "_". Each but gate and golden (CI's and people's) has its entry,
# attnrepro.jobs.<module>, which its rules run; attnrepro.jobs.article_check is the other entry of
# that package, the one of `python -m attnrepro article check` (tests/test_code_inputs.py).
COMMANDS = (table, figure, ledger, numerics, seeds, listings, index, edition, ledger_overview, machine_speed,
            gate, golden)
BY_NAME = (table, figure)  # named by hand: their builder, titles and experiments come from the catalog


def name(command):
    """The command line's name of ``command`` (a module): ``ledger-overview`` for ledger_overview."""
    return command.__name__.rpartition(".")[2].replace("_", "-")


def _parser():
    parser = usage.Parser(prog="attnrepro.report", description=__doc__.split("\n")[0],
                          epilog=usage.EXIT_STATUS, formatter_class=argparse.RawDescriptionHelpFormatter)
    runner.add_options(parser)
    parser.add_argument("--configfile", metavar="FILE",
                        help="without --expected-params, the inputs are checked against what this config "
                             "plans for them, as the rules check theirs (its keys over config/config.yaml, "
                             "as `snakemake --configfile FILE`; default: config/config.yaml)")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        options = sub.add_parser(name(command), help=command.HELP, description=command.HELP)
        if command in BY_NAME:
            command.add_options(options, by_name=True)
        else:
            command.add_options(options)
    return parser


def _resolve(args):
    """A table's or figure's builder, article, section and experiments, from the catalog (what its
    rule passes to its entry, attnrepro.jobs.table or .figure)."""
    from attnrepro.report.products import catalog

    product = catalog.PRODUCTS.get(args.name)
    if product is None or product.kind != args.command:
        raise usage.UsageError(f"unknown {args.command} {args.name!r} (python -m attnrepro list names them)")
    args.builder, args.article, args.section = product.builder, product.article, product.section
    args.experiments = list(product.experiments)


def planned_params(inputs, configfile=None):
    """The JSON of ``--expected-params`` that a rule would pass for ``inputs``: what the config
    (``configfile`` over config/config.yaml) plans for them; inputs it does not plan are named in
    the log (they are not checked)."""
    from attnrepro.dag import config as cfg
    from attnrepro.dag import plan

    expected = plan.expected_params(inputs, cfg.resolve(configfile))
    unplanned = [p for p in inputs
                 if plan.output_case(p)[1] not in expected.get(plan.output_case(p)[0], {})]
    log.info("inputs checked against what %s plans for them (as a rule checks its inputs)",
             configfile or "config/config.yaml")
    if unplanned:
        shown = ", ".join(unplanned[:3]) + (" ..." if len(unplanned) > 3 else "")
        log.warning("%d of the %d input(s) are not planned by that config and are not checked: %s",
                    len(unplanned), len(inputs), shown)
    return json.dumps(expected, sort_keys=True)


def main(argv=None):
    args = _parser().parse_args(argv)
    harness.setup_logging()
    command = {name(c): c for c in COMMANDS}[args.command]
    try:
        _prepare(args, command)
    except usage.UsageError as error:
        return usage.refuse(error, runner.PREFIX)
    return runner.run(args, command.run, runner.outputs(args, command.OUTPUTS))


def _prepare(args, command):
    """What a rule passes and people leave out: the parameters planned for the inputs (without
    --expected-params), a table's or figure's builder and titles; a UsageError when the config
    does not load, an input lies outside results/, or the product is unknown."""
    if args.expected_params is None and getattr(args, "inputs", None):
        try:
            args.expected_params = planned_params(args.inputs, args.configfile)
        except (ValueError, OSError) as error:  # a config that does not load, a path outside results/
            raise usage.UsageError(str(error)) from None
    if command in BY_NAME:
        _resolve(args)
    if getattr(args, "sections", None) is None:  # titles by hand: every section (report.products.style)
        from attnrepro.report.products import catalog

        args.sections = json.dumps(catalog.all_sections())
