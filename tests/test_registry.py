"""What is registered about each experiment, read from its module (attnrepro.experiments.declared),
against a snapshot taken from the four registries that held it before (plan.EXPERIMENTS,
estimates.ESTIMATES, runtimes.WORK and runtimes.TORCH): the same experiments in the same order,
the same fields, and the same memory terms, estimates and wall times for every case of the default
and the small config, to the bit. Rewrite the snapshot only when a change of the numbers is meant:
``python tests/test_registry.py > tests/registry_snapshot.json``."""

import json
import sys
from pathlib import Path

from attnrepro.dag import config as cfg
from attnrepro.dag import plan, preflight
from attnrepro.resources import memory, runtime

REPO = Path(__file__).resolve().parents[1]
SNAPSHOT = Path(__file__).with_name("registry_snapshot.json")


def _configs():
    default = cfg.load(REPO / "config" / "config.yaml")
    small = dict(default)
    for section, values in cfg.load(REPO / "config" / "small.yaml").items():
        small[section] = {**default.get(section, {}), **values} if isinstance(values, dict) else values
    return {"default": cfg.validate(default), "small": cfg.validate(small)}


def snapshot():
    """{experiments, registries, cases}: the fields of every experiment, the keys of the memory and
    runtime registries, and every estimated case's terms, bytes, seconds and minutes."""
    experiments = {
        e.id: {"article": e.article, "section": e.section, "tables": list(e.tables), "grid": list(e.grid),
               "threads": e.threads, "timing": e.timing, "module": e.module,
               "case_builder": e.case_builder is not None, "inputs": e.inputs is not None}
        for e in plan.EXPERIMENTS.values()}
    registries = {"order": list(plan.EXPERIMENTS), "ESTIMATES": sorted(memory.ESTIMATES),
                  "WORK": sorted(runtime.WORK), "TORCH": sorted(runtime.TORCH)}
    cases = {}
    for name, config in _configs().items():
        for experiment in plan.EXPERIMENTS:
            for case, params in preflight.estimated_cases(experiment, config).items():
                cases[f"{name}/{experiment}/{case}"] = {
                    "terms": [[b, what, drivers] for b, what, drivers in memory.terms(experiment, params)],
                    "estimate": memory.estimate(experiment, params),
                    "seconds": runtime.seconds(experiment, params),
                    "runtime_min": runtime.job_runtime_min(experiment, params, 1.5),
                }
    return {"experiments": experiments, "registries": registries, "cases": cases}


def _round_trip(value):
    return json.loads(json.dumps(value))


def test_experiments_are_the_snapshot():
    expected, found = json.loads(SNAPSHOT.read_text()), _round_trip(snapshot())
    assert found["experiments"] == expected["experiments"]
    assert found["registries"] == expected["registries"]


def test_estimates_are_the_snapshot():
    expected, found = json.loads(SNAPSHOT.read_text())["cases"], _round_trip(snapshot())["cases"]
    assert found.keys() == expected.keys()
    for key in expected:
        assert found[key] == expected[key], key


if __name__ == "__main__":
    json.dump(snapshot(), sys.stdout, indent=1, sort_keys=True)
    print()
