"""The ledger's evidence for its round-off, finite-difference and stochastic claims: one record per product.

- The **numerics sweep** reruns the round-off-sensitive cases (config ``numerics.cases``) under
  every numerics setting this machine accepts (an OpenBLAS kernel x a NumPy CPU-feature mask,
  :mod:`attnrepro.numerics.canonical`) and writes which settings give which published digits; the ledger
  cites it in the reason of every deviation of a class in :data:`CITED_FOR`.
- The **seed distribution** trains the sort grid over many seeds and places each published
  training figure among them; the ledger judges its stochastic claims by it.
- The **listings** run the articles' own code, extracted from their text, verbatim, one session per
  article, and compare what it prints with the published output, number by number; the ledger
  shows, claim by claim, what the article's code gives here beside the published and reproduced
  values, and cites it in the reason of every deviation of a class in :data:`CITED_FOR`.

Each product is one :class:`EvidenceProduct`: its Snakemake target, the config switch that adds it
to the default run and its CSV to the ledger's inputs, its paths and captions, the ledger's option
that reads it, and its modules. Pure Python, no import of the plan: Snakemake reads this to build
the DAG (``workflow/rules/evidence.smk``), and the jobs that read it import no more than this.

The modules, each product split into what computes its table and what writes it; those of the
report's side are in :mod:`attnrepro.report.evidence_tables`, this package keeps the declarations and
the run's side:

- :mod:`~attnrepro.evidence.sweep`: the sweep's run side (settings of the config, the probe
  ``python -m attnrepro.jobs.sweep_probe``, the columns a sweep job adds);
- :mod:`~attnrepro.dag.sweep_plan`: the sweep's jobs and files (read by Snakemake; imports
  :mod:`attnrepro.dag.plan`);
- :mod:`~attnrepro.report.evidence_tables.numerics_evaluate`,
  :mod:`~attnrepro.report.evidence_tables.numerics_render`: the sweep judged claim by claim with
  the ledger's rules (pandas), and its CSV, Markdown and SVG;
- :mod:`~attnrepro.report.evidence_tables.seeds_evaluate`,
  :mod:`~attnrepro.report.evidence_tables.seeds_render`: each published figure placed among the
  seeds (pandas), and its CSV, Markdown and SVG;
- :mod:`~attnrepro.articles.listings`, :mod:`~attnrepro.evidence.listings_run`: the listings
  read from the articles, the job that runs one article's (in the interpreter of
  :mod:`attnrepro.articles.bounded`);
- :mod:`~attnrepro.report.evidence_tables.listings_evaluate`,
  :mod:`~attnrepro.report.evidence_tables.listings_render`: the printed output against the
  published one (pandas), and its CSVs, Markdown and SVG;
- :mod:`~attnrepro.report.evidence_tables.citations`: what the ledger takes from them.
"""

from dataclasses import dataclass

from attnrepro import paths

FORMATS = ("csv", "md", "svg")


@dataclass(frozen=True)
class EvidenceProduct:
    name: str  # the key of the ledger's evidence inputs
    title: str  # as the index and the HTML report name it
    target: str  # the rule that builds it: `snakemake --cores 2 <target>`
    switch: str  # "<section>.<key>" of the config: true adds it to `snakemake` and to the ledger
    folder: str
    stem: str  # its files: <folder>/<stem>.{csv,md,svg}; the table's caption workflow/report/<stem>.rst
    figure_caption: str  # the SVG's caption: workflow/report/<figure_caption>.rst
    ledger_option: str  # the option of the ledger job that reads its CSV
    evaluate: str  # the module that computes its table (pandas) and reads its CSV back
    render: str  # the module that writes its CSV, Markdown and SVG
    appended_to: tuple = ()  # claim classes whose deviations' reasons cite it

    @property
    def paths(self):
        return {key: paths.evidence_path(self.folder, self.stem, key) for key in FORMATS}

    @property
    def captions(self):
        """{format: caption name under workflow/report/}."""
        return {"csv": self.stem, "md": self.stem, "svg": self.figure_caption}

    @property
    def log(self):
        return paths.report_log(self.stem)

    @property
    def build_command(self):
        return f"snakemake --cores 2 {self.target}"

    def enabled(self, config):
        """Whether the config's switch adds it to the default run and to the ledger's inputs."""
        section, key = self.switch.split(".")
        return bool((config.get(section) or {}).get(key))


# the claim classes whose digits move with the numerics: the sweep and the listings are cited for them
CITED_FOR = ("round-off", "finite-difference", "stochastic")
NUMERICS = EvidenceProduct(
    name="numerics", title="Numerics sweep", target="numerics", switch="numerics.sweep",
    folder=paths.SWEEP_ROOT, stem="ledger_numerics", figure_caption="ledger_numerics_grid",
    ledger_option="--numerics-evidence", evaluate="attnrepro.report.evidence_tables.numerics_evaluate",
    render="attnrepro.report.evidence_tables.numerics_render", appended_to=CITED_FOR,
)
SEEDS = EvidenceProduct(
    name="seeds", title="Seed distributions", target="seeds", switch="seed_distribution.build",
    folder=paths.SEEDS, stem="seed_distribution", figure_caption="seed_distribution_points",
    ledger_option="--seed-evidence", evaluate="attnrepro.report.evidence_tables.seeds_evaluate",
    render="attnrepro.report.evidence_tables.seeds_render",
)
LISTINGS = EvidenceProduct(
    name="listings", title="The articles' own code", target="listings", switch="listings.build",
    folder=paths.LISTINGS, stem="article_code", figure_caption="article_code_listings",
    ledger_option="--listings-evidence", evaluate="attnrepro.report.evidence_tables.listings_evaluate",
    render="attnrepro.report.evidence_tables.listings_render", appended_to=CITED_FOR,
)
PRODUCTS = {p.name: p for p in (NUMERICS, SEEDS, LISTINGS)}


def enabled(config):
    """{name: product} of the evidence products the config switches on."""
    return {name: p for name, p in PRODUCTS.items() if p.enabled(config)}
