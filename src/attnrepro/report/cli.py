"""Command line of the report layer: build one table, one figure, the ledger, its evidence or the index.

    python -m attnrepro.report table scale_table --md t.md --csv t.csv --inputs results/data/...
    python -m attnrepro.report figure attention_heatmap --svg f.svg --inputs ...
    python -m attnrepro.report ledger --published config/published.yaml --csv l.csv --md L.md --inputs ...
    python -m attnrepro.report numerics --published config/published.yaml --settings s.json \
        --csv c.csv --md t.md --svg f.svg --inputs results/numerics/*/data/*/*/*.parquet
    python -m attnrepro.report seeds --published config/published.yaml --csv s.csv --md s.md \
        --svg s.svg --inputs results/data/001/train/sort-L*-seed*.parquet

Kept apart from :mod:`attnrepro.cli` so that editing a plotting module reruns its
figures and nothing else.

As an experiment job does (:mod:`attnrepro.jobs`, :mod:`attnrepro.io`), a report job writes
nothing once the Snakemake run that started it has ended, removes the temporaries of its outputs
that a killed earlier attempt left, reads every result through ``io.read_parquet`` (checksums and
content hash verified) and, given ``--expected-params JSON`` ({experiment: {case: params}}: what
the run's config plans for its ``--inputs``; Snakemake passes it), first compares each input's
provenance parameters with them. A corrupt or stale input stops it with status 1 and a message
naming the file and the command that rebuilds it, never a "missing" or "differs" verdict.
"""

import argparse
import importlib
import json
import logging
import sys

from attnrepro import canonical, jobs

log = logging.getLogger("attnrepro.report")


def _parser():
    parser = argparse.ArgumentParser(prog="attnrepro.report", description=__doc__.split("\n")[0])
    parser.add_argument("--pin", choices=canonical.PINS, default=canonical.SETTING,
                        help="canonical numerics of the summary statistics (attnrepro.canonical)")
    parser.add_argument("--expected-params", metavar="JSON",
                        help="{experiment: {case: params}} this run plans for the --inputs: a file "
                             "written with other parameters stops the job")
    sub = parser.add_subparsers(dest="command", required=True)
    table = sub.add_parser("table")
    table.add_argument("name")
    table.add_argument("--md", required=True)
    table.add_argument("--csv", required=True)
    figure = sub.add_parser("figure")
    figure.add_argument("name")
    figure.add_argument("--svg", required=True)
    ledger = sub.add_parser("ledger")
    ledger.add_argument("--published", required=True)
    ledger.add_argument("--csv", required=True)
    ledger.add_argument("--md", required=True)
    ledger.add_argument("--gate", action="store_true", help="exit 1 if an exact claim is not reproduced")
    ledger.add_argument("--numerics-evidence", help="the numerics sweep's ledger_numerics.csv, to cite")
    ledger.add_argument("--seed-evidence",
                        help="the seed distribution's seed_distribution.csv, to judge stochastic claims by")
    for p in (table, figure, ledger):
        p.add_argument("--inputs", nargs="*", default=[], help="the results files it may read")
    gate = sub.add_parser("gate", help="exit 1 on an empty ledger, a missing claim, an exact claim not "
                                       "reproduced, non-canonical numerics, or a change from the golden files")
    gate.add_argument("ledger", help="results/ledger.csv")
    gate.add_argument("--golden", help="the golden files' folder (tests/golden): compare the run with them")
    gate.add_argument("--data", default="results/data", help="the run's Parquet folder (with --golden)")
    golden = sub.add_parser("golden", help="write the golden files from a finished canonical run (review the diff)")
    golden.add_argument("--ledger", default="results/ledger.csv")
    golden.add_argument("--data", default="results/data")
    golden.add_argument("--out", default="tests/golden")
    index = sub.add_parser("index", help="write results/README.md")
    index.add_argument("--config", required=True, help="the resolved config (YAML)")
    index.add_argument("--out", required=True)
    archive = sub.add_parser("archive", help="write a verifiable tarball of the run")
    archive.add_argument("--config", required=True, help="the resolved config (YAML)")
    archive.add_argument("--out", required=True)
    archive.add_argument("--files", nargs="*", default=[], help="the files to archive")
    numerics = sub.add_parser("numerics", help="write the numerics sweep against the published digits")
    numerics.add_argument("--published", required=True)
    numerics.add_argument("--settings", help="the probe's JSON (order and the settings not run)")
    numerics.add_argument("--inputs", nargs="*", default=[], help="the sweep's Parquet files")
    seeds = sub.add_parser("seeds", help="place the published stochastic figures among the seeds")
    seeds.add_argument("--published", required=True)
    seeds.add_argument("--over", type=int, help="seeds per published statistic (default 3, the article's)")
    seeds.add_argument("--inputs", nargs="*", default=[], help="the trainings' main Parquet files")
    for p in (numerics, seeds):
        p.add_argument("--csv", required=True)
        p.add_argument("--md", required=True)
        p.add_argument("--svg", required=True)
    return parser


def _product(name, kind):
    from attnrepro.report import catalog

    product = catalog.PRODUCTS.get(name)
    if product is None or product.kind != kind:
        raise SystemExit(f"unknown {kind} {name!r}")
    return product, importlib.import_module(product.module)


def build_table(args, load):
    from attnrepro.report import render

    product, module = _product(args.name, "table")
    table = getattr(module, f"build_{product.name}")(load)
    if (status := _numerics(args)) != "canonical":
        table.note = f"{table.note} Numerics: {status}.".strip()
    render.write_table(table, args.md, args.csv, title=product.section, article=product.article)


def draw_figure(args, load):
    from attnrepro.report import render

    product, module = _product(args.name, "figure")
    fig = getattr(module, f"draw_{product.name}")(load)
    status = _numerics(args)
    render.write_figure(fig, args.svg, note=None if status == "canonical" else f"Numerics: {status}")


def _numerics(args):
    """'canonical', or which input files ran other numerics (said under the table, in the SVG)."""
    from attnrepro.report import results

    return results.numerics_status(args.inputs)


def write_ledger(args, load):
    from attnrepro.report import ledger_io

    return ledger_io.write(args.published, load, args.csv, args.md, gate=args.gate,
                           numerics_csv=args.numerics_evidence, seeds_csv=args.seed_evidence)


def check_gate(args):
    """The fidelity gate of CI (report.golden): the ledger's rules, then the golden files."""
    from attnrepro.report import golden

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
    if problems:
        print(f"gate: {len(problems)} problem(s)\n" + "\n".join(f"  {p}" for p in problems))
        return 1
    checked = f"; equal to the golden files in {args.golden}" if args.golden else ""
    print(f"gate passed: every claim present, every exact claim reproduced, canonical numerics{checked}")
    return 0


def write_golden(args):
    from attnrepro.report import golden

    out = golden.write(args.out, golden.read_ledger(args.ledger), args.data)
    print(f"wrote {out}/{golden.LEDGER_FILE} and {out}/{golden.TABLES_FILE}: review `git diff {out}`")


def write_index(args):
    from attnrepro import config as cfg
    from attnrepro import io
    from attnrepro.report import index

    io.write_text(args.out, index.lines(cfg.load(args.config)))


def write_archive(args):
    from pathlib import Path

    from attnrepro import archive

    # the logs and per-job benchmarks are written by Snakemake itself, beside the declared outputs
    records = [str(p) for folder in ("results/logs", "results/benchmarks") for p in Path(folder).rglob("*.*")]
    lock = Path("requirements.lock")  # what `python -m attnrepro verify` compares with its own
    out = archive.write(args.out, sorted(set(args.files) | set(records)), Path(args.config).read_text(),
                        lock_text=lock.read_text() if lock.is_file() else None)
    log.info("wrote %s", out)


# The evidence modules are imported by name, as the tables and figures are (_product): the
# report jobs' code inputs (deps.source_files of this module) then leave them out.
def write_numerics(args):
    grid = importlib.import_module("attnrepro.report.numerics_grid")
    return grid.write(args.published, args.inputs, args.csv, args.md, args.svg, args.settings)


def write_seeds(args):
    seeds = importlib.import_module("attnrepro.report.seed_distribution")
    k = seeds.ARTICLE_SEEDS if args.over is None else args.over
    return seeds.write(args.published, args.inputs, args.csv, args.md, args.svg, k)


def main(argv=None):
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if "numpy" not in sys.modules:  # a job: pin before numpy loads (in-process callers keep theirs)
        canonical.apply(args.pin)
    jobs.start()  # the Snakemake run this job belongs to (none by hand)
    from attnrepro import io

    try:
        return _dispatch(args)
    except (io.ResultError, jobs.RunEnded) as error:
        print(f"attnrepro.report: {error}", file=sys.stderr)
        return 1


OUTPUT_OPTIONS = ("md", "csv", "svg")


def _dispatch(args):
    from attnrepro import io

    if args.command not in ("gate", "golden"):  # (their --out is a folder of committed files)
        outputs = [getattr(args, k) for k in (*OUTPUT_OPTIONS, "out") if getattr(args, k, None)]
        for leftover in io.remove_leftovers(outputs):
            log.info("removed %s, left by a killed earlier attempt of this job", leftover)
    io.check_inputs(getattr(args, "inputs", []), json.loads(args.expected_params or "{}"))
    standalone = {
        "index": write_index,
        "archive": write_archive,
        "gate": check_gate,
        "golden": write_golden,
        "numerics": write_numerics,
        "seeds": write_seeds,
    }
    if args.command in standalone:
        return standalone[args.command](args) or 0
    from attnrepro.report.results import Loader

    load = Loader(args.inputs)
    action = {"table": build_table, "figure": draw_figure, "ledger": write_ledger}[args.command]
    return action(args, load) or 0
