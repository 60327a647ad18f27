"""YAML files read strictly, as data: a key given twice, an anchor or alias, a tag or a template
switch is an error naming the file and line, never a silent value.

PyYAML (and Snakemake, which reads ``--configfile`` with it) keeps the last of two equal keys
silently: ``train: {lr: 0.1, lr: 0.001}`` trains at 0.001 whatever the author meant. Aliases
let a file of a few hundred bytes stand for 10^9 values (a "billion laughs": each of nine
anchors lists the previous one ten times), which any walk of the data then visits one by one.
A tag asks for a type (``!!python/object``), and Snakemake hands a file whose top level says
``__use_yte__: true`` to YTE, which runs its values starting with ``?`` as Python. Here the file's
events are read first (anchors, aliases and tags, in time linear in its size), then it is composed
into nodes and every mapping is checked (a merge key, ``__use_yte__``, a key twice), and only then
are the values built, by the same loader.
"""

import yaml
from yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent, NodeEvent
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

MERGE = "tag:yaml.org,2002:merge"  # `<<: *anchor`: keys of the merged mapping may be overridden
STANDARD = "tag:yaml.org,2002:"  # the prefix that `!!` stands for
TEMPLATING = "__use_yte__"  # a top-level key that makes Snakemake evaluate the file with YTE

DATA_ONLY = "attnrepro reads YAML as plain data"
WHY = {  # what to do instead, by what was found
    "anchor": f"{DATA_ONLY}: write each value out, without anchors, aliases or merge keys",
    "tag": f"{DATA_ONLY}: drop the tag (quote a string rather than tag it !!str)",
    "template": f"{DATA_ONLY}, never a template (YTE would run its values starting with ? as Python)",
    "depth": f"{DATA_ONLY}: a config nests a few levels (composing deeper crashes the parser)",
}
MAX_DEPTH = 64  # lists and mappings inside one another (config.yaml: 4; 10^5 crashes libyaml's composer)


class Refused(ValueError):
    """A YAML file this module refuses (:class:`DuplicateKey`, :class:`NotData`); ``lines``: one
    sentence per problem, each naming the file and the line. Callers catch this class."""

    def __init__(self, lines):
        self.lines = list(lines)
        super().__init__("; ".join(self.lines))


class DuplicateKey(Refused):
    """A YAML file gives one key twice in one mapping; the message names file, key and lines.
    ``lines``: one sentence per duplicated key."""

    def __init__(self, path, found):
        super().__init__(f"{path}, line {line}: key {key} given twice (first at line {first})"
                         for key, line, first in found)


class NotData(Refused):
    """A YAML file holds more than data: an anchor, an alias or a merge key ``<<``, a tag, or
    Snakemake's template switch ``__use_yte__`` at its top level. ``lines``: one sentence, the
    first such thing in the file (its line, what it is, what to do) and how many more there are."""

    def __init__(self, path, found):
        line, _, what, kind = min(found)
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        super().__init__([f"{path}, line {line}: {what}{more}: {WHY[kind]}"])


def _part(key):
    """A key in a key path: ``.name``, ``[3]``, or its repr when it holds unprintable characters."""
    if isinstance(key, int) and not isinstance(key, bool):
        return f"[{key}]"
    return f".{key}" if str(key).isprintable() else f".{str(key)!r}"


def duplicates(loader, node, path=""):
    """[(key path, line, first line)] of every key given twice in a mapping under ``node``
    (lines from 1; merge keys ``<<`` are left out, as YAML lets explicit keys override them)."""
    found, todo, seen_nodes = [], [(node, path)], set()
    while todo:
        node, path = todo.pop()
        if id(node) in seen_nodes:  # an alias: checked where its anchor is
            continue
        seen_nodes.add(id(node))
        if isinstance(node, SequenceNode):
            todo += [(item, f"{path}[{i}]") for i, item in reversed(list(enumerate(node.value)))]
        if not isinstance(node, MappingNode):
            continue
        first = {}
        for key_node, value_node in node.value:
            if key_node.tag == MERGE or not isinstance(key_node, ScalarNode):
                continue
            key = loader.construct_object(key_node)
            where = (path + _part(key)).lstrip(".")
            line = key_node.start_mark.line + 1
            try:
                if key in first:
                    found.append((where, line, first[key]))
                    continue
                first[key] = line
            except TypeError:  # an unhashable key: the constructor refuses it with its own error
                continue
            todo.append((value_node, where))
    return sorted(found, key=lambda d: d[1])


def _cut(text, width=40):
    return text if len(text) <= width else f"{text[:width]}..."


def _tag(tag):
    """A tag as the file wrote it: ``!!python/object`` for PyYAML's ``tag:yaml.org,2002:python/object``."""
    return _cut("!!" + tag.removeprefix(STANDARD) if tag.startswith(STANDARD) else tag)


def _anchors_and_tags(loader):
    """[(line, column, what, kind)] of every anchor, alias and explicit tag in the YAML that ``loader``
    parses, from its events: one look at each, so in time linear in the text's size (composing
    the nodes keeps no anchor, and gives ``!!str 5`` and ``'5'`` the same tag)."""
    found, depth = [], 0
    try:
        while loader.check_event():
            event = loader.get_event()
            at = (event.start_mark.line + 1, event.start_mark.column)
            depth += isinstance(event, CollectionStartEvent) - isinstance(event, CollectionEndEvent)
            if depth > MAX_DEPTH:
                found.append((*at, f"lists or mappings nested more than {MAX_DEPTH} deep", "depth"))
                break
            if isinstance(event, AliasEvent):
                found.append((*at, f"an alias *{_cut(event.anchor)}", "anchor"))
                continue
            if isinstance(event, NodeEvent) and event.anchor is not None:
                found.append((*at, f"an anchor &{_cut(event.anchor)}", "anchor"))
            if isinstance(event, NodeEvent) and event.tag is not None:
                found.append((*at, f"the tag {_tag(event.tag)}", "tag"))
    finally:
        loader.dispose()
    return found


def _at(node):
    return node.start_mark.line + 1, node.start_mark.column


def _merges_and_templates(node):
    """[(line, column, what, kind)] of the keys of the composed ``node`` that make it more than data: a
    merge key ``<<`` anywhere, ``__use_yte__`` at the top. Each node is visited once (an alias
    is the node of its anchor, met again), so in time linear in the text's size."""
    found, todo, seen = [], [node], set()
    if isinstance(node, MappingNode):
        found += [(*_at(key), f"the key {TEMPLATING}", "template")
                  for key, _ in node.value if isinstance(key, ScalarNode) and key.value == TEMPLATING]
    while todo:
        node = todo.pop()
        if id(node) in seen or isinstance(node, ScalarNode):
            continue
        seen.add(id(node))
        if isinstance(node, SequenceNode):
            todo += node.value
            continue
        for key, value in node.value:
            if key.tag == MERGE:
                found.append((*_at(key), "a merge key <<", "anchor"))
            todo += [key, value]
    return found


def _loader(fast):
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader) if fast else yaml.SafeLoader


def load(path, fast=False):
    """The data of the YAML file ``path`` (safe types only). Refused (:class:`Refused`, naming the
    file and the line): a key given twice (:class:`DuplicateKey`), an anchor, alias, merge key,
    tag or ``__use_yte__`` (:class:`NotData`). ``fast``: libyaml's parser when PyYAML has it (the
    same data, several times faster for a large file). YAML errors pass through."""
    with open(path, encoding="utf-8") as events, open(path, encoding="utf-8") as nodes:
        return _strict(_loader(fast), events, nodes, path)


def loads(text, name="<string>"):
    """The data of the YAML ``text`` (a value on a command line), read as :func:`load` reads a
    file; ``name`` stands for the file in a :class:`Refused`'s message."""
    return _strict(_loader(False), text, text, name)


def _strict(loader_class, events, nodes, name):
    """The data of ``nodes`` (a text or a file), once its ``events`` (the same, read a first time)
    show it is plain data and no mapping gives a key twice; only then are the values built."""
    found = _anchors_and_tags(loader_class(events))
    if found:  # refused before the nodes are composed: libyaml's composer recurses at every level
        raise NotData(name, found)
    loader = loader_class(nodes)
    try:
        node = loader.get_single_node()
        found = _merges_and_templates(node) if node is not None else []
        if found:
            raise NotData(name, found)
        if node is None:
            return None
        duplicated = duplicates(loader, node)
        if duplicated:
            raise DuplicateKey(name, duplicated)
        return loader.construct_document(node)
    finally:
        loader.dispose()
