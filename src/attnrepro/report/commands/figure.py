"""The figure command: one figure of the catalog, its builder over its results, drawn as SVG."""

from attnrepro.report.commands import _product

HELP = "draw one figure of the catalog (SVG)"
OUTPUTS = ("svg",)


def add_options(parser, by_name=False):
    """Its options (by its rule, or ``by_name`` by hand): the product's."""
    _product.add_options(parser, OUTPUTS, by_name)


def run(args):
    """Draw the figure of ``args.builder`` from ``args.inputs``, titled by ``--sections`` (else
    the plan and the catalog: report.products.style); a note says non-canonical numerics."""
    from attnrepro.report.products import builders, render, results, style  # load NumPy: after the pin

    style.use_sections_json(args.sections)
    fig = builders.find(args.builder)(results.Loader(args.inputs))
    status = results.numerics_status(args.inputs)
    source = render.trail(builders.qualified(args.builder), args.experiments, render.commit())
    render.write_figure(fig, args.svg, note=None if status == "canonical" else f"Numerics: {status}",
                        source=source)
