"""What the ledger takes from its evidence, in one call per product.

The numerics sweep's CSV (``results/numerics/ledger_numerics.csv``: which OpenBLAS kernel and
NumPy code paths give which digits) is cited in the reason of every round-off or stochastic
deviation (:func:`reasons`, :func:`annotate`); the seed distribution's CSV
(``results/seeds/seed_distribution.csv``: where each published training figure lies among many
seeds) is what the stochastic claims are judged against (:func:`spread`, given to
``ledger.evaluate``; its sentence is the verdict's reason, not appended here). A product the run
does not build is named with the command that builds it.

A product's evaluate module (pandas) is imported by name, only when its CSV is given: the ledger
rule declares it as a code input only when the config switches the product on
(``workflow/rules/evidence.smk``), so that editing it reruns no ledger that does not read it.

    found = citations.reasons(numerics_csv="results/numerics/ledger_numerics.csv")
    table = ledger.evaluate(claims, load, citations.spread("results/seeds/seed_distribution.csv"))
    table = citations.annotate(table, claims, found, cited={"numerics"})
"""

import importlib
from pathlib import Path

from attnrepro.evidence import NUMERICS, PRODUCTS, SEEDS

SWITCH = "`snakemake --cores 2 --configfile config/evidence.yaml` makes the ledger cite it"


def _builds(product):
    return f"`{product.build_command}` writes {product.paths['md']}"


def _read(path, product):
    if path is None:
        return None
    if not Path(path).is_file():
        raise FileNotFoundError(f"evidence product {path} does not exist")
    module = importlib.import_module(product.evaluate)
    return module, module.read(path)


def reasons(numerics_csv=None, claims=(), load=None):
    """{claim id: evidence sentence} from the numerics sweep's CSV (None: not part of the run).
    Given ``load`` (the ledger's inputs), a sweep whose cases ran other parameters than the run's
    same cases is refused (io.InconsistentInputs)."""
    found = _read(numerics_csv, NUMERICS)
    if found is None:
        return {}
    module, sweep = found
    if load is not None:
        module.check_params(sweep, claims, load, numerics_csv)
    return module.reasons(sweep) if len(sweep) else {}


def spread(seeds_csv=None, load=None):
    """The seed distribution (a seeds_evaluate.Spread) that the ledger judges its stochastic
    claims against, from its CSV; None when the run has none (the ledger then says so). Given
    ``load`` (the ledger's inputs), a distribution of trainings with other parameters than the
    run's is refused (io.InconsistentInputs)."""
    found = _read(seeds_csv, SEEDS)
    if found is None:
        return None
    module, table = found
    if load is not None:
        module.check_params(table, load, seeds_csv)
    return module.Spread(table)


def _cited_for(cls):
    """The products whose sentences are appended to the reason of a claim of class ``cls``."""
    return [name for name, p in PRODUCTS.items() if cls in p.appended_to]


def reason_for(claim, found, cited=()):
    """The evidence sentence for ``claim`` (a ledger.Claim, or anything with ``id`` and ``cls``):
    from ``found`` (:func:`reasons`); else, for a round-off or stochastic claim, what the
    products in ``cited`` lack and the commands that build the others; else ""."""
    if claim.id in found:
        return found[claim.id]
    products = _cited_for(claim.cls)
    if not products:
        return ""
    lacking = [p for p in products if p in cited]
    absent = [p for p in products if p not in cited]
    parts = [f"no row in the {p} evidence" for p in lacking]
    if absent:
        parts.append("evidence: " + "; ".join(_builds(PRODUCTS[p]) for p in absent) + f" ({SWITCH})")
    return "; ".join(parts)


def annotate(table, claims, found, cited=()):
    """The ledger ``table`` (ledger.evaluate) with the evidence appended to the reason of every
    round-off or stochastic claim that is not reproduced digit for digit."""
    by_id = {c.id: c for c in claims}
    out = table.copy()
    for i, row in out.iterrows():
        claim = by_id.get(row["id"])
        if claim is None or not _cited_for(row["class"]) or row["verdict"] == "reproduced":
            continue
        extra = reason_for(claim, found, cited)
        out.at[i, "reason"] = "; ".join(p for p in (row["reason"], extra) if p)
    return out
