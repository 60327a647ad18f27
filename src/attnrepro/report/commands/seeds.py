"""The seed distribution's work: each published stochastic figure among the seeds (evidence)."""

from attnrepro.report.evidence_tables import seeds_render
from attnrepro.report.products import style


def run(args):
    style.use_sections_json(args.sections)
    k = seeds_render.ARTICLE_SEEDS if args.over is None else args.over
    return seeds_render.write(args.published, args.inputs, args.csv, args.md, args.svg, k)
