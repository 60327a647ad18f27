"""The numerics sweep's work: which settings give the published digits (evidence)."""

from attnrepro.report.evidence_tables import numerics_render
from attnrepro.report.products import style


def run(args):
    style.use_sections_json(args.sections)
    return numerics_render.write(args.published, args.inputs, args.csv, args.md, args.svg, args.settings,
                                 args.article_code)
