"""Echoes by derivation: the claims whose value follows from the sizes or the definitions alone.

One rule decides, from what each experiment declares beside its ``run()``
(``EXPERIMENT["derived"]`` and ``EXPERIMENT["softmax"]``, :mod:`attnrepro.experiments.declared`),
never claim by claim. A claim is an echo when

1. it reads a column its experiment declares *derived* (a mask cell, a shape, a size or a count
   of the case's sizes), a ratio of two such columns, or a sum of them;
2. it is the sum of one row of a softmax (its row keys all fixed): 1 by definition;
3. it is one weight of a masked softmax that the mask forces: 0 where the mask forbids its key,
   1 where the mask allows its key alone in its row.

An echo is judged as exact and counted apart from the computed claims (the headline's), and
``config/published.yaml`` must class it so (:func:`check`): the file and the rule never disagree.
"""

from attnrepro.dag import plan

SOFTMAX_SUM = "the sum of one softmax row: 1 by definition"
MASKED = "a weight its mask forbids: 0 by definition"
ALONE = "the only weight its mask allows in its row: 1 by definition"


def _declared(source, field):
    """The experiment's declaration ``field`` for the source's table and column, or None."""
    experiment = plan.EXPERIMENTS.get(source["experiment"])
    key = f"{source.get('table', 'main')}.{source['column']}"
    return None if experiment is None else getattr(experiment, field).get(key)


def _row_fixed(source, rows):
    """Whether the source's ``where`` fixes each of ``rows`` to one value, and nothing else."""
    where = source.get("where") or {}
    return set(where) == set(rows) and not any(isinstance(v, list) for v in where.values())


def _forced(source, softmax, load):
    """Why one masked softmax weight is forced (MASKED, ALONE), or None; reads the mask's column."""
    where = source.get("where") or {}
    if softmax.get("mask") is None or source.get("reduce") not in (None, "single") or any(
            isinstance(v, list) for v in where.values()):
        return None
    frame = load(source["experiment"], source.get("table", "main"))
    cell = frame
    for key, value in where.items():
        cell = cell[cell[key] == value]
    if len(cell) != 1:
        return None
    mask = softmax["mask"]
    if not bool(cell[mask].iloc[0]):
        return MASKED
    row = frame
    for key in softmax["rows"]:
        row = row[row[key] == cell[key].iloc[0]]
    return ALONE if int(row[mask].sum()) == 1 else None


def derivation(claim, load):
    """Why ``claim``'s value follows from the sizes or a definition (a sentence), or None.
    ``load(experiment, table)`` reads a results table (rule 3 reads the mask)."""
    source = claim.source
    why = _declared(source, "derived")
    over = source.get("over")
    if why is not None and (over is None or _declared({**source, **over}, "derived") is not None):
        return why
    softmax = _declared(source, "softmax")
    if softmax is None or over is not None:
        return None
    if source.get("reduce") == "sum" and _row_fixed(source, softmax["rows"]):
        return SOFTMAX_SUM
    return _forced(source, softmax, load)


def check(claim, why):
    """Refuse a claim whose class in published.yaml disagrees with the rule (``why``: its derivation
    or None): an echo the rule derives must be classed echo (echo-derived), and a claim classed
    echo-derived must be one the rule derives."""
    if why is not None and (claim.cls != "echo" or claim.why != "echo-derived"):
        raise ValueError(f"claim {claim.id} in config/published.yaml: class {claim.cls}, but its value "
                         f"follows from the sizes or a definition ({why}): class it echo, why: echo-derived "
                         "(report.ledger.echoes)")
    if why is None and claim.why == "echo-derived":
        raise ValueError(f"claim {claim.id} in config/published.yaml: why: echo-derived, but no rule of "
                         "report.ledger.echoes derives it: declare its column in its experiment's "
                         "EXPERIMENT['derived'], or class it by what it computes")
