"""Check an article from its text alone: run its listings, judge every number it prints.

    python -m attnrepro article check FILE --out DIR [--id ID] [--time-limit S] [--memory-limit MIB]
    python -m attnrepro.jobs.article_check FILE --in-run --id ID --pin PIN   (rules check_<article>)

FILE is plain text (as the seeds), Markdown (.md) or a Jupyter notebook (.ipynb). Its listings run
twice, in order, each time in a fresh interpreter bounded in time, memory and working folder, under
the numerics pin. RUNNING AN ARTICLE RUNS ITS CODE WITH YOUR RIGHTS: check only what you would run
yourself. Under --out DIR: claims/<id>.yaml (the drafted claims), claims/<id>.unclaimed.yaml,
data/<id>/listings/numbers.parquet, ledger.csv, LEDGER.md and articles/<id>.html
(:mod:`attnrepro.report.commands.article_check`).
"""

import sys

from attnrepro.report import job

EXIT_STATUS = """\
exit status: 0 every number reproduces (a number an unseeded draw moves, or a time of another machine,
  is no difference); 1 some differ, or a listing did not run; 2 a usage error (one line names it)."""


def _parser(prog):
    parser = job.parser(prog)
    parser.description, parser.epilog = __doc__, EXIT_STATUS
    job.add_article_check(parser)
    return parser


def _work(args):
    from attnrepro.report.commands import article_check  # loads NumPy: after the pin (the harness)

    return article_check.run(args)


def main(argv=None, prog="attnrepro.jobs.article_check"):
    return job.run(_parser(prog).parse_args(argv), _work, guard_outputs=False)


if __name__ == "__main__":
    sys.exit(main())
