"""Read the published claims, evaluate them, write ``ledger.csv`` and ``LEDGER.md``."""

import logging

from attnrepro import io
from attnrepro.report import evidence, ledger

log = logging.getLogger("attnrepro.report")


def summary_line(counts):
    """One line: the count of each verdict per article ("000: 91 reproduced, 3 differs; 001: ...")."""
    parts = []
    for article, row in counts.iterrows():
        verdicts = ", ".join(f"{int(n)} {verdict}" for verdict, n in row.items() if n)
        parts.append(f"{article}: {verdicts}")
    return "; ".join(parts)


def markdown(table):
    counts = ledger.summary(table)
    lines = ["# Ledger: every published number beside the reproduced one", ""]
    lines.append(f"**Summary** ({len(table)} claims) - {summary_line(counts)}.")
    lines.append("")
    lines.append("Claims per verdict, by article:")
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
        cols = ["id", "section", "claim", "published", "reproduced", "class", "verdict", "reason"]
        cells = rows[cols].astype(str).apply(lambda col: col.str.replace("|", "\\|", regex=False))
        lines.append(cells.to_markdown(index=False, disable_numparse=True))  # keep the printed digits
        lines.append("")
    return "\n".join(lines)


def write(published_path, load, csv_path, md_path, gate=False, numerics_csv=None, seeds_csv=None):
    """Evaluate every claim; a round-off or stochastic deviation's reason cites the evidence
    products given (the numerics sweep's and the seed distribution's CSV), or says which
    target builds them."""
    claims = ledger.load_claims(published_path)
    found = evidence.reasons(numerics_csv, seeds_csv)
    cited = {name for name, path in (("numerics", numerics_csv), ("seeds", seeds_csv)) if path}
    table = evidence.annotate(ledger.evaluate(claims, load), claims, found, cited)
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
