"""Read the published claims, evaluate them, write ``ledger.csv`` and ``LEDGER.md``."""

import logging

import yaml

from attnrepro import io
from attnrepro.report import ledger

log = logging.getLogger("attnrepro.report")


def load_claims(path):
    with open(path) as fh:
        entries = yaml.safe_load(fh)["claims"]
    claims = [ledger.Claim.from_dict(e) for e in entries]
    ids = [c.id for c in claims]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ValueError(f"duplicated claim ids in {path}: {', '.join(duplicated)}")
    return claims


def markdown(table):
    counts = ledger.summary(table)
    lines = ["# Ledger: every published number beside the reproduced one", ""]
    lines.append("Summary (claims per verdict, by article):")
    lines.append("")
    lines.append(counts.reset_index().to_markdown(index=False))
    lines.append("")
    lines.append("Classes: exact (the printed digits must come out), round-off (1e-16 level: judged "
                 "against a tolerance), stochastic (judged against the spread over seeds), "
                 "machine-bound (timings: judged by a band stated before measuring).")
    lines.append("")
    for article, rows in table.groupby("article", sort=True):
        lines.append(f"## Article {article}")
        lines.append("")
        cols = ["section", "claim", "published", "reproduced", "class", "verdict", "reason"]
        lines.append(rows[cols].to_markdown(index=False))
        lines.append("")
    return "\n".join(lines)


def write(published_path, load, csv_path, md_path, gate=False):
    table = ledger.evaluate(load_claims(published_path), load)
    with io.atomic_path(csv_path) as tmp:
        table.to_csv(tmp, index=False)
    io.write_text(md_path, markdown(table))
    counts = table["verdict"].value_counts().to_dict()
    log.info("ledger: %d claims, %s", len(table), counts)
    failures = ledger.exact_failures(table)
    if gate and len(failures):
        log.error("exact claims not reproduced:\n%s", failures[["id", "published", "reproduced"]].to_string())
        return 1
    return 0
