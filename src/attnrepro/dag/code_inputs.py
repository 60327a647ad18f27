"""Which source files a module imports, found by reading them (no import is executed).

Snakemake declares these files as a rule's inputs, so that editing a module under
``src/attnrepro`` reruns exactly the jobs whose code imports it. A module that reads a data file
of the repository names it in a module-level ``READS = ("path", ...)`` (repository-relative
string literals, globs allowed): the file is then an input of every rule whose job imports that
module, though no code of it runs there: a rule's pins (attnrepro.dag.software) are those of the
modules it imports (``data=False``).

A rule's job runs an entry module (``python -m attnrepro.jobs.<command>``), which imports
statically everything it runs; the rule names besides only what its command dispatches by a name
from the config or the catalog (an experiment's module, a product's builder, an evidence
product's evaluate module). How a module is imported (a plain import, at the top of a file or in
a function) never changes a rule's inputs.
"""

import ast
import functools
from pathlib import Path
from attnrepro import paths

PACKAGE = "attnrepro"
SRC = paths.SRC


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


def _expanded(patterns, root):
    """The repository files that ``patterns`` (paths, or globs such as ``src/x/*.py``) name, as
    repository-relative strings; a path that names no file stays (Snakemake then says it is missing)."""
    files = set()
    for pattern in patterns:
        found = sorted(p.relative_to(root).as_posix() for p in root.glob(pattern)) if "*" in pattern else []
        files.update(found or [pattern])
    return files


@functools.lru_cache(maxsize=None)
def source_files(*modules, src=SRC, data=True):
    """Every file of this package that importing ``modules`` executes, and (``data``) the files
    those modules read (their ``READS``: a glob names every file it matches).

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
        todo += [n for names in _imported_names(path, name) for n in names]
    files = set(seen.values())
    for name in list(seen):
        files.update(_package_inits(name, src))
    read = _expanded({f for path in seen.values() for f in data_files(path)}, src.parent) if data else set()
    return sorted({str(p.relative_to(src.parent)) for p in files} | read)


def _init_names(name):
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]
