"""The pins of a pip lock (``requirements/*.lock``, requirements/README.md), read as pip reads them.

A lock line is ``name==version``, optionally followed by `` \\`` and ``--hash`` lines (``make lock``
writes them with hashes); comments and option lines (``-c``, ``--hash``) pin nothing.

Read by the code that reads the software of a run: :mod:`attnrepro.dag.software` (each rule's
pins) and :mod:`attnrepro.evidence.listings_run` (a listing's packages outside the lock). Here,
beside :mod:`attnrepro.run.provenance` (the versions a job ran), because ``run`` is the highest
layer both can import; named for the pip lock, apart from the run's own lock (``run.lock``).
"""

import re
from pathlib import Path


def normal(name):
    """A distribution's normalised name (PEP 503): ``PyYAML`` and ``pyyaml`` are one."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path):
    """{normalised name: version} of every ``name==version`` line of the lock ``path``; a line that
    pins otherwise (``>=``, no version) maps to None."""
    found = {}
    for line in Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].strip().removesuffix("\\").strip()
        if not line or line.startswith("-"):
            continue
        name, _, version = re.split(r"[\[;\s]", line, maxsplit=1)[0].partition("==")
        found[normal(re.split(r"[=<>!~]", name, maxsplit=1)[0])] = version or None
    return found
