"""The numerics sweep's jobs and files: which cases it reruns, where each table lands.

Read by Snakemake to build the sweep's jobs (``workflow/rules/evidence.smk``) and by the config's
validation; imports :mod:`attnrepro.dag.plan` (a sweep job itself does not:
:mod:`attnrepro.jobs.sweep_case`).
"""

from attnrepro.numerics import canonical
from attnrepro.dag import plan
from attnrepro import paths


def output_path(setting, experiment_id, case, table="main"):
    """Where one sweep job writes one table: the layout of results/data under the setting."""
    return paths.sweep_data_path(setting, plan.EXPERIMENTS[experiment_id].article, experiment_id, case, table)


def sweep_cases(config):
    """{experiment id: [case, ...]} of the config's ``numerics.cases`` ("all": every case)."""
    out = {}
    for exp_id, names in ((config.get("numerics") or {}).get("cases") or {}).items():
        out[exp_id] = list(plan.cases(exp_id, config)) if names == "all" else list(names)
    return out


def outputs(config, settings):
    """Every Parquet file of the sweep over ``settings``."""
    return [
        output_path(s, exp_id, case, table)
        for s in settings
        for exp_id, cases in sweep_cases(config).items()
        for case in cases
        for table in plan.EXPERIMENTS[exp_id].tables
    ]


def config_errors(config):
    """Rules of the ``numerics`` section that the schema cannot state (names are known cases)."""
    section = config.get("numerics") or {}
    errors = []
    for key in ("kernels", "numpy_masks"):
        values = section.get(key) or []
        errors += [
            f"numerics.{key}: {v!r} is listed twice" for v in sorted(set(values)) if values.count(v) > 1
        ]
    for name, env in (section.get("environments") or {}).items():
        for i, setting in enumerate(env.get("settings") or []):
            try:
                canonical.parse_setting(setting)
            except ValueError as error:
                errors.append(f"numerics.environments.{name}.settings[{i}]: {error}")
    for exp_id, names in (section.get("cases") or {}).items():
        exp = plan.EXPERIMENTS.get(exp_id)
        if exp is None:
            errors.append(f"numerics.cases.{exp_id}: unknown experiment")
            continue
        if exp.inputs is not None:
            errors.append(
                f"numerics.cases.{exp_id}: reads another experiment's results; not supported in the sweep"
            )
            continue
        if names == "all":
            continue
        known = plan.cases(exp_id, config)
        errors += [
            f"numerics.cases.{exp_id}[{i}]: {n!r} is not a case of {exp_id} "
            f"(e.g. {', '.join(list(known)[:3])})"
            for i, n in enumerate(names)
            if n not in known
        ]
    return errors
