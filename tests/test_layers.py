"""The layers of src/attnrepro (CONTRIBUTING.md, "Layers") hold: import-linter checks the contracts
of ``.importlinter``, and fails on an import that points upward."""

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(repo):
    """``lint-imports`` on the package of ``repo`` (its .importlinter), without a cache."""
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=repo, capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": str(repo / "src"), "PATH": "/usr/bin:/bin"})


def test_the_layer_contracts_are_kept():
    proc = lint_imports(REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Contracts: 2 kept, 0 broken." in proc.stdout


def test_an_upward_import_breaks_the_contract(tmp_path):
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(REPO / "src", tmp_path / "src", ignore=ignore)
    shutil.copy(REPO / ".importlinter", tmp_path)
    masks = tmp_path / "src" / "attnrepro" / "core" / "masks.py"
    upward = "\nfrom attnrepro.report.products import render  # noqa: E402, F401\n"
    masks.write_text(masks.read_text() + upward)
    proc = lint_imports(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "attnrepro.core.masks -> attnrepro.report.products.render" in proc.stdout
    assert "Contracts: 1 kept, 1 broken." in proc.stdout
