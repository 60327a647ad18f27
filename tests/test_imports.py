"""Every module of the package imports on its own, in a fresh interpreter.

An import cycle only fails when a cycle's module is imported first, as a job's command line
does (``python -m attnrepro.report.job seeds`` imports evidence.seeds_render first); a test suite
that imports them in another order passes regardless.
"""

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
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    script = (
        "import importlib, subprocess, sys\n"
        "failed = []\n"
        "for name in sys.argv[1:]:\n"
        "    proc = subprocess.run([sys.executable, '-c', f'import {name}'], "
        "capture_output=True, text=True)\n"
        "    if proc.returncode:\n"
        "        failed.append(name + ': ' + (proc.stderr.strip().splitlines() or ['?'])[-1])\n"
        "print('\\n'.join(failed))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, *MODULES], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "", proc.stdout
