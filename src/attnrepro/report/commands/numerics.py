"""The numerics command: which settings of the numerics sweep give the published digits (evidence)."""

from attnrepro.report.ledger import claims_check

HELP = "write the numerics sweep against the published digits"
OUTPUTS = ("csv", "md", "svg")


def add_options(parser):
    parser.add_argument("--published", required=True)
    parser.add_argument("--settings", help="the probe's JSON (order and the settings not run)")
    parser.add_argument("--article-code",
                        help="the listings' article_code.csv: mark the settings that give what the "
                             "article's own code prints here")
    parser.add_argument("--inputs", nargs="*", default=[], help="the sweep's Parquet files")
    for key in OUTPUTS:
        parser.add_argument(f"--{key}", required=True)


def run(args):
    from attnrepro.report.evidence_tables import numerics_render  # loads NumPy: after the pin (the harness)
    from attnrepro.report.products import style

    claims_check.check(args.published)
    style.use_sections_json(args.sections)
    return numerics_render.write(args.published, args.inputs, args.csv, args.md, args.svg, args.settings,
                                 args.article_code)
