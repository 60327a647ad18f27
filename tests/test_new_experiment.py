"""Adding an experiment touches only the files CONTRIBUTING's recipe names ("Adding an
experiment"): in a scratch copy of the repository, a toy experiment is written as the recipe says
(its module with its declaration and estimates, its config section and schema, its catalog line,
builder and caption) and Snakemake runs it to its table."""

import pytest

from conftest import copy_repo, planned_resource, snakemake

pytestmark = pytest.mark.full  # a pipeline run of its own (CONTRIBUTING.md, "Tests")

MODULE = '''"""Toy: the sum of 0 .. n - 1, counted and in closed form (one job per n)."""

import pandas as pd

from attnrepro.experiments._memory import ROW, term
from attnrepro.experiments._prices import DICT_ROW

EXPERIMENT = {
    "article": "001",
    "section": "Why you divide by the square root of d_k, measured",
    "grid": ("n",),
}


def run(params):
    n = params["n"]
    return {"main": pd.DataFrame([{"n": n, "counted": sum(range(n)), "closed_form": n * (n - 1) // 2}])}


def peak_memory(p):
    return [term(p["n"] * 1000 * ROW, "a made-up table: 1000 n rows", n=1)]


def work(p):
    return p["n"] * DICT_ROW
'''
CONFIG = '''
toy_sum:  # the toy of tests/test_new_experiment.py
  n: [3, 10]  # grid: one job per value
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
        description: "grid: the sum of 0 .. n - 1, one job per value"

'''
BUILDER = '''

def build_toy_sum(load):
    """The toy: the sum counted and in closed form, one row per n."""
    df = load("toy_sum").sort_values("n")
    return Table(df[["n", "counted", "closed_form"]], {}, "The sum of 0 .. n - 1.")
'''
CAPTION = 'The toy sum for n = {{ snakemake.config["toy_sum"]["n"] | join(", ") }}.\n'


def _insert(path, before, text):
    content = path.read_text()
    assert before in content, (path, before)
    path.write_text(content.replace(before, text + before, 1))


def test_a_new_experiment_runs_to_its_table_from_the_files_the_recipe_names(tmp_path):
    root = copy_repo(tmp_path / "repo")
    (root / "src/attnrepro/experiments/toy_sum.py").write_text(MODULE)  # 1. its module
    with open(root / "config/config.yaml", "a") as fh:  # 2. its config section
        fh.write(CONFIG)
    _insert(root / "workflow/schemas/config.schema.yaml", "  scale_table:\n", SCHEMA)  # 3. its schema
    _insert(root / "src/attnrepro/report/products/catalog.py",  # 4. its catalog line
            '        table("scale_table",',
            '        table("toy_sum", ["toy_sum"], "tables_checks:build_toy_sum"),\n')
    with open(root / "src/attnrepro/report/products/tables_checks.py", "a") as fh:  # 5. its builder
        fh.write(BUILDER)
    (root / "workflow/report/toy_sum.rst").write_text(CAPTION)  # 6. its caption

    dry = snakemake(root, "-n", "-p", "results/tables/toy_sum.md")
    assert dry.returncode == 0, dry.stderr[-4000:]
    jobs = [(case, mem) for rule, case, mem in planned_resource(dry.stdout, "mem_mb")
            if rule == "toy_sum_case"]
    # its peak_memory reached Snakemake: 10 x 1000 rows of 400 bytes, with the allowance, margin, overhead
    assert sorted(jobs) == [("n-10", 435), ("n-3", 432)], jobs

    proc = snakemake(root, "results/tables/toy_sum.md")
    assert proc.returncode == 0, proc.stderr[-4000:]
    table = (root / "results/tables/toy_sum.md").read_text()
    assert "45" in table and "3" in table, table
    assert (root / "results/data/001/toy_sum/n-10.parquet").is_file()
