"""Command line of the report layer: build one table, one figure, the ledger, its evidence or the index.

    python -m attnrepro.report table scale_table --md t.md --csv t.csv --inputs results/data/001/scale_table/*
    python -m attnrepro.report figure attention_heatmap --svg f.svg --inputs results/data/001/attention_map/*
    python -m attnrepro.report ledger --published config/published.yaml --csv l.csv --md L.md \
        --inputs results/data/*/*/*.parquet
    python -m attnrepro.report numerics --published config/published.yaml --settings s.json \
        --csv c.csv --md t.md --svg f.svg --inputs results/numerics/*/data/*/*/*.parquet
    python -m attnrepro.report seeds --published config/published.yaml --csv s.csv --md s.md \
        --svg s.svg --inputs results/data/001/train/sort-L*-seed*.parquet

The command line for people. A table or figure is named: its builder, article and section come
from the catalog. Its inputs are checked as a rule checks its own: without ``--expected-params``,
against what ``--configfile FILE`` (over config/config.yaml; default config/config.yaml) plans for
them, so that a ledger by hand does not judge trainings of another config; the ledger also refuses
evidence (``--seed-evidence``, ``--numerics-evidence``) computed with other parameters than its
inputs (:mod:`attnrepro.report.ledger.consistency`). Then the command runs as its rule's job does, through
the same functions (:mod:`attnrepro.report.commands`, :func:`attnrepro.report.job.run`; the rules
run its entry, ``python -m attnrepro.jobs.<command>``, which is given on its command line what
this one resolves): it writes nothing once the Snakemake run that started it has
ended, removes the temporaries of its outputs that a killed earlier attempt left, verifies every
result it reads and, given ``--expected-params JSON`` ({experiment: {case: params}}), compares
each input's provenance parameters with them; a corrupt or stale input stops it with status 1 and
a message naming the file and the command that rebuilds it. A usage error (an unknown table or
figure, a claims file ``--published`` or a config that does not load, a malformed option) ends it
with status 2 and one line naming the file, the claim and the key (:mod:`attnrepro.run.usage`).
"""

import argparse
import json
import logging
from pathlib import Path

from attnrepro import paths
from attnrepro.run import harness, usage
from attnrepro.report import job
from attnrepro.report.ledger import claims_check

log = logging.getLogger("attnrepro.report")


def _parser():
    parser = usage.Parser(prog="attnrepro.report", description=__doc__.split("\n")[0],
                          epilog=usage.EXIT_STATUS, formatter_class=argparse.RawDescriptionHelpFormatter)
    job.add_options(parser)
    parser.add_argument("--configfile", metavar="FILE",
                        help="without --expected-params, the inputs are checked against what this config "
                             "plans for them, as the rules check theirs (its keys over config/config.yaml, "
                             "as `snakemake --configfile FILE`; default: config/config.yaml)")
    sub = parser.add_subparsers(dest="command", required=True)
    table = sub.add_parser("table")
    table.add_argument("name")
    table.add_argument("--md", required=True)
    table.add_argument("--csv", required=True)
    job.add_speed(table)
    job.add_printed(table)
    figure = sub.add_parser("figure")
    figure.add_argument("name")
    figure.add_argument("--svg", required=True)
    job.add_ledger(sub.add_parser("ledger"))
    for p in (table, figure):
        p.add_argument("--inputs", nargs="*", default=[], help="the results files it may read")
    gate = sub.add_parser("gate", help="exit 1 on an empty ledger, a missing claim, an exact claim not "
                                       "reproduced, non-canonical numerics, "
                                       "or a change from the golden files")
    gate.add_argument("ledger", help="results/ledger.csv")
    gate.add_argument("--golden", help="the golden files' folder (tests/golden): compare the run with them")
    gate.add_argument("--data", default=paths.DATA, help="the run's Parquet folder (with --golden)")
    gate.add_argument("--tables", help="the run's results/tables: each claim's printed cell must read as the "
                                       "ledger's reproduced value (attnrepro.report.ledger.agreement)")
    gate.add_argument("--published", default="config/published.yaml",
                      help="the claims, which name their printed cells (with --tables)")
    golden = sub.add_parser("golden",
                            help="write the golden files from a finished canonical run (review the diff)")
    golden.add_argument("--ledger", default=paths.LEDGER_CSV)
    golden.add_argument("--data", default=paths.DATA)
    golden.add_argument("--out", default="tests/golden")
    job.add_index(sub.add_parser("index", help="write results/README.md"))
    job.add_numerics(sub.add_parser("numerics", help="write the numerics sweep against the published digits"))
    job.add_seeds(sub.add_parser("seeds", help="place the published stochastic figures among the seeds"))
    job.add_listings(sub.add_parser("listings",
                                    help="set the articles' listings as run here against their output"))
    job.add_edition(sub.add_parser("edition", help="write an article's annotated edition (HTML)"))
    job.add_overview(sub.add_parser("ledger-overview", help="draw the ledger's overview figure (SVG)"))
    job.add_machine_speed(sub.add_parser("machine-speed",
                                         help="draw this machine's speed against the articles' (SVG)"))
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


def check_gate(args):
    """The fidelity gate of CI (report.golden): the ledger's rules, then the golden files."""
    from attnrepro.report.ledger import golden  # loads NumPy: after the pin (the harness)

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
        problems += _table_problems(args, table)
    if problems:
        print(f"gate: {len(problems)} problem(s)\n" + "\n".join(f"  {p}" for p in problems))
        return 1
    checked = f"; equal to the golden files in {args.golden}" if args.golden else ""
    checked += f"; every printed claim of {args.tables} reads as the ledger" if args.tables else ""
    print(f"gate passed: every claim present, every exact claim reproduced, canonical numerics{checked}")
    return 0


def _table_problems(args, table):
    """Each claim's printed cell in the run's tables against the ledger (report.agreement)."""
    if not Path(args.tables).is_dir():
        return [f"no tables folder {args.tables}"]
    from attnrepro.report.ledger import agreement, claims

    return agreement.disagreements(claims.load_claims(args.published), table, args.tables)


def write_golden(args):
    """The deliberate update of the golden files from a finished run; status 1, nothing written,
    when its files do not agree on one canonical fingerprint (report.golden.Refused)."""
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


def _work(command):
    """The work of ``command``: its module of attnrepro.report.commands (imported when it runs:
    after the pin), or this module's own (gate, golden)."""
    own = {"gate": check_gate, "golden": write_golden}
    if command in own:
        return own[command]

    def work(args):
        from attnrepro.report.commands import (edition, figure, index, ledger, ledger_overview, listings,
                                               machine_speed, numerics, seeds, table)

        modules = {"table": table, "figure": figure, "ledger": ledger, "numerics": numerics,
                   "seeds": seeds, "listings": listings, "index": index, "edition": edition,
                   "ledger-overview": ledger_overview, "machine-speed": machine_speed}
        return modules[command].run(args)

    return work


# the commands whose outputs are not cleared of leftovers: their --out is a folder of committed files
UNGUARDED = ("gate", "golden")


def main(argv=None):
    args = _parser().parse_args(argv)
    harness.setup_logging()
    try:
        _prepare(args)
    except usage.UsageError as error:
        return usage.refuse(error, job.PREFIX)
    # gate reads --published with --tables only
    check = None if args.command == "gate" and not args.tables else claims_check.check
    return job.run(args, _work(args.command), guard_outputs=args.command not in UNGUARDED, check=check)


def _prepare(args):
    """What a rule passes and people leave out: the parameters planned for the inputs (without
    --expected-params), a table's or figure's builder and titles; a UsageError when the config
    does not load, an input lies outside results/, or the product is unknown."""
    if args.expected_params is None and getattr(args, "inputs", None):
        try:
            args.expected_params = planned_params(args.inputs, args.configfile)
        except (ValueError, OSError) as error:  # a config that does not load, a path outside results/
            raise usage.UsageError(str(error)) from None
    if args.command in ("table", "figure"):
        _resolve(args)
    if getattr(args, "sections", None) is None:  # titles by hand: every section (report.products.style)
        from attnrepro.report.products import catalog

        args.sections = json.dumps(catalog.all_sections())
