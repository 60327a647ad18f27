"""What the ledger takes from its evidence, in one call per product.

The numerics sweep's CSV (``results/numerics/ledger_numerics.csv``: which OpenBLAS kernel and
NumPy code paths give which digits, and what the host's native numerics give against the pin's)
and the listings' CSV (``results/listings/article_code.csv``: what the articles' own code prints
here) are appended to the reason of every deviation of a class they are cited for
(``attnrepro.evidence.CITED_FOR``: round-off, finite-difference, stochastic; :func:`found`,
:func:`annotate`); the listings' CSV also gives the ledger its column ``article_code``
(:func:`with_article_code`); the seed distribution's CSV (``results/seeds/seed_distribution.csv``:
where each published training figure lies among many seeds) is what the stochastic claims are
judged against (:func:`spread`, given to ``ledger.evaluate``; its sentence is the verdict's reason).

A reason cites a file only when the run holds it: the Markdown table beside the CSV the ledger read
(the ledger rule declares both as inputs, ``workflow/rules/report.smk``), else that CSV
(:func:`cited_file`). A product the run does not hold is never cited: the reason says what it
would tell and the command that makes it (:func:`reason_for`).

A product's evaluate module (pandas) is imported by name, only when its CSV is given: the ledger
rule declares it as a code input only when the config switches the product on
(``workflow/rules/evidence.smk``), so that editing it reruns no ledger that does not read it.

    table = ledger.evaluate(claims, load, citations.spread("results/seeds/seed_distribution.csv"))
    found = citations.found(numerics_csv="results/numerics/ledger_numerics.csv", runs=citations.runs(table))
    table = citations.annotate(table, claims, found, cited={"numerics"})

or all of it in one call, :func:`cite`.
"""

import importlib
from pathlib import Path

from attnrepro.evidence import LISTINGS, NUMERICS, PRODUCTS, SEEDS
from attnrepro.numerics import canonical

# what each product cited for a class would tell, said when the run does not hold it
TELLS = {"numerics": "which numerics give the published digits",
         "listings": "what the article's own code prints here"}
SWITCH = ("`snakemake --cores 2 --configfile config/evidence.yaml` makes them with the run, and the ledger "
          "cites them")


def cited_file(csv_path):
    """The file a reason cites for an evidence product read from ``csv_path``: the Markdown table
    its job writes beside it (an input of the ledger rule too) when it exists, else the CSV."""
    table = Path(csv_path).with_suffix(".md")
    return str(table if table.is_file() else csv_path)


def _cite(sentence, csv_path):
    return f"{sentence} [{cited_file(csv_path)}]"


def _makes(product):
    """How to make a product the run does not hold: what it tells, the command, the file it makes."""
    return f"{TELLS[product.name]} (`{product.build_command}` makes {product.paths['md']})"


def _read(path, product):
    if path is None:
        return None
    if not Path(path).is_file():
        raise FileNotFoundError(f"evidence product {path} does not exist")
    module = importlib.import_module(product.evaluate)
    return module, module.read(path)


def runs(table):
    """{claim id: (the pin, or None; its reproduced text)} of a ledger ``table`` with its column
    ``numerics`` (report.ledger.files.numerics_column): a claim whose files all ran the canonical
    numerics was computed under the pin, :data:`attnrepro.numerics.canonical.SETTING`."""
    return {row["id"]: (canonical.SETTING if row["numerics"] == "canonical" else None, row["reproduced"])
            for _, row in table.iterrows()}


def reasons(numerics_csv=None, claims=(), load=None, runs=None):
    """{claim id: evidence sentence, citing the sweep} from the numerics sweep's CSV (None: not
    part of the run); ``runs`` (:func:`runs`): what the run computed each claim under, against
    which the host's native numerics are set. Given ``load`` (the ledger's inputs), a sweep whose
    cases ran other parameters than the run's same cases is refused (io.InconsistentInputs)."""
    found = _read(numerics_csv, NUMERICS)
    if found is None:
        return {}
    module, sweep = found
    if load is not None:
        module.check_params(sweep, claims, load, numerics_csv)
    said = module.reasons(sweep, runs) if len(sweep) else {}
    return {i: _cite(sentence, numerics_csv) for i, sentence in said.items()}


def listing_reasons(listings_csv=None):
    """{claim id: what the article's own code prints here, citing the listings} from the listings'
    CSV (None: not part of the run)."""
    found = _read(listings_csv, LISTINGS)
    if found is None:
        return {}
    return {i: _cite(sentence, listings_csv) for i, sentence in found[0].reasons(found[1]).items()}


def found(numerics_csv=None, listings_csv=None, claims=(), load=None, runs=None):
    """{product: {claim id: evidence sentence}} of the products given (:func:`reasons`,
    :func:`listing_reasons`)."""
    return {"numerics": reasons(numerics_csv, claims, load, runs), "listings": listing_reasons(listings_csv)}


def cited(**csvs):
    """The products given to the ledger (``numerics_csv=...``, ``listings_csv=...``: None when absent)."""
    return {name.removesuffix("_csv") for name, path in csvs.items() if path}


def with_article_code(table, listings_csv=None):
    """The ledger ``table`` with column ``article_code`` after ``published``: what the articles' own
    code printed in this run's listings (empty where it prints no such number, or without them)."""
    values = {}
    if (read := _read(listings_csv, LISTINGS)) is not None:
        values = read[0].article_code(read[1])
    out = table.copy()
    timed = out.pop("article_code") if "article_code" in out.columns else [""] * len(out)
    # a time of the article's code, timed here beside ours (report.ledger.yardstick), before what it prints
    out.insert(out.columns.get_loc("published") + 1, "article_code",
               [mine or values.get(i, "") for i, mine in zip(out["id"], timed)])
    return out


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
    return module.Spread(table, _cite("", seeds_csv))


def _cited_for(cls):
    """The products whose sentences are appended to the reason of a claim of class ``cls``."""
    return [name for name, p in PRODUCTS.items() if cls in p.appended_to]


def reason_for(claim, found, cited=()):
    """The evidence sentences for ``claim`` (a ledger.Claim, or anything with ``id`` and ``cls``),
    product by product for a claim of a class they are cited for: its sentence in ``found``
    (:func:`found`), else what a product in ``cited`` lacks; then, of the products the run does not
    hold, what they would tell and how to make them; "" for another class."""
    products = _cited_for(claim.cls)
    parts, absent = [], []
    for p in products:
        if claim.id in found.get(p, {}):
            parts.append(found[p][claim.id])
        elif p in cited:
            parts.append(f"no row in the {p} evidence")
        else:
            absent.append(p)
    if absent:
        parts.append("not in this run: " + ", ".join(_makes(PRODUCTS[p]) for p in absent) + f"; {SWITCH}")
    return "; ".join(parts)


def annotate(table, claims, found, cited=()):
    """The ledger ``table`` (ledger.evaluate) with the evidence appended to the reason of every
    claim of a class it is cited for whose value the run has and does not reproduce digit for
    digit."""
    by_id = {c.id: c for c in claims}
    out = table.copy()
    for i, row in out.iterrows():
        claim = by_id.get(row["id"])
        if claim is None or not _cited_for(row["class"]) or row["verdict"] in ("reproduced", "missing"):
            continue
        extra = reason_for(claim, found, cited)
        out.at[i, "reason"] = "; ".join(p for p in (row["reason"], extra) if p)
    return out


def cite(table, claims, load=None, numerics_csv=None, listings_csv=None):
    """The ledger ``table`` (ledger.evaluate, with its column numerics) with its evidence: the
    sweep's and the listings' sentences appended to the reasons they are cited for (:func:`found`,
    :func:`annotate`), and column article_code (:func:`with_article_code`)."""
    said = found(numerics_csv, listings_csv, claims, load, runs(table))
    table = annotate(table, claims, said, cited(numerics_csv=numerics_csv, listings_csv=listings_csv))
    return with_article_code(table, listings_csv)
