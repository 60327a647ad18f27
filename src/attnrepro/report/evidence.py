"""The ledger's evidence for its round-off and stochastic deviations, in one call.

Two products hold it: the numerics sweep (``results/numerics/ledger_numerics.csv``: which
OpenBLAS kernel and NumPy code paths give which digits) and the seed distribution
(``results/seeds/seed_distribution.csv``: where each published training figure lies among
many seeds). Each is a named target (``numerics``, ``seeds``); a config switch
(``numerics.sweep``, ``seed_distribution.build``; both in ``config/evidence.yaml``) adds it
to the default target and declares its CSV as an input of the ledger, which then cites it.

    found = evidence.reasons(numerics_csv="results/numerics/ledger_numerics.csv")
    table = evidence.annotate(table, claims, found, cited={"numerics"})
"""

from pathlib import Path

from attnrepro.report import catalog, ledger_numerics, seed_distribution

SWITCH = "`snakemake --cores 2 --configfile config/evidence.yaml` makes the ledger cite it"
BUILDS = {
    name: f"`snakemake --cores 2 {target}` writes {catalog.EVIDENCE_PRODUCTS[name]['md']}"
    for name, (target, _) in catalog.EVIDENCE.items()
}
# the products that hold evidence for a claim of each class, the first one first
EVIDENCE = {"round-off": ("numerics",), "stochastic": ("seeds", "numerics")}


def _read(path, reader):
    if path is None:
        return None
    if not Path(path).is_file():
        raise FileNotFoundError(f"evidence product {path} does not exist")
    return reader(path)


def reasons(numerics_csv=None, seeds_csv=None):
    """{claim id: evidence sentence(s)} from the products given (None: not part of the run).
    A claim in both gets both sentences, the seed distribution's first."""
    out = {}
    seeds = _read(seeds_csv, seed_distribution.read)
    sweep = _read(numerics_csv, ledger_numerics.read)
    if seeds is not None and len(seeds):
        out.update(seed_distribution.reasons(seeds))
    if sweep is not None and len(sweep):
        for claim_id, text in ledger_numerics.reasons(sweep).items():
            out[claim_id] = f"{out[claim_id]}; {text}" if claim_id in out else text
    return out


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
