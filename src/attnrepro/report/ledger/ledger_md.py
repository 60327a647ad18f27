"""LEDGER.md: the text of the ledger, from its judged table (every claim not reproduced with its
reason, then every claim by article and section), and the section on the articles checked from
their text. Written by :mod:`attnrepro.report.ledger.files`; the check of one article writes its own
(:mod:`attnrepro.report.commands.article_check`)."""

from attnrepro import paths
from attnrepro.report.ledger import claims as published, contradictions, headline


def speed_lines(factors, rule):
    """The section of LEDGER.md on this machine's speed factor per article (report.speed)."""
    if not factors:
        return ["Machine speed: no raw time of this run to compare with the articles' (no speed factor)."]
    lines = ["**Machine speed** (raw times; src/attnrepro/report/ledger/speed.py): " + "; ".join(
        f.sentence() for f in factors.values()) + "."]
    if rule is not None:
        lines.append("A time of a timing experiment that timed the article's own code beside it is judged "
                     "against that code (src/attnrepro/report/ledger/yardstick.py); the factor is "
                     "information. "
                     f"Any other raw time is judged by whether its ratio lies within {rule.band:g}x of the "
                     f"factor of its article's other raw times (the factor computed without it): {rule.why}.")
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


def legend():
    """The classes, what *within tolerance* means in each (claims.WITHIN), and the undecided verdicts."""
    within = "; ".join(f"{cls}: {published.WITHIN[cls]}" for cls in published.CLASSES)
    undecided = "; ".join(f"*{verdict}*: {what}" for verdict, what in published.UNDECIDED.items())
    return (f"Classes, and what *within tolerance* means in each: {within}. Neither a match nor a "
            f"difference: {undecided}. Each band, tolerance and echo names its rationale "
            "(config/published.yaml, rationales), which its reason quotes.")


def markdown(table, factors=None, rule=None, article=None, run=None, stated=None, timings=None):
    """LEDGER.md: the verdict first (report.ledger.headline, as results/README.md opens), the notes
    on classes, numerics and speed, the timing cross-check (``timings``: disturbed.lines), every
    claim not reproduced with its reason, then every claim by article and section, one unpadded
    line each (its reason is in ledger.csv and above)."""
    lines = ["# Ledger: every published number beside the reproduced one", ""]
    lines += config_lines(article)
    lines += headline.lines(table, run, stated)
    lines.append(legend())
    lines.append("")
    lines.append(numerics_line(table))
    lines.append("")
    lines += speed_lines(factors or {}, rule)
    lines.append("")
    lines += [*timings, ""] if timings else []
    three = "article_code" in table.columns and (table["article_code"] != "").any()
    if three:
        lines.append("Three values side by side: published (the article), article_code (the article's own "
                     "code, run here: `snakemake --cores 2 listings`), reproduced (this pipeline, here).")
        lines.append("")
    lines.append("Below, first every claim not reproduced with what it is and its reason, each id a link to "
                 "the number in its article's annotated edition (`articles/<article>.html`); then every "
                 "claim by article and section, one table per verdict and class. `ledger.csv` holds the "
                 "same rows with every column.")
    lines.append("")
    off = "numerics" in table.columns and (table["numerics"] != "canonical").any()
    lines += _not_reproduced(table, [*(["article_code"] if three else []), *(["numerics"] if off else [])])
    names = headline.verdict_names(table)
    for article, rows in table.groupby("article", sort=True):
        lines += [f"## Article {article} ([annotated edition](articles/{article}.html))", ""]
        for section, part in rows.groupby("section", sort=False):
            lines += [f"### {section}", ""]
            for (verdict, cls), group in sorted(part.groupby(["verdict", "class"]),
                                                key=lambda kv: (names.index(kv[0][0]), _order(kv[0][1]))):
                lines += [f"{verdict}, {cls} ({len(group)}):", ""]
                lines += _rows(group, _columns(three, off))
                lines.append("")
    return "\n".join(lines)


def _order(cls):
    """A class's place in claims.CLASSES (exact first), an unknown one last."""
    return published.CLASSES.index(cls) if cls in published.CLASSES else len(published.CLASSES)


def _columns(three, off):
    """The columns of a claim's line after its id (its heading says its class and verdict; what it
    is, in ledger.csv and, when not reproduced, in the list above: the listing stays tens of KB):
    article_code beside the published value when the listings ran (``three``), numerics when some
    are not canonical."""
    return ["published", *(["article_code"] if three else []), "reproduced", *(["numerics"] if off else [])]


def _rows(rows, columns):
    """Unpadded Markdown rows of ``rows``: the id, then ``columns`` as printed (the published and
    reproduced digits kept as strings)."""
    return headline.table_lines(["id", *columns], [[r["id"], *(str(r[c]) for c in columns)]
                                                  for _, r in rows.iterrows()])


def _not_reproduced(table, extra):
    """The section of every claim whose verdict is not "reproduced": one item each, the id a link
    to its number in the edition, then what it is, the values and the reason on a line of its own
    (readable in a terminal as in a browser). ``extra``: columns shown beside the values."""
    off = table[table["verdict"] != "reproduced"]
    if off.empty:
        return []
    out = [f"## Not reproduced ({len(off)} claims, computed and echoes), with their reasons", ""]
    for article, rows in off.groupby("article", sort=True):
        out += [f"### Article {article}: {len(rows)}", ""]
        out += _items(article, rows, extra)
        out.append("")
    return out


def _items(article, rows, extra=()):
    """One item per claim of ``rows`` (of ``article``): its id a link to its number in the edition,
    what it is, the values, the bounds that decided its verdict (ledger.csv's accepted_low and
    accepted_high), ``extra`` columns, and the reason on a line of its own."""
    out = []
    for _, r in rows.iterrows():
        window = contradictions.bounds_text(r)
        more = (f", bounds {window}" if window else "") + "".join(f", {c} {r[c]}" for c in extra if str(r[c]))
        out.append(f"- [{r['id']}]({edition_link(article, r['id'])}) ({r['class']}, "
                   f"**{r['verdict']}**): {r['claim']}: published {r['published']}, reproduced "
                   f"{r['reproduced'] or 'none'}{more}.")
        out.append(f"  Reason: {' '.join(str(r['reason']).split()).rstrip('.') or 'none given'}.")
    return out


def edition_link(article, claim_id):
    """The link from ``results/`` (LEDGER.md) to a claim's number in the edition of the article
    ``article`` (its id)."""
    return f"{paths.relative(paths.edition_path(article))}#{claim_id}"


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


def checked_lines(checked):
    """LEDGER.md's section on the articles checked from their text: counted apart from the claims
    the articles' claims files hold, since a person has not confirmed them."""
    if checked.empty:
        return []
    lines = ["## Articles checked from their text", "",
             "Their claims are drafted from the text (src/attnrepro/articles/draft.py: "
             "results/claims/<id>.yaml) "
             "and judged by the same rules, counted apart from the claims of the claims files: a person "
             "confirms them by copying them into the article's claims file.", ""]
    for article, rows in checked.groupby("article", sort=True):
        counts = ", ".join(f"{n} {v}" for v, n in rows["verdict"].value_counts().items())
        lines += [f"### Article {article} ([annotated edition](articles/{article}.html)): {len(rows)} "
                  f"claims, {counts}", ""]
        lines += _items(article, rows[rows["verdict"] != "reproduced"])
        lines.append("")
    return lines
