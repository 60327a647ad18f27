"""Helpers of the report tests: results on disk as a run writes them, and a product's Markdown rows."""

import importlib
import re

from attnrepro import io, plan
from attnrepro.report import catalog, render
from attnrepro.report.results import Loader


def loader(root, results):
    """Write ``{(experiment, case): {table: frame}}`` under ``root`` at the plan's paths; a Loader on them."""
    paths = []
    for (experiment, case), tables in results.items():
        for table, frame in tables.items():
            path = root / plan.output_path(experiment, case, table)
            io.write_parquet(frame, path, {})
            paths.append(path)
    return Loader(paths)


def build(name, load):
    """The product ``name`` (a render.Table or a Figure) built from ``load``."""
    product = catalog.PRODUCTS[name]
    prefix = "build" if product.kind == "table" else "draw"
    return getattr(importlib.import_module(product.module), f"{prefix}_{name}")(load)


def markdown(name, load):
    return render.markdown(build(name, load), catalog.PRODUCTS[name].section, catalog.PRODUCTS[name].article)


def row(text, *lead):
    """The cells of the Markdown row whose first cells are ``lead``."""
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if cells[:len(lead)] == list(lead):
            return cells
    raise AssertionError(f"no row {lead!r} in\n{text}")


def labelled(fig):
    """True when the figure has an Article title and a label on every axis (colour bars: their value)."""
    if fig._suptitle is None or not fig._suptitle.get_text().startswith("Article "):
        return False
    for ax in fig.axes:
        if ax.get_label() == "<colorbar>":
            if not ax.get_ylabel():
                return False
        elif not (ax.get_xlabel() and ax.get_ylabel()):
            return False
    return True


def assert_table_complete(table, folder):
    """A built table has rows and a note, and its Markdown and CSV lose no value."""
    import pandas as pd

    assert isinstance(table, render.Table) and len(table.data) and table.note
    render.write_table(table, folder / "t.md", folder / "t.csv")
    text = (folder / "t.md").read_text()
    assert "nan" not in text.lower().split() and "<NA>" not in text and "None" not in text, text
    assert len(pd.read_csv(folder / "t.csv")) == len(table.data)
