"""The annotated edition of an article: its text as published, every judged number marked.

``results/articles/<article>.html`` is built from the article's text and title (its entry of
config ``articles``, :mod:`attnrepro.articles.catalog`; its blocks: :mod:`attnrepro.articles.forms`),
the claims of its claims file (where each number stands: ``location``) and ``results/ledger.csv``
(each claim's verdict, reproduced value, class and reason). Every claim of the article is one
highlight, whose element id is the claim's id (``001.html#<claim id>``): its colour is the
verdict, its underline the class; hovering or focusing it shows the reproduced value, the reason,
and links to the tables and figures that show the number and to the Parquet files it was read
from. The page is self-contained (inline CSS and script, system fonts:
:mod:`attnrepro.report.editions.page`).

A location outside the text or on no number stops the build (``LocationError``). A location that
holds another number than the claim's printed string (a published value edited away from the
article's: tests/test_articles.py fails on it) marks the number the article prints there, and its
details say that the two differ: the verdict shown is always the ledger's.
"""

import html
import logging
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from attnrepro import paths
from attnrepro.run import io
from attnrepro.dag import plan
from attnrepro.report.products import catalog
from attnrepro.report.editions import page as editions_page
from attnrepro.articles import catalog as articles_catalog
from attnrepro.articles import plain
from attnrepro.report.ledger import contradictions, verdicts
from attnrepro.report.editions.page import CLAIM_CLASSES, VERDICT_CLASSES

log = logging.getLogger("attnrepro.report")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class LocationError(ValueError):
    """A claim's location does not hold its printed string in the article's text."""


@dataclass
class Note:
    """One highlight: a claim, where it stands, and how this run judged it."""

    id: str
    line: int
    column: int
    printed: str  # what the article prints at the location (span)
    claim: str
    published: str
    cls: str
    verdict: str
    reproduced: str
    reason: str
    bounds: str = ""  # the window that decided its verdict, as the ledger gives it (bounds_text)
    links: list = field(default_factory=list)  # (label, relative href)
    faithful: bool = True  # the location holds the claim's printed form (span)

    @property
    def end(self):
        return self.column + len(self.printed)


def printed(claim):
    """The claim's printed form in the article: location.text, or its published string."""
    return str(claim.location.get("text", claim.published))


_TOKEN = re.compile(r"[-+]?\d[\d,]*(?:\.\d*)?(?:e[-+]?\d+)?%?|\w+")


def span(claim, lines):
    """(what the article prints at the claim's location, whether it is the claim's printed form).
    Where the location does not hold the printed form (a published value edited away from the
    article's, a transcription error: tests/test_articles.py fails on it), the number or word that
    starts there is marked, and its details say so. A location outside the text, or on no number
    or word, or an id unfit for HTML, is a LocationError."""
    if not _ID.fullmatch(claim.id):
        raise LocationError(f"claim id {claim.id!r} is not a valid HTML id")
    line, column, text = claim.location["line"], claim.location["column"], printed(claim)
    here = lines[line - 1][column - 1:] if line <= len(lines) else ""
    if here.startswith(text):
        return text, True
    token = _TOKEN.match(here)
    if token is None:
        raise LocationError(f"claim {claim.id}: line {line}, column {column} of article {claim.article} "
                            f"holds no number (reads {here[:20]!r}; config/published.yaml, location)")
    return token.group(0), False


def _as_list(value):
    return value if isinstance(value, list) else [value]


class Planned:
    """What a run's config plans, computed once per edition: the products it builds, and each
    experiment's cases."""

    def __init__(self, config):
        self.config = config
        self.products = {p.name for p in catalog.enabled(config)}
        self._cases = {}

    def cases(self, experiment):
        if experiment not in self._cases:
            self._cases[experiment] = plan.cases(experiment, self.config)
        return self._cases[experiment]


def _cases(source, planned):
    """The cases of the source's experiment whose parameters agree with its ``where`` (a parameter
    that lists values, a grid inside one case, agrees when it holds a wanted one)."""
    where = source.get("where") or {}
    return [case for case, params in planned.cases(source["experiment"]).items()
            if all(set(map(str, _as_list(params[k]))) & set(map(str, _as_list(v)))
                   for k, v in where.items() if k in params)]


def links(claim, planned, limit=6):
    """(label, href relative to results/articles/) of the tables and figures that read the claim's
    experiment in this run (``planned``: a Planned), and of the Parquet files its value comes from."""
    source = claim.source
    out = []
    for product in catalog.of_experiment(source["experiment"]):
        if product.name in planned.products:
            path = product.outputs["md" if product.kind == "table" else "svg"]
            out.append((f"{product.kind} {product.name}", "../" + paths.relative(path)))
    table = source.get("table", "main")
    files = [plan.output_path(source["experiment"], case, table) for case in _cases(source, planned)]
    for path in files[:limit]:
        out.append((f"data {Path(path).name}", "../" + paths.relative(path)))
    if len(files) > limit:
        folder = paths.relative(Path(files[0]).parent)
        out.append((f"and {len(files) - limit} more data files", f"../{folder}/"))
    return out


def _judged(rows, claim_id):
    """(verdict, reproduced, reason, bounds) of a claim in the ledger ``rows`` ({id: row})."""
    if claim_id not in rows:
        return "missing", "", "this claim is not in the ledger", ""
    row = rows[claim_id]

    def cell(name):
        value = row.get(name, "")
        return "" if pd.isna(value) else str(value)

    return cell("verdict") or "missing", cell("reproduced"), cell("reason"), contradictions.bounds_text(row)


def notes(claims, table, config, lines):
    """A Note per claim, judged by the ledger ``table`` (a claim it lacks: missing), placed in the
    article's ``lines``; links to the run's products and data when a run's ``config`` is given."""
    rows = {row["id"]: row for row in table.to_dict("records")}
    planned = Planned(config) if config is not None else None
    out = []
    for claim in claims:
        shown, faithful = span(claim, lines)
        verdict, reproduced, reason, window = _judged(rows, claim.id)
        out.append(Note(claim.id, claim.location["line"], claim.location["column"], shown,
                        claim.claim, claim.published, claim.cls, verdict, reproduced, reason, window,
                        links(claim, planned) if planned is not None else [], faithful))
        if not faithful:
            log.warning("claim %s: the article prints %r at its location, not %r",
                        claim.id, shown, printed(claim))
    return out


def _tip(note, number):
    """The details of a highlight: shown on hover and focus."""
    reproduced = html.escape(note.reproduced or "none")
    parts = [f'<span class="tip-head"><b>{html.escape(note.verdict)}</b> · {html.escape(note.cls)}</span>',
             (f'<span class="tip-row">published <b>{html.escape(note.published)}</b>, reproduced '
              f'<b class="tip-reproduced">{reproduced}</b>'
              + (f", bounds <b>{html.escape(note.bounds)}</b>" if note.bounds else "") + "</span>"),
             f'<span class="tip-row">{html.escape(note.claim)}</span>']
    if note.reason:
        parts.append(f'<span class="tip-row tip-reason">{html.escape(note.reason)}</span>')
    if not note.faithful:
        parts.append(f'<span class="tip-row tip-warning">the article prints {html.escape(note.printed)} '
                     f"here, not the published {html.escape(note.published)} (config/published.yaml)</span>")
    refs = [f'<a href="{html.escape(href)}">{html.escape(label)}</a>' for label, href in note.links]
    refs.append(f'<a href="#{html.escape(note.id)}">link to this number</a>')
    parts.append(f'<span class="tip-row tip-links">{" · ".join(refs)}</span>')
    return f'<span class="tip" role="tooltip" id="tip-{number}">{"".join(parts)}</span>'


def _highlight(note, number):
    classes = f"claim {VERDICT_CLASSES.get(note.verdict, 'v-missing')} {CLAIM_CLASSES.get(note.cls, '')}"
    return (f'<span class="{classes}" id="{html.escape(note.id)}" data-verdict="{html.escape(note.verdict)}">'
            f'<mark tabindex="0" aria-describedby="tip-{number}">{html.escape(note.printed)}</mark>'
            f"{_tip(note, number)}</span>")


def _line_html(text, marks, counter):
    """One line of the article, escaped, with its notes (sorted by column) as highlights."""
    out, at = [], 1
    for note in marks:
        out.append(html.escape(text[at - 1:note.column - 1]))
        counter.append(note.id)
        out.append(_highlight(note, len(counter)))
        at = note.end
    out.append(html.escape(text[at - 1:]))
    return "".join(out)


def _block_html(block, by_line, counter, title):
    def render(number, line):
        return _line_html(line, by_line.get(number, []), counter)

    lines = [render(n, line) for n, line in zip(block.numbers, block.lines)]
    anchor = f' id="line-{block.first}"'
    if block.kind == "heading":
        level = 1 if block.lines[0].strip().startswith(title) else 2
        return f"<h{level}{anchor}>{lines[0].strip()}</h{level}>"
    if block.kind == "paragraph":
        return f"<p{anchor}>{lines[0]}</p>"
    if block.kind == "lines":
        return f"<p{anchor}>{'<br>'.join(lines)}</p>"
    if block.kind == "list":
        items = "".join(f"<li>{line.strip()}</li>" for line in lines)
        return f'<ul class="items"{anchor}>{items}</ul>'
    label = "listing" if block.kind == "code" else "output"
    body = "\n".join(lines)
    inner = f"<code>{body}</code>" if block.kind == "code" else body
    return f'<pre class="{block.kind}"{anchor} aria-label="{label}">{inner}</pre>'


def render(article, text, article_notes, title, factor=None, blocks=None):
    """The edition's HTML: the article's blocks (``blocks``, else the plain text's) with every note
    highlighted exactly once."""
    by_line = {}
    for note in sorted(article_notes, key=lambda n: (n.line, n.column)):
        by_line.setdefault(note.line, []).append(note)
    counter = []
    blocks = plain.parse(text) if blocks is None else blocks
    body = "\n".join(_block_html(b, by_line, counter, title) for b in blocks)
    if sorted(counter) != sorted(n.id for n in article_notes):
        lost = sorted({n.id for n in article_notes} - set(counter))
        raise LocationError(f"article {article}: claims not placed in its text: {', '.join(lost[:5])}")
    return editions_page.page(article, title, body, article_notes, factor)


def build(article, text, claims, table, config, factor=None):
    """The HTML of one article's edition from its text, all claims, the ledger and the config (its
    title: the article's entry there); ``factor`` (a speed.Factor) is this machine's speed against
    the article's, said on the page."""
    placed = notes([c for c in claims if c.article == article], table, config, text.split("\n"))
    return render(article, text, placed, entry(article, config).title, factor)


def entry(article, config):
    """The entry of config ``articles`` whose id is ``article``; a LocationError when none is."""
    try:
        found = articles_catalog.from_config(config).get(article)
    except ValueError as error:  # an entry without a field, an id given twice
        raise LocationError(str(error)) from None
    if found is None:
        raise LocationError(f"article {article}: no entry of config articles has this id")
    return found


def write(article, text_path, ledger_csv, published_path, config_path, out, speed_csv=None):
    """Build ``results/articles/<article>.html`` (atomically), refusing a text at ``text_path``
    other than the one its entry of the config records (its SHA-256), naming the file."""
    from attnrepro.dag import config as cfg
    from attnrepro.report.ledger import speed

    config = cfg.load(config_path)
    why = articles_catalog.problem(replace(entry(article, config), text=str(text_path)))
    if why is not None:
        raise LocationError(f"{why}; its edition is not built")
    text = Path(text_path).read_text(encoding="utf-8")
    table = pd.read_csv(ledger_csv, dtype=str, keep_default_na=False)
    factor = speed.read(speed_csv).get(article)
    page = build(article, text, verdicts.load_claims(published_path), table, config, factor)
    with io.atomic_path(out) as tmp:
        tmp.write_text(page, encoding="utf-8")
    return out
