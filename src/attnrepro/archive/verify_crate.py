"""What ``python -m attnrepro verify`` takes from an archive's RO-Crate (``ro-crate-metadata.json``,
written by :mod:`attnrepro.archive.crate`), and where the crate and the archive's files disagree.

When the archive holds a crate, verify takes from it the resolved config it reruns (the input of
the run's ``CreateAction``), the lock it compares with this checkout's (the workflow's
``buildInstructions`` in pip's format), the commit (the workflow's ``version``) and the package
versions (the ``SoftwareApplication``s of the jobs), instead of reading ``environment.json``;
every file the crate describes is checked against its ``sha256``, and a file that differs, is
missing, or is not described is named. An archive without a crate (written before it existed)
is read as before; a crate that cannot be read is said, and the files are read as before.
"""

import functools
from pathlib import Path

from attnrepro.archive.verify_limits import CRATE, Limits
from attnrepro.run import bounded, digests

LIMITS = Limits()
PIP_LOCK = "https://pip.pypa.io/en/stable/reference/requirements-file-format/"
SHOWN = 5  # file names shown per sentence


class Unreadable(Exception):
    """The archive's crate exists but is not a crate this module can read."""


def _ids(value):
    """The ``@id``s of a JSON-LD reference or list of references."""
    values = value if isinstance(value, list) else [value]
    return [v["@id"] for v in values if isinstance(v, dict) and isinstance(v.get("@id"), str)]


def _types(entity):
    types = entity.get("@type")
    return set(types if isinstance(types, list) else [types])


@functools.lru_cache(maxsize=4)
def _graph(path, _stamp):
    """{@id: entity} of a crate file (``_stamp``: its mtime and size, so a changed file is read again).
    :class:`attnrepro.run.bounded.Exceeded` beyond its caps (its size, its nesting)."""
    try:
        data = bounded.read_json(path, LIMITS.crate_bytes, LIMITS.json_depth, CRATE)
    except bounded.Exceeded:
        raise
    except (OSError, ValueError) as error:
        raise Unreadable(f"{type(error).__name__}: {' '.join(str(error).split())[:120]}") from None
    graph = data.get("@graph") if isinstance(data, dict) else None
    if not isinstance(graph, list) or not all(isinstance(e, dict) and isinstance(e.get("@id"), str)
                                              for e in graph):
        raise Unreadable("no @graph of entities, each with an @id that is a string")
    return {e["@id"]: e for e in graph}


def file_in(top, name):
    """The file ``name`` of the archive's folder ``top``, or None: outside it (``..``, a link), not
    a file, or not a name at all (a NUL byte, a name too long for this system)."""
    file = Path(top) / name
    try:
        return file if file.resolve().is_relative_to(Path(top).resolve()) and file.is_file() else None
    except (OSError, ValueError):  # ValueError: a NUL; OSError: ENAMETOOLONG
        return None


def graph(top):
    """The archive's crate as {@id: entity}; None when the archive has none. :class:`Unreadable`
    when it cannot be read."""
    path = Path(top) / CRATE
    if not path.is_file():
        return None
    stat = path.stat()
    return _graph(str(path), (stat.st_mtime_ns, stat.st_size))


def _crate(top):
    """The graph, or None when there is none or it cannot be read (:func:`warnings` says so)."""
    try:
        return graph(top)
    except Unreadable:
        return None


def _main_workflow(entities):
    root = entities.get("./") or {}
    return entities.get(next(iter(_ids(root.get("mainEntity"))), None)) or {}


def path(top, what):
    """The archive's file that the crate names as ``what`` ("config": the resolved config the run
    started from; "lock": the pip lock of its environment), or None (no crate, or none named)."""
    if what not in ("config", "lock"):
        raise ValueError(f"no such file of a crate: {what!r} (config, lock)")
    entities = _crate(top)
    if entities is None:
        return None
    if what == "config":
        run = next((e for e in entities.values() if "CreateAction" in _types(e)
                    and _ids(e.get("instrument")) == _ids((entities.get("./") or {}).get("mainEntity"))), {})
        names = [i for i in _ids(run.get("object")) if "File" in _types(entities.get(i, {}))]
    else:
        names = [i for i in _ids(_main_workflow(entities).get("buildInstructions"))
                 if PIP_LOCK in _ids(entities.get(i, {}).get("conformsTo"))]
    return file_in(top, names[0]) if names else None


def environment(top):
    """(environment, warnings) as verify reads them from environment.json ({"git": {"commit",
    "dirty"}, "versions": {package: version}}), from the crate; None when there is no readable crate."""
    entities = _crate(top)
    if entities is None:
        return None
    version = _main_workflow(entities).get("version")
    git = {"commit": None, "dirty": None}
    if isinstance(version, str) and version:
        git = {"commit": version.removesuffix("-dirty"), "dirty": version.endswith("-dirty")}
    found = {}
    for entity in entities.values():
        name, v = entity.get("alternateName"), entity.get("version")
        if "SoftwareApplication" in _types(entity) and isinstance(name, str) and isinstance(v, str):
            found.setdefault(name, set()).add(v)
    versions = {k: " / ".join(sorted(v)) for k, v in found.items() if k != "openblas"}
    return {"git": git, "versions": versions}, []


def _listed(names):
    shown = ", ".join(names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def mismatches(top):
    """(differ, missing, undescribed): the crate's files whose SHA-256 is not the crate's, those
    absent from the archive, and the archive's files the crate does not describe."""
    top = Path(top)
    entities = graph(top)
    described = {i: e for i, e in entities.items() if "File" in _types(e) and i not in ("./", CRATE)}
    differ, missing = [], []
    for name, entity in sorted(described.items()):
        file = file_in(top, name)
        if file is None:
            missing.append(name)
        elif entity.get("sha256") is not None and digests.file_sha256(file) != entity["sha256"]:
            differ.append(name)
    present = sorted(p.relative_to(top).as_posix() for p in top.rglob("*") if p.is_file())
    undescribed = [p for p in present if p not in described and p != CRATE]
    return differ, missing, undescribed


def warnings(top):
    """Sentences on where the archive's crate and its files disagree (none without a crate)."""
    try:
        if graph(top) is None:
            return []
        differ, missing, undescribed = mismatches(top)
    except Unreadable as error:
        return [f"the archive's {CRATE} cannot be read ({error}): its config, lock, commit and "
                "versions are read from the archive's files instead"]
    out = []
    if differ:
        out.append(f"{len(differ)} file(s) of the archive do not match the SHA-256 of {CRATE} "
                   f"(changed after it was written): {_listed(differ)}")
    if missing:
        out.append(f"{len(missing)} file(s) described in {CRATE} are missing from the archive: "
                   f"{_listed(missing)}")
    if undescribed:
        out.append(f"{len(undescribed)} file(s) of the archive are not described in {CRATE}: "
                   f"{_listed(undescribed)}")
    return out
