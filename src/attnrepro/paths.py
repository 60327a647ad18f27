"""Where things are: the repository, and every results path of a run, as plain strings.

The one module of result paths: the rules (``workflow/rules/*.smk``), the plan, the report, the
crate and the editions build every path under ``results/`` with a constant or a function of this
module, and read one back with :func:`parse_output` (its experiment, table and case) or
:func:`parse_result` (all that an experiment's table's path names: its article too, and the
folder and numerics setting it lies under). Pure Python, importing nothing from attnrepro (the
bottom layer of ``.importlinter``): Snakemake and every job import it.

    results/data/<article>/<experiment>/<case>[.<table>].parquet        an experiment's tables
    results/seeds/data/001/train/<case>[.<table>].parquet               the seed distribution's
                                                                        other trainings
    results/numerics/<setting>/data/<article>/<experiment>/<case>...    the numerics sweep's
    results/numerics/settings.json                                      the sweep's probe
    results/{numerics,seeds,listings}/<stem>.{csv,md,svg}               the evidence
    results/listings/runs/<article>.json, results/listings/listings.csv the listings
    results/tables/<name>.{md,csv}, results/figures/<name>.svg          the products
    results/ledger.csv, results/LEDGER.md, results/speed.csv            the ledger
    results/articles/<article>.html                                     the annotated editions
    results/README.md, results/config.resolved.yaml                     the index, the config
    results/logs/..., results/benchmarks/...                            each job's log, benchmark
    results/archive/attnrepro-results-<sha>.tar.gz                      the archive

A job reads what a results path names from the path alone (:func:`parse_output`), without the
experiment registry of :mod:`attnrepro.dag.plan`, which Snakemake reads to build the DAG: editing the
plan then reruns no job that does not use it. A table name is an identifier
(``plan.Experiment.tables``, never ``main`` after a dot); a case name that holds a dot holds it in
a number (``eps-0.0001``), so what follows its last dot is never one
(``tests/test_code_inputs.py`` checks that :func:`parse_output` inverts every path the plan builds
for the shipped configs, ``tests/test_crate.py`` that the archive's crate records them so).
"""

from pathlib import Path, PurePosixPath
from typing import NamedTuple

SRC = Path(__file__).resolve().parents[1]  # the folder that holds the package
REPO = SRC.parent  # the repository (the workflow's folder)
RESULTS = "results"

# ---- the experiments' data --------------------------------------------------------------------
DATA = f"{RESULTS}/data"
SEEDS = f"{RESULTS}/seeds"  # the seed distribution: its other trainings' data, its evidence
SWEEP_ROOT = f"{RESULTS}/numerics"  # the numerics sweep's data: results/numerics/<setting>/data/...
SETTINGS_FILE = f"{SWEEP_ROOT}/settings.json"  # the probe: the settings this machine runs
LISTINGS = f"{RESULTS}/listings"  # the articles' own code, run here
LISTINGS_TABLE = f"{LISTINGS}/listings.csv"  # one row per listing (article_code.csv: per claim)

# ---- the report -------------------------------------------------------------------------------
TABLES = f"{RESULTS}/tables"
FIGURES = f"{RESULTS}/figures"
LEDGER_CSV = f"{RESULTS}/ledger.csv"
LEDGER_MD = f"{RESULTS}/LEDGER.md"
# the ledger's speed factor per article (attnrepro.report.ledger.speed): LEDGER.md, the editions,
# the machine_speed figure and the notes of the tables of machine-bound times read it
SPEED_CSV = f"{RESULTS}/speed.csv"
INDEX = f"{RESULTS}/README.md"  # every output of the run (attnrepro.report.index)
CONFIG_RESOLVED = f"{RESULTS}/config.resolved.yaml"  # the run's config, as Snakemake resolved it
EDITIONS = f"{RESULTS}/articles"  # the annotated editions
CLAIMS = f"{RESULTS}/claims"  # the claims drafted from the articles' texts

# ---- the environment (requirements/README.md) -------------------------------------------------
REQUIREMENTS = "requirements"  # every lock, with the .in file it is compiled from (`make lock`)
RUNTIME_LOCK = f"{REQUIREMENTS}/runtime.lock"  # what the jobs import, and Snakemake: `make env`
ARTICLE_LOCK = f"{REQUIREMENTS}/article.lock"  # the articles' stated versions: `make article-env`

# ---- what Snakemake records, and the archive --------------------------------------------------
LOGS = f"{RESULTS}/logs"
BENCHMARKS = f"{RESULTS}/benchmarks"
ARCHIVE_DIR = f"{RESULTS}/archive"
ARCHIVE_LOG = f"{LOGS}/archive.log"


def _suffix(table):
    return "" if table == "main" else f".{table}"


def data_path(article, experiment, case, table="main"):
    """Where one experiment job writes one table:
    ``results/data/<article>/<experiment>/<case>[.<table>].parquet``."""
    return f"{DATA}/{article}/{experiment}/{case}{_suffix(table)}.parquet"


def seed_data_path(article, experiment, case, table="main"):
    """Where a training of the seed distribution beyond the run's own writes a table: the layout of
    results/data under results/seeds/ (``results/seeds/data/001/train/<case>...``)."""
    return f"{SEEDS}/{relative(data_path(article, experiment, case, table))}"


def sweep_data_path(setting, article, experiment, case, table="main"):
    """Where one numerics sweep job writes one table: the layout of results/data under the setting
    (``results/numerics/<setting>/data/<article>/<experiment>/<case>...``)."""
    return f"{SWEEP_ROOT}/{setting}/{relative(data_path(article, experiment, case, table))}"


def table_path(name, fmt):
    """A table of the report: ``results/tables/<name>.<fmt>`` (md, csv)."""
    return f"{TABLES}/{name}.{fmt}"


def figure_path(name):
    """A figure of the report: ``results/figures/<name>.svg``."""
    return f"{FIGURES}/{name}.svg"


OVERVIEW = figure_path("ledger_overview")  # the ledger's overview figure (ledger.overview_figure)
SPEED = figure_path("machine_speed")  # this machine's speed against the articles' (ledger.speed_figure)


def evidence_path(folder, stem, fmt):
    """An evidence product's file: ``<folder>/<stem>.<fmt>`` (attnrepro.evidence.EvidenceProduct)."""
    return f"{folder}/{stem}.{fmt}"


def listing_run(article):
    """The JSON of one article's listings run (attnrepro.evidence.listings_run)."""
    return f"{LISTINGS}/runs/{article}.json"


def drafted_claims(article):
    """The claims drafted from an article's text: ``results/claims/<article>.yaml`` (articles.draft)."""
    return f"{CLAIMS}/{article}.yaml"


def unclaimed_numbers(article):
    """The prose's numbers that the draft pairs with none: ``results/claims/<article>.unclaimed.yaml``."""
    return f"{CLAIMS}/{article}.unclaimed.yaml"


def checked_numbers(article):
    """Every number an article's listings printed, its check's table:
    ``results/data/<article>/listings/numbers.parquet``."""
    return data_path(article, "listings", "numbers")


def checked_ledger(article):
    """The ledger rows of an article checked from its text, which the run's ledger takes in."""
    return f"{CLAIMS}/{article}.ledger.csv"


def edition_path(article):
    """Where the annotated edition of ``article`` lands: ``results/articles/<article>.html``."""
    return f"{EDITIONS}/{article}.html"


def archive_path(sha):
    """The archive of a run of commit ``sha``."""
    return f"{ARCHIVE_DIR}/attnrepro-results-{sha}.tar.gz"


# ---- logs and benchmarks: results/logs/<what>, results/benchmarks/<what> -----------------------
def log_path(*parts):
    """``results/logs/<parts...>.log``: ``log_path("report", "ledger")``."""
    return f"{LOGS}/{'/'.join(parts)}.log"


def benchmark_path(*parts):
    """``results/benchmarks/<parts...>.tsv``, beside :func:`log_path` of the same parts."""
    return f"{BENCHMARKS}/{'/'.join(parts)}.tsv"


def report_log(name):
    """The log of a report job (a product, the ledger, the index, an edition, the evidence)."""
    return log_path("report", name)


def reads_of_log(log):
    """The record of what a job read, beside its log (results/logs/x.log -> results/logs/x.reads.json):
    written by the job harness (attnrepro.run.reads), listed by the archive's RO-Crate."""
    return str(log).removesuffix(".log") + ".reads.json"


def benchmark_of_log(log):
    """The benchmark file beside a job's log (results/logs/x.log -> results/benchmarks/x.tsv)."""
    return log.replace(f"{LOGS}/", f"{BENCHMARKS}/", 1).removesuffix(".log") + ".tsv"


# ---- reading a path back ----------------------------------------------------------------------
def relative(path):
    """A results path relative to results/ (as the files under it link to each other)."""
    return str(path).removeprefix(f"{RESULTS}/")


def under(path, folder):
    """Whether ``path`` lies in ``folder`` (a folder of this module, e.g. :data:`EDITIONS`)."""
    folder = PurePosixPath(folder).parts
    return PurePosixPath(path).parts[:len(folder)] == folder


def parse_output(path):
    """(experiment, table, case) of a results path ``.../<experiment>/<case>[.<table>].parquet``."""
    parts = str(path).replace("\\", "/").split("/")
    if len(parts) < 2 or not parts[-1].endswith(".parquet"):
        raise ValueError(f"not a results file (.../<experiment>/<case>.parquet): {path}")
    name, experiment = parts[-1].removesuffix(".parquet"), parts[-2]
    case, dot, table = name.rpartition(".")  # a case name may hold dots itself: eps-0.0001
    if dot and table.isidentifier() and table != "main":
        return experiment, table, case
    return experiment, "main", name


class ResultFile(NamedTuple):
    """What the path of one experiment's table names (:func:`parse_result`)."""

    experiment: str
    table: str
    case: str
    article: str
    folder: str  # DATA (the run's), SEEDS (the seed distribution's other trainings) or SWEEP_ROOT
    setting: str | None = None  # the numerics sweep's setting, under SWEEP_ROOT only


def _ends_with(parts, folder):
    folder = PurePosixPath(folder).parts
    return len(parts) >= len(folder) and parts[len(parts) - len(folder):] == folder


def parse_result(path):
    """The :class:`ResultFile` of an experiment's table, from its path alone: a path of
    :func:`data_path`, :func:`seed_data_path` or :func:`sweep_data_path` (any folder may hold its
    ``results/``), whose name :func:`parse_output` reads. ValueError for any other path."""
    experiment, table, case = parse_output(path)
    parts = PurePosixPath(str(path).replace("\\", "/")).parts
    head, article = parts[:-3], parts[-3] if len(parts) > 3 else ""  # .../<article>/<experiment>/<file>
    data = relative(DATA)  # the layout of results/data, repeated under SEEDS and each setting
    if article and _ends_with(head, data):
        if _ends_with(head[:-2], SWEEP_ROOT):  # results/numerics/<setting>/data
            return ResultFile(experiment, table, case, article, SWEEP_ROOT, head[-2])
        if _ends_with(head, f"{SEEDS}/{data}"):
            return ResultFile(experiment, table, case, article, SEEDS)
        if _ends_with(head, DATA):
            return ResultFile(experiment, table, case, article, DATA)
    raise ValueError(f"not an experiment's table (results/data/<article>/<experiment>/<case>"
                     f"[.<table>].parquet, or the same under results/seeds/ or "
                     f"results/numerics/<setting>/): {path}")
