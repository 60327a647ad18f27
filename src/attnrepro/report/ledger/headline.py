"""The verdict first: the summary that ``results/LEDGER.md`` and ``results/README.md`` open with.

One function, :func:`lines`, writes it for both (report.ledger.ledger_md and report.index), from the
ledger's table (``results/ledger.csv``), the run's versions (the results' provenance:
:func:`run_environment`) and the versions each article states (``environment:`` of
config/published.yaml: :func:`stated_environment`). It says:

- in a few plain sentences (:func:`opening`), what reproduces (counts by class), what does not and
  why (the rules the reasons open with), and what a reader may conclude, all counted from the rows;
- how many computed claims (classes :data:`~attnrepro.report.ledger.claims.COMPUTED`) got each
  verdict, every verdict of the ledger named (:func:`verdict_names`), echoes counted apart, and
  the same per class (:func:`by_class`);
- why the others are not reproduced: one line per cause (:func:`causes`: verdict, class,
  experiment and the rule its reasons open with), each claim with its own values: published ->
  reproduced and the numbers of its reason that differ from the other claims' (:class:`Cause`), each
  standing as a named marker in the shared words; a line whose words and values do not give back
  every claim's own reason head is refused (:func:`check_restores`): no number is dropped;
- the environment of the run against the articles' stated one;
- where the stochastic claims (the sort rows) stand.

The editions and the overview figure count with :func:`counts` too: one number in every product.
Verdicts and classes are read from claims.VERDICTS and claims.CLASSES, never listed here.
"""

import re
from collections import Counter
from dataclasses import dataclass, field

from attnrepro.dag import yamlfile
from attnrepro.report.ledger.claims import CLASSES, COMPUTED, VERDICTS
from attnrepro.run import io

PACKAGES = {"python": "Python", "numpy": "NumPy", "torch": "PyTorch"}  # the versions the articles state
ACCEPTED = ("reproduced", "within tolerance")  # the verdicts a reader may take as the article's numbers
_PARENTHESES = re.compile(r"\s*\((?:[^()]|\([^()]*\))*\)")  # a parenthesis, one level of nesting inside
_VALUE = r"[-+]?\d(?:[\d,]*\d)?(?:\.\d+)?(?:e[-+]?\d+)?"  # 4.18, 27,253, 1e-14: no sentence's "." or ","
_ID = r"\b\d{3}\.[A-Za-z_][\w.\-]*\w"  # a claim's id
# the values of a reason's opening words: a claim's id, or a number or a range (not a word's digits:
# float64), with its unit sign
_SLOT = re.compile(rf"{_ID}|(?<![\w.]){_VALUE}(?:\s*(?:[-\u2013]|to)\s*{_VALUE})?[x%]?")
_MARKER = re.compile("\u2039([^\u203a]*)\u203a")  # a marker of a cause's head: its label
_LABEL = re.compile(r"([A-Za-z][A-Za-z-]*)\s*$")  # the word before a value: what it is
MOST = 15  # claims named on one line of causes: a summary, the full list follows it in LEDGER.md
WORDS = 3  # the most words of a rule's name (the opening words of a reason before its ":")


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
    its parentheses (the rationale it quotes), with its own values."""
    text, depth = str(reason), 0
    for end, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == ";" and depth <= 0:
            text = text[:end]
            break
    return " ".join(_PARENTHESES.sub("", text).split()) or "no reason given"


def pattern(head):
    """A head with each value (number, range, claim id) as "#": what claims judged by one rule share."""
    return _SLOT.sub("#", head)


def values(head):
    """[(label, value)] of a head's values in order, each labelled by the word before it ("" if none),
    a factor ("4.18x", the ledger's notation for "times") labelled "factor"."""
    out = []
    for m in _SLOT.finditer(head):
        label = _LABEL.search(head[:m.start()])
        out.append(("factor" if m.group().endswith("x") else label.group(1) if label else "", m.group()))
    return out


@dataclass
class Cause:
    """Claims not reproduced for one reason: their verdict, class, experiment, the words their heads
    share (a value that differs between them stands as a marker, ``\u2039percentile\u203a``) and, per
    claim, (id, published, reproduced, [(label, value)] of the values its head does not share);
    ``heads``: each claim's own head, which :meth:`line` checks its text gives back."""

    verdict: str
    cls: str
    experiment: str
    head: str
    claims: list
    heads: list = field(default_factory=list)

    def line(self, most=MOST):
        """The cause as one Markdown item: its claims with their own values; refused (ValueError) when
        a claim's values, put in the head's markers, do not give back its head: a value was lost."""
        for claim, head in zip(self.claims, self.heads):
            check_restores(self.head, claim, head)
        return (f"- **{self.verdict}**, {self.cls}, {self.experiment} ({len(self.claims)}): {self.head}: "
                f"{named([claim_text(*c) for c in self.claims], most)}")


def restored(text, claim):
    """A cause's head ``text`` with each marker replaced by the value of ``claim`` (id, published,
    reproduced, own) it stands for, backticks dropped: the claim's own head, when nothing was lost."""
    _, published, reproduced, own = claim
    mine = {"published": published, "reproduced": reproduced, **dict(own)}
    return _MARKER.sub(lambda m: str(mine.get(m.group(1), m.group())), text).replace("`", "")


def check_restores(text, claim, head):
    """Refuse a cause line whose head ``text`` and claim's values do not give back the claim's ``head``
    (a marker without a value, a value empty, None or NaN, a value dropped)."""
    bad = [(k, v) for k, v in claim[3] if str(v).strip().lower() in ("", "none", "nan")]
    if bad or " ".join(restored(text, claim).split()) != " ".join(head.replace("`", "").split()):
        raise ValueError(f"headline: the cause line of {claim[0]} lost a value of its reason: "
                         f"{text!r} with {claim[3]!r} does not give back {head!r}")


def claim_text(claim_id, published, reproduced, own):
    """"`id` 0.981 \u2192 0.985 (percentile 12, interval 0.975 to 0.990)": a claim with its own values."""
    extra = ", ".join(f"{label} {_shown(value)}".strip() for label, value in own)
    return (f"`{claim_id}` {published} \u2192 {reproduced or 'none'}" + (f" ({extra})" if extra else ""))


def _shown(value):
    """A value of a reason as the headline prints it: a claim's id in backticks."""
    return f"`{value}`" if re.fullmatch(_ID, value) else value


def shared(heads, known=None):
    """The words ``heads`` (of one pattern) share: each value they all hold kept, any other replaced
    by a marker named by its label (\u2039percentile\u203a), and per head the [(label, value)] the
    markers stand for.
    ``known``: per head its claim's (published, reproduced); a value that is each claim's published
    (reproduced) one is marked so and not repeated, since the claim's text prints it."""
    found = [values(h) for h in heads]
    known = known or [(None, None)] * len(heads)
    parts = _SLOT.split(heads[0])
    pieces, own, names = [parts[0]], [[] for _ in heads], Counter()
    for i, (label, first) in enumerate(found[0]):
        slot = [f[i][1] for f in found]
        if len(set(slot)) == 1:
            pieces.append(_shown(first))
        else:
            name = _printed_as(slot, known) or label or "value"
            names[name] += 1
            name = name if names[name] == 1 else f"{name} {names[name]}"
            pieces.append(f"\u2039{name}\u203a")  # a marker: where each claim's own value stands
            if name not in ("published", "reproduced"):
                for mine, value in zip(own, slot):
                    mine.append((name, value))
        pieces.append(parts[i + 1])
    return " ".join("".join(pieces).split()), own


def _printed_as(slot, known):
    """"published" ("reproduced") when each value of ``slot`` is its claim's published (reproduced)."""
    for k, name in enumerate(("published", "reproduced")):
        if all(value == str(pair[k]) for value, pair in zip(slot, known)):
            return name
    return None


def causes(table):
    """[Cause] of the claims not reproduced, one per verdict, class, experiment and pattern of their
    reasons' heads, computed claims first, in verdict order."""
    names = verdict_names(table)
    groups = {}
    for _, row in table[table["verdict"] != "reproduced"].iterrows():
        head = reason_head(row["reason"])
        key = (row["verdict"], row["class"], experiment_of(row["id"]), pattern(head))
        groups.setdefault(key, []).append((row, head))
    order = {c: i for i, c in enumerate(CLASSES)}
    out = []
    for (verdict, cls, experiment, _), members in sorted(groups.items(), key=lambda kv: (
            kv[0][1] not in COMPUTED, names.index(kv[0][0]), order.get(kv[0][1], len(order)), kv[0][2],
            kv[0][3])):
        heads = [h for _, h in members]
        head, own = shared(heads, [(r["published"], r["reproduced"]) for r, _ in members])
        claims = [(r["id"], r["published"], r["reproduced"], mine) for (r, _), mine in zip(members, own)]
        out.append(Cause(verdict, cls, experiment, head, claims, heads))
    return out


def named(items, most=MOST):
    """The claims of one cause (their texts), "; "-joined; past ``most``, the count of the others."""
    more = f" and {len(items) - most} more (LEDGER.md lists every claim)" if len(items) > most else ""
    return "; ".join(items[:most]) + more


def rule(cause):
    """The rule a cause's reasons open with: their words before the first ":" when that is a name
    of at most :data:`WORDS` words ("raw time", "round-off"), else the claims' class."""
    name = " ".join(_SLOT.sub("", _MARKER.sub("", cause.head.split(":")[0])).replace("`", "").split())
    return name if ":" in cause.head and 0 < len(name.split()) <= WORDS else cause.cls


def _listed(parts):
    """"a", "a and b", "a, b and c"."""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def opening(table):
    """Three to five plain sentences counted from the rows: what reproduces (by class), what does not
    and the rules its reasons open with, and what a reader may conclude."""
    computed = table[table["class"].isin(COMPUTED)]
    classes = [c for c in CLASSES if c in COMPUTED and (computed["class"] == c).any()]
    off = computed[computed["verdict"] != "reproduced"]
    if off.empty:
        return [reproduced_sentence(table, computed, classes), "Every computed claim reproduces as printed."]
    return [reproduced_sentence(table, computed, classes), others_sentence(table, off),
            why_sentence(table, off), conclusion(computed, classes)]


def reproduced_sentence(table, computed, classes):
    """How many computed claims reproduce, by class, and those of the classes counted apart (echoes)."""
    done = computed["verdict"] == "reproduced"
    per_class = [f"{int(done[computed['class'] == c].sum())} of {int((computed['class'] == c).sum())} {c}"
                 for c in classes]
    apart = "".join(f"; of the {_claims(int((table['class'] == c).sum()), c)}, counted apart, "
                    f"{int(((table['class'] == c) & (table['verdict'] == 'reproduced')).sum())} reproduce"
                    for c in CLASSES if c not in COMPUTED and (table["class"] == c).any())
    return (f"{int(done.sum())} of the {len(computed)} computed claims reproduce as printed "
            f"({', '.join(per_class)}){apart}.")


def _claims(n, cls):
    """"1 echo claim", "273 echo claims"."""
    return f"{n} {cls} claim{'' if n == 1 else 's'}"


def _by_verdict(table, off):
    """[(verdict, rows)] of the claims ``off`` by verdict, in the ledger's order."""
    return [(v, off[off["verdict"] == v]) for v in verdict_names(table) if (off["verdict"] == v).any()]


def others_sentence(table, off):
    """The computed claims not reproduced, by verdict and class."""
    parts = [f"{len(rows)} {v} ({', '.join(f'{n} {c}' for c, n in _class_counts(rows))})"
             for v, rows in _by_verdict(table, off)]
    return f"The other {len(off)} are {_listed(parts)}."


def why_sentence(table, off):
    """Per verdict, the rules the reasons of the claims ``off`` open with (:func:`rule`), most first."""
    found = causes(off)
    why = []
    for verdict, _ in _by_verdict(table, off):
        rules = Counter()
        for cause in found:
            if cause.verdict == verdict:
                rules[rule(cause)] += len(cause.claims)
        why.append(f"{verdict}: " + ", ".join(f"{name} ({n})" for name, n in rules.most_common()))
    return "Why, by the rule each reason opens with: " + "; ".join(why) + "."


def _class_counts(rows):
    """[(class, n)] of ``rows`` in claims.CLASSES order."""
    return [(c, int((rows["class"] == c).sum())) for c in CLASSES if (rows["class"] == c).any()]


def conclusion(computed, classes):
    """What a reader may conclude: the classes that reproduce in full, how many claims are accepted
    (:data:`ACCEPTED`), and which classes the others belong to."""
    full = [c for c in classes if (computed.loc[computed["class"] == c, "verdict"] == "reproduced").all()]
    accepted = computed["verdict"].isin(ACCEPTED)
    rest = computed[~accepted]
    said = (f"every {_listed(full)} claim reproduces as printed" if full else "no class reproduces in full")
    text = (f"So {said}, and {int(accepted.sum())} of the {len(computed)} computed claims reproduce or lie "
            f"within their tolerance")
    if rest.empty:
        return text + "."
    kinds = _class_counts(rest)
    kinds = f"all {kinds[0][0]}" if len(kinds) == 1 else _listed([f"{n} {c}" for c, n in kinds])
    return (f"{text}; this run does not confirm the other {len(rest)} ({kinds}): their reasons below "
            "say what decided.")


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
    """The summary, as Markdown lines: the opening sentences, counts, counts per class, causes (each
    claim with its own values), environment, sort rows."""
    computed, echoes = counts(table), counts(table, computed=False)
    n_computed, n_echoes = sum(computed.values()), sum(echoes.values())
    out = ["**In short**: " + " ".join(opening(table)), ""] if len(table) else []
    out += [f"**Verdict**: {len(table)} claims, {n_computed} computed and {n_echoes} echoes. "
            f"Computed: {counts_sentence(computed)}. Echoes (counted apart): {counts_sentence(echoes)}.", ""]
    names = verdict_names(table)
    out += table_lines(["class", "claims", *names],
                       [[cls, sum(found.values()), *found.values()] for cls, found in by_class(table)])
    out.append("")
    found = causes(table)
    if found:
        out.append("Why the others are not reproduced (one line per cause: verdict, class, experiment, the "
                   "words its reasons open with, a value that differs from claim to claim shown as "
                   "\u2039its name\u203a; then each claim, published \u2192 reproduced, with its values of "
                   "those names; each reason in full in LEDGER.md):")
        out.append("")
        out += [cause.line() for cause in found]
        out.append("")
    out += [environment_line(run or {}, stated or {}), "", stochastic_line(table), ""]
    return out
