"""CONTRIBUTING's recipe "Adding an experiment", followed as written for a toy experiment.

The numbered steps are read from CONTRIBUTING.md. In a scratch copy of the repository, each step
the toy needs is done by the function of its title (:data:`STEPS`); the registry snapshot's runs
its command from the text. A step the toy cannot follow is in :data:`NOT_FOLLOWED`, with the
reason. Each step must touch every file its first line names and no file its text does not
name. Then the copy is consistent: the registry, caption and config tests pass in it, ``snakemake -n`` on the
small config plans the toy's job after its upstream one, the job writes its Parquet file, and its
table builds by hand (that test is marked ``full``).
"""

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO, copy_repo, planned_resource, snakemake

ID = "toy_sum"  # the toy experiment, and its one product
PLACEHOLDERS = {"<id>": ID, "<name>": ID}
# what the registry, caption and config tests read in the copy, beside copy_repo's files
TEST_FILES = ("pyproject.toml", "tests/conftest.py", "tests/test_registry.py", "tests/test_captions.py",
              "tests/registry_snapshot.json")
CHECKS = "snapshot or captions_are_there or every_caption_renders or grid_keys_are_marked or description"

MODULE = '''"""Toy: the sum of 0 .. n - 1, counted and in closed form, beside the rows of exercises."""

import pandas as pd

from attnrepro.experiments._memory import ROW, term
from attnrepro.experiments._prices import DICT_ROW
from attnrepro.run import io


def run(params, inputs):
    n = params["n"]
    rows = len(io.read_parquet(inputs["exercises"]))
    return {"main": pd.DataFrame([{"n": n, "counted": sum(range(n)), "closed_form": n * (n - 1) // 2,
                                   "exercises_rows": rows}])}


def peak_memory(p):
    return [term(p["n"] * 1000 * ROW, "a made-up table: 1000 n rows", n=1)]


def work(p):
    return p["n"] * DICT_ROW
'''
DECLARATION = '''EXPERIMENT = {
    "article": "001",
    "section": "Why you divide by the square root of d_k, measured",
    "grid": ("n",),
    "derived": {"main.closed_form": "n (n - 1) / 2 of the case's n"},
}


'''
PLAN = ('INPUTS = {"attention_map": _attention_map_inputs',
        ', "toy_sum": lambda config: {"exercises": output_path("exercises", "default")}')
CONFIG = '''
toy_sum:  # the toy of tests/test_new_experiment.py
  n: [3, 10]  # grid: one job per value
'''
SMALL = '''toy_sum:
  n: [3]
'''
SCHEMA = '''  toy_sum:
    description: the toy of tests/test_new_experiment.py; one job per n
    type: object
    additionalProperties: false
    required: [n]
    properties:
      n:
        type: array
        items: {$ref: "#/$defs/count"}
        description: "grid: fans out into one job per value: the sum of 0 .. n - 1"

'''
CATALOG = '        table("toy_sum", ["toy_sum"], "tables_checks:build_toy_sum"),\n'
BUILDER = '''

def build_toy_sum(load):
    """The toy: the sum counted and in closed form, one row per n."""
    df = load("toy_sum").sort_values("n")
    return Table(df[["n", "counted", "closed_form", "exercises_rows"]], {}, "The sum of 0 .. n - 1.")
'''
CAPTION = 'The toy sum for n = {{ snakemake.config["toy_sum"]["n"] | join(", ") }}.\n'


# --- the recipe, as CONTRIBUTING.md writes it ---------------------------------------------------

def recipe(heading="Adding an experiment", placeholders=PLACEHOLDERS):
    """[(title, first line, text)] of the numbered steps of CONTRIBUTING's section ``heading``
    (a step's text: its first line and the indented lines below it), placeholders filled in."""
    text = (REPO / "CONTRIBUTING.md").read_text()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    for placeholder, value in placeholders.items():
        section = section.replace(placeholder, value)
    steps = []
    for block in re.split(r"^(?=\d+\. \*\*)", section, flags=re.MULTILINE)[1:]:
        lines = block.splitlines()
        body = [lines[0]]
        for line in lines[1:]:
            if line and not line.startswith(" "):
                break
            body.append(line)
        steps.append((re.match(r"\d+\. \*\*(.+?)\*\*", lines[0])[1], lines[0], "\n".join(body)))
    return steps


def named(text):
    """The repository paths in the code spans of ``text`` (a folder ends with /)."""
    return {span for span in re.findall(r"`([^`\s]+)`", text)
            if re.match(r"(src|config|workflow|tests)/[\w./-]*$", span)}


def commands(text):
    """The commands of the indented blocks of a step's ``text``."""
    return [line.strip() for line in text.splitlines() if re.match(r" {7,}python ", line)]


# --- the steps, done in a copy ------------------------------------------------------------------

def _insert(path, before, text):
    content = path.read_text()
    assert before in content, (path, before)
    path.write_text(content.replace(before, text + before, 1))


def _append(path, text):
    with open(path, "a") as fh:
        fh.write(text)


def _environment(root):
    """The copy's code first, this interpreter's programs (python, snakemake) on the path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return {**env, "PYTHONPATH": str(root / "src")}


def _run_commands(root, text):
    found = commands(text)
    assert found, f"no command in the step:\n{text}"
    for command in found:
        proc = subprocess.run(["bash", "-c", command], cwd=root, env=_environment(root),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, (command, proc.stderr[-3000:])


def module(root, text):
    (root / f"src/attnrepro/experiments/{ID}.py").write_text(MODULE)


def declaration(root, text):
    _insert(root / f"src/attnrepro/experiments/{ID}.py", "def run(", DECLARATION)


def plan(root, text):
    path = root / "src/attnrepro/dag/plan.py"
    content = path.read_text()
    assert PLAN[0] in content
    path.write_text(content.replace(PLAN[0], PLAN[0] + PLAN[1], 1))


def config(root, text):
    _append(root / "config/config.yaml", CONFIG)
    _append(root / "config/small.yaml", SMALL)


def schema(root, text):
    _insert(root / "workflow/schemas/config.schema.yaml", "  scale_table:\n", SCHEMA)


def products(root, text):
    _insert(root / "src/attnrepro/report/products/catalog.py", '        table("scale_table",', CATALOG)
    _append(root / "src/attnrepro/report/products/tables_checks.py", BUILDER)
    (root / f"workflow/report/{ID}.rst").write_text(CAPTION)


# {step title: its function(root, step text)}, and the steps the toy does not follow
STEPS = {"Module": module, "Declaration": declaration, "Plan": plan, "Config": config, "Schema": schema,
         "Registry snapshot": _run_commands, "Products": products}
NOT_FOLLOWED = {
    "Claims": "the toy is no article's: it has no printed number to claim or leave unclaimed",
    "Tests": "this test is the toy's: its estimate reaches the dry run; golden files need a default run",
}


def _digests(root):
    """{path: sha256} of the copy's files (results, Snakemake's records and caches aside)."""
    out = {}
    for path in root.rglob("*"):
        relative = path.relative_to(root).as_posix()
        if path.is_file() and not relative.startswith(("results/", ".snakemake/")) and \
                "__pycache__" not in relative:
            out[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _under(path, name):
    """``path`` is the file ``name``, or a file under the folder ``name`` (ending with /)."""
    return path == name or (name.endswith("/") and path.startswith(name))


def follow(root, steps, functions=STEPS, skipped=NOT_FOLLOWED):
    """Do each step of ``steps`` in ``root`` by its function of ``functions``, but those ``skipped``;
    assert it touched the files its first line names and only files (or files under folders) its
    text names."""
    for title, first, text in steps:
        if title in skipped:
            continue
        before = _digests(root)
        functions[title](root, text)
        after = _digests(root)
        touched = {p for p in after if before.get(p) != after[p]}
        untouched = {n for n in named(first) if not any(_under(p, n) for p in touched)}
        assert not untouched, f"step {title!r} left {sorted(untouched)} untouched"
        allowed = named(text)
        unnamed = {p for p in touched if not any(_under(p, n) for n in allowed)}
        assert not unnamed, f"step {title!r} touches files its text does not name: {sorted(unnamed)}"


def copy_with_tests(dest):
    root = copy_repo(dest)
    for name in TEST_FILES:
        shutil.copy(REPO / name, root / name)
    return root


def test_the_recipe_names_the_steps_this_test_follows():
    steps = recipe()
    assert [title for title, *_ in steps] == [*STEPS, *NOT_FOLLOWED]
    by_title = {title: (first, text) for title, first, text in steps}
    assert named(by_title["Plan"][0]) == {"src/attnrepro/dag/plan.py"}
    assert commands(by_title["Registry snapshot"][1]) == [
        "python tests/test_registry.py > tests/registry_snapshot.json"]


@pytest.mark.full  # a pipeline run of its own (CONTRIBUTING.md, "Tests")
def test_a_toy_experiment_added_by_the_recipe_validates_plans_and_runs(tmp_path):
    root = copy_with_tests(tmp_path / "repo")
    follow(root, recipe())
    env = _environment(root)

    # the registry, caption and config tests pass in the copy (both configs validate there)
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                            "tests/test_registry.py", "tests/test_captions.py", "-k", CHECKS],
                           cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert tests.returncode == 0, tests.stdout[-4000:]
    assert re.search(r"\b\d{3,} passed", tests.stdout), tests.stdout[-500:]
    # the declaration's echo field reaches the ledger's rule
    echo = subprocess.run([sys.executable, "-c", (
        "import types\nfrom attnrepro.report.ledger import echoes\n"
        "claim = types.SimpleNamespace(source={'experiment': 'toy_sum', 'column': 'closed_form'})\n"
        "print(echoes.derivation(claim, None))")], cwd=root, env=env, capture_output=True, text=True)
    assert echo.stdout.strip() == "n (n - 1) / 2 of the case's n", echo.stderr[-2000:]

    # the small config plans one job (its n), after the upstream job the plan names
    dry = snakemake(root, "-n", ID)
    assert dry.returncode == 0, dry.stderr[-4000:]
    jobs = [(rule, case) for rule, case, _ in planned_resource(dry.stdout, "mem_mb")]
    assert ("toy_sum_case", "n-3") in jobs and ("exercises_case", "default") in jobs, jobs
    assert [case for rule, case in jobs if rule == "toy_sum_case"] == ["n-3"], jobs
    toy_job = next(b for b in re.split(r"\n(?=rule )", dry.stdout) if b.startswith("rule toy_sum_case:"))
    assert "results/data/001/exercises/default.parquet" in toy_job, toy_job

    # the job runs and writes its Parquet file, which its table reads
    proc = snakemake(root, ID)
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = pd.read_parquet(root / "results/data/001/toy_sum/n-3.parquet")
    assert result[["n", "counted", "closed_form"]].values.tolist() == [[3, 3, 3]]
    assert result["exercises_rows"].tolist() == [1]
    table = subprocess.run(
        [sys.executable, "-m", "attnrepro.report", "--configfile", "config/small.yaml", "table", ID,
         "--md", "t.md", "--csv", "t.csv", "--inputs", "results/data/001/toy_sum/n-3.parquet"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert table.returncode == 0, table.stderr[-3000:]
    assert pd.read_csv(root / "t.csv")[["n", "counted", "closed_form"]].values.tolist() == [[3, 3, 3]]
