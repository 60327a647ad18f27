"""The articles of a run: config ``articles``, one entry per article, in the order listed.

An entry names the article's id (the name of its outputs: ``results/articles/<id>.html``), its
text (a path relative to the repository, the working directory of a run, or absolute), the
text's SHA-256 (the text every claim's location was read against), its title and, if it has one,
its claims file. The schema (``workflow/schemas/config.schema.yaml``) checks each entry when the
config is validated; this module reads them, and says why an article's text cannot be used.
The list only: what parses a text is :mod:`attnrepro.articles.forms` (its form, by the suffix), what
links to an edition is the ledger's (:func:`attnrepro.report.ledger.ledger_md.edition_link`).

Pure Python: Snakemake reads it at every start to build the DAG.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from attnrepro.articles import bounded
from attnrepro.run import digests

REQUIRED = ("id", "text", "sha256", "title")

sha256 = digests.file_sha256  # the digest an entry's sha256 records


@dataclass(frozen=True)
class Article:
    """One entry of config ``articles``; ``place`` is its index there, which messages name."""

    id: str
    text: str
    sha256: str
    title: str
    claims: str | None = None
    place: int = 0
    time_limit_s: float = bounded.TIME_LIMIT_S  # checked from its text: its listings' time, each run
    memory_limit_mib: int = bounded.MEMORY_LIMIT_MIB  # and their interpreter's memory

    def key(self, field):
        """The config key of one of its fields: ``articles[2].sha256``."""
        return f"articles[{self.place}].{field}"


def errors(config):
    """Messages, each naming its key, for the entries of config ``articles`` that the schema
    cannot refuse: an id that an earlier entry has."""
    first, out = {}, []
    for place, entry in enumerate(config.get("articles") or []):
        name = entry.get("id") if isinstance(entry, Mapping) else None
        if not isinstance(name, str):  # the schema's to refuse
            continue
        if name in first:
            out.append(f"articles[{place}].id: {name!r} is the id of articles[{first[name]}] too")
        first.setdefault(name, place)
    return out


def _article(place, entry, root):
    """The :class:`Article` of entry ``place``; its paths under ``root`` when relative."""
    if not isinstance(entry, Mapping):
        raise ValueError(f"config articles[{place}]: an entry is a mapping, not {type(entry).__name__}")
    missing = [name for name in REQUIRED if name not in entry]
    if missing:
        raise ValueError(f"config articles[{place}]: no {', '.join(missing)}")
    claims = entry.get("claims")
    limits = {k: entry[k] for k in ("time_limit_s", "memory_limit_mib") if entry.get(k) is not None}
    return Article(str(entry["id"]), _under(root, entry["text"]), str(entry["sha256"]), str(entry["title"]),
                   None if claims is None else _under(root, claims), place, **limits)


def _under(root, path):
    """``path`` as a string; under ``root`` when it is relative and a root is given."""
    path = str(path)
    return path if root is None or Path(path).is_absolute() else str(Path(root) / path)


def from_config(config, root=None):
    """{id: :class:`Article`} of config ``articles``, as listed; ``root``: the folder that relative
    paths are read from (None: the working directory, the repository in a run). An entry without
    a required field, or an id given twice, is a ValueError naming its key."""
    problems = errors(config)
    if problems:
        raise ValueError(f"config {problems[0]}")
    entries = config.get("articles") or []
    return {article.id: article for article in (_article(i, e, root) for i, e in enumerate(entries))}


def problem(article):
    """Why ``article``'s text cannot be used (its file is missing, or is not the text whose SHA-256
    its entry records, against which the claims' locations were read), or None."""
    path = article.text
    if not Path(path).is_file():
        return f"{path}: not found (config {article.key('text')})"
    found = sha256(path)
    if found != article.sha256:
        return (f"{path}: SHA-256 {found}, but config {article.key('sha256')} records {article.sha256}: "
                "another text than the one every location was read against")
    return None


def problems(articles):
    """{id: why its text cannot be used} of the ``articles`` (a mapping of :func:`from_config`, or
    Articles) whose text cannot (:func:`problem`)."""
    found = {a.id: problem(a) for a in (articles.values() if isinstance(articles, Mapping) else articles)}
    return {name: why for name, why in found.items() if why}

