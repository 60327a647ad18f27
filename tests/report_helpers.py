"""Helpers of the report tests: results on disk as a run writes them, and a product's Markdown rows."""

import importlib
import re

from attnrepro.run import io
from attnrepro.dag import plan
from attnrepro.report.products import catalog, render
from attnrepro.report.products.results import Loader


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
    return getattr(importlib.import_module(product.module), product.function)(load)


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
    assert isinstance(table, render.Table) and len(table.data) and table.note
    render.write_table(table, folder / "t.md", folder / "t.csv")
    text = (folder / "t.md").read_text()
    assert "nan" not in text.lower().split() and "<NA>" not in text and "None" not in text, text
    assert_csv_at_full_precision(table, folder / "t.csv")


def float_columns(frame):
    return [c for c in frame.columns if frame[c].dtype.kind == "f"]


def assert_csv_at_full_precision(table, csv_path):
    """The CSV holds every row and column of ``table.data``, each float bit for bit (it reads back
    as the same double), and so more digits than the Markdown wherever its format rounds a value;
    returns the columns where it does."""
    import numpy as np
    import pandas as pd

    csv = pd.read_csv(csv_path)  # pandas 3 reads doubles back exactly
    extra = [] if table.extra is None else list(table.extra.columns)  # the printed cells' claims
    assert list(csv.columns) == [str(c) for c in table.data.columns] + extra and len(csv) == len(table.data)
    rounded = []
    for column in float_columns(table.data):
        stored = table.data[column].to_numpy(dtype=float)
        read = csv[str(column)].to_numpy(dtype=float)
        assert np.array_equal(read, stored, equal_nan=True), (column, read, stored)
        printed = table.formatted()[column] if column in table.formats else None
        if printed is not None and any(
            _number(p) is not None and _number(p) != v for p, v in zip(printed, stored) if np.isfinite(v)
        ):
            rounded.append(column)
    return rounded


def _number(text):
    """The float a Markdown cell prints ("0.4240", "3.33e-16", "3,152,384", "33.26%"), or None."""
    try:
        return float(str(text).replace(",", "").removesuffix("%"))
    except ValueError:
        return None


class FrameLoad:
    """A results.Loader over frames in memory: ``{(experiment, table): frame}``; each frame's rows
    are one case ("default") unless it has a ``case`` column, and every case records ``params``
    (default: none) as its provenance parameters."""

    def __init__(self, frames, params=None):
        self.frames = {key: f if "case" in f.columns else f.assign(case="default")
                       for key, f in frames.items()}
        self.files = {key: [] for key in frames}
        self._params = params or {}

    def __call__(self, experiment, table="main"):
        if (experiment, table) not in self.frames:
            raise FileNotFoundError(experiment)
        return self.frames[(experiment, table)]

    def numerics(self, experiment, table="main"):
        return "canonical"

    def params(self, experiment, table="main"):
        cases = dict.fromkeys(self.frames[(experiment, table)]["case"])
        return {case: (self._params.get(case, {}), f"{experiment}/{case}.parquet") for case in cases}
