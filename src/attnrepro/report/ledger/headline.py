"""The verdict first: the summary that ``results/LEDGER.md`` and ``results/README.md`` open with.

One function, :func:`lines`, writes it for both (report.ledger_io and report.index), from the
ledger's table (``results/ledger.csv``), the run's versions (the results' provenance:
:func:`run_environment`) and the versions each article states (``environment:`` of
config/published.yaml: :func:`stated_environment`). It says:

- how many computed claims (classes :data:`~attnrepro.report.ledger.claims.COMPUTED`) got each
  verdict, every verdict of the ledger named (:func:`verdict_names`), echoes counted apart, and
  the same per class (:func:`by_class`);
- why the others are not reproduced: one line per cause (:func:`causes`: verdict, class,
  experiment and the reason's opening words), naming the claims;
- the environment of the run against the articles' stated one;
- where the stochastic claims (the sort rows) stand.

The editions and the overview figure count with :func:`counts` too: one number in every product.
"""

import re
from collections import Counter

from attnrepro.dag import yamlfile
from attnrepro.report.ledger.claims import CLASSES, COMPUTED, VERDICTS
from attnrepro.run import io

PACKAGES = {"python": "Python", "numpy": "NumPy", "torch": "PyTorch"}  # the versions the articles state
_PARENTHESES = re.compile(r"\s*\((?:[^()]|\([^()]*\))*\)")  # a parenthesis, one level of nesting inside
_VALUE = r"[-+]?\d[\d.,]*(?:e[-+]?\d+)?"
_NUMBER = re.compile(rf"{_VALUE}(?:\s*[-\u2013]\s*{_VALUE})?")  # a number or a range: N
_CLAIM_ID = re.compile(r"\b\d{3}\.[A-Za-z_][\w.\-]*")  # a claim's id in a reason: [claim]
MOST = 15  # claims named on one line of causes: a summary, the full list follows it in LEDGER.md


def verdict_names(table):
    """The ledger's verdicts (claims.VERDICTS, in its order), then any other verdict the table holds."""
    return list(VERDICTS) + sorted(set(table["verdict"]) - set(VERDICTS))


def counts(table, computed=True):
    """{verdict: number of claims} of the computed claims (``computed=False``: of the echoes),
    every verdict of :func:`verdict_names` present, in its order."""
    rows = table[table["class"].isin(COMPUTED) == computed]
    found = Counter(rows["verdict"])
    return {verdict: found.get(verdict, 0) for verdict in verdict_names(table)}


def counts_sentence(found):
    """ "403 reproduced, 26 within tolerance, 9 differs, 0 missing, ..." of {verdict: n}."""
    return ", ".join(f"{n} {verdict}" for verdict, n in found.items())


def by_class(table):
    """[(class, {verdict: n})] for each class in the table, in claims.CLASSES order."""
    present = [c for c in CLASSES if (table["class"] == c).any()]
    names = verdict_names(table)
    return [(cls, {v: int(((table["class"] == cls) & (table["verdict"] == v)).sum()) for v in names})
            for cls in present]


def experiment_of(claim_id):
    """The experiment (or "prose") a claim id names: <article>.<experiment>.<rest>."""
    parts = str(claim_id).split(".")
    return parts[1] if len(parts) > 1 else str(claim_id)


def reason_head(reason):
    """The opening words of a reason: its first clause (up to a ";" outside parentheses), without
    parentheses, claim ids and numbers (the rationale it quotes, the cells, the values), so that
    claims judged by one rule share it."""
    text, depth = str(reason), 0
    for end, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == ";" and depth <= 0:
            text = text[:end]
            break
    words = " ".join(_NUMBER.sub("N", _CLAIM_ID.sub("[claim]", _PARENTHESES.sub("", text))).split())
    return words or "no reason given"


def causes(table):
    """[(verdict, class, experiment, head, [ids])]: the claims not reproduced, one entry per cause
    (verdict, class, experiment and reason head), computed claims first, in verdict order."""
    names = verdict_names(table)
    off = table[table["verdict"] != "reproduced"]
    groups = {}
    for _, row in off.iterrows():
        key = (row["verdict"], row["class"], experiment_of(row["id"]), reason_head(row["reason"]))
        groups.setdefault(key, []).append(row["id"])
    order = {c: i for i, c in enumerate(CLASSES)}
    return [(*key, ids) for key, ids in sorted(
        groups.items(), key=lambda kv: (kv[0][1] == "echo", names.index(kv[0][0]), order.get(kv[0][1], 99),
                                        kv[0][2], kv[0][3]))]


def named(ids, most=MOST):
    """The claim ids of one cause, in backticks; past ``most``, the count of the others."""
    shown = ", ".join(f"`{i}`" for i in ids[:most])
    return shown + (f" and {len(ids) - most} more (LEDGER.md lists every claim)" if len(ids) > most else "")


def run_environment(paths):
    """{package: [versions]} over the result files ``paths`` (their provenance's ``versions``), for
    the packages the articles state (PACKAGES); a package no file records is left out."""
    found = {}
    for path in paths:
        versions = io.read_provenance(path).get("versions") or {}
        for package in PACKAGES:
            if versions.get(package):
                found.setdefault(package, set()).add(str(versions[package]))
    return {package: sorted(found[package]) for package in PACKAGES if package in found}


def stated_environment(published_path):
    """{article: {package: version}}: what each article states it ran with (``environment:`` of
    config/published.yaml); refused naming the file and article for a package not in PACKAGES,
    and the file and line when the file is not plain data or gives a key twice (yamlfile.Refused)."""
    entry = yamlfile.load(published_path, fast=True).get("environment") or {}
    out = {}
    for article, versions in entry.items():
        unknown = sorted(set(versions or {}) - set(PACKAGES))
        if not isinstance(versions, dict) or unknown:
            raise ValueError(f"{published_path}: environment.{article} must map {', '.join(PACKAGES)} to "
                             f"the versions the article states; got {versions!r}")
        out[str(article)] = {k: str(v) for k, v in versions.items()}
    return out


def environment_line(run, stated):
    """One line: the run's versions against each article's stated ones, and which differ."""
    if not run:
        mine = "this run's versions are not recorded (no result file)"
    else:
        mine = "this run used " + ", ".join(f"{PACKAGES[p]} {' / '.join(v)}" for p, v in run.items())
    parts = []
    for article, versions in sorted(stated.items()):
        said = ", ".join(f"{PACKAGES[p]} {v}" for p, v in versions.items())
        differ = [PACKAGES[p] for p, v in versions.items() if p in run and run[p] != [v]]
        verdict = f"{', '.join(differ)} differ{'s' if len(differ) == 1 else ''}" if differ else "the same"
        parts.append(f"article {article} states {said} ({verdict})")
    return (f"**Environment**: {mine} (the results' provenance); "
            + ("; ".join(parts) if parts else "the articles state no versions") + ".")


def stochastic_line(table):
    """Where the stochastic claims (the sort rows) stand: their verdicts, naming each claim."""
    rows = table[table["class"] == "stochastic"]
    if rows.empty:
        return "**Sort rows**: no stochastic claim in this ledger."
    groups = []
    for verdict in verdict_names(table):
        named = [f"`{r['id']}` {r['published']} \u2192 {r['reproduced'] or 'none'}"
                 + (f" (the article's code here: {r['article_code']})" if r.get("article_code") else "")
                 for _, r in rows[rows["verdict"] == verdict].iterrows()]
        if named:
            groups.append(f"{len(named)} {verdict} ({'; '.join(named)})")
    return (f"**Sort rows** (the {len(rows)} stochastic claims, published \u2192 reproduced): "
            + "; ".join(groups) + ".")


def table_lines(header, rows):
    """A Markdown table without padding: one line per row, cells joined by " | ", pipes escaped (a
    cell's own spaces kept: "[ 0  1  0  4 10 11]" is printed so)."""
    def cell(value):
        return str(value).replace("\n", " ").strip().replace("|", "\\|")

    out = ["| " + " | ".join(map(cell, header)) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(map(cell, row)) + " |" for row in rows]


def lines(table, run=None, stated=None):
    """The summary, as Markdown lines: counts, counts per class, causes, environment, sort rows."""
    computed, echoes = counts(table), counts(table, computed=False)
    n_computed, n_echoes = sum(computed.values()), sum(echoes.values())
    out = [f"**Verdict**: {len(table)} claims, {n_computed} computed and {n_echoes} echoes. "
           f"Computed: {counts_sentence(computed)}. Echoes (counted apart): {counts_sentence(echoes)}.", ""]
    names = verdict_names(table)
    out += table_lines(["class", "claims", *names],
                       [[cls, sum(found.values()), *found.values()] for cls, found in by_class(table)])
    out.append("")
    found = causes(table)
    if found:
        out.append("Why the others are not reproduced (one line per cause: verdict, class, experiment, "
                   "the reason's opening words; each reason in full in LEDGER.md):")
        out.append("")
        for verdict, cls, experiment, head, ids in found:
            out.append(f"- **{verdict}**, {cls}, {experiment} ({len(ids)}): {head}: {named(ids)}")
        out.append("")
    out += [environment_line(run or {}, stated or {}), "", stochastic_line(table), ""]
    return out
