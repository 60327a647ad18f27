"""A table's or figure's builder, named as the catalog names it: ``"<module>:<function>"``.

The module is imported by that name (it comes from the catalog, through the rule's command line):
a rule declares it as a code input beside its entry's imports (workflow/rules/report.smk).
"""

import importlib

from attnrepro.run import usage

PACKAGE = "attnrepro.report.products"  # builders are "<module>:<function>" under it


def find(spec):
    """The function of a builder ``"<module>:<function>"`` under attnrepro.report.products; a
    UsageError (attnrepro.run.usage) for a malformed or unknown one."""
    module, sep, function = spec.partition(":")
    if not sep or not module or not function:
        raise usage.UsageError(f"--builder takes MODULE:FUNCTION, got {spec!r}")
    try:
        found = importlib.import_module(f"{PACKAGE}.{module}")
    except ModuleNotFoundError as error:
        if error.name != f"{PACKAGE}.{module}":  # a module it imports is missing: a bug
            raise
        raise usage.UsageError(f"--builder {spec}: no module {PACKAGE}.{module}") from None
    builder = getattr(found, function, None)
    if not callable(builder):
        raise usage.UsageError(f"--builder {spec}: no function {function} in {PACKAGE}.{module}")
    return builder


def qualified(spec):
    """The builder's full name, as a product's trail names it (render.trail)."""
    return f"{PACKAGE}.{spec}"
