"""Read the published claims, evaluate them, write ``ledger.csv``, ``LEDGER.md`` and ``speed.csv``."""

import logging

import pandas as pd

from attnrepro.run import io
from attnrepro.report.evidence import citations
from attnrepro.report.ledger import claims as published, disturbed, verdicts as ledger, speed
from attnrepro.evidence import articles

log = logging.getLogger("attnrepro.report")


def summary_line(counts):
    """One line: the count of each verdict per article ("000: 91 reproduced, 3 differs; 001: ...")."""
    parts = []
    for article, row in counts.iterrows():
        verdicts = ", ".join(f"{int(n)} {verdict}" for verdict, n in row.items() if n)
        parts.append(f"{article}: {verdicts}")
    return "; ".join(parts)


def speed_lines(factors, rule):
    """The section of LEDGER.md on this machine's speed factor per article (report.speed)."""
    if not factors:
        return ["Machine speed: no raw time of this run to compare with the articles' (no speed factor)."]
    lines = ["**Machine speed** (raw times; src/attnrepro/report/ledger/speed.py): " + "; ".join(
        f.sentence() for f in factors.values()) + "."]
    if rule is not None:
        lines.append(f"A raw time is judged by whether its ratio lies within {rule.band:g}x of its article's "
                     f"factor: {rule.why}.")
    return lines


def config_lines(article):
    """What LEDGER.md says first when the run's config is not the article's (report.comparable)."""
    if article is None or not article.sections:
        return []
    differ = "; ".join(f"{s} ({', '.join(keys)})" for s, keys in sorted(article.sections.items()))
    return [f"**This run's config is not the article's** (config/config.yaml) in: {differ}. A claim "
            "computed with other parameters than the article's, or whose row the config left out, is "
            "judged *other parameters* and its reason names the keys: it is not compared with the "
            "article.", ""]


def markdown(table, factors=None, rule=None, article=None, timings=None):
    """LEDGER.md; ``timings``: the lines of the timing cross-check (disturbed.lines)."""
    computed = table[table["class"] != "echo"]
    echoes = table[table["class"] == "echo"]
    counts = ledger.summary(computed)
    lines = ["# Ledger: every published number beside the reproduced one", ""]
    lines += config_lines(article)
    lines.append(f"**Summary** ({len(computed)} computed claims) - {summary_line(counts)}.")
    lines.append("")
    lines.append(f"Apart from them, {len(echoes)} echoes of the configuration (values the article prints "
                 "back, or counts and shapes that follow from its sizes alone): "
                 f"{int((echoes['verdict'] == 'reproduced').sum())} reproduced, "
                 f"{int((echoes['verdict'] != 'reproduced').sum())} not.")
    lines.append("")
    lines.append("Computed claims per verdict, by article:")
    lines.append("")
    lines.append(counts.reset_index().to_markdown(index=False))
    lines.append("")
    lines.append("Classes: exact (the printed digits must come out), echo (judged as exact, counted apart), "
                 "round-off (1e-16 level: judged against a tolerance), stochastic (judged against the 95% "
                 "interval of the 3-seed statistics of the seed distribution, or, where the run has none, "
                 "against the run's own seeds, as the reason says; a published range row by row, each L's "
                 "3-seed mean inside it), machine-bound (timings: a raw time against the article's speed "
                 "factor, a ratio or slope by its band). Each band, tolerance and echo names its rationale "
                 "(config/published.yaml, rationales), which its reason quotes.")
    lines.append("")
    lines.append(numerics_line(table))
    lines.append("")
    lines += speed_lines(factors or {}, rule)
    lines.append("")
    lines += [*timings, ""] if timings else []
    if "article_code" in table.columns and (table["article_code"] != "").any():
        lines.append("Three values side by side: published (the article), article_code (the article's own "
                     "code, run here: `snakemake --cores 2 listings`), reproduced (this pipeline, here).")
        lines.append("")
    lines.append("Each id links to the number in its article's annotated edition "
                 "(`articles/<article>.html`).")
    lines.append("")
    off = "numerics" in table.columns and (table["numerics"] != "canonical").any()
    for article, rows in table.groupby("article", sort=True):
        lines.append(f"## Article {article}")
        lines.append("")
        cols = ["id", "section", "claim", "published", "reproduced", "class", "verdict", "reason"]
        if "article_code" in table.columns and (table["article_code"] != "").any():  # three values
            cols.insert(cols.index("published") + 1, "article_code")
        cols += ["numerics"] if off else []
        cells = rows[cols].astype(str).apply(lambda col: col.str.replace("|", "\\|", regex=False))
        cells["id"] = [f"[{i}]({articles.edition_link(article, i)})" for i in cells["id"]]
        lines.append(cells.to_markdown(index=False, disable_numparse=True))  # keep the printed digits
        lines.append("")
    return "\n".join(lines)


def numerics_line(table):
    """One line: whether every claim was computed with the canonical numerics (column numerics)."""
    if "numerics" not in table.columns:
        return "Numerics: not recorded."
    off = int((table["numerics"] != "canonical").sum())
    if not off:
        return (f"Numerics: all {len(table)} claims computed with the canonical numerics "
                "(`numerics.pin`, src/attnrepro/numerics/canonical.py): "
                "the same bits on every x86-64 host with AVX2.")
    return (f"Numerics: **{off} of {len(table)} claims computed with non-canonical numerics** (column "
            "numerics names the files and why): another host may give other last digits.")


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


def write(published_path, load, csv_path, md_path, gate=False, numerics_csv=None, seeds_csv=None,
          speed_csv=None, article=None, listings_csv=None):
    """Evaluate every claim: the stochastic ones against the seed distribution's CSV when given
    (else the run's own seeds, as their reasons say), the raw times against each article's speed
    factor (written to ``speed_csv`` when given); a round-off or stochastic deviation's reason
    cites the numerics sweep's and the listings' CSV when given, or says which target builds
    them; column article_code: what the articles' own code prints here (the listings).
    ``article`` (a comparable.Article): what the article's config plans; a claim computed
    otherwise is judged "other parameters", and LEDGER.md says which sections of the config differ."""
    claims = ledger.load_claims(published_path)
    rule = published.load_speed(published_path)
    found = citations.found(numerics_csv, listings_csv, claims, load)
    cited = citations.cited(numerics_csv=numerics_csv, listings_csv=listings_csv)
    table = citations.annotate(ledger.evaluate(claims, load, citations.spread(seeds_csv, load), rule,
                                               article), claims, found, cited)
    table = citations.with_article_code(table, listings_csv)
    table["numerics"] = numerics_column(claims, load)
    factors = ledger.raw_time_factors(claims, load)
    with io.atomic_path(csv_path) as tmp:
        table.to_csv(tmp, index=False)
    io.write_text(md_path, markdown(table, factors, rule, article, disturbed.lines(load)))
    if speed_csv is not None:
        rows = pd.DataFrame([f.row(rule) for f in factors.values()], columns=speed.COLUMNS)
        with io.atomic_path(speed_csv) as tmp:
            rows.to_csv(tmp, index=False)
    counts = table["verdict"].value_counts().to_dict()
    log.info("ledger: %d claims, %s", len(table), counts)
    failures = ledger.exact_failures(table)
    if gate and len(failures):
        log.error("exact claims not reproduced:\n%s", failures[["id", "published", "reproduced"]].to_string())
        return 1
    return 0
