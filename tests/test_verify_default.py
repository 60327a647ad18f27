"""The default run's archive, verified by a rerun on the machine that made it, is REPRODUCED.

A full-tier test: it reads the default run's results/ (`make reproduce`; CI runs it before the full
tier), archives them (`snakemake --cores 1 archive`) and reruns the archive's config in a new
folder (`python -m attnrepro verify ARCHIVE --cores 2`, about as long as the run itself). Its
times differ from the archive's and are compared by their rule, not their digits.
"""

import subprocess
import sys

import pytest

from attnrepro import paths
from attnrepro.dag import config as cfg
from conftest import missing

REPO = paths.REPO


def _default_results():
    """The repository's results/ when they are the default config's, else a skip (or a failure
    under ATTNREPRO_REQUIRE_ALL) saying so."""
    resolved = REPO / paths.RESULTS / "config.resolved.yaml"
    if not (REPO / paths.RESULTS / "ledger.csv").is_file() or not resolved.is_file():
        missing("the default run's results (make reproduce)")
    if cfg.load(resolved) != cfg.load(REPO / "config" / "config.yaml"):
        missing("results/ are not the default config's (make reproduce)")
    return REPO / paths.RESULTS


@pytest.mark.full
@pytest.mark.timeout(2400)
def test_the_default_runs_archive_is_reproduced_by_a_rerun_here(tmp_path):
    results = _default_results()
    archived = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "archive"], cwd=REPO,
                              capture_output=True, text=True, timeout=600)
    assert archived.returncode == 0, archived.stderr[-3000:]
    archive = max((results / "archive").glob("*.tar.gz"), key=lambda p: p.stat().st_mtime)
    proc = subprocess.run([sys.executable, "-m", "attnrepro", "verify", str(archive), "--cores", "2",
                           "--workdir", str(tmp_path / "rerun")], cwd=REPO, capture_output=True, text=True,
                          timeout=2300)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0, "\n".join(line for line in lines if not line.startswith(
        ("equal", "skipped"))) + proc.stderr[-3000:]
    assert lines[-1].startswith("verdict: REPRODUCED: all ")
    (ledger,) = [line for line in lines if line.startswith("equal            results/ledger.csv: ")]
    assert "machine-bound, compared without what comes from the clock" in ledger
