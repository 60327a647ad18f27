"""Write tables (Markdown for reading, CSV at full precision) and figures (SVG), atomically."""

from dataclasses import dataclass, field

import pandas as pd

from attnrepro import io


@dataclass
class Table:
    """A report table: the values at full precision and how the article prints each column."""

    data: pd.DataFrame
    # column -> format string such as "{:.3f}", or a list of them, one per row
    formats: dict = field(default_factory=dict)
    note: str = ""  # one line under the table: what it shows, and what is not an exact match

    def formatted(self):
        out = self.data.copy()
        for column, fmt in self.formats.items():
            per_row = [fmt] * len(out) if isinstance(fmt, str) else list(fmt)
            if len(per_row) != len(out):
                raise ValueError(f"{len(per_row)} formats for the {len(out)} rows of column {column!r}")
            out[column] = [f.format(v) for f, v in zip(per_row, out[column])]
        return out


def _escape_pipes(frame):
    """'|' in a header or cell (|J|, max |a - b|) as '\\|', so that it does not split the Markdown column."""
    def escape(v):
        return v.replace("|", "\\|") if isinstance(v, str) else v

    return frame.rename(columns=lambda c: escape(str(c))).map(escape)


def markdown(table, title="", article=""):
    head = f"# {title}\n\n" if title else ""
    source = f"Article {article}. " if article else ""
    body = _escape_pipes(table.formatted()).to_markdown(index=False, disable_numparse=True)
    note = f"\n\n{source}{table.note}".rstrip() + "\n"
    return head + body + note


def write_table(table, md_path, csv_path, title="", article=""):
    io.write_text(md_path, markdown(table, title, article))
    with io.atomic_path(csv_path) as tmp:
        table.data.to_csv(tmp, index=False)


def write_figure(fig, svg_path, note=None):
    """Save ``fig`` as SVG with no date and fixed element ids, so reruns give the same bytes;
    ``note`` (non-canonical numerics) goes into the SVG's description."""
    import matplotlib

    matplotlib.rcParams["svg.hashsalt"] = "attnrepro"
    metadata = {"Date": None, **({"Description": note} if note else {})}
    with io.atomic_path(svg_path) as tmp:
        fig.savefig(tmp, format="svg", metadata=metadata, bbox_inches="tight")
