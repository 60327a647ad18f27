"""config/published.yaml against its JSON schema, ``workflow/schemas/published.schema.yaml``.

The schema is checked by the strict Draft 2020-12 validator (:func:`attnrepro.dag.validator.validator`)
before any claim is built, so that a misspelt key (``tolerence: 1.0e-14``) is refused rather than
dropped, a class is one of :data:`attnrepro.report.ledger.claims.CLASSES`, and each class has the
keys it needs (a round-off claim its tolerance, a machine-bound claim that is not a raw time its
band, an echo, a round-off and a machine-bound claim the name of their rationale) and none it does
not. Every problem is named by file, claim id and key.
"""

import hashlib
import re
from pathlib import Path

from attnrepro import paths
from attnrepro.dag import validator

SCHEMA = paths.REPO / "workflow" / "schemas" / "published.schema.yaml"
READS = ("workflow/schemas/published.schema.yaml",)  # SCHEMA: an input of every job checking the claims
SHOWN = 20  # problems listed in one error; the rest counted
_FOLLOWED = set()  # (schema's bytes, file's SHA-256) of the files found to follow it (check)


def problems(data, schema_path=SCHEMA):
    """One sentence per violation of the schema by ``data`` (a published.yaml as read), in file
    order, each naming the claim (id and index) and the key."""
    errors = sorted(validator.validator(schema_path).iter_errors(data), key=lambda e: _order(e.absolute_path))
    return [f"{_where(data, list(e.absolute_path))}: {_message(e)}" for e in errors]


def check(data, path, schema_path=SCHEMA):
    """Raise ValueError listing every violation of the schema (:func:`problems`) by ``data``, the
    file ``path`` as read; None when there is none. A file checked once in a process (the same
    bytes, the same schema) is not checked again: the ledger job reads it for its claims and for
    its speed rule, and validating 574 claims takes about 0.15 s of CPU."""
    key = (Path(schema_path).read_bytes(), hashlib.sha256(Path(path).read_bytes()).hexdigest())
    if key in _FOLLOWED:
        return
    found = problems(data, schema_path)
    if found:
        more = f"\n  and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
        listed = "\n  ".join(found[:SHOWN])
        raise ValueError(f"{path} does not follow {_shown(schema_path)}:\n  {listed}{more}")
    _FOLLOWED.add(key)


def _order(at):
    """A key path as a sort key: indices as numbers (claims[2] before claims[10]), names as text; an
    index and a name at one place (a mapping whose keys YAML read as numbers and as text) compare
    without a TypeError, the numbers first."""
    return [(INDEX, p) if isinstance(p, int) else (NAME, str(p)) for p in at]


INDEX = 0  # the tag of an index in a sort key (_order): before every name
NAME = 1  # pragma: no mutate (equivalent: any tag above INDEX orders the names after the indices)


def _shown(schema_path):
    try:
        return str(schema_path.relative_to(paths.REPO))
    except ValueError:
        return str(schema_path)


def _where(data, at):
    """``claim <id> (claims[i]), key a.b`` for a place inside a claim, else the key path."""
    if len(at) >= 2 and at[0] == "claims" and isinstance(at[1], int):
        entry = data["claims"][at[1]]
        named = entry.get("id") if isinstance(entry, dict) else None
        claim = f"claim {named} (claims[{at[1]}])" if isinstance(named, str) else f"claims[{at[1]}]"
        return claim + (f", key {validator.key(at[2:])}" if at[2:] else "")
    return f"key {validator.key(at)}" if at else validator.key(at)


def _message(error):
    """The validator's message, said for this file: an unknown key by name with the keys allowed;
    a key of another class, or one its class needs, with the rule's description."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted(schema.get("properties") or {})
        unknown = [k for k in error.instance if k not in allowed and not _patterned(schema, k)]
        if unknown and allowed:
            return (f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
                    f"(the keys are: {', '.join(allowed)})")
    described = " ".join(str(schema.get("description", "")).split())
    if error.validator in ("const", "enum") and described:  # a key of one class (dependentSchemas)
        return f"{error.message} ({described})"
    if error.validator == "required" and described and "properties" not in schema:  # a class's rule
        return f"{error.message} ({described})"
    return error.message


def _patterned(schema, key):
    return any(re.search(p, str(key)) for p in schema.get("patternProperties") or {})
