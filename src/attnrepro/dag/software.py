"""The software a job runs: the distributions its code imports, with their pins in a lock.

Snakemake reruns a job when its conda environment or container changes, never when a pip lock
does. So every rule that runs our code carries, as a parameter, the pins (in
``requirements/runtime.lock``) of the distributions that its code inputs import: changing NumPy's
pin reruns exactly the jobs whose code imports numpy, and ``snakemake -n`` gives the reason
("params changed"). The distributions are found by reading the files, as
:mod:`attnrepro.dag.code_inputs` finds the modules (no import runs):

- every import outside the standard library and this package, named by its distribution
  (:data:`DISTRIBUTION_OF` where the names differ: ``import yaml`` is PyYAML);
- the distributions that pandas calls for us without an import of ours (:data:`CALLED_THROUGH`:
  ``DataFrame.to_markdown`` needs tabulate, ``read_parquet`` and ``to_parquet`` need pyarrow).

``tests/test_environment.py`` checks with the same scan that the conda environment, ``pyproject.toml``
and the runtime lock hold every distribution the code needs.
"""

import ast
import functools
import sys
from pathlib import Path

from attnrepro import paths
from attnrepro.experiments import declared  # the import mutation testing adds: no distribution of ours
from attnrepro.run import pip_lock

PACKAGE = "attnrepro"
DISTRIBUTION_OF = {"yaml": "pyyaml"}  # import name -> distribution, where they differ
CALLED_THROUGH = {"to_markdown": "tabulate", "read_parquet": "pyarrow", "to_parquet": "pyarrow"}


class MissingPin(ValueError):
    """Code imports a distribution that the lock does not pin."""


@functools.lru_cache(maxsize=None)
def needed(path):
    """{distribution: why} for the Python file ``path``: its imports of other distributions, and
    the pandas methods that call one (every statement, functions included)."""
    found = {}
    for node in ast.walk(ast.parse(Path(path).read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            if isinstance(node, ast.Attribute) and node.attr in CALLED_THROUGH:
                found.setdefault(CALLED_THROUGH[node.attr], f"calls {node.attr}")
            continue
        for top in {name.split(".")[0] for name in names if name not in declared.MUTATION}:
            if top != PACKAGE and top not in sys.stdlib_module_names:
                found.setdefault(DISTRIBUTION_OF.get(top, top), f"imports {top}")
    return found


def distributions(files):
    """{distribution: (file, why)} that the Python files among ``files`` need (the first file
    that needs each, in the order given)."""
    found = {}
    for file in files:
        if str(file).endswith(".py"):
            for name, why in needed(str(file)).items():
                found.setdefault(pip_lock.normal(name), (str(file), why))
    return found


@functools.lru_cache(maxsize=None)
def _pins(lock):
    return pip_lock.pins(lock)


def pinned(files, lock=paths.RUNTIME_LOCK, root=paths.REPO):
    """``name==version ...``: the pins in ``lock`` (relative to ``root``) of the distributions that
    the Python files among ``files`` need, sorted by name. A distribution the lock does not pin
    raises MissingPin, naming the lock, the distribution and the file that needs it."""
    pins = _pins(str(Path(root) / lock))
    out = []
    for name, (file, why) in sorted(distributions(files).items()):
        if not pins.get(name):
            raise MissingPin(f"{lock} pins no {name}, which {file} needs ({why}): add it to "
                             f"{Path(lock).with_suffix('.in').as_posix()} and run `make lock`")
        out.append(f"{name}=={pins[name]}")
    return " ".join(out)
