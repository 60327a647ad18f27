"""Reading a file that someone else wrote, its cost bounded before it is paid.

An archive given to ``python -m attnrepro verify`` is untrusted: its text files may be larger than
any run writes, hold millions of lines, or nest JSON a hundred thousand levels deep (Python's
decoder then raises RecursionError, and any recursive walk of what it returned may too). Here a
file is read only up to its cap (one byte more tells that it is larger), its lines are counted
before they are split, and JSON is decoded, then walked once without recursion to check its depth.
A bound that is passed raises :class:`Exceeded`, a ValueError whose one sentence names the file:
the caller refuses the file (a file merely malformed raises the usual ValueError or OSError).
"""

import json
from pathlib import Path

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


class Exceeded(ValueError):
    """A file passes a bound (its size, lines or nesting): one sentence naming it."""


def shown(size):
    """A byte count as people read it: 1.5 GiB, 12.0 MiB, 300 bytes."""
    for unit, factor in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if size >= factor:
            return f"{size / factor:.1f} {unit}"
    return f"{size} bytes"


def read_bytes(path, max_bytes, name=None):
    """The bytes of ``path``, or :class:`Exceeded` when it holds more than ``max_bytes``: at most
    ``max_bytes + 1`` bytes are read, whatever the file's size."""
    with open(path, "rb") as fh:
        data = fh.read(max_bytes + 1)  # pragma: no mutate (equivalent: + 2 reads a byte more, refuses alike)
    if len(data) > max_bytes:
        raise Exceeded(f"{name or Path(path).name} holds more than {shown(max_bytes)}")
    return data


def read_lines(path, max_bytes, max_lines, name=None):
    """The lines of the UTF-8 text file ``path`` (as ``str.splitlines`` gives them), or
    :class:`Exceeded` when it holds more than ``max_bytes`` or more than ``max_lines`` lines (counted
    before any is split)."""
    name = name or Path(path).name
    data = read_bytes(path, max_bytes, name)
    if data.count(b"\n") + (bool(data) and not data.endswith(b"\n")) > max_lines:  # a last line unended
        raise Exceeded(f"{name} holds more than {max_lines:,} lines")
    return data.decode("utf-8").splitlines()  # pragma: no mutate (equivalent: "UTF-8" is the same codec)


def depth(value):
    """How deep lists and dicts nest in ``value`` (a scalar: 0, ``[]``: 1, ``{"a": [1]}``: 2), by
    a walk without recursion, each container once."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        value, level = todo.pop()
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, list):
            deepest = max(deepest, level)
            todo += [(item, level + 1) for item in value]
    return deepest


def loads_json(data, max_depth, name="JSON"):
    """The JSON ``data`` (bytes or text) decoded, or :class:`Exceeded` when its lists and objects
    nest more than ``max_depth`` deep (a ValueError when it is not JSON)."""
    try:
        value = json.loads(data)
        deep = depth(value) > max_depth
    except RecursionError:  # deeper than the interpreter's stack: far beyond max_depth
        deep = True
    if deep:
        raise Exceeded(f"{name} nests lists or objects more than {max_depth} deep")
    return value


def read_json(path, max_bytes, max_depth, name=None):
    """The JSON file ``path`` decoded, within ``max_bytes`` and ``max_depth`` (:class:`Exceeded`)."""
    name = name or Path(path).name
    return loads_json(read_bytes(path, max_bytes, name), max_depth, name)
