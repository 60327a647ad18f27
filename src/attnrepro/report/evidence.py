"""The ledger's evidence for its round-off and stochastic claims, in one call.

Two products hold it: the numerics sweep (``results/numerics/ledger_numerics.csv``: which
OpenBLAS kernel and NumPy code paths give which digits), cited in the reason of every
round-off or stochastic deviation, and the seed distribution
(``results/seeds/seed_distribution.csv``: where each published training figure lies among
many seeds), which the stochastic claims are judged against (:func:`spread`, given to
``ledger.evaluate``; its sentence is the verdict's reason, not appended here). Each is a
named target (``numerics``, ``seeds``); a config switch (``numerics.sweep``, off by default;
``seed_distribution.build``, on by default; both on in ``config/evidence.yaml``) adds it to
the default target and declares its CSV as an input of the ledger.

    found = evidence.reasons(numerics_csv="results/numerics/ledger_numerics.csv")
    table = ledger.evaluate(claims, load, evidence.spread("results/seeds/seed_distribution.csv"))
    table = evidence.annotate(table, claims, found, cited={"numerics"})
"""

from pathlib import Path

from attnrepro.report import catalog, ledger_numerics, seed_distribution

SWITCH = "`snakemake --cores 2 --configfile config/evidence.yaml` makes the ledger cite it"
BUILDS = {
    name: f"`snakemake --cores 2 {target}` writes {catalog.EVIDENCE_PRODUCTS[name]['md']}"
    for name, (target, _) in catalog.EVIDENCE.items()
}
# the products whose sentences are appended to the reason of a claim of each class (the seed
# distribution is not among them: it decides the stochastic verdicts, see ledger.judge)
EVIDENCE = {"round-off": ("numerics",), "stochastic": ("numerics",)}


def _read(path, reader):
    if path is None:
        return None
    if not Path(path).is_file():
        raise FileNotFoundError(f"evidence product {path} does not exist")
    return reader(path)


def reasons(numerics_csv=None):
    """{claim id: evidence sentence} from the numerics sweep's CSV (None: not part of the run)."""
    sweep = _read(numerics_csv, ledger_numerics.read)
    return ledger_numerics.reasons(sweep) if sweep is not None and len(sweep) else {}


def spread(seeds_csv=None):
    """The seed distribution (a seed_distribution.Spread) that the ledger judges its stochastic
    claims against, from its CSV; None when the run has none (the ledger then says so)."""
    table = _read(seeds_csv, seed_distribution.read)
    return None if table is None else seed_distribution.Spread(table)


def reason_for(claim, found, cited=()):
    """The evidence sentence for ``claim`` (a ledger.Claim, or anything with ``id`` and ``cls``):
    from ``found`` (:func:`reasons`); else, for a round-off or stochastic claim, what the
    products in ``cited`` lack and the commands that build the others; else ""."""
    if claim.id in found:
        return found[claim.id]
    products = EVIDENCE.get(claim.cls, ())
    if not products:
        return ""
    lacking = [p for p in products if p in cited]
    absent = [p for p in products if p not in cited]
    parts = [f"no row in the {p} evidence" for p in lacking]
    if absent:
        parts.append("evidence: " + "; ".join(BUILDS[p] for p in absent) + f" ({SWITCH})")
    return "; ".join(parts)


def annotate(table, claims, found, cited=()):
    """The ledger ``table`` (ledger.evaluate) with the evidence appended to the reason of every
    round-off or stochastic claim that is not reproduced digit for digit."""
    by_id = {c.id: c for c in claims}
    out = table.copy()
    for i, row in out.iterrows():
        claim = by_id.get(row["id"])
        if claim is None or row["class"] not in EVIDENCE or row["verdict"] == "reproduced":
            continue
        extra = reason_for(claim, found, cited)
        out.at[i, "reason"] = "; ".join(p for p in (row["reason"], extra) if p)
    return out
