"""Which names a listing takes from the listings before it, read from its code (nothing runs).

An article's listings share one namespace, in order: a later listing uses what an earlier one
bound. When a listing fails, or its interpreter dies and a new one starts, the listings after it
that need its names cannot run as the article meant; the bounded interpreter
(:mod:`attnrepro.articles.bounded`, :mod:`attnrepro.articles.session`) skips them with the name and
the listing, and re-runs in a new interpreter the earlier listings whose names are still needed.

The reading is static and deliberately small (:mod:`ast`, top level only):

- a listing *binds* the names its module scope stores: assignment, ``for`` and ``with`` targets,
  imports, ``def`` and ``class``, an ``except ... as`` name; not the locals of a function, a class
  body or a comprehension;
- it *reads* a name it loads at top level before binding it itself (``x += 1`` reads ``x``), and
  that is no builtin. The bodies of functions and lambdas are not read: they run when called.

A name no earlier listing binds (``_``, one made by ``exec`` or ``import *``) is no dependency.
"""

import ast
import builtins
from dataclasses import dataclass

BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class Names:
    """What one listing reads (in order of first reading) and binds at top level."""

    reads: tuple
    binds: frozenset


class _Reader(ast.NodeVisitor):
    """Visits a listing in the order Python evaluates it, noting reads and bindings."""

    def __init__(self):
        self.bound, self.reads = set(), []

    def read(self, name):
        if name not in self.bound and name not in BUILTINS and name not in self.reads:
            self.reads.append(name)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Store):
            self.bound.add(node.id)
        else:
            self.read(node.id)

    def visit_Assign(self, node):
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self.visit(node.value)
        self.visit(node.target)

    def visit_AugAssign(self, node):
        if isinstance(node.target, ast.Name):
            self.read(node.target.id)
        self.visit(node.value)
        self.visit(node.target)

    def visit_NamedExpr(self, node):
        self.visit(node.value)
        self.visit(node.target)

    def visit_For(self, node):
        self.visit(node.iter)
        self.visit(node.target)
        for statement in node.body + node.orelse:
            self.visit(statement)

    visit_AsyncFor = visit_For

    def visit_Import(self, node):
        for alias in node.names:
            self.bound.add(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node):
        for alias in node.names:
            if alias.name != "*":
                self.bound.add(alias.asname or alias.name)

    def visit_ExceptHandler(self, node):
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self.bound.add(node.name)
        for statement in node.body:
            self.visit(statement)

    def visit_FunctionDef(self, node):
        """Decorators and defaults run now; the body when the function is called."""
        for expr in [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]:
            if expr is not None:
                self.visit(expr)
        self.bound.add(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        for expr in [*node.args.defaults, *node.args.kw_defaults]:
            if expr is not None:
                self.visit(expr)

    def visit_MatchAs(self, node):
        if node.pattern is not None:
            self.visit(node.pattern)
        if node.name:
            self.bound.add(node.name)

    def visit_MatchStar(self, node):
        if node.name:
            self.bound.add(node.name)

    def visit_ClassDef(self, node):
        """Bases and decorators run now, and the body too, in a scope of its own."""
        for expr in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(expr)
        self._local(node.body, ())
        self.bound.add(node.name)

    def _comprehension(self, node, results):
        """The first iterable is read here; the rest runs in the comprehension's own scope."""
        first, *_ = node.generators
        self.visit(first.iter)
        parts = []
        for i, generator in enumerate(node.generators):
            parts += [generator.target] + ([generator.iter] if i else []) + generator.ifs
        self._local(parts, results)

    def _local(self, first, then):
        """Visit ``first`` then ``then`` with bindings that do not leak out (a nested scope)."""
        outer = set(self.bound)
        for node in [*first, *then]:
            self.visit(node)
        self.bound = outer

    def visit_ListComp(self, node):
        self._comprehension(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node):
        self._comprehension(node, [node.key, node.value])


def names(code):
    """The :class:`Names` of one listing's code (none for code that does not parse: it fails)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return Names((), frozenset())
    reader = _Reader()
    for statement in tree.body:
        reader.visit(statement)
    return Names(tuple(reader.reads), frozenset(reader.bound))


def needs(listings_names, index):
    """[(name, the listings before ``index`` that bind it)] for each name listing ``index`` reads
    that an earlier listing binds; positions from 0."""
    out = []
    for name in listings_names[index].reads:
        binders = [j for j in range(index) if name in listings_names[j].binds]
        if binders:
            out.append((name, binders))
    return out


def unmet(listings_names, index, available):
    """(name, listing) of the first name listing ``index`` needs that no listing in ``available``
    (run in this interpreter, its names present) binds, with the last listing binding it; or None."""
    for name, binders in needs(listings_names, index):
        if not available.intersection(binders):
            return name, binders[-1]
    return None


def replays(listings_names, start, ran, lost=()):
    """The listings before ``start`` to run again, in order, in a new interpreter that goes on
    from ``start``: for each name a later listing needs, the last listing binding it before the
    reader, when that is before ``start``, ran and was not lost; and what that one needs in turn."""
    chosen, todo = set(), list(range(start, len(listings_names)))
    while todo:
        reader = todo.pop()
        for _, binders in needs(listings_names, reader):
            last = binders[-1]
            if last < start and last in ran and last not in lost and last not in chosen:
                chosen.add(last)
                todo.append(last)
    return sorted(chosen)
