"""What is registered about each experiment, read from its module (attnrepro.experiments.declared),
against a snapshot taken from the four registries that held it before (plan.EXPERIMENTS,
estimates.ESTIMATES, runtimes.WORK and runtimes.TORCH): the same experiments in the same order,
the same fields, and the same memory terms, estimates and wall times for every case of the default
and the small config, to the bit. Rewrite the snapshot only when a change of the numbers is meant:
``python tests/test_registry.py > tests/registry_snapshot.json``."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attnrepro.dag import code_inputs, plan, preflight
from attnrepro.dag import config as cfg
from attnrepro.experiments import declared
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


def _clear_readers():
    for cached in (declared._tree, declared._bindings, declared._uses, declared.namespace):
        cached.cache_clear()


def test_the_registries_read_again_from_the_modules_are_the_snapshot(monkeypatch):
    """The registries built at import, read again now, by the readers of this process (under
    mutation testing, a mutated reader's: the import ran before the mutant was chosen)."""
    _clear_readers()
    try:
        experiments, estimates, work, torch = declared.registries()
    finally:
        _clear_readers()
    monkeypatch.setattr(plan, "EXPERIMENTS", plan.experiments(experiments))
    monkeypatch.setattr(memory, "ESTIMATES", estimates)
    monkeypatch.setattr(runtime, "WORK", work)
    monkeypatch.setattr(runtime, "TORCH", torch)
    assert _round_trip(snapshot()) == json.loads(SNAPSHOT.read_text())


if __name__ == "__main__":
    json.dump(snapshot(), sys.stdout, indent=1, sort_keys=True)
    print()


def test_the_torch_flag_is_what_the_module_imports():
    """An experiment declares torch exactly when its code reaches experiments._torch (its start-up
    is then torch's: attnrepro.resources.runtime.START_TORCH)."""
    for experiment, declared_ in declared.EXPERIMENTS.items():
        files = code_inputs.source_files(f"attnrepro.experiments.{experiment}")
        assert declared_["torch"] == ("src/attnrepro/experiments/_torch.py" in files), experiment


def test_snakemake_reads_the_declarations_without_numpy_pandas_or_torch():
    code = ("import sys\nfrom attnrepro.dag import plan, preflight\n"
            "from attnrepro.resources import runtime\n"
            "case = {'seed_offset': 0, 'T': 4, 'repetitions': 2, 'd_k': 8, 'scaled': True}\n"
            "assert preflight.estimate('scale_table', case) > 0\n"
            "case = dict(n=4, batch=1, tokens=2, d_model=4, heads=1, d_ff=4)\n"
            "assert runtime.seconds('torch_modules', case) > 0\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'pandas', 'torch')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def _toy(tmp_path, monkeypatch, text):
    """Module ``toy`` of ``text``, read by declared as an experiment module (its caches cleared)."""
    (tmp_path / "toy.py").write_text(text)
    for cached in (declared._tree, declared._bindings, declared._uses, declared.namespace):
        cached.cache_clear()
    monkeypatch.setattr(declared, "DIR", tmp_path)


def test_a_statement_that_changes_a_needed_name_runs_too(tmp_path, monkeypatch):
    """``SIZES["row"] = ...`` binds no name: it runs because ``SIZES`` is needed (mutation testing
    fills its mutants' tables so), and a statement about no needed name does not."""
    _toy(tmp_path, monkeypatch,
         'import numpy as np\n\nSIZES = {}\nSIZES["row"] = 8\nUNUSED = []\nUNUSED.append(np.zeros(1))\n\n'
         'def peak_memory(p):\n    return [(SIZES["row"] * p["n"], "rows", {"n": 1})]\n\n\n'
         'def work(p):\n    return 0.0\n')
    try:
        assert declared.function("toy", "peak_memory")({"n": 3}) == [(24, "rows", {"n": 1})]
    finally:
        for cached in (declared._tree, declared._bindings, declared._uses, declared.namespace):
            cached.cache_clear()


def test_a_declared_function_may_not_use_numpy(tmp_path, monkeypatch):
    (tmp_path / "toy.py").write_text(
        'import numpy as np\n\nEXPERIMENT = {"article": "001", "section": "S"}\n\n\n'
        'def run(params):\n    return {}\n\n\n'
        'def peak_memory(p):\n    return [(int(np.prod(p["shape"])), "x", {})]\n\n\n'
        'def work(p):\n    return 0.0\n')
    for cached in (declared._tree, declared._bindings, declared._uses, declared.namespace):
        cached.cache_clear()
    monkeypatch.setattr(declared, "DIR", tmp_path)
    try:
        assert declared.declaration("toy") == {**declared.FIELDS, "article": "001", "section": "S"}
        with pytest.raises(ValueError, match=r"toy.py:1: np \(from numpy\) is needed by peak_memory"):
            declared.function("toy", "work")  # both are read at once
    finally:
        for cached in (declared._tree, declared._bindings, declared._uses, declared.namespace):
            cached.cache_clear()


@pytest.mark.parametrize("declaration, error", [
    ('{"article": "001", "section": "S", "colour": 1}',
     r"toy.py:3: EXPERIMENT: unknown fields \['colour'\], missing \[\] \(known: article, section, order,"),
    ('{"article": "001"}',
     r"toy.py:3: EXPERIMENT: unknown fields \[\], missing \['section'\] \(known: article, "),
    ('[1, 2]', r"toy.py:3: EXPERIMENT must be a literal dict"),
    ('dict(article="001")', r"toy.py:3: EXPERIMENT must be a literal dict"),
])
def test_a_declaration_that_is_no_literal_dict_of_the_fields_is_refused_naming_its_line(
        tmp_path, monkeypatch, declaration, error):
    _toy(tmp_path, monkeypatch, f'import math\nROWS = 1\nEXPERIMENT = {declaration}\n')
    try:
        with pytest.raises(ValueError, match=error):
            declared.declaration("toy")
    finally:
        _clear_readers()


def test_a_declaration_gets_the_defaults_and_tuples_for_lists(tmp_path, monkeypatch):
    _toy(tmp_path, monkeypatch,
         'ROWS = 1\nEXPERIMENT = {"article": "001", "section": "S", "tables": ["main", "x"]}\n')
    try:
        assert declared.declaration("toy") == {**declared.FIELDS, "article": "001", "section": "S",
                                               "tables": ("main", "x")}
    finally:
        _clear_readers()
    assert declared._bound(ast.parse("import os.path").body[0]) == ["os"]


def test_experiments_of_one_article_and_place_are_in_the_order_of_their_names(tmp_path, monkeypatch):
    for name, section in (("b_toy", "A"), ("a_toy", "B")):  # the name decides, not the section
        text = f'\nEXPERIMENT = {{"article": "001", "section": "{section}", "order": 1}}\n'
        (tmp_path / f"{name}.py").write_text(text)
    _toy(tmp_path, monkeypatch, '\nEXPERIMENT = {"article": "000", "section": "S", "order": 9}\n')
    try:
        assert list(declared._experiments()) == ["toy", "a_toy", "b_toy"]
    finally:
        _clear_readers()
