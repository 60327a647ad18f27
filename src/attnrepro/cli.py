"""Command line: run one experiment case outside (or inside) Snakemake.

    python -m attnrepro list
    python -m attnrepro run scale_table --case d_k-64_scaled-true --out /tmp/x.parquet
    python -m attnrepro run train --set steps=200 --set seed=3 --out /tmp/t.parquet
    python -m attnrepro verify ARCHIVE.tar.gz [--results DIR]   (see attnrepro.verify)

Thread limits (and ``--numerics SETTING``: an OpenBLAS kernel and a NumPy CPU-feature
mask, see :mod:`attnrepro.numerics`) are applied before NumPy is imported; parameters come from the
config file (validated), then ``--set`` overrides, or verbatim from
``--params-json`` (what Snakemake passes).

What a job guarantees about its outputs (see :mod:`attnrepro.jobs` and :mod:`attnrepro.io`):
it records the Snakemake run that started it and writes nothing once that run has ended; it
removes temporaries that a killed earlier attempt of itself left; its upstream files
(``--input``) are verified (checksums, content hash) and, given ``--expected-params``, their
provenance parameters are compared with what this run's config plans for them; its tables land
as one set (every table to a temporary first, then renamed, the main table last). A corrupt or
stale input, or an ended run, stops it with status 1 and a message naming the file (or the run).
"""

import argparse
import importlib
import json
import logging
import sys

from attnrepro import canonical, jobs, threads

log = logging.getLogger("attnrepro")


def _parser():
    parser = argparse.ArgumentParser(prog="attnrepro", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list experiments and their cases under the config")
    # every word after `verify` (options included) goes to attnrepro.verify's own parser
    verify = sub.add_parser("verify", add_help=False, prefix_chars="\0",
                            help="compare an archive of a run with a run here (verify ARCHIVE -h)")
    verify.add_argument("args", nargs="*")
    run = sub.add_parser("run", help="run one case of one experiment and write Parquet")
    run.add_argument("experiment")
    run.add_argument("--out", required=True, help="Parquet file of the main table")
    run.add_argument("--table", action="append", default=[], metavar="NAME=FILE",
                     help="where to write an extra table (default: beside --out)")
    run.add_argument("--input", action="append", default=[], metavar="NAME=FILE",
                     help="an upstream result file (default: its path under results/)")
    run.add_argument("--case", help="which case of the config grid (default: the first)")
    run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="override one key of the experiment's config section (VALUE read as YAML)")
    run.add_argument("--params-json", help="the case's parameters, verbatim, as JSON")
    run.add_argument("--expected-params", metavar="JSON",
                     help="{experiment: {case: params}} that this run plans for the --input files: "
                          "a file written with other parameters stops the job")
    run.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads (default 1)")
    run.add_argument("--pin", choices=canonical.PINS,
                     help="canonical numerics (attnrepro.canonical): haswell-noavx512, or native to "
                          "opt out (default: numerics.pin of --config; haswell-noavx512 with --params-json)")
    run.add_argument("--numerics", metavar="SETTING",
                     help="a numerics-sweep setting instead of the pin: OpenBLAS kernel and NumPy mask, "
                          "e.g. sandybridge-noavx512; recorded in numerics_* columns (see attnrepro.numerics)")
    for p in (parser, run):
        p.add_argument("--config", default="config/config.yaml", help="config file (YAML)")
    return parser


def _with_overrides(args, config, exp):
    """The config with each ``--set KEY=VALUE`` applied to the experiment's section, validated.

    A scalar given for a grid key becomes a one-value grid.
    """
    import yaml

    from attnrepro import config as cfg

    section = dict(config.get(exp.id, {}))
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--set takes KEY=VALUE, got {item!r}")
        if key not in section:
            raise SystemExit(f"unknown parameter {key!r} of {exp.id}; known: {', '.join(section)}")
        value = yaml.safe_load(value)
        section[key] = [value] if key in exp.grid and not isinstance(value, list) else value
    return cfg.validate({**config, exp.id: section})


def _params(args, config, exp):
    """The parameters of the requested case."""
    from attnrepro import plan

    if args.params_json is not None:
        return json.loads(args.params_json)
    all_cases = plan.cases(exp.id, config)
    case = args.case or next(iter(all_cases))
    if case not in all_cases:
        raise SystemExit(f"unknown case {case!r} of {exp.id}; known: {', '.join(all_cases)}")
    return dict(all_cases[case])


def _table_paths(args, names):
    from pathlib import Path

    out = Path(args.out)
    paths = {name: out.with_name(f"{out.stem}.{name}{out.suffix}") for name in names}
    paths["main"] = out
    for item in args.table:
        name, sep, file = item.partition("=")
        if not sep or name not in names:
            raise SystemExit(f"--table takes NAME=FILE with NAME in {sorted(names)}, got {item!r}")
        paths[name] = Path(file)
    return paths


def run(args):
    jobs.start()  # the Snakemake run this job belongs to (none by hand)
    threads.limit(args.threads)  # before anything imports numpy
    if args.numerics:
        _apply_numerics(args.numerics)  # before numpy, too
    else:
        pinned = canonical.apply(_pin(args))  # before numpy, too
    from attnrepro import config as cfg
    from attnrepro import io, plan, provenance

    if args.experiment not in plan.EXPERIMENTS:
        raise SystemExit(f"unknown experiment {args.experiment!r}; known: {', '.join(plan.EXPERIMENTS)}")
    exp = plan.EXPERIMENTS[args.experiment]
    config = {} if args.params_json is not None else _with_overrides(args, cfg.load(args.config), exp)
    params = _params(args, config, exp)
    if args.numerics:
        _check_numerics(args.numerics, config)

    for leftover in io.remove_leftovers(_table_paths(args, set(exp.tables)).values()):
        log.info("removed %s, left by a killed earlier attempt of this job", leftover)
    module = importlib.import_module(exp.module)
    if not args.numerics:
        _log_numerics(canonical.check(pinned))  # numpy is loaded: did the pin take effect?
    log.info("%s (article %s, %s) with %s", exp.id, exp.article, exp.listing, json.dumps(params))
    started = provenance.now()
    inputs = _inputs(args, exp, config)
    io.check_inputs(inputs.values(), json.loads(args.expected_params or "{}"))
    tables = module.run(params, inputs) if inputs else module.run(params)
    finished = provenance.now()
    meta = provenance.record(exp.id, exp.article, exp.listing, params, started, finished)
    if args.numerics:
        tables, meta = _numerics_recorded(args.numerics, tables, meta)
    else:
        meta["numerics"] = _pin_recorded(pinned)
    outputs = io.OutputSet(_table_paths(args, set(tables)))
    with outputs:  # every table to its temporary, then all renamed, main last
        for name, df in tables.items():
            outputs.stage(name, df, {**meta, "table": name})
        for name in outputs.commit():
            log.info("wrote %s (%d rows)", outputs.paths[name], len(tables[name]))
    return 0


def _pin(args):
    """The canonical-numerics pin of this job: --pin, else the config's numerics.pin (read
    as plain YAML: nothing may import NumPy before the pin is applied)."""
    if args.pin or args.params_json is not None:
        return args.pin or canonical.SETTING
    from attnrepro import config as cfg

    return (cfg.load(args.config).get("numerics") or {}).get("pin", canonical.SETTING)


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


def _apply_numerics(setting):
    from attnrepro import numerics

    try:
        numerics.apply(setting)
    except ValueError as error:
        raise SystemExit(str(error)) from None


def _check_numerics(setting, config):
    """Refuse a setting that the config's ``numerics`` section does not name (with
    ``--params-json`` there is no config: the name was checked against the known kernels)."""
    from attnrepro import numerics

    named = numerics.candidates(config.get("numerics") or {}) if config else [setting]
    if setting not in named:
        raise SystemExit(f"numerics setting {setting!r} is not one of the config's: {', '.join(named)}")


def _numerics_recorded(setting, tables, meta):
    """What really ran (kernel, NumPy features), added to every table and to the provenance."""
    from attnrepro import numerics

    info = numerics.effective()
    columns = numerics.columns(setting, info)
    log.info("numerics %s: OpenBLAS %s, NumPy features %s", setting, info["openblas_kernel"],
             info["numpy_features"])
    return ({name: df.assign(**columns) for name, df in tables.items()},
            {**meta, "numerics": {"setting": setting, "canonical": False,
                                  "reason": f"numerics-sweep setting {setting}", **info}})


def _inputs(args, exp, config):
    """{name: path} of the upstream files: from --input, else the plan's default paths."""
    from attnrepro import plan

    paths = plan.input_paths(exp.id, config) if config else {}
    for item in args.input:
        name, sep, file = item.partition("=")
        if not sep:
            raise SystemExit(f"--input takes NAME=FILE, got {item!r}")
        paths[name] = file
    return paths


def list_experiments(args):
    from attnrepro import config as cfg
    from attnrepro import plan

    config = cfg.load(args.config)
    for exp_id in plan.enabled(config):
        exp = plan.EXPERIMENTS[exp_id]
        names = list(plan.cases(exp_id, config))
        print(f"{exp.article}  {exp_id:<24} {len(names):3d} case(s): {', '.join(names[:4])}"
              + (" ..." if len(names) > 4 else ""))
    return 0


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.command == "verify":  # by name: the experiment jobs' code inputs leave it out
        return importlib.import_module("attnrepro.verify").main(args.args)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    from attnrepro.config import ConfigError

    try:
        return run(args) if args.command == "run" else list_experiments(args)
    except ConfigError as error:
        print(f"attnrepro: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # attnrepro.io is not imported here: it loads NumPy before the pin
        io = sys.modules.get("attnrepro.io")
        if isinstance(error, jobs.RunEnded) or (io is not None and isinstance(error, io.ResultError)):
            print(f"attnrepro: {error}", file=sys.stderr)
            return 1
        raise
