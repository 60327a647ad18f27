"""Every module of the package imports on its own, in a fresh interpreter.

An import cycle only fails when a cycle's module is imported first, as a job's command line
does (``python -m attnrepro.report.job seeds`` imports evidence.seeds_render first); a test suite
that imports them in another order passes regardless.
"""

import concurrent.futures
import os
import subprocess
import sys

from conftest import REPO

MODULES = sorted(
    ".".join(path.relative_to(REPO / "src").with_suffix("").parts).removesuffix(".__init__")
    for path in (REPO / "src" / "attnrepro").rglob("*.py")
    if path.name != "__main__.py"
)


def test_the_package_has_its_modules():
    assert {"attnrepro.evidence.seeds_render", "attnrepro.report.ledger_io",
            "attnrepro.model.decoder"} <= set(MODULES)


def test_every_module_imports_first_in_a_fresh_interpreter():
    """Each module imported alone, first, in an interpreter of its own (two at a time)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}

    def error(name):
        proc = subprocess.run([sys.executable, "-c", f"import {name}"], env=env, capture_output=True,
                              text=True, timeout=300)
        return f"{name}: {(proc.stderr.strip().splitlines() or ['?'])[-1]}" if proc.returncode else None

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        failed = [e for e in pool.map(error, MODULES) if e]
    assert len(MODULES) > 60 and not failed, failed
