"""docs/configuration.md, "What reruns": each row of its table made true on a finished small run.

A row names a file and the rules whose jobs an edit of it reruns by itself: the rules that declare
it as an input (`snakemake --filegraph`), or whose parameters it changes (a lock's pins). In a
copy of the run, after the edit (a comment appended; in the runtime lock, torch's pin changed),
`snakemake -n` lists each of them, and every other job it lists only reads what they write
("Input files updated by another job": Snakemake gives a job that reason first, when it has it).
"""

import fnmatch
import re

import pytest

from conftest import REPO, copy_run, declared_inputs, planned_jobs, planned_reasons, snakemake

DOC = REPO / "docs/configuration.md"
INDIRECT = "Input files updated by another job"


def rows():
    """[(file, rule patterns)] of the table under "## What reruns"; no pattern: nothing reruns."""
    section = DOC.read_text().partition("## What reruns")[2].partition("\n## ")[0]
    found = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[1].startswith("`"):
            continue
        found.append((cells[1].strip("`"), re.findall(r"`([^`]+)`", cells[2])))
    return found


def _edit(path):
    text = path.read_text()
    if path.name == "runtime.lock":
        assert text.count("\ntorch==2.13.0+cpu ") == 1
        path.write_text(text.replace("\ntorch==2.13.0+cpu ", "\ntorch==2.13.1+cpu "))
    else:
        path.write_text(text + "\n# edited by a test\n")


def test_the_table_names_every_kind_of_edit():
    files = [f for f, _ in rows()]
    assert len(files) == len(set(files)) >= 9
    kinds = ("src/attnrepro/experiments/", "src/attnrepro/report/products/", "src/attnrepro/dag/config.py",
             "src/attnrepro/dag/validator.py", "src/attnrepro/dag/plan.py", "config/published.yaml",
             "workflow/schemas/published.schema.yaml", "requirements/runtime.lock")  # the list
    for kind in kinds:
        assert any(f.startswith(kind) for f in files), kind
    assert [p for f, p in rows() if not p], "a row of an edit that reruns nothing"
    assert all((REPO / f).is_file() for f in files)


@pytest.fixture(scope="module")
def readers(small_run, tmp_path_factory):
    """{rule: its declared inputs} of the small run's DAG (read in a copy: Snakemake writes its log)."""
    return declared_inputs(copy_run(small_run, tmp_path_factory.mktemp("filegraph") / "run"), "all")


@pytest.mark.full
@pytest.mark.parametrize("file, patterns", rows(), ids=[f for f, _ in rows()])
def test_an_edit_reruns_what_the_docs_say(small_run, readers, tmp_path, file, patterns):
    root = copy_run(small_run, tmp_path / "run")
    _edit(root / file)
    proc = snakemake(root, "-n")
    assert proc.returncode == 0, proc.stderr[-3000:]
    reasons = {job.split("/")[0]: why for job, why in planned_reasons(proc).items() if job != "all"}
    own = {job for job, why in reasons.items() if any(not p.startswith(INDIRECT) for p in why.split("; "))}
    direct = own | {rule for rule, inputs in readers.items() if file in inputs}
    unmatched = sorted(j for j in direct if not any(fnmatch.fnmatchcase(j, p) for p in patterns))
    unused = [p for p in patterns if not any(fnmatch.fnmatchcase(j, p) for j in direct)]
    assert (unmatched, unused) == ([], []), f"{file}: reruns {sorted(direct)}"
    assert direct <= set(reasons), sorted(direct - set(reasons))  # listed, each one
    if not patterns:
        assert set(planned_jobs(proc)) <= {"all"} and "Nothing to be done" in proc.stdout + proc.stderr
