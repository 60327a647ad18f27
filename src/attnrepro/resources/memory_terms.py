"""The terms of a memory estimate, and the sizes they are made of.

A *term* is ``(bytes, what, drivers)``: arrays (or rows) alive together, what they are
(``scores (B, T, T) float64``) and ``drivers``, {key: power} of the case's keys it grows
with (``{"B": 1, "T": 2}``), from which :mod:`attnrepro.dag.preflight` names the key to blame.
Pure Python, like the estimates that use it (:mod:`attnrepro.resources.memory`,
:mod:`attnrepro.resources.memory_decoder`).
"""

F64, F32, BOOL = 8, 4, 1
# bytes per row of a table built from Python dicts of up to 5 keys, while the DataFrame is built:
# the list's slot, the dict (192), its float and large int objects, the object and typed columns
ROW = 400  # (measured: 300-400)
MIB, GIB = 2**20, 2**30


def term(nbytes, what, **drivers):
    """Arrays alive together: ``nbytes`` in all; ``drivers`` {key: power} of the case's keys."""
    return (nbytes, what, drivers)


def total(terms):
    """Bytes of a list of terms."""
    return sum(t[0] for t in terms)


def largest(*phases):
    """The phase (list of terms) with the most bytes: phases whose arrays do not coexist."""
    return max(phases, key=total)


def largest_value(value):
    """The largest of a list key's values (a size swept over), or the value itself."""
    return max(value) if isinstance(value, list) else value
