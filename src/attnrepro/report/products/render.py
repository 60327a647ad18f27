"""Write tables (Markdown for reading, CSV at full precision) and figures (SVG), atomically."""

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from attnrepro.run import io


@dataclass
class Table:
    """A report table: the values at full precision and how the article prints each column."""

    data: pd.DataFrame
    # column -> format string such as "{:.3f}", or a list of them, one per row
    formats: dict = field(default_factory=dict)
    note: str = ""  # one line under the table: what it shows, and what is not an exact match
    # column -> one text per row appended to its printed cell in the Markdown ("": none): the marks of the
    # cells that print a published claim (attnrepro.report.ledger.printed)
    marks: dict = field(default_factory=dict)
    extra: pd.DataFrame = None  # columns the CSV adds after those of data (one row each), or None
    footnotes: list = field(default_factory=list)  # lines under the note, one a footnote

    def formatted(self):
        out = self.data.copy()
        for column, fmt in self.formats.items():
            per_row = [fmt] * len(out) if isinstance(fmt, str) else list(fmt)
            if len(per_row) != len(out):
                raise ValueError(f"{len(per_row)} formats for the {len(out)} rows of column {column!r}")
            out[column] = [f.format(v) for f, v in zip(per_row, out[column])]
        for column, marks in self.marks.items():
            if len(marks) != len(out):
                raise ValueError(f"{len(marks)} marks for the {len(out)} rows of column {column!r}")
            out[column] = [f"{_text(v)}{m}" for v, m in zip(out[column], marks)]
        return out

    def csv_frame(self):
        """What the CSV holds: the values at full precision, then the ``extra`` columns."""
        if self.extra is None:
            return self.data
        return pd.concat([self.data.reset_index(drop=True), self.extra.reset_index(drop=True)], axis=1)


def _text(value):
    """A cell as the Markdown prints it unformatted (tabulate's "g" for a float)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (float, np.floating)):
        return f"{value:g}"
    return str(value)


def _escape_pipes(frame):
    """'|' in a header or cell (|J|, max |a - b|) as '\\|', so that it does not split the Markdown column."""
    def escape(v):
        return v.replace("|", "\\|") if isinstance(v, str) else v

    return frame.rename(columns=lambda c: escape(str(c))).map(escape)


def trail(builder, experiments, commit):
    """Where a table or figure comes from: its builder, the experiments (and config sections) it
    reads, the commit of the code that built it. ``builder``: "<module>:<function>"."""
    names = ", ".join(f"`{e}`" for e in experiments)
    many = len(experiments) > 1
    return (f"Built by `{builder}` from the results of experiment{'s' if many else ''} {names} "
            f"(config section{'s' if many else ''} of the same name), at commit {commit}.")


def commit():
    """The checkout's commit (12 digits, "-dirty" when src/, workflow/ or config/ differ)."""
    from attnrepro.run import provenance

    state = provenance.git_state()
    sha = (state.get("commit") or "unversioned")[:12]
    return sha + ("-dirty" if state.get("dirty") else "")


def markdown(table, title="", article="", source=""):
    """The table as Markdown under its title: the note, then ``source`` (:func:`trail`) below it."""
    head = f"# {title}\n\n" if title else ""
    lead = f"Article {article}. " if article else ""
    body = _escape_pipes(table.formatted()).to_markdown(index=False, disable_numparse=True)
    note = f"\n\n{lead}{table.note}".rstrip() + "\n"
    notes = "".join(f"\n- {line}" for line in table.footnotes) + ("\n" if table.footnotes else "")
    return head + body + note + notes + (f"\n{source}\n" if source else "")


def write_table(table, md_path, csv_path, title="", article="", source=""):
    io.write_text(md_path, markdown(table, title, article, source))
    with io.atomic_path(csv_path) as tmp:
        table.csv_frame().to_csv(tmp, index=False)


def write_figure(fig, svg_path, note=None, source=None):
    """Save ``fig`` as SVG with no date and fixed element ids, so reruns give the same bytes;
    ``note`` (non-canonical numerics) goes into the SVG's description, ``source`` (:func:`trail`)
    into its dc:source."""
    import matplotlib

    matplotlib.rcParams["svg.hashsalt"] = "attnrepro"
    metadata = {"Date": None, **({"Description": note} if note else {}),
                **({"Source": source} if source else {})}
    with io.atomic_path(svg_path) as tmp:
        fig.savefig(tmp, format="svg", metadata=metadata, bbox_inches="tight")
