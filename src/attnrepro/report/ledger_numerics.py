"""The numerics sweep against the published digits: which settings reproduce which claim.

The sweep (``snakemake numerics``, :mod:`attnrepro.numerics`) reruns the round-off-sensitive
cases under every numerics setting this machine accepts: an OpenBLAS kernel and a NumPy
CPU-feature mask. Here each setting's results are judged alone, with the ledger's own
rules (:func:`attnrepro.report.ledger.evaluate`) on the claims of ``config/published.yaml``
whose source rows are all among the swept cases (timings left out). A claim is listed when it
is round-off or stochastic, or when some setting does not give its digits.

For each claim and setting: the reproduced text, whether it is the published digits and,
when the claim records what the article's own code prints on the README's machine kind
(``here``), whether it is those. Outputs: a long CSV (one row per claim and setting), a
Markdown table (claims x settings), an SVG grid, and :func:`reason_for`, the sentence the
ledger cites for a round-off or stochastic deviation.

    python -m attnrepro.report.ledger_numerics --published config/published.yaml \
        --settings results/numerics/settings.json --csv c.csv --md t.md --svg f.svg \
        --inputs results/numerics/*/data/*/*/*.parquet
"""

import argparse
import dataclasses
import json
import logging
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from attnrepro import io
from attnrepro.report import ledger, ledger_io, render, results

log = logging.getLogger("attnrepro.report")
DEFAULT = "default"
TABLE = "results/numerics/ledger_numerics.md"  # where the ledger's reasons point
COLUMNS = [
    "id",
    "article",
    "section",
    "claim",
    "class",
    "published",
    "here",
    "setting",
    "openblas_kernel",
    "numpy_features",
    "reproduced",
    "published_digits",
    "here_digits",
]


def setting_of(path):
    """The setting of a sweep file ``.../<setting>/data/<article>/<experiment>/<file>.parquet``."""
    path = Path(path)
    if len(path.parents) < 5 or path.parents[2].name != "data":
        raise ValueError(f"not a numerics sweep file: {path}")
    return path.parents[3].name


def loaders(paths):
    """{setting: results.Loader over that setting's files}."""
    by_setting = defaultdict(list)
    for path in paths:
        by_setting[setting_of(path)].append(path)
    return {s: results.Loader(files) for s, files in by_setting.items()}


def _covered(claim, load):
    try:
        ledger.reproduced(claim.source, load)
    except (FileNotFoundError, KeyError, ValueError):
        return False
    return True


def swept_claims(claims, by_setting):
    """The claims (timings left out) whose value every setting's results give."""
    return [
        c
        for c in claims
        if c.cls != "machine-bound" and all(_covered(c, load) for load in by_setting.values())
    ]


def _numerics_of(load):
    """(effective OpenBLAS kernel, NumPy features) recorded in a setting's results."""
    for experiment, table in load.files:
        frame = load(experiment, table)
        if "numerics_openblas_kernel" in frame.columns:
            return frame["numerics_openblas_kernel"].iloc[0], frame["numerics_numpy_features"].iloc[0]
    return "", ""


def evaluate(claims, by_setting, order=None):
    """The long table: one row per (claim, setting) with the reproduced text and whether it
    is the published digits (and the ``here`` digits, when the claim records them)."""
    settings = [s for s in (order or []) if s in by_setting] + sorted(set(by_setting) - set(order or []))
    rows = []
    for setting in settings:
        load = by_setting[setting]
        kernel, features = _numerics_of(load)
        judged = ledger.evaluate(claims, load).set_index("id")
        here_claims = [dataclasses.replace(c, published=c.here, here=None) for c in claims if c.here]
        here = ledger.evaluate(here_claims, load).set_index("id") if here_claims else None
        for c in claims:
            row = judged.loc[c.id]
            rows.append(
                {
                    "id": c.id,
                    "article": c.article,
                    "section": c.section,
                    "claim": c.claim,
                    "class": c.cls,
                    "published": c.published,
                    "here": c.here or "",
                    "setting": setting,
                    "openblas_kernel": kernel,
                    "numpy_features": features,
                    "reproduced": row["reproduced"],
                    "published_digits": _gives(c, row, load),
                    "here_digits": (here.loc[c.id, "verdict"] == "reproduced") if c.here else pd.NA,
                }
            )
    long = pd.DataFrame(rows, columns=COLUMNS)
    return long[long["id"].isin(_listed(long))].reset_index(drop=True)


def _gives(claim, row, load):
    """Whether a setting gives the published figure: its digits, or, for a published interval
    ("0.987-0.995", "95-98%"), a value inside it (the ledger never calls an interval reproduced)."""
    if row["verdict"] == "reproduced":
        return True
    low, high = ledger.published_range(claim.published) if _is_interval(claim.published) else (None, None)
    if low is None or row["verdict"] == "missing":
        return False
    return bool(low <= float(ledger.reproduced(claim.source, load)[0]) <= high)


def _is_interval(published):
    try:
        low, high = ledger.published_range(published)
    except ValueError:
        return False
    return low != high


def _listed(long):
    """Claim ids worth a row: round-off or stochastic, or not reproduced under every setting."""
    keep = long.groupby("id").apply(
        lambda g: g["class"].iloc[0] in ("round-off", "stochastic")
        or not g["published_digits"].map(_true).all(),
        include_groups=False,
    )
    return keep[keep].index


def settings_in(long):
    return list(dict.fromkeys(long["setting"]))


def describe(long, setting):
    """'OpenBLAS Sandybridge, NumPy X86_V3' for a setting of the table."""
    row = long[long["setting"] == setting].iloc[0]
    return f"OpenBLAS {row['openblas_kernel']}, NumPy {row['numpy_features'] or 'baseline'}"


def giving(long, claim_id, column="published_digits"):
    """The settings whose results give a claim's published (or ``here``) digits."""
    rows = long[(long["id"] == claim_id) & long[column].map(_true)]
    return rows["setting"].tolist()


def _true(value):
    """True for a true bool (NumPy's too); False for False, NA and NaN (a CSV's empty cell)."""
    return isinstance(value, (bool, np.bool_)) and bool(value)


def reason_for(claim_id, long):
    """The ledger's evidence for a round-off or stochastic claim, or None when the sweep
    does not hold it: which settings give the published digits, and what the default gives."""
    rows = long[long["id"] == claim_id]
    if rows.empty:
        return None
    published, here = rows["published"].iloc[0], rows["here"].iloc[0]
    pub = giving(long, claim_id)
    if len(pub) == len(settings_in(long)):
        text = f"published digits {published} given by every numerics setting of the sweep"
    elif pub:
        text = f"published digits {published} given by {_list(long, pub)}"
    else:
        text = f"no numerics setting of the sweep gives the published digits {published}"
    if here:
        hs = giving(long, claim_id, "here_digits")
        text += f"; the README's {here} by {_list(long, hs)}" if hs else f"; none gives the README's {here}"
    default = rows[rows["setting"] == DEFAULT]
    if not default.empty:
        short = _short_numerics(long, DEFAULT).replace("\n", ", ")
        text += f"; this machine's default ({short}) gives {default['reproduced'].iloc[0]}"
    return f"{text} [{TABLE}]"


def read(path):
    """The long table back from its CSV: texts as printed, flags as booleans (NA: no README value)."""
    long = pd.read_csv(path, dtype=str, keep_default_na=False)
    flags = {"True": True, "False": False, "": pd.NA}
    for column in ("published_digits", "here_digits"):
        long[column] = long[column].map(flags).astype(object)
    return long


def reasons(long):
    """{claim id: reason_for(claim id)} for every claim of the table."""
    return {i: reason_for(i, long) for i in dict.fromkeys(long["id"])}


def _list(long, settings):
    """'sandybridge-noavx512, prescott-noavx512 (OpenBLAS Katmai)': a setting whose kernel name is
    not the kernel OpenBLAS really ran is followed by the real one."""
    out = []
    for s in settings:
        kernel = long[long["setting"] == s]["openblas_kernel"].iloc[0]
        named = s.partition("-")[0]
        out.append(s if named == kernel.lower() else f"{s} (OpenBLAS {kernel})")
    return ", ".join(out)


# --- products ------------------------------------------------------------------------------


def wide(long):
    """Claims x settings: the reproduced text, marked P (published digits) or H (README digits)."""
    settings = settings_in(long)
    rows = []
    for claim_id, g in long.groupby("id", sort=False):
        first = g.iloc[0]
        row = {
            "claim": f"{first['article']} {first['claim']}",
            "class": first["class"],
            "published": first["published"],
            "README": first["here"],
        }
        for setting in settings:
            cell = g[g["setting"] == setting]
            if cell.empty:
                row[setting] = ""
                continue
            c = cell.iloc[0]
            mark = " P" if _true(c["published_digits"]) else (" H" if _true(c["here_digits"]) else "")
            row[setting] = f"{c['reproduced']}{mark}"
        pub = giving(long, claim_id)
        row["published digits from"] = (
            "every setting" if len(pub) == len(settings) else (", ".join(pub) or "none")
        )
        rows.append(row)
    n_claims, n_here = long["id"].nunique(), long.drop_duplicates("id")["here"].astype(bool).sum()
    for label, column, total in (
        ("published digits", "published_digits", n_claims),
        ("README digits", "here_digits", n_here),
    ):
        counts = long[long[column].map(_true)].groupby("setting")["id"].nunique()
        rows.append(
            {
                "claim": f"claims with the {label} (of {total})",
                "class": "",
                "published": "",
                "README": "",
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
        "H = the digits the article's own code gives on the README's "
        "machine kind. Claims listed: round-off and stochastic ones, and any other that some "
        "setting does not reproduce."
    )
    return render.markdown(
        render.Table(wide(long), note=note),
        title="Numerics sweep: which OpenBLAS kernel and NumPy code paths give the published digits",
    )


def draw(long):
    """Claims x settings grid: published digits (green), README digits (blue), neither (grey)."""
    from attnrepro.report import style  # noqa: F401  (Agg backend)
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    settings = settings_in(long)
    claims = list(dict.fromkeys(long["id"]))
    colours = {"P": "#27ae60", "H": "#5dade2", "": "#e5e7e9"}
    fig = Figure(figsize=(1.2 + 1.25 * len(settings) + 3.2, 1.2 + 0.32 * len(claims)), layout="constrained")
    ax = fig.subplots()
    for i, claim_id in enumerate(claims):
        for j, setting in enumerate(settings):
            cell = long[(long["id"] == claim_id) & (long["setting"] == setting)]
            if cell.empty:
                continue
            c = cell.iloc[0]
            mark = "P" if _true(c["published_digits"]) else ("H" if _true(c["here_digits"]) else "")
            ax.add_patch(_rect(j, i, colours[mark]))
            ax.text(j, i, c["reproduced"], ha="center", va="center", fontsize=6)
    first = long.drop_duplicates("id").set_index("id")
    ax.set_xlim(-0.5, len(settings) - 0.5)
    ax.set_ylim(len(claims) - 0.5, -0.5)
    ax.set_xticks(
        range(len(settings)),
        [f"{s}\n{_short_numerics(long, s)}" for s in settings],
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
            Patch(color=colours["H"], label="README digits (the article's code, README machine)"),
            Patch(color=colours[""], label="other digits"),
        ],
        loc="upper left",
        bbox_to_anchor=(0, -0.04 - 0.6 / max(len(claims), 1)),
        ncols=3,
        fontsize=7,
        frameon=False,
    )
    fig.suptitle(
        "Numerics sweep: which settings (OpenBLAS kernel x NumPy CPU features) give the published digits",
        fontsize=10,
    )
    return fig


def _short_numerics(long, setting):
    """'OpenBLAS Haswell / NumPy AVX2' (the widest NumPy code path enabled) for a tick label."""
    row = long[long["setting"] == setting].iloc[0]
    features = str(row["numpy_features"]).split()
    simd = (
        "AVX-512"
        if {"X86_V4", "AVX512_ICL", "AVX512_SPR"} & set(features)
        else ("AVX2" if "X86_V3" in features else "baseline")
    )
    return f"OpenBLAS {row['openblas_kernel']}\nNumPy {simd}"


def _rect(x, y, colour):
    from matplotlib.patches import Rectangle

    return Rectangle((x - 0.48, y - 0.45), 0.96, 0.9, color=colour, linewidth=0)


def _short(text, width=60):
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def write(published_path, paths, csv_path, md_path, svg_path, settings_path=None):
    probe = json.loads(Path(settings_path).read_text()) if settings_path else None
    order = [r["setting"] for r in probe["settings"] if r["kept"]] if probe else None
    by_setting = loaders(paths)
    claims = swept_claims(ledger_io.load_claims(published_path), by_setting)
    long = evaluate(claims, by_setting, order) if claims else pd.DataFrame(columns=COLUMNS)
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


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="attnrepro.report.ledger_numerics", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--published", required=True)
    parser.add_argument("--settings", help="the probe's JSON (order and the settings not run)")
    parser.add_argument("--csv", required=True)
    parser.add_argument("--md", required=True)
    parser.add_argument("--svg", required=True)
    parser.add_argument("--inputs", nargs="*", default=[], help="the sweep's Parquet files")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    return write(args.published, args.inputs, args.csv, args.md, args.svg, args.settings)


if __name__ == "__main__":
    sys.exit(main())
