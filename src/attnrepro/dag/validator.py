"""The strict JSON-schema validator of the config and the claims, and how a message names a key.

Draft 2020-12, where an integer is a Python int and ``pattern``'s ``$`` is the end of the string
(:func:`validator`). Its own module, so that a job that checks the claims (attnrepro.report.ledger.schema)
imports it without the config's validation, which imports the plan.
"""

import functools
import re
from pathlib import Path


def shown(name, width=40):
    """A name as a key path shows it: itself; its repr if it holds a control character;
    cut to ``width`` characters, with its length, if longer."""
    text = name if name.isprintable() else repr(name)
    return text if len(text) <= width else f"{text[:width]}...({len(name)} characters)"


def key(path):
    """A key path as a message names it: ``train.lengths[2]``; ``(top level)`` for none."""
    out = ""
    for part in path:
        if isinstance(part, int) and not isinstance(part, bool):
            out += f"[{part}]"
        else:
            out += f".{shown(str(part))}" if out else shown(str(part))
    return out or "(top level)"


def _pattern(validator, pattern, instance, schema):
    """JSON Schema's ``pattern`` with ECMA-262's ``$``: the end of the string. Python's ``$``
    also matches before a final newline, so "name\\n" would match ``^[a-z]+$``."""
    from jsonschema import ValidationError

    if not validator.is_type(instance, "string"):
        return
    match = re.search(pattern, instance)
    anchored = pattern.endswith("$") and not pattern.endswith("\\$")
    if match is None or (anchored and match.end() != len(instance)):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _validator(schema):
    """A Draft 2020-12 validator where an integer is a Python int: JSON Schema counts 1.0 as an
    integer, which would reach a job as a float (``range(60.0)``, a case named ``seed1.0``)."""
    import jsonschema

    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine("integer", lambda _, x: type(x) is int)
    strict = jsonschema.validators.extend(base, validators={"pattern": _pattern}, type_checker=checker)
    return strict(schema)


def validator(schema_path):
    """The strict validator (:func:`_validator`) of the JSON schema file ``schema_path``; built once
    per schema text (config/published.yaml is checked by every job that reads its claims)."""
    return _compiled(Path(schema_path).read_text())


@functools.lru_cache(maxsize=8)
def _compiled(text):
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML has it: the same data
    return _validator(yaml.load(text, Loader=loader))
