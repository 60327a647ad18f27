"""An article's timing listing as a program that runs on its own: what the timing jobs time beside ours.

A listing of a notebook-like article leans on earlier ones (001's O(T²) listing calls the
``softmax`` its first listing defines). :func:`program` gives the listing's Python preceded by
exactly the definitions it needs from earlier listings: the top-level ``def``, ``class`` and
``import`` statements that bind a name it reads and does not bind itself, and, in turn, what
those read. Nothing that computes is taken from an earlier listing: a needed name that an earlier
listing binds only by computing it (``x = rng.normal(...)``) makes the listing not runnable on its
own, said in one line. The text is read and checked against its recorded SHA-256 first
(:func:`checked_text`); the program runs in the timing job's process
(:mod:`attnrepro.experiments._article_code`).
"""

import ast
import builtins
import hashlib
from dataclasses import dataclass
from pathlib import Path

from attnrepro.articles import forms, listings

@dataclass(frozen=True)
class Program:
    """What runs: ``source`` (the listing, after the definitions it needs from earlier listings),
    ``name`` (its place, for messages and tracebacks: "001.listing-12"), ``text`` (the article's
    file) and ``sha256`` (of that file, as checked)."""

    source: str
    name: str
    text: str = ""
    sha256: str = ""


DEFINES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


def checked_text(path, sha256):
    """The bytes of the article at ``path``, refused in one line naming the file and the key when
    they are not the text whose SHA-256 the config records (``articles[i].sha256``)."""
    data = Path(path).read_bytes()
    found = hashlib.sha256(data).hexdigest()
    if found != sha256:
        raise ValueError(f"{path}: SHA-256 {found}, not the {sha256} of its config entry "
                         "(articles[i].sha256): another text than the one this run times")
    return data


def _bound(node):
    """The names a top-level statement binds."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(node, DEFINES):
        return {node.name}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _read(node):
    """The names a statement reads (loads) anywhere inside it, builtins left out."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            } - set(dir(builtins))


def _statements(listing):
    """(the listing's Python, its top-level statements)."""
    source, _ = listings.runnable(listing.code)
    try:
        return source, ast.parse(source).body
    except SyntaxError as error:
        raise ValueError(f"{listing.name}: not Python ({error.msg}, line {error.lineno})") from None


def _free(body):
    """The names ``body`` (top-level statements) reads and binds nowhere: not as a variable, a
    parameter, a loop target, a definition or an import, at any depth."""
    bound = set()
    for node in body:
        for inner in ast.walk(node):
            if isinstance(inner, ast.arg):
                bound.add(inner.arg)
            elif isinstance(inner, (*DEFINES, ast.Name)):
                bound |= _bound(inner) if not isinstance(inner, ast.Name) else (
                    {inner.id} if isinstance(inner.ctx, ast.Store) else set())
    return set().union(*(_read(node) for node in body)) - bound


def definitions(earlier, needed, name):
    """[source of each definition] that ``needed`` names require, from the ``earlier`` listings'
    top-level statements (the last one binding a name wins, as it would in a session), in their
    order in the article. ``name``: the listing's, for the message."""
    found = {}  # (listing index, statement index) -> source segment
    where = {}  # name -> (key, node, source), the last binding
    for listing in earlier:
        source, body = _statements(listing)
        for k, node in enumerate(body):
            for bound in _bound(node):
                where[bound] = ((listing.index, k), node, source)
    todo = sorted(needed)
    while todo:
        want = todo.pop()
        if want not in where:
            continue  # a name no listing binds: the listing's own error, if it is one, when it runs
        key, node, source = where[want]
        if not isinstance(node, DEFINES):
            raise ValueError(f"{name} needs {want!r}, which an earlier listing computes (line "
                             f"{node.lineno} of its listing): it cannot be timed on its own")
        if key not in found:
            found[key] = ast.get_source_segment(source, node)
            todo += sorted(_free([node]))
    return [found[key] for key in sorted(found)]


def program(path, article, index, sha256):
    """The :class:`Program` of listing ``index`` (from 1) of
    the article at ``path`` (id ``article``), its text checked against ``sha256``."""
    data = checked_text(path, sha256)
    document = forms.document(data.decode("utf-8"), forms.form_of(path), str(path))
    found = listings.extract(document, article)
    if not 1 <= index <= len(found):
        raise ValueError(f"{path}: no listing {index} (it has {len(found)})")
    listing = found[index - 1]
    source, body = _statements(listing)
    if "perf_counter" not in source:
        raise ValueError(f"{listing.name} reads no time.perf_counter: not a timing listing")
    needed = definitions(found[:index - 1], _free(body), listing.name)
    return Program("\n\n".join([*needed, source]), listing.name, str(path), sha256)
