"""Entry of a timing experiment's job whose article's own listing is timed beside it (rules
``<experiment>_case`` of the timing experiments with ``article_code``).

    python -m attnrepro.jobs.timed_experiment EXPERIMENT --article 001 --section "..." --threads 1 \
        --pin PIN --params-json JSON --out MAIN.parquet [--table NAME=FILE ...] \
        --article-text FILE --article-sha256 HEX --listing N

An experiment job (:mod:`attnrepro.experiments.case_run`) given the article's listing N, built from its
text (:func:`attnrepro.articles.timed.program`, the text checked against its SHA-256) inside the
job, after the pin; the experiment runs it after each of its passes
(:mod:`attnrepro.experiments._article_code`). A text that is not the configured one, or a listing
that cannot run on its own, stops the job in one line naming the file or the listing.
"""

import sys

from attnrepro.articles import timed
from attnrepro.experiments import case_run


def listing(args):
    """A function giving the listing's Program (None without ``--article-text``)."""
    if not args.article_text:
        return None

    def build():  # in the job, after the pin: _article_code loads NumPy
        from attnrepro.experiments._article_code import ArticleCodeError

        try:
            return timed.program(args.article_text, args.article, args.listing or 0,
                                 args.article_sha256 or "")
        except (OSError, ValueError) as error:
            raise ArticleCodeError(f"--article-text: {error}") from None

    return build


def main(argv=None):
    args = case_run.parser("attnrepro.jobs.timed_experiment", timed=True).parse_args(argv)
    return case_run.run(args, article_code=listing(args))


if __name__ == "__main__":
    sys.exit(main())
