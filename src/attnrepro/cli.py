"""Command line: list the experiments, run one experiment case by hand, verify an archive.

    python -m attnrepro list
    python -m attnrepro list --config config/small.yaml
    python -m attnrepro run scale_table --case d_k-64_scaled-true --out /tmp/x.parquet
    python -m attnrepro run scale_table --set d_k=16 --set scaled=true --out /tmp/s.parquet
    python -m attnrepro run train --set tasks=sort --set lengths=5 --set seeds=7 --out /tmp/t.parquet
    python -m attnrepro run train --config config/small.yaml --set steps=200 --out /tmp/small-t.parquet
    python -m attnrepro verify ARCHIVE.tar.gz [--results DIR]   (see attnrepro.archive.verify)
    python -m attnrepro article check FILE --out DIR   (see attnrepro.report.article_check)

Thread limits (and ``--numerics SETTING``: an OpenBLAS kernel and a NumPy CPU-feature
mask, see :mod:`attnrepro.evidence.sweep`) are applied before NumPy is imported; parameters come from the
config (config/config.yaml, with the keys of ``--config FILE`` over it as ``snakemake --configfile``
merges them), then the ``--set`` overrides (see ``run --help``: a single value for a list key is a
list of one), then ``--case``; the result is validated for the experiment run (attnrepro.dag.config);
or they come verbatim from ``--params-json`` (what Snakemake passes).

``run`` resolves the config, the case and the paths, then runs the case through the same
functions as the rules' jobs (:mod:`attnrepro.experiments.case_run`, which reads neither the config nor
the plan).
It never replaces a file unasked: ``--out`` and every table's file (``--table NAME=FILE``, else
beside ``--out``: ``x.parquet``, ``x.weights.parquet``) are new ``.parquet`` files, in a folder
(one that is missing is made), unless ``--force`` lets them replace files that exist.
What a job guarantees about its outputs (see :mod:`attnrepro.run.ownership` and :mod:`attnrepro.run.io`):
it records the Snakemake run that started it and writes nothing once that run has ended; it
removes temporaries that a killed earlier attempt of itself left; its upstream files
(``--input``) are verified (checksums, content hash) and, given ``--expected-params``, their
provenance parameters are compared with what this run's config plans for them; its tables land
as one set (every table to a temporary first, then renamed, the main table last). A corrupt or
stale input, or an ended run, stops it with status 1 and a message naming the file (or the run).
A usage error (a bad value, a bad or missing file, an unknown experiment, case, parameter or
table, a malformed ``--set``, bad JSON, an output refused) ends it with status 2 and one line
naming the option, key or file (:mod:`attnrepro.run.usage`), before anything is computed.
"""

import argparse
import logging
import re
from pathlib import Path

from attnrepro.numerics import canonical
from attnrepro.experiments import case_run
from attnrepro.run import harness, usage

log = logging.getLogger("attnrepro")


SET_HELP = """\
--config FILE: the keys of FILE over config/config.yaml (merged as snakemake --configfile FILE
  merges them: a mapping key by key, any other value replaced), before or after the subcommand.
--set KEY=VALUE overrides one key of the experiment's section of that config; VALUE is read as
  YAML (5, true, sort, [4, 6], {d: 64}; 1e-3 is a number). Then --case picks a case (default:
  the first), and the config is validated for this experiment only: what other experiments read
  (attention_map.run, numerics.cases name cases of train) is not checked against it.
  A single value for a key whose value is a list is a list of one value, so a fan-out key gives
  one case: --set d_k=16 --set scaled=true (scale_table) is the case d_k-16_scaled-true, and
  --set tasks=sort --set lengths=5 --set seeds=7 (train) is sort-L5-seed7, then the ablations.
  A dotted KEY goes into a mapping: --set ablation_base.L=5, --set ablations.no_scaling.lr=0.01,
  --set realistic.T=1024 (kv_cache); a name not there yet is added (--set ablations.wide.d=64
  adds an ablation); a whole mapping replaces: --set 'ablations={}' leaves out every ablation.
"""
OUT_HELP = """\
--out FILE and --table NAME=FILE: new .parquet files; a table not named by --table goes beside
  --out (--out x.parquet: x.weights.parquet). A folder, a file that exists (unless --force) or a
  path under a file is refused before anything runs; a missing folder is made.
"""


def _parser():
    parser = usage.Parser(prog="attnrepro", description=__doc__.split("\n")[0], epilog=usage.EXIT_STATUS,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list",
                             help="list experiments, their cases and the tables and figures built from them")
    # every word after `verify` (options included) goes to attnrepro.archive.verify's own parser
    verify = sub.add_parser("verify", add_help=False, prefix_chars="\0",
                            help="compare an archive of a run with a run here (verify ARCHIVE -h)")
    verify.add_argument("args", nargs="*")
    # every word after `article check` goes to attnrepro.report.commands.article_check's options
    article = sub.add_parser("article", add_help=False, prefix_chars="\0",
                             help="check an article from its text alone: article check FILE --out DIR "
                                  "(runs its code with your rights; article check -h)")
    article.add_argument("action", choices=["check"])
    article.add_argument("args", nargs="*")
    run = sub.add_parser("run", help="run one case of one experiment and write Parquet",
                         epilog=f"{SET_HELP}\n{OUT_HELP}\n{usage.EXIT_STATUS}",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("experiment")
    run.add_argument("--out", required=True, help="Parquet file of the main table: a new .parquet file")
    run.add_argument("--table", action="append", default=[], metavar="NAME=FILE",
                     help="where to write an extra table, a new .parquet file (default: beside --out, "
                          "x.NAME.parquet for --out x.parquet)")
    run.add_argument("--force", action="store_true",
                     help="replace output files that exist (without it, one that exists is refused "
                          "before anything runs)")
    run.add_argument("--input", action="append", default=[], metavar="NAME=FILE",
                     help="an upstream result file (default: its path under results/)")
    run.add_argument("--case", help="which case (default: the first; `list` names them; train also takes "
                                    "the seed distribution's, e.g. sort-L6-seed13)")
    run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="override one key of the experiment's config section (VALUE read as YAML; "
                          "a single value for a list key, a dotted key: see below)")
    run.add_argument("--params-json", help="the case's parameters, verbatim, as JSON")
    run.add_argument("--expected-params", metavar="JSON",
                     help="{experiment: {case: params}} that this run plans for the --input files: "
                          "a file written with other parameters stops the job")
    run.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads (default 1)")
    run.add_argument("--pin", choices=canonical.PINS,
                     help="canonical numerics (attnrepro.numerics.canonical): haswell-noavx512, or native to "
                          "opt out (default: numerics.pin of --config; haswell-noavx512 with --params-json)")
    run.add_argument("--numerics", metavar="SETTING",
                     help="a numerics-sweep setting instead of the pin: OpenBLAS kernel and NumPy mask, "
                          "e.g. sandybridge-noavx512; recorded in numerics_* columns (see "
                          "attnrepro.evidence.sweep)")
    for p in (parser, listing, run):  # before or after the subcommand (after it wins)
        p.add_argument("--config", default=None if p is parser else argparse.SUPPRESS, metavar="FILE",
                       help="a config file whose keys override config/config.yaml's, as "
                            "snakemake --configfile FILE does (default: config/config.yaml alone)")
    return parser


_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")  # 1e-3: a string to YAML 1.1


def _with_overrides(args, config, exp):
    """The config with each ``--set KEY=VALUE`` applied to the experiment's section (see
    SET_HELP), validated for this experiment alone (``config.validate(experiments=[id])``)."""
    import copy

    from attnrepro.dag import config as cfg

    section = copy.deepcopy(config.get(exp.id) or {})
    for item in args.set:
        key, sep, text = item.partition("=")
        path = key.split(".")
        if not sep or not all(path):
            raise usage.UsageError(f"--set takes KEY=VALUE, got {item!r}")
        if path[0] not in section:
            raise usage.UsageError(f"--set {key}: unknown parameter {path[0]!r} of {exp.id}; "
                                   f"known: {', '.join(section)}")
        parent = section
        for i, part in enumerate(path[:-1]):
            parent = parent.setdefault(part, {})  # a new name: --set ablations.wide.d=64
            if not isinstance(parent, dict):
                raise usage.UsageError(f"--set {key}: {exp.id}.{'.'.join(path[:i + 1])} is {parent!r}, "
                                       "not a mapping")
        value = _set_value(key, text)
        if isinstance(parent.get(path[-1]), list) and not isinstance(value, list):
            value = [value]  # a list of one: one case of a fan-out key (tasks=sort, d_k=16)
        parent[path[-1]] = value
    return cfg.validate({**config, exp.id: section}, experiments=[exp.id])


def _set_value(key, text):
    """The value of ``--set KEY=TEXT``: TEXT read as YAML (1e-3 a number), or a UsageError
    naming the key when it is not YAML (a key given twice, a tag: yamlfile.Refused, names it)."""
    import yaml

    from attnrepro.dag import yamlfile

    if _NUMBER.fullmatch(text.strip()):
        return float(text)
    try:
        return yamlfile.loads(text, f"--set {key}")
    except yaml.YAMLError as error:
        raise usage.UsageError(f"--set {key}: not valid YAML {text!r}: {usage.yaml_problem(error)}") from None


def _params(args, config, exp):
    """The parameters of the requested case (``--case``, default the first of the run's)."""
    from attnrepro.dag import plan

    if args.params_json is not None:
        if args.set or args.case:
            raise usage.UsageError("--set and --case resolve the config; --params-json gives the parameters")
        return usage.json_object(args.params_json, "--params-json")
    all_cases = plan.cases(exp.id, config)
    case = args.case or next(iter(all_cases))
    known = plan.runnable_cases(exp.id, config)  # train: also the seed distribution's cases
    if case not in known:
        raise usage.UsageError(f"--case: unknown case {case!r} of {exp.id}; known: {', '.join(all_cases)}")
    return dict(known[case])


def _table_paths(args, names):
    """{table: path} of every table of the experiment (``names``, main included): --table, else
    beside --out (case_run.table_paths: x.parquet's table weights in x.weights.parquet)."""
    extra = sorted(set(names) - {"main"})
    for item in args.table:
        name, sep, _ = item.partition("=")
        if not sep or name not in extra:
            raise usage.UsageError(f"--table {item}: NAME=FILE with NAME one of this experiment's tables "
                                   f"besides main ({', '.join(extra) or 'it has none'})")
    return case_run.table_paths(args.out, case_run.pairs(args.table, "--table"), names)


def check_outputs(paths, force=False):
    """Refuse, before anything runs, an output path (``paths``: {table: path}, as _table_paths
    gives them) that is not a ``.parquet`` file name, is a folder, lies under a file, names the
    file of another table, or exists (unless ``force``): a UsageError naming its option."""
    seen = {}
    for name, path in sorted(paths.items(), key=lambda item: item[0] != "main"):  # --out first
        option = "--out" if name == "main" else f"table {name}"  # given by --table, or beside --out
        problem = _output_problem(Path(path), force)
        if problem:
            raise usage.UsageError(f"{option} {path}: {problem}")
        other = seen.setdefault(Path(path).resolve(), option)
        if other != option:
            raise usage.UsageError(f"{option} {path}: the file of {other} too; each table has its own file")


def _output_problem(path, force):
    """Why ``path`` may not receive a table (None: it may)."""
    if path.suffix != ".parquet":
        return "not a .parquet file name (a table is written as Parquet)"
    if path.is_dir():
        return "a folder; name a .parquet file in it"
    below = next(p for p in path.parents if p.exists())  # "." or "/" at the latest
    if not below.is_dir():
        return f"{below} is a file, not a folder"
    if path.exists() and not force:
        return "exists; --force replaces it"
    return None


def run(args):
    """Resolve the config, the case and the paths, then run the case as its job does
(attnrepro.experiments.case_run), through the job harness (attnrepro.run.harness). Every usage error
is refused before the harness starts: nothing is computed, no file written."""
    pin = None if args.numerics else _pin(args)  # before numpy (read as plain YAML)
    return harness.run_job(_case(args), pin=pin, setting=args.numerics, n_threads=args.threads)


def _case(args):
    """The job of the case asked (case_run.case), resolved from the config and the plan (neither loads
    NumPy: the pin is not applied yet), its outputs checked (check_outputs) and inputs found."""
    from attnrepro.dag import config as cfg
    from attnrepro.dag import plan

    if args.experiment not in plan.EXPERIMENTS:
        raise usage.UsageError(f"unknown experiment {args.experiment!r}; "
                               f"known: {', '.join(plan.EXPERIMENTS)}")
    exp = plan.EXPERIMENTS[args.experiment]
    config = {} if args.params_json is not None else _with_overrides(args, cfg.resolve(args.config), exp)
    params = _params(args, config, exp)
    if args.numerics:
        _check_numerics(args.numerics, config)
    paths = _table_paths(args, set(exp.tables))
    check_outputs(paths, args.force)
    return case_run.case(exp.id, exp.article, exp.section, params, paths, _inputs(args, exp, config),
                    usage.json_object(args.expected_params, "--expected-params"), args.numerics,
                    _recorded(args.numerics))


def _pin(args):
    """The canonical-numerics pin of this job: --pin, else the config's numerics.pin (read
    as plain YAML: nothing may import NumPy before the pin is applied)."""
    if args.pin or args.params_json is not None:
        return args.pin or canonical.SETTING
    from attnrepro.dag import config as cfg

    return (cfg.resolve(args.config).get("numerics") or {}).get("pin", canonical.SETTING)


def _recorded(setting):
    """What a sweep job records of its ``setting`` (attnrepro.evidence.sweep.recorded), as the
    sweep's entry (attnrepro.jobs.sweep_case) does; None without one."""
    from attnrepro.evidence import sweep

    return sweep.recorded if setting else None


def _check_numerics(setting, config):
    """Refuse a setting that the config's ``numerics`` section does not name (with
    ``--params-json`` there is no config: the name was checked against the known kernels)."""
    from attnrepro.evidence import sweep

    named = sweep.candidates(config.get("numerics") or {}) if config else [setting]
    if setting not in named:
        raise usage.UsageError(f"--numerics: setting {setting!r} is not one of the config's: "
                               f"{', '.join(named)}")


def _inputs(args, exp, config):
    """{name: path} of the upstream files: from --input, else the plan's default paths; each
    one a file (a missing one is refused, naming it)."""
    from attnrepro.dag import plan

    planned = plan.input_paths(exp.id, config) if config else {}
    given = case_run.pairs(args.input, "--input")
    unknown = sorted(set(given) - set(planned)) if config else []
    if unknown:
        raise usage.UsageError(f"--input {unknown[0]}: {exp.id} reads no input of that name "
                               f"(its inputs: {', '.join(planned) or 'none'})")
    inputs = {**planned, **given}
    for name, path in inputs.items():
        if not Path(path).is_file():
            raise usage.UsageError(f"--input {name}: no file {path} (an upstream result: run its case "
                                   f"first, or name one with --input {name}=FILE)")
    return inputs


def list_experiments(args):
    from attnrepro.dag import config as cfg
    from attnrepro.dag import plan
    from attnrepro.report.products import catalog

    config = cfg.resolve(args.config)
    products = {p.name for p in catalog.enabled(config)}
    for exp_id in plan.enabled(config):
        exp = plan.EXPERIMENTS[exp_id]
        names = list(plan.cases(exp_id, config))
        print(f"{exp.article}  {exp_id:<24} {len(names):3d} case(s): {', '.join(names[:4])}"
              + (" ..." if len(names) > 4 else ""))
        for kind in ("table", "figure"):
            built = [p.name for p in catalog.of_experiment(exp_id) if p.kind == kind and p.name in products]
            if built:
                print(f"     {kind + 's:':<8} {', '.join(built)}")
    return 0


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.command == "verify":  # imported here: the other commands pin the numerics before NumPy
        from attnrepro.archive import verify

        return verify.main(args.args)
    if args.command == "article":  # through the job harness, which pins before NumPy loads
        from attnrepro.report import runner
        from attnrepro.report.commands import article_check

        return runner.main(article_check, "attnrepro article check", args.args)
    harness.setup_logging()
    from attnrepro.dag import yamlfile
    from attnrepro.dag.config import ConfigError

    try:
        return run(args) if args.command == "run" else list_experiments(args)
    except (usage.UsageError, ConfigError, yamlfile.Refused) as error:  # a config or a --set refused
        return usage.refuse(error, harness.PREFIX)
