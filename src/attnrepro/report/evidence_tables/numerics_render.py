"""The numerics sweep's products: the long CSV, the claims x settings table (Markdown), the grid (SVG).

:func:`write` reads the sweep (:mod:`attnrepro.report.evidence_tables.numerics_evaluate`: which settings give
which published digits) and writes its three products (paths: ``attnrepro.evidence.NUMERICS``):
the long CSV (one row per claim and setting), the Markdown table (claims x settings) and the SVG
grid. The report job runs it (``workflow/rules/evidence.smk``, target ``numerics``); by hand:

    python -m attnrepro.report numerics --published config/published.yaml \
        --settings results/numerics/settings.json --csv c.csv --md t.md --svg f.svg \
        --inputs results/numerics/*/data/*/*/*.parquet
"""

import json
import logging
from pathlib import Path

import pandas as pd

from attnrepro.run import io
from attnrepro.report.evidence_tables.numerics_evaluate import (
    COLUMNS,
    UNTESTED,
    describe,
    evaluate,
    giving,
    is_true,
    loaders,
    settings_in,
    short_numerics,
    swept_claims,
)
from attnrepro.report.ledger import verdicts
from attnrepro.report.products import render

log = logging.getLogger("attnrepro.report")


def wide(long):
    """Claims x settings: the reproduced text, marked P (published digits) or A (the digits the
    article's own code prints here, in the listings' run)."""
    settings = settings_in(long)
    rows = []
    for claim_id, g in long.groupby("id", sort=False):
        first = g.iloc[0]
        row = {
            "claim": f"{first['article']} {first['claim']}",
            "class": first["class"],
            "published": first["published"],
            "article code": first["article_code"],
        }
        for setting in settings:
            cell = g[g["setting"] == setting]
            if cell.empty:
                row[setting] = ""
                continue
            c = cell.iloc[0]
            row[setting] = f"{c['reproduced']}{_mark(c, ' ')}"
        pub = giving(long, claim_id)
        row["published digits from"] = (
            "every setting" if len(pub) == len(settings) else (", ".join(pub) or "none")
        )
        rows.append(row)
    n_claims, n_code = long["id"].nunique(), long.drop_duplicates("id")["article_code"].astype(bool).sum()
    for label, column, total in (
        ("published digits", "published_digits", n_claims),
        ("article code's digits", "article_code_digits", n_code),
    ):
        counts = long[long[column].map(is_true)].groupby("setting")["id"].nunique()
        rows.append(
            {
                "claim": f"claims with the {label} (of {total})",
                "class": "",
                "published": "",
                "article code": "",
                **{s: str(counts.get(s, 0)) for s in settings},
                "published digits from": "",
            }
        )
    return pd.DataFrame(rows)


def markdown(long, probe=None):
    settings = settings_in(long)
    kernels = "; ".join(f"{s}: {describe(long, s)}" for s in settings)
    cpu = f"Machine: {probe['cpu']}. " if probe else ""
    dropped = ""
    if probe:
        gone = [
            (
                f"{r['setting']} (= {r['duplicate_of']})"
                if r["duplicate_of"]
                else f"{r['setting']} ({r['error']})"
            )
            for r in probe["settings"]
            if not r["kept"]
        ]
        dropped = (
            f" Candidates not run (same kernel and NumPy features as another, or refused): {', '.join(gone)}."
            if gone
            else ""
        )
    note = (
        f"{cpu}Each column is one numerics setting of the sweep ({kernels}).{dropped} "
        "A cell is the value the setting's results give, written like the published one: "
        "P = the published digits (for a published interval: a value inside it), "
        "A = the digits the article's own code prints here (column article code: the listings' run, "
        "`snakemake --cores 2 listings`; empty without it). Claims listed: round-off, finite-difference "
        "and stochastic ones, and any other that some setting does not reproduce. Not varied here: "
        f"{UNTESTED}."
    )
    return render.markdown(
        render.Table(wide(long), note=note),
        title="Numerics sweep: which environment, OpenBLAS kernel and NumPy code paths give the "
        "published digits",
    )


def draw(long):
    """Claims x settings grid: published digits (green), the article code's digits (blue), neither (grey)."""
    from attnrepro.report.products import style  # noqa: F401  (Agg backend)
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    settings = settings_in(long)
    claims = list(dict.fromkeys(long["id"]))
    colours = {"P": "#27ae60", "A": "#5dade2", "": "#e5e7e9"}
    fig = Figure(figsize=(1.2 + 1.25 * len(settings) + 3.2, 1.2 + 0.32 * len(claims)), layout="constrained")
    ax = fig.subplots()
    for i, claim_id in enumerate(claims):
        for j, setting in enumerate(settings):
            cell = long[(long["id"] == claim_id) & (long["setting"] == setting)]
            if cell.empty:
                continue
            c = cell.iloc[0]
            ax.add_patch(_rect(j, i, colours[_mark(c)]))
            ax.text(j, i, c["reproduced"], ha="center", va="center", fontsize=6)
    first = long.drop_duplicates("id").set_index("id")
    ax.set_xlim(-0.5, len(settings) - 0.5)
    ax.set_ylim(len(claims) - 0.5, -0.5)
    ax.set_xticks(
        range(len(settings)),
        [f"{s}\n{short_numerics(long, s)}" for s in settings],
        fontsize=6,
        rotation=0,
    )
    ax.set_yticks(
        range(len(claims)),
        [
            f"{first.loc[c, 'article']} {_short(first.loc[c, 'claim'])}: {first.loc[c, 'published']}"
            for c in claims
        ],
        fontsize=7,
    )
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.legend(
        handles=[
            Patch(color=colours["P"], label="published digits"),
            Patch(color=colours["A"], label="the article's own code's digits here (listings)"),
            Patch(color=colours[""], label="other digits"),
        ],
        loc="upper left",
        bbox_to_anchor=(0, -0.04 - 0.6 / max(len(claims), 1)),
        ncols=3,
        fontsize=7,
        frameon=False,
    )
    fig.suptitle(
        "Numerics sweep: which settings (environment x OpenBLAS kernel x NumPy CPU features) give the "
        "published digits",
        fontsize=10,
    )
    return fig


def _mark(cell, space=""):
    """P (published digits), A (the article code's digits here) or "" for a cell of the long table."""
    if is_true(cell["published_digits"]):
        return f"{space}P"
    return f"{space}A" if is_true(cell["article_code_digits"]) else ""


def _rect(x, y, colour):
    from matplotlib.patches import Rectangle

    return Rectangle((x - 0.48, y - 0.45), 0.96, 0.9, color=colour, linewidth=0)


def _short(text, width=60):
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def write(published_path, paths, csv_path, md_path, svg_path, settings_path=None, listings_csv=None):
    """The three products; ``listings_csv`` (the listings' article_code.csv, optional) marks the
    settings that give what the article's own code prints here."""
    probe = json.loads(Path(settings_path).read_text()) if settings_path else None
    order = [r["setting"] for r in probe["settings"] if r["kept"]] if probe else None
    by_setting = loaders(paths)
    claims = swept_claims(verdicts.load_claims(published_path), by_setting)
    code = None
    if listings_csv:
        from attnrepro.report.evidence_tables import listings_evaluate

        code = listings_evaluate.article_code(listings_evaluate.read(listings_csv))
    long = evaluate(claims, by_setting, order, code) if claims else pd.DataFrame(columns=COLUMNS)
    with io.atomic_path(csv_path) as tmp:
        long.to_csv(tmp, index=False)
    if long.empty:
        io.write_text(
            md_path, "# Numerics sweep\n\nNo claim of the published values reads the swept cases.\n"
        )
        from matplotlib.figure import Figure

        fig = Figure(figsize=(4, 1))
        fig.text(0.5, 0.5, "no claim reads the swept cases", ha="center")
    else:
        io.write_text(md_path, markdown(long, probe))
        fig = draw(long)
    render.write_figure(fig, svg_path)
    log.info("numerics sweep: %d claims x %d settings", long["id"].nunique(), long["setting"].nunique())
    return 0
