"""The run of one case of one experiment: its tables computed and written, as its job does it.

    python -m attnrepro.jobs.experiment EXPERIMENT --article 001 --section "..." --threads N --pin PIN \
        --params-json JSON --out MAIN.parquet [--table NAME=FILE ...] [--input NAME=FILE ...] \
        [--expected-params JSON]
    python -m attnrepro.jobs.sweep_case EXPERIMENT ... --numerics SETTING ...   (a numerics-sweep job)

Everything a job needs comes from its command line (:func:`parser`), which the rule fills from the
plan while Snakemake builds the DAG: the experiment (module ``attnrepro.experiments.<EXPERIMENT>``,
imported by that name), its article and section (recorded in the provenance), the case's
parameters, every output and input path, the parameters the plan expects of the inputs. It imports
neither the plan nor the config. The entries (:mod:`attnrepro.jobs.experiment`,
:mod:`attnrepro.jobs.sweep_case`, which records the sweep's setting with
:func:`attnrepro.evidence.sweep.recorded`) import what they run, so that a rule declares as code
inputs exactly that and the experiment's module (workflow/rules/common.smk).
``python -m attnrepro run`` (:mod:`attnrepro.cli`) is the command line for people: it resolves the
config, the case and the paths, and runs :func:`case` through the job harness as the entries do.
Named for the case (docs/glossary.md), the unit an experiment job runs: a job is Snakemake's, and
its entry is a module of :mod:`attnrepro.jobs`.

What a job guarantees about its outputs (the job harness, :mod:`attnrepro.run.harness`, with
:mod:`attnrepro.run.ownership` and :mod:`attnrepro.run.io`): it
records the Snakemake run that started it and writes nothing once that run has ended; its thread
limits and numerics (the pin, or a sweep setting) are applied before NumPy is imported; it removes
temporaries that a killed earlier attempt of itself left; its upstream files (``--input``) are
verified (checksums, content hash) and, given ``--expected-params``, their provenance parameters
are compared with what the run's config plans for them; its tables land as one set (every table to
a temporary first, then renamed, the main table last). A corrupt or stale input, or an ended run,
stops it with status 1 and a message naming the file (or the run); a usage error (a malformed
``NAME=FILE``, JSON that is no object, an unknown numerics setting) with status 2 and one line
naming the option (:mod:`attnrepro.run.usage`).
"""

import argparse
import importlib
import json
import logging
from pathlib import Path

from attnrepro.numerics import canonical
from attnrepro.run import harness, usage

log = logging.getLogger("attnrepro")
EXPERIMENTS = "attnrepro.experiments"  # the package of the experiment modules (plan.Experiment.module)


def pairs(items, option):
    """{NAME: FILE} of repeated ``NAME=FILE`` options."""
    out = {}
    for item in items:
        name, sep, file = item.partition("=")
        if not sep or not name:
            raise usage.UsageError(f"{option} takes NAME=FILE, got {item!r}")
        out[name] = file
    return out


def parser(prog, sweep=False, timed=False):
    """The command line of an experiment job (entry ``prog``); ``sweep``: a numerics-sweep job's,
    whose ``--numerics SETTING`` replaces the pin; ``timed``: a timing job's, given the article's
    listing to time beside its own passes."""
    parser = usage.Parser(prog=prog, description=__doc__.split("\n")[0],
                          epilog=usage.EXIT_STATUS, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("experiment")
    parser.add_argument("--article", required=True, help="the article's file prefix: 000, 001, 003")
    parser.add_argument("--section", required=True, help="the article's section of the experiment")
    parser.add_argument("--params-json", required=True, help="the case's parameters, verbatim, as JSON")
    parser.add_argument("--out", required=True, help="Parquet file of the main table")
    parser.add_argument("--table", action="append", default=[], metavar="NAME=FILE",
                        help="where to write another table (default: beside --out)")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE",
                        help="an upstream result file, given to run(params, inputs)")
    parser.add_argument("--expected-params", metavar="JSON",
                        help="{experiment: {case: params}} that the run plans for the --input files: "
                             "a file written with other parameters stops the job")
    parser.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads (default 1)")
    if timed:
        parser.add_argument("--article-text", metavar="FILE", help="the article's text, whose listing "
                            "--listing is timed beside the experiment's passes (config: article_code)")
        parser.add_argument("--article-sha256", metavar="HEX", help="the text's SHA-256, as its config "
                            "entry records it (articles[i].sha256); another text is refused")
        parser.add_argument("--listing", type=int, metavar="N",
                            help="the listing's number in the article, from 1")
    if sweep:
        parser.add_argument("--numerics", metavar="SETTING", required=True,
                            help="the numerics-sweep setting it runs with (attnrepro.evidence.sweep)")
    else:
        parser.add_argument("--pin", choices=canonical.PINS, default=canonical.SETTING,
                            help="canonical numerics (attnrepro.numerics.canonical; default %(default)s)")
    return parser


def table_paths(main, tables, names):
    """{table: path} of ``names``: ``tables`` ({name: path}) where given, else beside ``main``."""
    main = Path(main)
    paths = {name: main.with_name(f"{main.stem}.{name}{main.suffix}") for name in names}
    paths.update({name: Path(path) for name, path in tables.items()})
    paths["main"] = main
    return paths


def case(experiment, article, section, params, paths, inputs=None, expected=None, setting=None,
         recorded=None, article_code=None):
    """One case of ``experiment`` as the job harness runs it (:func:`attnrepro.run.harness.run_job`):
    a function of the pin's state that gives the job: its tables (``paths``: {table: path},
    ``main`` included), its upstream files (``inputs``: {name: path}, checked against ``expected``,
    what the run plans for them) and the work, :func:`execute` (``setting``, ``recorded``: a
    sweep job's, as it takes them; ``article_code``: a timing job's, the article's listing)."""
    paths, inputs = dict(paths), dict(inputs or {})

    def job(pinned):
        def work():
            return execute(experiment, article, section, params, paths, inputs, pinned, setting, recorded,
                           article_code)

        return harness.Job(work, outputs=paths.values(), inputs=inputs.values(), expected=expected or {})

    return job


def execute(experiment, article, section, params, paths, inputs=None, pinned=None, setting=None,
            recorded=None, article_code=None):
    """Run one case (``params``) of ``experiment`` and write its tables to ``paths`` ({table:
    path}, ``main`` included; a table the experiment returns without a path lands beside main).
    ``inputs``: {name: path} of upstream files (checked by the harness); ``pinned``: the pin's
    state (harness.start); ``setting``: the sweep setting it applied, which ``recorded(setting,
    tables, meta)`` adds to the tables and their provenance (attnrepro.evidence.sweep.recorded);
    ``article_code``: a function giving the article's listing that a timing experiment times beside
    its own passes (an attnrepro.articles.timed.Program), called here, after the pin, so that its
    reads are the job's; recorded in the provenance by listing, file and SHA-256."""
    from attnrepro.run import io, provenance

    inputs, paths = dict(inputs or {}), dict(paths)
    module = importlib.import_module(f"{EXPERIMENTS}.{experiment}")
    if setting is None:
        _log_numerics(canonical.check(pinned))  # numpy is loaded: did the pin take effect?
    log.info("%s (article %s, %s) with %s", experiment, article, section, json.dumps(params))
    started = provenance.now()
    article_code = article_code() if article_code is not None else None
    extra = {"article_code": article_code} if article_code is not None else {}
    tables = module.run(params, inputs, **extra) if inputs else module.run(params, **extra)
    finished = provenance.now()
    meta = provenance.record(experiment, article, section, params, started, finished)
    if article_code is not None:
        meta["article_code"] = {"listing": article_code.name, "text": article_code.text,
                                "sha256": article_code.sha256}
    if setting is not None:
        tables, meta = recorded(setting, tables, meta)
    else:
        meta["numerics"] = _pin_recorded(pinned)
    unwritten = sorted(set(paths) - set(tables))
    if unwritten:
        raise SystemExit(f"{experiment} returned no table {', '.join(unwritten)} (given a path for it)")
    outputs = io.OutputSet({name: path for name, path in table_paths(paths["main"], paths, tables).items()
                            if name in tables})
    with outputs:  # every table to its temporary, then all renamed, main last
        for name, df in tables.items():
            outputs.stage(name, df, {**meta, "table": name})
        for name in outputs.commit():
            log.info("wrote %s (%d rows)", outputs.paths[name], len(tables[name]))
    return 0


def _log_numerics(record):
    """One log line: canonical or not (and why), and what the libraries run."""
    state = "canonical" if record["canonical"] else f"NOT canonical ({record['reason']})"
    log.info("numerics %s: OpenBLAS %s, NumPy features %s, torch %s", state, record["openblas_kernel"],
             record["numpy_features"], record["torch_capability"] or "not loaded")


def _pin_recorded(pinned):
    """What the job ran with, read again after the run (torch, where the experiment loaded it)."""
    record = canonical.check(pinned)
    if record["torch_capability"] is not None:
        _log_numerics(record)
    return record


def run(args, recorded=None, article_code=None):
    """A job of the parsed command line ``args`` (:func:`parser`), through the job harness; its
    exit status (2, one line, for a malformed option: :mod:`attnrepro.run.usage`). ``recorded``:
    a sweep job's, ``article_code`` a timing job's (:func:`execute`)."""
    setting = getattr(args, "numerics", None)
    try:
        paths = table_paths(args.out, pairs(args.table, "--table"), ())
        job = case(args.experiment, args.article, args.section,
                   usage.json_object(args.params_json, "--params-json"), paths, pairs(args.input, "--input"),
                   usage.json_object(args.expected_params, "--expected-params"), setting, recorded,
                   article_code)
    except usage.UsageError as error:
        return usage.refuse(error, harness.PREFIX)
    return harness.run_job(job, pin=getattr(args, "pin", None), setting=setting, n_threads=args.threads)
