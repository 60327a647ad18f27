"""What every report job shares: its options, the claims' check, the run through the job harness.

Each report command has its entry (``python -m attnrepro.jobs.<command>``: table, figure, ledger,
numerics, seeds, listings, index, edition, ledger_overview, machine_speed), which parses its
command line with these options and runs its work (:mod:`attnrepro.report.commands`) through
:func:`run`. ``python -m attnrepro.report`` (:mod:`attnrepro.report.cli`) is the command line for
people, through the same function.

Through the job harness, as an experiment job (:mod:`attnrepro.run.harness`), a report job writes
nothing once the Snakemake run that started it has ended, removes the temporaries of its outputs that a
killed earlier attempt left, reads every result through ``io.read_parquet`` (checksums and content
hash verified) and, given ``--expected-params JSON`` ({experiment: {case: params}}), first compares
each input's provenance parameters with them. A corrupt or stale input stops it with status 1 and a
message naming the file and the command that rebuilds it, never a "missing" or "differs" verdict.
A claims file (``--published``) is loaded first (:mod:`attnrepro.report.ledger.claims_check`, given
by the entries of the commands that read it): one that does not load (its schema, a key given
twice, an anchor or a tag, YAML that does not parse, no file) ends the job with status 2 and one
line in its log naming the file, the claim and the key (:mod:`attnrepro.run.usage`); so do a
malformed option and an unknown builder.
"""

import argparse
import logging

from attnrepro.articles import bounded
from attnrepro.numerics import canonical
from attnrepro.run import harness, usage

PREFIX = "attnrepro.report"  # of the stderr line of a stopped job (attnrepro.run.harness) and the logger
log = logging.getLogger(PREFIX)
# the options that name a command's outputs (by dest), here and in attnrepro.report.cli: the ledger's
# --speed writes results/speed.csv (speed_out); a table's, an edition's or machine-speed's reads it
OUTPUT_OPTIONS = ("md", "csv", "svg", "out", "speed_out", "listings_csv")


def parser(prog):
    """The command line of the entry ``prog``: the options before the command's own (add_options)."""
    parser = usage.Parser(prog=prog, description=f"the report job {prog}", epilog=usage.EXIT_STATUS,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    add_options(parser)
    return parser


def add_options(parser):
    """The options before the command (every entry's, and attnrepro.report.cli's)."""
    parser.add_argument("--pin", choices=canonical.PINS, default=canonical.SETTING,
                        help="canonical numerics of the summary statistics (attnrepro.numerics.canonical)")
    parser.add_argument("--expected-params", metavar="JSON",
                        help="{experiment: {case: params}} this run plans for the --inputs: a file "
                             "written with other parameters stops the job")
    parser.add_argument("--sections", metavar="JSON",
                        help='{"experiments": {id: [article, section]}, "products": {name: [...]}}: '
                             "the titles a figure names (default: read from the plan and the catalog)")


def add_product(parser, outputs):
    """A table's or figure's options as its rule passes them: the builder, the title, the
    experiments of its trail, the ``outputs`` (option names), the results it may read."""
    parser.add_argument("--builder", required=True, metavar="MODULE:FUNCTION",
                        help="the function that builds it, in attnrepro.report.products.<MODULE>")
    parser.add_argument("--article", required=True)
    parser.add_argument("--section", required=True)
    parser.add_argument("--experiments", nargs="+", required=True,
                        help="the experiments it reads (named in its source line)")
    for key in outputs:
        parser.add_argument(f"--{key}", required=True)
    parser.add_argument("--inputs", nargs="*", default=[], help="the results files it may read")


def add_speed(table):
    """A timing table's ``--speed``: its note says this machine's speed against its article's."""
    table.add_argument("--speed", dest="speed_csv",
                       help="results/speed.csv (the ledger's): the note says this machine's speed against "
                            "the article's (a table of machine-bound times)")


def add_printed(table):
    """A table's ``--ledger`` and ``--published``: the cells that print a claim show the published value
    and the ledger's verdict (attnrepro.report.ledger.printed)."""
    table.add_argument("--ledger", dest="ledger_csv",
                       help="results/ledger.csv: each cell that prints a claim shows its verdict and the "
                            "published value (with --published)")
    table.add_argument("--published",
                       help="config/published.yaml: the claims, which name their printed cells")


def add_ledger(ledger):
    ledger.add_argument("--published", required=True)
    ledger.add_argument("--csv", required=True)
    ledger.add_argument("--md", required=True)
    ledger.add_argument("--speed", dest="speed_out",
                        help="where to write each article's speed factor (results/speed.csv)")
    ledger.add_argument("--article", metavar="JSON",
                        help="what the article's config plans "
                             "(attnrepro.report.ledger.comparable.Article): a claim "
                             "computed otherwise is judged 'other parameters'")
    ledger.add_argument("--gate", action="store_true", help="exit 1 if an exact claim is not reproduced")
    ledger.add_argument("--numerics-evidence", help="the numerics sweep's ledger_numerics.csv, to cite")
    ledger.add_argument("--seed-evidence",
                        help="the seed distribution's seed_distribution.csv, to judge stochastic claims by")
    ledger.add_argument("--listings-evidence",
                        help="the listings' article_code.csv: what the articles' own code prints here")
    ledger.add_argument("--checked", nargs="*", default=[], metavar="CSV",
                        help="the ledger rows of the articles checked from their text (results/claims/<id>."
                             "ledger.csv): they join ledger.csv, counted apart in LEDGER.md")
    ledger.add_argument("--inputs", nargs="*", default=[], help="the results files it may read")


def add_numerics(numerics):
    numerics.description = "write the numerics sweep against the published digits"
    numerics.add_argument("--published", required=True)
    numerics.add_argument("--settings", help="the probe's JSON (order and the settings not run)")
    numerics.add_argument("--article-code",
                          help="the listings' article_code.csv: mark the settings that give what the "
                               "article's own code prints here")
    numerics.add_argument("--inputs", nargs="*", default=[], help="the sweep's Parquet files")
    _add_evidence_outputs(numerics)


def add_seeds(seeds):
    seeds.description = "place the published stochastic figures among the seeds"
    seeds.add_argument("--published", required=True)
    seeds.add_argument("--over", type=int, help="seeds per published statistic (default 3, the article's)")
    seeds.add_argument("--inputs", nargs="*", default=[], help="the trainings' main Parquet files")
    _add_evidence_outputs(seeds)


def _add_evidence_outputs(parser):
    parser.add_argument("--csv", required=True)
    parser.add_argument("--md", required=True)
    parser.add_argument("--svg", required=True)


def add_listings(listings):
    listings.description = "the articles' listings as run here against their published output"
    listings.add_argument("--published", required=True)
    listings.add_argument("--runs", nargs="+", required=True, help="one JSON per article (listings_run)")
    listings.add_argument("--csv", required=True, help="one row per claim: the article code's value here")
    listings.add_argument("--listings-csv", required=True, help="one row per listing")
    listings.add_argument("--md", required=True)
    listings.add_argument("--svg", required=True)


def add_index(index):
    index.add_argument("--config", required=True, help="the resolved config (YAML)")
    index.add_argument("--unbuilt", metavar="JSON", default="{}",
                       help="{article: why its annotated edition is not built} (the rule's, from common.smk)")
    index.add_argument("--ledger", help="results/ledger.csv: the index opens with its summary, as LEDGER.md")
    index.add_argument("--published", help="config/published.yaml: the versions the articles state")
    index.add_argument("--inputs", nargs="*", default=[], help="the results files: the run's versions")
    index.add_argument("--out", required=True)


def add_edition(edition):
    edition.add_argument("article", help="the article's id (its entry of config articles)")
    edition.add_argument("--text", required=True, help="the article's text (its entry of config articles)")
    edition.add_argument("--ledger", required=True, help="results/ledger.csv")
    edition.add_argument("--published", required=True, help="the article's claims file (the locations)")
    edition.add_argument("--config", required=True, help="the resolved config (YAML): the data files")
    edition.add_argument("--out", required=True)
    edition.add_argument("--speed", help="results/speed.csv: this machine's speed against the article's")


ARTICLE_CHECK = """\
Check an article from its text alone: run its listings, judge every number it prints.

FILE is plain text (as the seeds), Markdown (.md) or a Jupyter notebook (.ipynb). Its listings run
twice, in order, each time in a fresh interpreter bounded in time, memory and working folder, under
the numerics pin. RUNNING AN ARTICLE RUNS ITS CODE WITH YOUR RIGHTS: check only what you would run
yourself. Under --out DIR: claims/<id>.yaml (the drafted claims), claims/<id>.unclaimed.yaml,
data/<id>/listings/numbers.parquet, ledger.csv, LEDGER.md and articles/<id>.html
(attnrepro.report.commands.article_check)."""
ARTICLE_CHECK_STATUS = """\
exit status: 0 every number reproduces (a number an unseeded draw moves, or a time of another machine,
  is no difference); 1 some differ, or a listing did not run; 2 a usage error (one line names it)."""


def article_check_parser(prog):
    """The command line of ``article check`` (``python -m attnrepro article check``, and its rules'
    entry ``attnrepro.jobs.article_check``)."""
    check = parser(prog)
    check.description, check.epilog = ARTICLE_CHECK, ARTICLE_CHECK_STATUS
    add_article_check(check)
    return check


def add_article_check(check):
    """``article check``'s options (:mod:`attnrepro.report.commands.article_check`)."""
    check.add_argument("file", help="the article: .txt (plain, as the seeds), .md or .ipynb")
    check.add_argument("--out", metavar="DIR",
                       help="where the check writes, laid out as results/ (a folder)")
    check.add_argument("--in-run", action="store_true",
                       help="write as a job of the run: under results/, its ledger rows beside the run's "
                            "(results/claims/<id>.ledger.csv), which the run's ledger takes in")
    check.add_argument("--id", help="the article's id in the claims and the ledger (default: from the file's "
                                    "name)")
    check.add_argument("--title", help="its title (default: its first heading)")
    check.add_argument("--sha256", metavar="HEX",
                       help="the SHA-256 its text must have (config articles[i].sha256)")
    check.add_argument("--claims", metavar="YAML",
                       help="its confirmed claims (published.yaml's schema): judged instead of the drafted "
                            "ones, which are still written")
    check.add_argument("--speed-rule", metavar="YAML",
                       help="the claims file whose speed: entry judges raw times, as the run's ledger does "
                            "(default: this checkout's config/published.yaml)")
    check.add_argument("--time-limit", type=float, default=bounded.TIME_LIMIT_S, metavar="S",
                       help=f"seconds for all its listings, each run (default {bounded.TIME_LIMIT_S:g})")
    check.add_argument("--listing-time-limit", type=float, default=None, metavar="S",
                       help="seconds for one listing (default: the article's limit)")
    check.add_argument("--threads", type=int, default=None, metavar="N",
                       help="BLAS and OpenMP threads of its listings (default: the libraries' own, as the "
                            "author ran them; a job of the run: its rule's threads)")
    check.add_argument("--memory-limit", type=int, default=bounded.MEMORY_LIMIT_MIB, metavar="MIB",
                       help=f"memory of its interpreter (default {bounded.MEMORY_LIMIT_MIB} MiB)")


def add_overview(overview):
    overview.add_argument("--ledger", required=True, help="results/ledger.csv")
    overview.add_argument("--published", required=True, help="config/published.yaml (bands, tolerances)")
    overview.add_argument("--svg", required=True)


def add_machine_speed(machine):
    machine.add_argument("--speed", required=True, help="results/speed.csv (the ledger's)")
    machine.add_argument("--svg", required=True)


def outputs(args):
    """The files the parsed ``args`` name as outputs (OUTPUT_OPTIONS): the harness removes the
    temporaries of them that a killed earlier attempt left."""
    return [getattr(args, k) for k in OUTPUT_OPTIONS if getattr(args, k, None)]


def run(args, work, guard_outputs=True, check=None):
    """The job of the parsed ``args`` (an entry's command line, or attnrepro.report.cli's) through
    the job harness (attnrepro.run.harness); its exit status. The pin is applied unless NumPy is
    loaded (in-process callers keep theirs). ``work``: the command's, a function of ``args``
    (attnrepro.report.commands); ``guard_outputs`` False: no leftovers are removed (gate, golden:
    their --out is a folder of committed files); ``check``: for a command that reads ``--published``,
    what checks it first (attnrepro.report.ledger.claims_check.check)."""

    def checked():
        if check and getattr(args, "published", None):
            check(args.published)
        return work(args)

    def job(_pinned):
        expected = usage.json_object(args.expected_params, "--expected-params")
        return harness.Job(checked, outputs=outputs(args) if guard_outputs else (),
                           inputs=getattr(args, "inputs", []), expected=expected)

    return harness.run_job(job, prefix=PREFIX, pin=args.pin, keep_loaded=True)
