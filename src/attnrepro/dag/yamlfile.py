"""YAML files read strictly: a key given twice in one mapping is an error, never the last value.

PyYAML (and Snakemake, which reads ``--configfile`` with it) keeps the last of two equal keys
silently: ``train: {lr: 0.1, lr: 0.001}`` trains at 0.001 whatever the author meant. Here the
file is composed into nodes first, every mapping is checked, and only then are the values built,
by the same loader.
"""

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

MERGE = "tag:yaml.org,2002:merge"  # `<<: *anchor`: keys of the merged mapping may be overridden


class DuplicateKey(ValueError):
    """A YAML file gives one key twice in one mapping; the message names file, key and lines.
    ``lines``: one sentence per duplicated key."""

    def __init__(self, path, found):
        self.lines = [f"{path}, line {line}: key {key} given twice (first at line {first})"
                      for key, line, first in found]
        super().__init__("; ".join(self.lines))


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


def _loader(fast):
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader) if fast else yaml.SafeLoader


def load(path, fast=False):
    """The data of the YAML file ``path`` (safe types only), or :class:`DuplicateKey` naming the
    file, each duplicated key and both of its lines. ``fast``: libyaml's parser when PyYAML has
    it (the same data, several times faster for a large file). YAML errors pass through."""
    with open(path, encoding="utf-8") as fh:
        return _strict(_loader(fast)(fh), path)


def loads(text, name="<string>"):
    """The data of the YAML ``text`` (a value on a command line), read as :func:`load` reads a
    file; ``name`` stands for the file in a :class:`DuplicateKey`'s message."""
    return _strict(_loader(False)(text), name)


def _strict(loader, name):
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        found = duplicates(loader, node)
        if found:
            raise DuplicateKey(name, found)
        return loader.construct_document(node)
    finally:
        loader.dispose()
