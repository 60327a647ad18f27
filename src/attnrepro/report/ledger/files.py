"""The ledger's files, written from its judged table: ``ledger.csv`` (with the column numerics and
the rows of the articles checked from their text), ``LEDGER.md`` (its text:
:mod:`attnrepro.report.ledger.ledger_md`) and ``speed.csv``; and the gate on exact claims.

The table comes judged, its evidence cited (:mod:`attnrepro.report.commands.ledger`, which reads the
evidence through :mod:`attnrepro.report.evidence_tables.citations`, a layer above the ledger).
"""

import logging

import pandas as pd

from attnrepro.run import io
from attnrepro.report.ledger import disturbed, headline, ledger_md, speed
from attnrepro.report.ledger import verdicts as ledger

log = logging.getLogger("attnrepro.report")


def numerics_column(claims, load):
    """Per claim: 'canonical' when every file it reads ran the canonical numerics, else which did
    not and why (results.Loader.numerics; the selector's ``over`` reads a second table)."""
    out = []
    for claim in claims:
        source = claim.source
        tables = [(source["experiment"], source.get("table", "main"))]
        if source.get("over"):
            over = {"experiment": tables[0][0], "table": tables[0][1], **source["over"]}
            tables.append((over["experiment"], over["table"]))
        off = [state for state in dict.fromkeys(load.numerics(*t) for t in tables) if state != "canonical"]
        out.append("; ".join(off) or "canonical")
    return out


def _files(load):
    """The result files a loader reads (results.Loader.files), none for a loader without files."""
    return [path for found in getattr(load, "files", {}).values() for _, path in found]


def checked_table(csv_paths):
    """The ledger rows of the articles checked from their text (each check's CSV), in one table."""
    frames = [pd.read_csv(path, dtype=str, keep_default_na=False) for path in csv_paths]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=ledger.COLUMNS)


def write(table, claims, rule, load, published_path, csv_path, md_path, gate=False, speed_csv=None,
          article=None, checked_csvs=()):
    """Write the ledger's files from ``table``, the judged ``claims`` (the speed ``rule`` of the
    claims file ``published_path``) with their evidence cited: ledger.csv, with the rows of the
    articles checked from their text (``checked_csvs``: their checks' CSVs) that LEDGER.md counts
    apart (:func:`~attnrepro.report.ledger.ledger_md.checked_lines`); LEDGER.md, with the versions
    the run's files (read by ``load``) and the articles state; the speed factor of each article
    (``speed_csv``, when given). ``article`` (a comparable.Article): what the article's config plans;
    LEDGER.md says which sections of the config differ. Its status: 1 with ``gate`` when an exact
    claim is not reproduced, else 0."""
    factors = ledger.raw_time_factors(claims, load)
    checked = checked_table(checked_csvs)
    with io.atomic_path(csv_path) as tmp:
        pd.concat([table, checked], ignore_index=True).to_csv(tmp, index=False)
    text = ledger_md.markdown(table, factors, rule, article, headline.run_environment(_files(load)),
                              headline.stated_environment(published_path), disturbed.lines(load))
    io.write_text(md_path, "\n".join([text, "", *ledger_md.checked_lines(checked)]) if len(checked) else text)
    if speed_csv is not None:
        rules = speed.judging(table, rule)
        rows = pd.DataFrame([f.row(rules.get(f.article)) for f in factors.values()], columns=speed.COLUMNS)
        with io.atomic_path(speed_csv) as tmp:
            rows.to_csv(tmp, index=False)
    counts = table["verdict"].value_counts().to_dict()
    log.info("ledger: %d claims, %s", len(table), counts)
    failures = ledger.exact_failures(table)
    if gate and len(failures):
        log.error("exact claims not reproduced:\n%s", failures[["id", "published", "reproduced"]].to_string())
        return 1
    return 0
