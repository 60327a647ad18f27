"""Entry of an article's check (rules ``check_<article>``): an article without experiments of its own.

    python -m attnrepro.jobs.article_check FILE --in-run --id ID --pin PIN

As ``python -m attnrepro article check FILE --out DIR`` (:mod:`attnrepro.report.commands.article_check`,
its options; :mod:`attnrepro.report.article_check`, its work): its listings run in interpreters of
their own, which get the pin; this process judges what they printed.
"""

import sys

from attnrepro.report import runner
from attnrepro.report.commands import article_check


def main(argv=None):
    return runner.main(article_check, "attnrepro.jobs.article_check", argv)


if __name__ == "__main__":
    sys.exit(main())
