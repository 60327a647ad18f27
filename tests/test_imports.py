"""Every module of the package imports on its own, in a fresh interpreter.

An import cycle only fails when a cycle's module is imported first, as a job's command line
does (``python -m attnrepro.jobs.seeds`` imports report.commands.seeds first); a test suite
that imports them in another order passes regardless.

What is fresh is the package: one interpreter imports the third-party libraries the package
uses (the slow part: torch alone takes seconds) and nothing of ``attnrepro``, then forks once per
module; each child imports its module first and exits, so every child starts from a package
that no module of it has touched.
"""

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO

MODULES = sorted(
    ".".join(path.relative_to(REPO / "src").with_suffix("").parts).removesuffix(".__init__")
    for path in (REPO / "src" / "attnrepro").rglob("*.py")
    if path.name != "__main__.py"
)

# Imported before the forks (never pyplot, whose backend a module may choose).
LIBRARIES = "numpy,pandas,pyarrow.parquet,matplotlib,yaml,torch"
# The forking interpreter: argv[1]'s libraries first, then one child per module named in the rest
# of argv; prints {module: the last line of its error}.
FORKER = r"""
import importlib, json, os, sys, traceback
for library in filter(None, sys.argv[1].split(",")):
    try:
        importlib.import_module(library)
    except ImportError:
        pass
assert not any(m == "attnrepro" or m.startswith("attnrepro.") for m in sys.modules), "not fresh"
failed = {}
for name in sys.argv[2:]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            importlib.import_module(name)
            message = ""
        except BaseException:
            message = (traceback.format_exc().strip().splitlines() or ["?"])[-1]
        os.write(write, message.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        message = pipe.read().decode()
    _, status = os.waitpid(pid, 0)
    if message or status:
        failed[name] = message or f"exit status {status}"
print(json.dumps(failed))
"""


def test_the_package_has_its_modules():
    assert {"attnrepro.report.evidence_tables.seeds_render", "attnrepro.report.ledger.ledger_md",
            "attnrepro.model.decoder"} <= set(MODULES)


@pytest.mark.full
def test_every_module_imports_first_in_a_fresh_interpreter():
    """Two forking interpreters, one per core, each with every other module."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen([sys.executable, "-c", FORKER, LIBRARIES, *MODULES[half::2]], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for half in (0, 1)]
    failed = {}
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-3000:]
        failed.update(json.loads(out.strip().splitlines()[-1]))
    assert len(MODULES) > 60 and not failed, failed


def test_a_module_that_fails_only_when_imported_first_is_found(tmp_path):
    """The forker's children start fresh: a cycle that fails only when its second module comes
    first is found, however often the other order has run before it."""
    package = tmp_path / "cyc"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from cyc import b\nVALUE = 1\n")
    (package / "b.py").write_text("from cyc.a import VALUE\n")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO / 'src'}"}
    proc = subprocess.run([sys.executable, "-c", FORKER, "", "cyc.b", "cyc.a", "cyc.b"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {
        "cyc.a": "ImportError: cannot import name 'VALUE' from partially initialized module 'cyc.a' "
                 "(most likely due to a circular import) (" + str(package / "a.py") + ")"}
