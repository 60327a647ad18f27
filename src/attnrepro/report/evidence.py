"""The ledger's evidence for its round-off and stochastic deviations, in one call.

Two products hold it: the numerics sweep (``snakemake numerics``:
``results/numerics/ledger_numerics.csv``, which OpenBLAS kernel and NumPy code paths give
which digits) and the seed distributions (``snakemake seeds --configfile config/seeds.yaml``:
``results/seeds/seed_distribution.csv``, where each published training figure lies among
many seeds). :func:`reasons` reads whichever of them exists; :func:`reason_for` gives the
sentence for one claim, or the command that would produce its evidence.

    from attnrepro.report import evidence
    found = evidence.reasons("results/numerics/ledger_numerics.csv", "results/seeds/seed_distribution.csv")
    evidence.reason_for(claim, found)  # -> "published digits 4.441e-16 given by setting ... [results/...]"
"""

from pathlib import Path

from attnrepro.report import ledger_numerics, seed_distribution

NUMERICS_CSV = "results/numerics/ledger_numerics.csv"
SEEDS_CSV = "results/seeds/seed_distribution.csv"
MISSING = {
    "round-off": f"evidence: `snakemake --cores 2 numerics` writes {ledger_numerics.TABLE}",
    "stochastic": (
        f"evidence: `snakemake --cores 2 seeds --configfile config/seeds.yaml` writes "
        f"{seed_distribution.TABLE}; `snakemake --cores 2 numerics` writes {ledger_numerics.TABLE}"
    ),
}


def reasons(numerics_csv=NUMERICS_CSV, seeds_csv=SEEDS_CSV):
    """{claim id: evidence sentence(s)} from the products that exist (an absent one adds nothing).
    A claim in both gets both sentences, the seed distribution first."""
    out = {}
    seeds = seed_distribution.read(seeds_csv) if seeds_csv and Path(seeds_csv).is_file() else None
    sweep = ledger_numerics.read(numerics_csv) if numerics_csv and Path(numerics_csv).is_file() else None
    if seeds is not None and len(seeds):
        for claim_id, text in seed_distribution.reasons(seeds).items():
            out[claim_id] = text
    if sweep is not None and len(sweep):
        for claim_id, text in ledger_numerics.reasons(sweep).items():
            out[claim_id] = f"{out[claim_id]}; {text}" if claim_id in out else text
    return out


def reason_for(claim, found):
    """The evidence sentence for ``claim`` (a ledger.Claim, or anything with ``id`` and ``cls``):
    from ``found`` (:func:`reasons`), else the command that produces it (round-off and
    stochastic claims only), else ""."""
    if claim.id in found:
        return found[claim.id]
    return MISSING.get(claim.cls, "")


def annotate(table, claims, found):
    """The ledger ``table`` (ledger.evaluate) with the evidence appended to the reason of every
    round-off or stochastic claim that is not reproduced digit for digit."""
    by_id = {c.id: c for c in claims}
    out = table.copy()
    for i, row in out.iterrows():
        claim = by_id.get(row["id"])
        if claim is None or row["class"] not in MISSING or row["verdict"] == "reproduced":
            continue
        extra = reason_for(claim, found)
        out.at[i, "reason"] = "; ".join(p for p in (row["reason"], extra) if p)
    return out
