"""The listings' work: the articles' own code as run here against their published output (evidence)."""

from attnrepro.report.evidence_tables import listings_render
from attnrepro.report.products import style


def run(args):
    style.use_sections_json(args.sections)
    return listings_render.write(args.published, args.runs, args.csv, args.listings_csv, args.md, args.svg)
