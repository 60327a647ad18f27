"""The article-check command: an article checked from its text alone (:mod:`attnrepro.report.article_check`).

People run it as ``python -m attnrepro article check FILE --out DIR`` (:mod:`attnrepro.cli`), the run
as the rules ``check_<article>`` (``python -m attnrepro.jobs.article_check FILE --in-run``).
"""

from attnrepro.articles import bounded

HELP = "check an article from its text alone: run its listings, judge every number it prints"
DESCRIPTION = """\
Check an article from its text alone: run its listings, judge every number it prints.

FILE is plain text (as the seeds), Markdown (.md) or a Jupyter notebook (.ipynb). Its listings run
twice, in order, each time in a fresh interpreter bounded in time, memory and working folder, under
the numerics pin. RUNNING AN ARTICLE RUNS ITS CODE WITH YOUR RIGHTS: check only what you would run
yourself. Under --out DIR: claims/<id>.yaml (the drafted claims), claims/<id>.unclaimed.yaml,
data/<id>/listings/numbers.parquet, ledger.csv, LEDGER.md and articles/<id>.html
(attnrepro.report.article_check)."""
EPILOG = """\
exit status: 0 every number reproduces (a number an unseeded draw moves, or a time of another machine,
  is no difference); 1 some differ, or a listing did not run; 2 a usage error (one line names it)."""
OUTPUTS = ()  # under --out DIR, a folder: no leftovers of its own to remove


def add_options(check):
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


def run(args):
    """The check: status 0 when every number reproduces, 1 when some differ or a listing did not run."""
    from attnrepro.report import article_check  # loads NumPy: after the pin (the harness)

    return article_check.run(args)
