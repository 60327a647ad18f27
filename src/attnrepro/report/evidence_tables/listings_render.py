"""The listings' products: the claims' CSV, the listings' CSV, the Markdown tables and the SVG.

:func:`write` sets each article's run of its listings against its published output
(:mod:`attnrepro.report.evidence_tables.listings_evaluate`) and writes (paths:
``attnrepro.evidence.LISTINGS``):
``article_code.csv`` (one row per claim: the article code's value here, what the ledger reads),
``listings.csv`` (one row per listing: ran or failed and why, seconds, numbers printed, published
and equal), ``article_code.md`` (per article, then per listing, then every claim whose value here is
not the published one) and ``article_code.svg`` (per listing, the published numbers its output
gives digit for digit). The report job runs it (``workflow/rules/evidence.smk``, target
``listings``); by hand:

    python -m attnrepro.jobs.listings --published config/published.yaml \
        --runs results/listings/runs/*.json --csv c.csv --listings-csv l.csv --md t.md --svg f.svg
"""

import json
import logging
from pathlib import Path

import pandas as pd

from attnrepro.run import io
from attnrepro.report.evidence_tables import listings_evaluate as evaluate_
from attnrepro.report.ledger import verdicts
from attnrepro.report.products import render

log = logging.getLogger("attnrepro.report")
CLAIM_SHOWN = ["id", "class", "listing", "line", "published", "article_code", "why"]
UNTESTED = ("Python 3.14 is not available on this machine kind: the listings run with the lock's "
            "Python")


def environment_line(runs):
    """What the listings ran with, article by article, against what the articles state."""
    parts = []
    for article, run in sorted(runs.items()):
        env, pin = run["environment"], run["pin"]
        numerics = run.get("numerics") or {}
        pinned = "pinned" if pin.get("applied") else f"not pinned ({pin.get('reason')})"
        parts.append(f"{article}: Python {env['python']}, NumPy {env['numpy']}, torch {env['torch']}, "
                     f"numerics {pin['pin']} {pinned} (OpenBLAS {numerics.get('openblas_kernel') or '-'}, "
                     f"NumPy {numerics.get('numpy_features') or '-'}, "
                     f"torch {numerics.get('torch_capability') or 'not loaded'})")
    return "; ".join(parts)


def _seconds(values):
    """Seconds as the tables print them: one decimal, empty where a listing did not run."""
    return [f"{s:.1f}" if pd.notna(s) else "" for s in pd.to_numeric(values, errors="coerce")]


def markdown(listings, claims, runs):
    summary = evaluate_.summary(listings)
    summary = summary.assign(seconds=_seconds(summary["seconds"]))
    shown = listings.assign(seconds=_seconds(listings["seconds"]))
    differing = claims[(claims["article_code"] != "") & (claims["equal"] != True)]  # noqa: E712
    unprinted = claims[claims["article_code"] == ""]
    lines = ["# The articles' own code, run here", "",
             "Each article's listings, read from its text, run in order and verbatim in one interpreter "
             "(the article says they are read so), with the numerics pin and the listings' own thread "
             f"counts. {environment_line(runs)}. {UNTESTED}, and the author's CPU is unknown.", "",
             summary.to_markdown(index=False, disable_numparse=True), "",
             "## Listings", "",
             "output: equal when the printed output is the published block number for number; "
             "left_out: an output block after the first that nothing printed matches (not the listing's).",
             "", render._escape_pipes(shown).to_markdown(index=False, disable_numparse=True), "",
             f"## Claims whose value here is not the published one ({len(differing)} of "
             f"{len(claims) - len(unprinted)} printed here; {len(unprinted)} not printed by any listing)", "",
             render._escape_pipes(differing[CLAIM_SHOWN]).to_markdown(index=False, disable_numparse=True), ""]
    return "\n".join(lines)


def draw(listings):
    """Per listing: its published numbers, and how many of them its output gives digit for digit."""
    from attnrepro.report.products import style  # noqa: F401  (Agg backend)
    from matplotlib.figure import Figure

    shown = listings[listings["numbers_published"] > 0].reset_index(drop=True)
    fig = Figure(figsize=(8, 1 + 0.28 * max(len(shown), 1)), layout="constrained")
    ax = fig.subplots()
    labels = [f"{a} listing {i} (line {f})" for a, i, f in
              zip(shown["article"], shown["listing"], shown["first_line"])]
    y = range(len(shown))
    ax.barh(y, shown["numbers_published"], color="#e5e7e9", label="published numbers")
    ax.barh(y, shown["numbers_equal"], color="#27ae60", label="printed here digit for digit")
    ax.set_yticks(list(y), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("numbers in the published output")
    ax.legend(fontsize=7, frameon=False, loc="lower right")
    fig.suptitle("The articles' own code, run here: the published numbers it prints again", fontsize=10)
    return fig


def write(published_path, run_paths, csv_path, listings_csv, md_path, svg_path):
    runs = {}
    for path in run_paths:
        run = json.loads(Path(path).read_text())
        runs[run["article"]] = run
    texts = evaluate_.texts_of({a: r["text"] for a, r in runs.items()})
    listings, claims = evaluate_.evaluate(verdicts.load_claims(published_path), runs, texts)
    for path, table in ((csv_path, claims), (listings_csv, listings)):
        with io.atomic_path(path) as tmp:
            table.to_csv(tmp, index=False)
    io.write_text(md_path, markdown(listings, claims, runs))
    render.write_figure(draw(listings), svg_path)
    for row in evaluate_.summary(listings).itertuples():
        log.info("listings of %s: %d of %d ran in %.0f s; %d of %d published numbers printed again; "
                 "outputs equal: %s", row.article, row.ran, row.listings, row.seconds, row.numbers_equal,
                 row.numbers_published, row.outputs_equal)
    return 0
