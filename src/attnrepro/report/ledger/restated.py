"""One rule per number: a prose claim that restates table cells takes its verdict from them.

The prose often states again what a table prints: "0.32" for the cell 0.3221, "between 1.99 and
2.04" for the slope a table prints as 2.04, "95-98%" for the per-length cells of a table. Judged
each by its own rule, the same number could get two verdicts. Here the rule is stated once:

- the *cells* of a prose claim (its id holds ``.prose.``) are the claims outside the prose that
  read the same experiment, table and column with the same reduction and no ratio (``over``),
  selecting the same rows (:func:`cells`);
- a prose claim with cells takes the least good of their verdicts (:data:`ORDER`), and its reason
  names each cell and its verdict; an exact or echo prose claim whose own digits differ from the
  run's value at its printed precision also counts its own verdict (the article would then restate
  its table wrongly, which is worth saying). The verdict that decided is the first of the least good
  (:func:`judge` names it): its window is the one the ledger shows for the prose claim.

A range stated of every row (``per``: "0.987 to 0.995" over the lengths) restates no cell: its
legend states its own rule, every row's statistic inside the range (ledger.stochastic.rows), and
that rule judges it, the range its window.

So a prose claim is never judged stricter or looser than the cells it restates.
"""

PROSE = ".prose."
# verdicts from the best to the least good; a name not listed ranks after every listed one
ORDER = ("reproduced", "within tolerance", "disturbed", "inconclusive", "other parameters", "differs",
         "missing")


def _rank(verdict):
    return ORDER.index(verdict) if verdict in ORDER else len(ORDER)


def worst(verdicts):
    """The least good of ``verdicts`` (an iterable of verdict names)."""
    return max(verdicts, key=_rank)


def _reduction(source):
    return source.get("reduce") if source.get("reduce") not in (None, "single") else None


def _reads_as(cell, prose):
    """Whether claim ``cell`` reads what claim ``prose`` states (a range over rows, ``per``: nothing)."""
    a, b = cell.source, prose.source
    if PROSE in cell.id or a.get("over") or b.get("over") or a.get("per") or b.get("per"):
        return False
    same = (a["experiment"], a.get("table", "main"), a["column"], _reduction(a))
    if same != (b["experiment"], b.get("table", "main"), b["column"], _reduction(b)):
        return False
    return dict(a.get("where") or {}) == dict(b.get("where") or {})


def cells(prose, claims):
    """The claims of ``claims`` that ``prose`` restates ([] when it restates none or is no prose)."""
    if PROSE not in prose.id:
        return []
    return [c for c in claims if _reads_as(c, prose)]


def restatements(claims):
    """{prose claim id: [cell claim ids]} of every prose claim that restates cells."""
    found = {c.id: [cell.id for cell in cells(c, claims)] for c in claims}
    return {k: v for k, v in found.items() if v}


def judge(prose, own, judged):
    """(verdict, reason, decider) of prose claim ``prose`` from its cells' ``judged`` {id: (verdict,
    reason)} and its ``own`` (verdict, reason) by its own rule, which decides only an exact or echo
    digit mismatch. ``decider``: the id of the cell whose verdict decided (the first of the least
    good), or None when its own verdict did (a digit mismatch worse than every cell's)."""
    listed = ", ".join(f"{cell_id}: {verdict}" for cell_id, (verdict, _) in judged.items())
    reason = f"restates the cells {listed}, and takes the least good of their verdicts (one rule per number)"
    ranked = [(verdict, cell_id) for cell_id, (verdict, _) in judged.items()]
    if prose.cls in ("exact", "echo") and own[0] == "differs":  # the article restates its table wrongly
        ranked.append((own[0], None))
        reason += f"; its own digits differ: {own[1]}"
    verdict = worst(v for v, _ in ranked)
    return verdict, reason, next(cell_id for v, cell_id in ranked if v == verdict)
