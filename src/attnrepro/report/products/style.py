"""The shared look of the report figures: Agg backend, titles naming the article section, heat maps.

Figures are built with :class:`matplotlib.figure.Figure` (no pyplot state), so that a
report job can draw any number of them and each one is released with its object.
"""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

PANEL = (4.4, 3.6)  # inches per panel
COLORS = {"without": "#c0392b", "with": "#2471a3", "other": "#7f8c8d"}

# The article and section of each experiment (section_title) and product (product_title) that a
# figure's title names: a report job is given those of its figure (--sections: its rule reads them
# from the catalog while Snakemake builds the DAG, attnrepro.report.products.catalog.sections), so
# that it reads neither the plan nor the catalog, and an edit of either reruns no figure. By hand
# (python -m attnrepro.report) and in the tests, every section is given (catalog.all_sections).
_GIVEN = {}
_REGISTRIES = ("experiments", "products")


def use_sections(sections):
    """Title the figures drawn from now on with ``sections`` only: {"experiments": {id: [article,
    section]}, "products": {name: [article, section]}} (a job's --sections, from its rule)."""
    _GIVEN.clear()
    _GIVEN.update({kind: dict(sections.get(kind) or {}) for kind in _REGISTRIES})


def use_sections_json(text):
    """use_sections of a job's ``--sections JSON``; nothing for None (a UsageError, naming the
    option, for JSON that is no object)."""
    from attnrepro.run import usage

    if text:
        use_sections(usage.json_object(text, "--sections"))


def _section(kind, key):
    """(article, section) of an experiment or a product."""
    if key not in _GIVEN.get(kind, {}):
        raise KeyError(f"the job was given no section of {kind.removesuffix('s')} {key!r} (--sections)")
    article, section = _GIVEN[kind][key]
    return article, section


def section_title(experiment, what):
    """'Article 001, <its listing section>: <what>'."""
    article, section = _section("experiments", experiment)
    return f"Article {article}, \u201c{section}\u201d\n{what}"


def product_title(name, what):
    """'Article 001, <the product's section>' from the catalog: for a figure not titled by its listing."""
    article, section = _section("products", name)
    return f"Article {article}, \u201c{section}\u201d\n{what}"


def sections_title(experiments, what):
    """'Article 000, <section>; article 001, <section>' for a figure that reads several listings."""
    parts = dict.fromkeys("{}, \u201c{}\u201d".format(*_section("experiments", e)) for e in experiments)
    return "Article " + "; article ".join(parts) + f"\n{what}"


def figure(ncols, title, nrows=1, width=None, height=None):
    """A figure of nrows x ncols panels (a 2-D array of axes) under a title; width, height in inches."""
    fig = Figure(figsize=(width or PANEL[0] * ncols, height or PANEL[1] * nrows + 0.6), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    fig.suptitle(title, fontsize=11)
    return fig, axes


def log2_axis(ax, values, label):
    """A log2 x-axis with one tick per measured value."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(values), [str(int(v)) for v in values], rotation=90 if len(values) > 8 else 0)
    ax.minorticks_off()
    ax.set_xlabel(label)


def query_key_matrix(long, value):
    """(query, key, value) rows as a query-by-key array, both in increasing order."""
    return long.pivot(index="query", columns="key", values=value).sort_index().sort_index(axis=1).to_numpy()


def heatmap(ax, values, *, fmt="{:.2f}", cmap="viridis", vmin=None, vmax=None, annotate=True):
    """An annotated image of a matrix, row 0 at the top; returns the image for a colour bar."""
    values = np.asarray(values, dtype=float)
    image = ax.imshow(values, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
    if annotate:
        for (i, j), v in np.ndenumerate(values):
            r, g, b, _ = image.cmap(image.norm(v))
            dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5  # text colour readable on the cell
            ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=7,
                    color="white" if dark else "black")
    if values.shape[1] <= 20:  # one tick per column while they fit; matplotlib's otherwise
        ax.set_xticks(range(values.shape[1]))
    if values.shape[0] <= 20:
        ax.set_yticks(range(values.shape[0]))
    return image


def power_law(ax, x, y, slope, label, **style):
    """The line of ``slope`` in the log-log plane through the centroid of (log x, log y): where the
    least-squares fit of log y on log x passes, so a stored slope is drawn without refitting."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    centre = np.exp(np.mean(np.log(x))), np.exp(np.mean(np.log(y)))
    ends = np.array([x.min(), x.max()])
    ax.plot(ends, centre[1] * (ends / centre[0]) ** slope, label=label, **style)


def sequence_labels(sequence, separator):
    """Tick labels 'position (symbol)' of a space-separated sequence, the symbol at ``separator`` as SEP."""
    return [f"{i} ({'SEP' if i == separator else s})" for i, s in enumerate(str(sequence).split())]
