"""A figure's work: its builder (named by the catalog) over its results, drawn as SVG."""

from attnrepro.report.products import builders, render, results, style


def run(args):
    """Draw the figure of ``args.builder`` from ``args.inputs``, titled by ``--sections`` (else
    the plan and the catalog: report.products.style); a note says non-canonical numerics."""
    style.use_sections_json(args.sections)
    fig = builders.find(args.builder)(results.Loader(args.inputs))
    status = results.numerics_status(args.inputs)
    source = render.trail(builders.qualified(args.builder), args.experiments, render.commit())
    render.write_figure(fig, args.svg, note=None if status == "canonical" else f"Numerics: {status}",
                        source=source)
