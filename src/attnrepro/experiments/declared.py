"""What each experiment declares beside its ``run()``, read from its module without importing it.

An experiment is a module of this package with a top-level ``EXPERIMENT = {...}``: a literal
dict of its article, section, tables, grid keys and flags (:data:`FIELDS`). The module also
defines ``peak_memory(params)``, the arrays alive at its job's peak as terms
(:mod:`attnrepro.experiments._memory`), and ``work(params)``, the seconds of its ``run``
(:mod:`attnrepro.experiments._prices`). This module builds every registry from them:
:data:`EXPERIMENTS` (for :mod:`attnrepro.dag.plan`), :data:`ESTIMATES`, :data:`WORK` and
:data:`TORCH` (for :mod:`attnrepro.resources`).

Snakemake reads them while it builds the DAG, and must not import NumPy, pandas or torch to do
so. So no experiment module is imported here: its syntax tree is read, and only the statements
that ``peak_memory`` and ``work`` need are run: the functions and constants they name, found
name by name, ``math``, and the names they import from the other modules of this package (read
the same way). A name they need from any other import (``np``) is an error, raised here.
"""

import ast
import builtins
import functools
from pathlib import Path

# its experiments' declarations are read from their text: every job importing this module reads them
READS = ("src/attnrepro/experiments/*.py",)
PACKAGE = __name__.rpartition(".")[0]  # attnrepro.experiments
DIR = Path(__file__).parent
DECLARATION = "EXPERIMENT"
ENTRIES = ("peak_memory", "work")  # the functions Snakemake calls, by name
STDLIB = frozenset({"math"})  # the modules those functions may import beside this package's
# and the one mutation testing adds to every module it rewrites (CONTRIBUTING.md, "Mutation testing")
MUTATION = frozenset({"mutmut.mutation.trampoline"})
# the fields of a declaration, and their defaults (article and section have none)
FIELDS = {
    "article": None,  # file prefix of the article in shared/seeds: "000", "001", "003"
    "section": None,  # the section of the article that holds the listing
    "order": 1000,  # its place among its article's experiments (the reading order of the article)
    "tables": ("main",),  # named tables each job writes; "main" first
    "grid": (),  # config keys that fan out into one job per value
    "threads": 1,
    "timing": False,  # measures time: runs alone on the machine
    "torch": False,  # imports torch (experiments._torch.load): a slower start
    # the number (from 1) of the article's listing that times what a timing experiment times: with
    # config ``article_code``, it runs after each pass (experiments._article_code); 0: none
    "article_code": 0,
    # "table.column": why its every value follows from the case's sizes or from a definition (a mask
    # cell, a shape, a count): a claim that reads it is an echo (report.ledger.echoes)
    "derived": {},
    # "table.column" of softmax weights: {"rows": the columns that name one row of the softmax,
    # "mask": the column of the mask it was taken under, or None} (report.ledger.echoes)
    "softmax": {},
}


@functools.lru_cache(maxsize=None)
def _tree(name):
    path = DIR / f"{name}.py"
    return ast.parse(path.read_text(), filename=str(path))


def _bound(node):
    """The names a top-level statement binds."""
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [alias.asname or alias.name.partition(".")[0] for alias in node.names]
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    targets = [e for t in targets for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])]
    return [t.id for t in targets if isinstance(t, ast.Name)]


def declaration(name):
    """The ``EXPERIMENT`` dict of module ``name`` with its defaults, or None when it has none."""
    for node in _tree(name).body:
        if isinstance(node, ast.Assign) and DECLARATION in _bound(node):
            where = f"{DIR / name}.py:{node.lineno}"
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                value = None  # pragma: no mutate (equivalent: any non-dict is refused below)
            if not isinstance(value, dict):
                raise ValueError(f"{where}: {DECLARATION} must be a literal dict")
            unknown = set(value) - set(FIELDS)
            missing = {k for k, v in FIELDS.items() if v is None} - set(value)
            if unknown or missing:
                raise ValueError(f"{where}: {DECLARATION}: unknown fields {sorted(unknown)}, "
                                 f"missing {sorted(missing)} (known: {', '.join(FIELDS)})")
            return {**FIELDS, **{k: tuple(v) if isinstance(v, list) else v for k, v in value.items()}}
    return None


@functools.lru_cache(maxsize=None)
def _bindings(name):
    """{name: statement} of the top-level bindings of module ``name``."""
    return {bound: node for node in _tree(name).body for bound in _bound(node)}


@functools.lru_cache(maxsize=None)
def _uses(name, bound):
    """The names that the statement binding ``bound`` in module ``name`` uses (none for an import)."""
    node = _bindings(name)[bound]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return ()
    return tuple({n.id for n in ast.walk(node) if isinstance(n, ast.Name)})


@functools.lru_cache(maxsize=None)
def namespace(name, wanted):
    """{name: value} of the names ``wanted`` (a tuple) of module ``name``, and of what they need,
    run from the module's syntax tree without its other statements."""
    path, tree, bindings = DIR / f"{name}.py", _tree(name), _bindings(name)
    # a statement that binds no name but changes one (TABLE["k"] = v) runs when that name is needed
    changes = {id(node): {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
               for node in tree.body if not _bound(node)}
    needed, run, todo = set(), set(), list(wanted)
    while todo:
        while todo:
            bound = todo.pop()
            if bound not in needed and bound in bindings:
                needed.add(bound)
                todo += _uses(name, bound)
        for node, used in changes.items():
            if node not in run and used & needed:
                run.add(node)
                todo += used
    ns = {"__name__": f"{PACKAGE}.{name}", "__file__": str(path), "__builtins__": builtins}
    body = []
    for node in tree.body:
        names = [n for n in _bound(node) if n in needed]
        if id(node) in run:
            body.append(node)
            continue
        if not names:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module.startswith(f"{PACKAGE}."):
            other = node.module.removeprefix(f"{PACKAGE}.")
            aliases = [a for a in node.names if (a.asname or a.name) in needed]
            found = namespace(other, tuple(sorted(a.name for a in aliases)))
            ns.update({a.asname or a.name: found[a.name] for a in aliases})
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            if getattr(node, "level", 0) or not set(modules) <= STDLIB | MUTATION:
                raise ValueError(
                    f"{path}:{node.lineno}: {', '.join(names)} (from {', '.join(map(str, modules))}) is "
                    f"needed by {', '.join(wanted)}, which Snakemake runs without importing the module: "
                    f"they may use its own functions and constants, {', '.join(sorted(STDLIB))} and the "
                    f"names of {PACKAGE}'s other modules, never NumPy, pandas or torch")
            body.append(node)
        else:
            body.append(node)
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), ns)
    missing = [w for w in wanted if w not in ns]
    if missing:
        raise ValueError(f"{path}: no {', '.join(missing)}")
    return ns


def _experiments():
    # a module without the word is no experiment: its syntax tree need not be read
    declared = {path.stem: declaration(path.stem) for path in DIR.glob("*.py")
                if f"\n{DECLARATION} = " in path.read_text()}
    found = {name: d for name, d in declared.items() if d is not None}
    return dict(sorted(found.items(), key=lambda item: (item[1]["article"], item[1]["order"], item[0])))


def function(experiment_id, entry):
    """The function ``entry`` (``peak_memory`` or ``work``) of one experiment, run from its module's
    syntax tree (:func:`namespace`)."""
    return namespace(experiment_id, ENTRIES)[entry]


def registries():
    """(EXPERIMENTS, ESTIMATES, WORK, TORCH), read from the experiment modules (once per process:
    the readers are cached)."""
    experiments = _experiments()
    estimates = {e: function(e, "peak_memory") for e in experiments}
    work = {e: function(e, "work") for e in experiments}
    return experiments, estimates, work, frozenset(e for e, d in experiments.items() if d["torch"])


# {id: declaration}: every experiment, by article, then in its article's order; {id: params ->
# [term]}; {id: params -> seconds of run(params)}; the experiments that declare torch
EXPERIMENTS, ESTIMATES, WORK, TORCH = registries()
