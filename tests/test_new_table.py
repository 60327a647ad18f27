"""CONTRIBUTING's recipe "Adding a table", followed as written for a toy table of scale_table.

As tests/test_new_experiment.py does for an experiment: the numbered steps are read from
CONTRIBUTING.md and done, in a scratch copy of the repository, by the function of their title
(:data:`STEPS`); a step must touch every file its first line names and no file its text does not
name. Then the copy is consistent: the catalog and caption tests pass in it, ``snakemake -n``
plans the table's rule, and the table builds by hand from one case of scale_table (marked ``full``).
"""

import shutil
import subprocess
import sys

import pandas as pd
import pytest

from conftest import REPO, planned_jobs, snakemake
from test_new_experiment import _append, _environment, _insert, copy_with_tests, follow, named, recipe

NAME = "toy_scale"  # the toy table: the variance of the scores of scale_table, one row per d_k and setting
HEADING = "Adding a table"
PLACEHOLDERS = {"<name>": NAME, "<id>": "scale_table"}
CATALOG = '        table("toy_scale", ["scale_table"], "tables_checks:build_toy_scale"),\n'
BUILDER = '''

def build_toy_scale(load):
    """The toy: the variance of q.k, one row per d_k and setting."""
    df = load("scale_table").sort_values(["d_k", "scaled"])
    return Table(df[["d_k", "scaled", "var_dot"]], {"var_dot": "{:.2f}"}, "The variance of the scores.")
'''
CAPTION = 'The variance of q.k for d_k = {{ snakemake.config["scale_table"]["d_k"] | join(", ") }}.\n'
CHECKS = "captions_are_there or every_caption_renders or literal_text or reads_registered"
CASE = "d_k-8_scaled-true"


def catalog(root, text):
    _insert(root / "src/attnrepro/report/products/catalog.py", '        table("scale_table",', CATALOG)


def builder(root, text):
    _append(root / "src/attnrepro/report/products/tables_checks.py", BUILDER)


def caption(root, text):
    (root / f"workflow/report/{NAME}.rst").write_text(CAPTION)


STEPS = {"Catalog": catalog, "Builder": builder, "Caption": caption}
NOT_FOLLOWED = {
    "Printed claims": "the toy prints no number of an article",
    "Golden values": "the step says there is none to update",
}


def test_the_table_recipe_names_the_steps_this_test_follows():
    steps = recipe(HEADING, PLACEHOLDERS)
    assert [title for title, *_ in steps] == [*STEPS, *NOT_FOLLOWED]
    first = {title: line for title, line, _ in steps}
    assert named(first["Catalog"]) == {"src/attnrepro/report/products/catalog.py"}
    assert named(first["Caption"]) == {f"workflow/report/{NAME}.rst"}


@pytest.mark.full  # Snakemake and a case of scale_table in a copy (CONTRIBUTING.md, "Tests")
def test_a_toy_table_added_by_the_recipe_plans_and_builds(tmp_path):
    root = copy_with_tests(tmp_path / "repo")
    shutil.copy(REPO / "tests/test_report.py", root / "tests/test_report.py")  # the catalog's test
    follow(root, recipe(HEADING, PLACEHOLDERS), STEPS, NOT_FOLLOWED)
    env = _environment(root)

    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                            "tests/test_captions.py", "tests/test_report.py", "-k", CHECKS],
                           cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert tests.returncode == 0, tests.stdout[-4000:]
    dry = snakemake(root, "-n", f"table_{NAME}")
    assert dry.returncode == 0, dry.stderr[-4000:]
    assert planned_jobs(dry)[f"table_{NAME}"] == 1

    data = root / "t" / f"results/data/001/scale_table/{CASE}.parquet"
    case = subprocess.run([sys.executable, "-m", "attnrepro", "run", "scale_table", "--case", CASE,
                           "--config", "config/small.yaml", "--out", str(data)],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert case.returncode == 0, case.stderr[-3000:]
    table = subprocess.run(
        [sys.executable, "-m", "attnrepro.report", "--configfile", "config/small.yaml", "table", NAME,
         "--md", "t.md", "--csv", "t.csv", "--inputs", str(data)],
        cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert table.returncode == 0, table.stderr[-3000:]
    built = pd.read_csv(root / "t.csv")
    assert list(built.columns) == ["d_k", "scaled", "var_dot"] and built["d_k"].tolist() == [8]
