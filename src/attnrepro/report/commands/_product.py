"""The options a table and a figure share: what they build and from which results.

A rule passes the builder, the title and the experiments of the catalog's line
(:mod:`attnrepro.report.products.catalog`); a person names the product, and the command line for
people (:mod:`attnrepro.report.cli`) looks the rest up. Only :mod:`.table` and :mod:`.figure`
import this module.
"""


def add_options(parser, outputs, by_name=False):
    """The product's options: its name (``by_name``, by hand) or what its rule passes, then the
    ``outputs`` (option names, each required) and the results it may read."""
    if by_name:
        parser.add_argument("name", help="its name in the catalog (python -m attnrepro list names them)")
    else:
        parser.add_argument("--builder", required=True, metavar="MODULE:FUNCTION",
                            help="the function that builds it, in attnrepro.report.products.<MODULE>")
        parser.add_argument("--article", required=True)
        parser.add_argument("--section", required=True)
        parser.add_argument("--experiments", nargs="+", required=True,
                            help="the experiments it reads (named in its source line)")
    for key in outputs:
        parser.add_argument(f"--{key}", required=True)
    parser.add_argument("--inputs", nargs="*", default=[], help="the results files it may read")
