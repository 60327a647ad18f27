"""The seeds command: each published stochastic figure placed among the seeds (evidence)."""

from attnrepro.report.ledger import claims_check

HELP = "place the published stochastic figures among the seeds"
OUTPUTS = ("csv", "md", "svg")


def add_options(parser):
    parser.add_argument("--published", required=True)
    parser.add_argument("--over", type=int, help="seeds per published statistic (default 3, the article's)")
    parser.add_argument("--inputs", nargs="*", default=[], help="the trainings' main Parquet files")
    for key in OUTPUTS:
        parser.add_argument(f"--{key}", required=True)


def run(args):
    from attnrepro.report.evidence_tables import seeds_render  # loads NumPy: after the pin (the harness)
    from attnrepro.report.products import style

    claims_check.check(args.published)
    style.use_sections_json(args.sections)
    k = seeds_render.ARTICLE_SEEDS if args.over is None else args.over
    return seeds_render.write(args.published, args.inputs, args.csv, args.md, args.svg, k)
