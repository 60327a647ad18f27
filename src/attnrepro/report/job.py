"""The report jobs' entry: one table, figure, ledger, evidence product, index or archive, as a rule runs it.

    python -m attnrepro.report.job [--pin PIN] [--expected-params JSON] [--sections JSON] COMMAND ...
        table --builder tables_checks:build_scale_table --article 001 --section "..." \
            --experiments scale_table --md T.md --csv T.csv [--ledger L.csv --published P.yaml] \
            --inputs results/data/...
        figure --builder figures_checks:draw_scale_table_curves --article 001 --section "..." \
            --experiments scale_table --svg F.svg --inputs ...
        ledger --published config/published.yaml --csv L.csv --md L.md [--numerics-evidence CSV] \
            [--seed-evidence CSV] [--listings-evidence CSV] --inputs ...
        numerics --published ... --settings S.json --csv C --md M --svg F --inputs ...   (evidence)
        seeds --published ... --csv C --md M --svg F --inputs ...                        (evidence)
        listings --published ... --runs R.json ... --csv C --listings-csv L --md M --svg F  (evidence)
        index --config results/config.resolved.yaml --out results/README.md
        archive --config results/config.resolved.yaml --out A.tar.gz [--rules JSON] --files ...

Everything it needs comes from its command line, which the rule fills while Snakemake builds the
DAG: the builder (``"<module>:<function>"`` under ``attnrepro.report``, the catalog's), the
article and section of its title (``--sections``: those a figure's title names), the parameters
the plan expects of its inputs. Each command is dispatched by its name to the modules it runs
(:data:`RUNS`, imported by name): a rule declares as code inputs this module's imports and its
command's modules (``report_code`` in workflow/rules/common.smk), so that editing a module reruns
only the jobs that run it. ``python -m attnrepro.report`` (:mod:`attnrepro.report.cli`)
is the command line for people: it resolves a product's builder and titles from the catalog and
calls :func:`run`.

Through the job harness, as an experiment job (:mod:`attnrepro.run.harness`), a report job writes
nothing once the Snakemake run that started it has ended, removes the temporaries of its outputs that a
killed earlier attempt left, reads every result through ``io.read_parquet`` (checksums and content
hash verified) and, given ``--expected-params JSON`` ({experiment: {case: params}}), first compares
each input's provenance parameters with them. A corrupt or stale input stops it with status 1 and a
message naming the file and the command that rebuilds it, never a "missing" or "differs" verdict.
A claims file (``--published``) is loaded first (:func:`check_claims`): one that does not load (its
schema, a key given twice, an anchor or a tag, YAML that does not parse, no file) ends the job
with status 2 and one line in its log naming the file, the claim and the key
(:mod:`attnrepro.run.usage`); so do a malformed option and an unknown builder.
"""

import argparse
import importlib
import logging
import sys
from pathlib import Path

from attnrepro import paths
from attnrepro.numerics import canonical
from attnrepro.run import harness, usage

PREFIX = "attnrepro.report"  # of the stderr line of a stopped job (attnrepro.run.harness) and the logger
log = logging.getLogger(PREFIX)
PACKAGE = "attnrepro.report.products"  # builders are "<module>:<function>" under it
RESULTS = ("attnrepro.report.products.results", "attnrepro.report.products.render")
STYLE = "attnrepro.report.products.style"  # what --sections sets (figure, seeds, listings)
SPEED = "attnrepro.report.ledger.speed"  # what --speed reads (a timing table: its rule names it)
PRINTED = "attnrepro.report.ledger.printed"  # what --ledger and --published mark a table's printed cells with
CLAIMS = "attnrepro.report.ledger.claims"  # what reads --published (every command taking it runs it)
# Dispatch by command: the modules each command runs, imported by name (its rule declares them as
# code inputs; a table or figure also runs its builder's module, the ledger the evaluate modules of
# the evidence it reads). The index names the plan and the catalog, which it reads: they are
# DAG-only modules (attnrepro.dag.code_inputs.DAG_ONLY), followed only where a rule names them.
RUNS = {
    "table": (*RESULTS, PRINTED),
    "figure": (*RESULTS, STYLE),
    "ledger": ("attnrepro.report.products.results", "attnrepro.report.ledger_io",
               "attnrepro.report.ledger.comparable",
               "attnrepro.dag.plan"),  # the experiments' declarations that decide the echoes (ledger.echoes)
    "numerics": ("attnrepro.report.evidence.numerics_render",),
    "seeds": ("attnrepro.report.products.style", "attnrepro.report.evidence.seeds_render"),
    "listings": ("attnrepro.report.products.style", "attnrepro.report.evidence.listings_render"),
    "index": ("attnrepro.report.index", "attnrepro.dag.plan", "attnrepro.report.products.catalog",
              "attnrepro.report.ledger.headline"),
    "archive": ("attnrepro.archive.pack",),
}
# the options that name a command's outputs (by dest), here and in attnrepro.report.cli: the ledger's
# --speed writes results/speed.csv (speed_out); a table's, an edition's or machine-speed's reads it
OUTPUT_OPTIONS = ("md", "csv", "svg", "out", "speed_out", "listings_csv")


def _parser():
    parser = usage.Parser(prog="attnrepro.report.job", description=__doc__.split("\n")[0],
                          epilog=usage.EXIT_STATUS, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_options(parser)
    sub = parser.add_subparsers(dest="command", required=True)
    for kind, outputs in (("table", ("md", "csv")), ("figure", ("svg",))):
        p = sub.add_parser(kind)
        p.add_argument("--builder", required=True, metavar="MODULE:FUNCTION",
                       help="the function that builds it, in attnrepro.report.products.<MODULE>")
        p.add_argument("--article", required=True)
        p.add_argument("--section", required=True)
        p.add_argument("--experiments", nargs="+", required=True,
                       help="the experiments it reads (named in its source line)")
        for key in outputs:
            p.add_argument(f"--{key}", required=True)
        p.add_argument("--inputs", nargs="*", default=[], help="the results files it may read")
        if kind == "table":
            add_speed(p)
            add_printed(p)
            p.add_argument("--name", help="the table's name in the catalog, which the claims' printed "
                                          "cells name (default: the stem of --md)")
    add_ledger(sub.add_parser("ledger"))
    add_evidence(sub.add_parser("numerics"), sub.add_parser("seeds"))
    add_listings(sub.add_parser("listings"))
    add_index(sub.add_parser("index"))
    add_archive(sub.add_parser("archive"))
    return parser


def add_options(parser):
    """The options before the command (shared with attnrepro.report.cli)."""
    parser.add_argument("--pin", choices=canonical.PINS, default=canonical.SETTING,
                        help="canonical numerics of the summary statistics (attnrepro.numerics.canonical)")
    parser.add_argument("--expected-params", metavar="JSON",
                        help="{experiment: {case: params}} this run plans for the --inputs: a file "
                             "written with other parameters stops the job")
    parser.add_argument("--sections", metavar="JSON",
                        help='{"experiments": {id: [article, section]}, "products": {name: [...]}}: '
                             "the titles a figure names (default: read from the plan and the catalog)")


def add_speed(table):
    """A timing table's ``--speed``: its note says this machine's speed against its article's."""
    table.add_argument("--speed", dest="speed_csv",
                       help="results/speed.csv (the ledger's): the note says this machine's speed against "
                            "the article's (a table of machine-bound times)")


def add_printed(table):
    """A table's ``--ledger`` and ``--published``: the cells that print a claim show the published value
    and the ledger's verdict (attnrepro.report.ledger.printed)."""
    table.add_argument("--ledger", dest="ledger_csv",
                       help="results/ledger.csv: each cell that prints a claim shows its verdict and the "
                            "published value (with --published)")
    table.add_argument("--published",
                       help="config/published.yaml: the claims, which name their printed cells")


def add_ledger(ledger):
    ledger.add_argument("--published", required=True)
    ledger.add_argument("--csv", required=True)
    ledger.add_argument("--md", required=True)
    ledger.add_argument("--speed", dest="speed_out",
                        help="where to write each article's speed factor (results/speed.csv)")
    ledger.add_argument("--article", metavar="JSON",
                        help="what the article's config plans "
                             "(attnrepro.report.ledger.comparable.Article): a claim "
                             "computed otherwise is judged 'other parameters'")
    ledger.add_argument("--gate", action="store_true", help="exit 1 if an exact claim is not reproduced")
    ledger.add_argument("--numerics-evidence", help="the numerics sweep's ledger_numerics.csv, to cite")
    ledger.add_argument("--seed-evidence",
                        help="the seed distribution's seed_distribution.csv, to judge stochastic claims by")
    ledger.add_argument("--listings-evidence",
                        help="the listings' article_code.csv: what the articles' own code prints here")
    ledger.add_argument("--inputs", nargs="*", default=[], help="the results files it may read")


def add_evidence(numerics, seeds):
    numerics.description = "write the numerics sweep against the published digits"
    numerics.add_argument("--published", required=True)
    numerics.add_argument("--settings", help="the probe's JSON (order and the settings not run)")
    numerics.add_argument("--article-code",
                          help="the listings' article_code.csv: mark the settings that give what the "
                               "article's own code prints here")
    numerics.add_argument("--inputs", nargs="*", default=[], help="the sweep's Parquet files")
    seeds.description = "place the published stochastic figures among the seeds"
    seeds.add_argument("--published", required=True)
    seeds.add_argument("--over", type=int, help="seeds per published statistic (default 3, the article's)")
    seeds.add_argument("--inputs", nargs="*", default=[], help="the trainings' main Parquet files")
    for p in (numerics, seeds):
        p.add_argument("--csv", required=True)
        p.add_argument("--md", required=True)
        p.add_argument("--svg", required=True)


def add_listings(listings):
    listings.description = "the articles' listings as run here against their published output"
    listings.add_argument("--published", required=True)
    listings.add_argument("--runs", nargs="+", required=True, help="one JSON per article (listings_run)")
    listings.add_argument("--csv", required=True, help="one row per claim: the article code's value here")
    listings.add_argument("--listings-csv", required=True, help="one row per listing")
    listings.add_argument("--md", required=True)
    listings.add_argument("--svg", required=True)


def add_index(index):
    index.add_argument("--config", required=True, help="the resolved config (YAML)")
    index.add_argument("--unbuilt", metavar="JSON", default="{}",
                       help="{article: why its annotated edition is not built} (the rule's, from common.smk)")
    index.add_argument("--ledger", help="results/ledger.csv: the index opens with its summary, as LEDGER.md")
    index.add_argument("--published", help="config/published.yaml: the versions the articles state")
    index.add_argument("--inputs", nargs="*", default=[], help="the results files: the run's versions")
    index.add_argument("--out", required=True)


def add_archive(archive):
    archive.add_argument("--config", required=True, help="the resolved config (YAML)")
    archive.add_argument("--out", required=True)
    archive.add_argument("--rules", metavar="JSON", default="{}",
                         help="{rule: the file that defines it}, for the archive's RO-Crate")
    archive.add_argument("--files", nargs="*", default=[],
                         help="the files to archive: the run's outputs and the workflow's own files")


def _module(name):
    return importlib.import_module(name)


def _runs(command):
    """The modules of ``command`` (RUNS: its rule names them), imported, in RUNS' order."""
    return [_module(name) for name in RUNS[command]]


def _builder(spec):
    """The function of a builder ``"<module>:<function>"`` under attnrepro.report.products."""
    module, sep, function = spec.partition(":")
    if not sep or not module or not function:
        raise usage.UsageError(f"--builder takes MODULE:FUNCTION, got {spec!r}")
    try:
        found = _module(f"{PACKAGE}.{module}")
    except ModuleNotFoundError as error:
        if error.name != f"{PACKAGE}.{module}":  # a module it imports is missing: a bug
            raise
        raise usage.UsageError(f"--builder {spec}: no module {PACKAGE}.{module}") from None
    builder = getattr(found, function, None)
    if not callable(builder):
        raise usage.UsageError(f"--builder {spec}: no function {function} in {PACKAGE}.{module}")
    return builder


def _trail(args, render):
    """The line that names the product's builder, experiments and commit (render.trail)."""
    return render.trail(f"{PACKAGE}.{args.builder}", args.experiments, render.commit())


def build_table(args):
    results, render, printed = _runs("table")
    table = _builder(args.builder)(results.Loader(args.inputs))
    if bool(args.ledger_csv) != bool(args.published):
        raise usage.UsageError("--ledger and --published go together: the ledger's verdicts and the claims' "
                               "cells")
    if (status := results.numerics_status(args.inputs)) != "canonical":
        table.note = f"{table.note} Numerics: {status}.".strip()
    if args.speed_csv:  # a table of machine-bound times: the speed factor the ledger measured
        speed = _module(SPEED)
        table.note = f"{table.note} {speed.note(args.speed_csv, args.article)}".strip()
    if args.ledger_csv:  # the published value and the ledger's verdict beside each printed cell
        printed.annotate_files(table, args.name or Path(args.md).stem, args.published, args.ledger_csv)
    render.write_table(table, args.md, args.csv, title=args.section, article=args.article,
                       source=_trail(args, render))


def draw_figure(args):
    results, render, _ = _runs("figure")
    fig = _builder(args.builder)(results.Loader(args.inputs))
    status = results.numerics_status(args.inputs)
    render.write_figure(fig, args.svg, note=None if status == "canonical" else f"Numerics: {status}",
                        source=_trail(args, render))


def write_ledger(args):
    results, ledger_io, comparable, _ = _runs("ledger")
    load = results.Loader(args.inputs)
    article = comparable.Article.from_json(args.article) if args.article else None
    return ledger_io.write(
        args.published, load, args.csv, args.md, gate=args.gate,
        numerics_csv=args.numerics_evidence, seeds_csv=args.seed_evidence, speed_csv=args.speed_out,
        article=article, listings_csv=args.listings_evidence)


def write_numerics(args):
    (render,) = _runs("numerics")
    return render.write(args.published, args.inputs, args.csv, args.md, args.svg, args.settings,
                        args.article_code)


def write_seeds(args):
    _, render = _runs("seeds")
    k = render.ARTICLE_SEEDS if args.over is None else args.over
    return render.write(args.published, args.inputs, args.csv, args.md, args.svg, k)


def write_listings(args):
    _, render = _runs("listings")
    return render.write(args.published, args.runs, args.csv, args.listings_csv, args.md, args.svg)


def write_index(args):
    import yaml

    from attnrepro.run import io

    index, *_, headline = _runs("index")
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


def write_archive(args):
    (archive,) = _runs("archive")
    # the logs and per-job benchmarks are written by Snakemake itself, beside the declared outputs
    records = [str(p) for folder in (paths.LOGS, paths.BENCHMARKS) for p in Path(folder).rglob("*.*")]
    lock = Path(paths.RUNTIME_LOCK)  # what `python -m attnrepro verify` compares with its own
    out = archive.write(args.out, sorted(set(args.files) | set(records)), Path(args.config).read_text(),
                        lock_text=lock.read_text() if lock.is_file() else None,
                        rules=usage.json_object(args.rules, "--rules"))
    log.info("wrote %s", out)


COMMANDS = {
    "table": build_table,
    "figure": draw_figure,
    "ledger": write_ledger,
    "numerics": write_numerics,
    "seeds": write_seeds,
    "listings": write_listings,
    "index": write_index,
    "archive": write_archive,
}


def outputs(args):
    """The files the parsed ``args`` name as outputs (OUTPUT_OPTIONS): the harness removes the
    temporaries of them that a killed earlier attempt left."""
    return [getattr(args, k) for k in OUTPUT_OPTIONS if getattr(args, k, None)]


def _command(args):
    """The work of a rule's command: the titles of ``--sections``, then the command (COMMANDS)."""
    if getattr(args, "sections", None):
        _module(STYLE).use_sections(usage.json_object(args.sections, "--sections"))
    return COMMANDS[args.command](args)


def check_claims(path):
    """Load the claims file ``path`` (--published) as the command will (claims.load_claims), so that
    one it refuses ends the job with a UsageError: one line naming the file, the claim and the key.
    The loader says a bad file with a ValueError (the schema; a key given twice, an anchor, a tag:
    attnrepro.dag.yamlfile.Refused), YAML's error, or the file system's."""
    import yaml

    try:
        _module(CLAIMS).load_claims(path)
    except yaml.YAMLError as error:
        raise usage.UsageError(f"{path}: not valid YAML: {usage.yaml_problem(error)}") from None
    except OSError as error:
        raise usage.UsageError(f"--published {path}: {error.strerror or error}") from None
    except ValueError as error:  # the file's problems, by file and key (or line)
        message = usage.one_line(error)
        raise usage.UsageError(message if str(path) in message else f"{path}: {message}") from None


def run(args, work=None, guard_outputs=True, claims=True):
    """The job of the parsed ``args`` (this module's command line, or attnrepro.report.cli's for
    the same commands) through the job harness (attnrepro.run.harness); its exit status. The pin
    is applied unless NumPy is loaded (in-process callers keep theirs). ``work``: a function of
    ``args`` in place of the command's (attnrepro.report.cli's own commands); ``guard_outputs``
    False: no leftovers are removed (gate, golden: their --out is a folder of committed files);
    ``claims`` False: the work reads no ``--published`` (gate without --tables), else it is
    checked first (check_claims)."""
    work = work or _command

    def checked():
        if claims and getattr(args, "published", None):
            check_claims(args.published)
        return work(args)

    def job(_pinned):
        expected = usage.json_object(args.expected_params, "--expected-params")
        return harness.Job(checked, outputs=outputs(args) if guard_outputs else (),
                           inputs=getattr(args, "inputs", []), expected=expected)

    return harness.run_job(job, prefix=PREFIX, pin=args.pin, keep_loaded=True)


def main(argv=None):
    return run(_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
