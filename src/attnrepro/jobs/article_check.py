"""Entry of an article's check (rules ``check_<article>``): an article without experiments of its own.

    python -m attnrepro.jobs.article_check FILE --in-run --id ID --pin PIN

As ``python -m attnrepro article check FILE --out DIR`` (:func:`attnrepro.report.job.article_check_parser`
says what it does): its listings run in interpreters of their own, which get the pin; this process
judges what they printed (:mod:`attnrepro.report.commands.article_check`).
"""

import sys

from attnrepro.report import job


def _work(args):
    from attnrepro.report.commands import article_check  # loads NumPy: after the pin (the harness)

    return article_check.run(args)


def main(argv=None):
    return job.run(job.article_check_parser("attnrepro.jobs.article_check").parse_args(argv), _work,
                   guard_outputs=False)


if __name__ == "__main__":
    sys.exit(main())
