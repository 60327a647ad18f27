"""Which source files a module imports, found by reading them (no import is executed).

Snakemake declares these files as a rule's inputs, so that editing a module under
``src/attnrepro`` reruns exactly the jobs whose code imports it. A module that reads a data file
of the repository names it in a module-level ``READS = ("path", ...)`` (repository-relative
string literals): the file is then an input of every rule whose job imports that module.

The modules that Snakemake alone reads to build the DAG (:data:`DAG_ONLY`) are not followed: a job
that imports one (a command line for people resolving a config, the index reading the plan) does
not make it a code input of every rule of its entry. A rule whose job truly runs one names it
among its modules (``report_code("index")`` names the plan and the catalog: attnrepro.report.job's
RUNS), and only then is it followed. How a module is imported (a plain import, at the top of a
file or in a function) never changes a rule's inputs.
"""

import ast
import functools
from pathlib import Path
from attnrepro import paths

PACKAGE = "attnrepro"
SRC = paths.SRC
# The modules that Snakemake reads to build the DAG (workflow/rules/*.smk import them) and that no
# job needs: the closure of a rule's modules does not descend into them unless the rule names one.
DAG_ONLY = {
    "attnrepro.dag.config": "validates and resolves the config; a job gets its values on its command line",
    "attnrepro.dag.plan": "the experiments, cases and paths the rules are made of (the index names it)",
    "attnrepro.dag.preflight": "refuses a config whose jobs would not fit; never changes a result",
    "attnrepro.dag.code_inputs": "this module: the rules' code inputs",
    "attnrepro.dag.sweep_plan": "the numerics sweep's cases and paths, for its rules",
    "attnrepro.dag.software": "each rule's pinned distributions, a parameter: pins rerun jobs",
    "attnrepro.resources.runtime": "each job's runtime resource, for the scheduler",
    "attnrepro.report.products.catalog": "the tables and figures, one rule each (the index names it)",
    # read through attnrepro.experiments.declared, which runs an experiment's peak_memory and work
    "attnrepro.experiments._memory": "the terms of each experiment's peak_memory; a job never calls it",
    "attnrepro.experiments._prices": "the prices of each experiment's work; a job never calls it",
}


@functools.lru_cache(maxsize=None)
def _module_path(name, src):
    """File of a dotted module name inside ``src``, or None when it is not ours."""
    base = src.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@functools.lru_cache(maxsize=None)
def _package_inits(name, src):
    """The ``__init__.py`` of every package on the way to ``name`` (Python runs them all)."""
    parts = name.split(".")
    inits = []
    for i in range(1, len(parts)):
        init = src.joinpath(*parts[:i], "__init__.py")
        if init.is_file():
            inits.append(init)
    return inits


@functools.lru_cache(maxsize=None)
def _tree(path):
    """The syntax tree of the file ``path`` (read once per process: every rule asks again)."""
    return ast.parse(Path(path).read_text(), filename=str(path))


def _statements(nodes):
    """Every statement in ``nodes`` and in the blocks nested in them (an import is a statement:
    the expressions, most of a syntax tree, need no visit)."""
    for node in nodes:
        yield node
        for block in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, block, None)
            if isinstance(inner, list):
                yield from _statements(inner)


@functools.lru_cache(maxsize=None)
def _imported_names(path, name):
    """The imports of the file ``path`` (module ``name``): one tuple of dotted names per import
    statement, the package or module first, then what it names (which may be modules)."""
    tree = _tree(path)
    is_package = path.name == "__init__.py"
    imports = []
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            imports += [(alias.name,) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = name.split(".")
                keep = len(parts) - node.level + (1 if is_package else 0)
                base = ".".join(parts[:keep])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module
            imports.append((module, *(f"{module}.{alias.name}" for alias in node.names)))
    return tuple(i for i in imports if i[0] == PACKAGE or i[0].startswith(PACKAGE + "."))


def _followed(imports, roots, src):
    """The names of ``imports`` (see _imported_names) that the closure follows: not those of
    DAG_ONLY outside ``roots``, nor the package of a ``from package import module`` whose every
    named module is one of them (the import runs only for them)."""
    def kept_out(n):
        return n in DAG_ONLY and n not in roots

    names = []
    for first, *named in imports:
        modules = [n for n in named if _module_path(n, src) is not None]
        if modules and all(kept_out(n) for n in modules) and len(modules) == len(named):
            continue
        names += [n for n in (first, *named) if not kept_out(n)]
    return names


@functools.lru_cache(maxsize=None)
def data_files(path):
    """The repository-relative data files that the module file ``path`` declares it reads
    (its top-level ``READS``: a tuple or list of string literals)."""
    for node in _tree(path).body:
        names = [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
        if isinstance(node, ast.Assign) and "READS" in names:
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                value = None
            if not isinstance(value, (tuple, list)) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{path}: READS must be a tuple of string literals (repository paths)")
            return tuple(value)
    return ()


@functools.lru_cache(maxsize=None)
def source_files(*modules, src=SRC):
    """Every file of this package that importing ``modules`` executes, and the data files those
    modules read (their ``READS``); the imports of DAG_ONLY modules not among ``modules`` are not
    followed.

    Sorted, as strings relative to the folder that holds ``src/`` (the repository).
    """
    seen, todo = {}, list(modules)
    while todo:
        name = todo.pop()
        path = _module_path(name, src)
        if path is None or name in seen:
            continue
        seen[name] = path
        todo += [init_name for init_name in _init_names(name)]
        todo += _followed(_imported_names(path, name), modules, src)
    files = set(seen.values())
    for name in list(seen):
        files.update(_package_inits(name, src))
    data = {f for path in seen.values() for f in data_files(path)}
    return sorted({str(p.relative_to(src.parent)) for p in files} | data)


def _init_names(name):
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]
