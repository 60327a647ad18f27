"""One rule per number: a prose claim that restates table cells takes its verdict from them.

The prose often states again what a table prints: "0.32" for the cell 0.3221, "between 1.99 and
2.04" for the slope a table prints as 2.04, "95-98%" for the per-length cells of a table. Judged
each by its own rule, the same number could get two verdicts. Here the rule is stated once:

- the *cells* of a prose claim (its id holds ``.prose.``) are the claims outside the prose that
  read the same experiment, table and column with the same reduction and no ratio (``over``),
  selecting the same rows (:func:`cells`); with ``per`` (a range stated of every row), one cell
  per row: the cell's selection is the prose's with one value of ``per``;
- a prose claim with cells takes the least good of their verdicts (:data:`ORDER`), and its reason
  names each cell and its verdict; an exact or echo prose claim whose own digits differ from the
  run's value at its printed precision also counts its own verdict (the article would then restate
  its table wrongly, which is worth saying).

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
    """Whether claim ``cell`` reads what claim ``prose`` states (one row of it, with ``per``)."""
    a, b = cell.source, prose.source
    if PROSE in cell.id or a.get("over") or b.get("over") or a.get("per"):
        return False
    same = (a["experiment"], a.get("table", "main"), a["column"], _reduction(a))
    if same != (b["experiment"], b.get("table", "main"), b["column"], _reduction(b)):
        return False
    where, wanted = dict(a.get("where") or {}), dict(b.get("where") or {})
    if b.get("per"):
        if b["per"] not in where:
            return False
        where.pop(b["per"])
    return where == wanted


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
    """(verdict, reason) of prose claim ``prose`` from its cells' ``judged`` {id: (verdict, reason)}
    and its ``own`` (verdict, reason) by its own rule, which decides only an exact or echo digit
    mismatch."""
    listed = ", ".join(f"{cell_id}: {verdict}" for cell_id, (verdict, _) in judged.items())
    reason = f"restates the cells {listed}, and takes the least good of their verdicts (one rule per number)"
    verdicts = [verdict for verdict, _ in judged.values()]
    if prose.cls in ("exact", "echo") and own[0] == "differs":  # the article restates its table wrongly
        verdicts.append(own[0])
        reason += f"; its own digits differ: {own[1]}"
    return worst(verdicts), reason
