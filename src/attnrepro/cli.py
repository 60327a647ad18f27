"""Command line: run one experiment case outside (or inside) Snakemake.

    python -m attnrepro list
    python -m attnrepro run scale_table --case d_k-64_scaled-true --out /tmp/x.parquet
    python -m attnrepro run train --set steps=200 --set seed=3 --out /tmp/t.parquet

Thread limits are applied before NumPy is imported; parameters come from the
config file (validated), then ``--set`` overrides, or verbatim from
``--params-json`` (what Snakemake passes).
"""

import argparse
import importlib
import json
import logging
import sys

from attnrepro import threads

log = logging.getLogger("attnrepro")


def _parser():
    parser = argparse.ArgumentParser(prog="attnrepro", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list experiments and their cases under the config")
    run = sub.add_parser("run", help="run one case of one experiment and write Parquet")
    run.add_argument("experiment")
    run.add_argument("--out", required=True, help="Parquet file of the main table")
    run.add_argument("--table", action="append", default=[], metavar="NAME=FILE",
                     help="where to write an extra table (default: beside --out)")
    run.add_argument("--input", action="append", default=[], metavar="NAME=FILE",
                     help="an upstream result file (default: its path under results/)")
    run.add_argument("--case", help="which case of the config grid (default: the first)")
    run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="override one parameter (VALUE read as YAML)")
    run.add_argument("--params-json", help="the case's parameters, verbatim, as JSON")
    run.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads (default 1)")
    for p in (parser, run):
        p.add_argument("--config", default="config/config.yaml", help="config file (YAML)")
    return parser


def _params(args, config):
    """The parameters of the requested case."""
    from attnrepro import plan

    if args.params_json is not None:
        return json.loads(args.params_json)
    all_cases = plan.cases(args.experiment, config)
    case = args.case or next(iter(all_cases))
    if case not in all_cases:
        raise SystemExit(f"unknown case {case!r} of {args.experiment}; known: {', '.join(all_cases)}")
    params = dict(all_cases[case])
    import yaml

    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--set takes KEY=VALUE, got {item!r}")
        if key not in params:
            raise SystemExit(f"unknown parameter {key!r} of {args.experiment}; known: {', '.join(params)}")
        params[key] = yaml.safe_load(value)
    return params


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
    threads.limit(args.threads)  # before anything imports numpy
    from attnrepro import config as cfg
    from attnrepro import io, plan, provenance

    if args.experiment not in plan.EXPERIMENTS:
        raise SystemExit(f"unknown experiment {args.experiment!r}; known: {', '.join(plan.EXPERIMENTS)}")
    exp = plan.EXPERIMENTS[args.experiment]
    config = {} if args.params_json is not None else cfg.load(args.config)
    params = _params(args, config)
    if args.params_json is None and args.set:
        cfg.validate({**config, args.experiment: {**config.get(args.experiment, {}), **_unexpanded(params, exp)}})

    module = importlib.import_module(exp.module)
    log.info("%s (article %s, %s) with %s", exp.id, exp.article, exp.listing, json.dumps(params))
    started = provenance.now()
    inputs = _inputs(args, exp, config)
    tables = module.run(params, inputs) if inputs else module.run(params)
    finished = provenance.now()
    meta = provenance.record(exp.id, exp.article, exp.listing, params, started, finished)
    paths = _table_paths(args, set(tables))
    for name, df in tables.items():
        io.write_parquet(df, paths[name], {**meta, "table": name})
        log.info("wrote %s (%d rows)", paths[name], len(df))
    return 0


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


def _unexpanded(params, exp):
    """A case's parameters put back in the shape of a config section (grid keys as lists)."""
    return {k: ([v] if k in exp.grid else v) for k, v in params.items()}


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
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.command == "run":
        return run(args)
    return list_experiments(args)
