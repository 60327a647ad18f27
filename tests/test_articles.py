"""Where each claim stands in its article, and the annotated editions built from it.

- Every claim of config/published.yaml names its location in the article's text; the string it
  was transcribed from stands there (a moved claim, a transcription error fail here).
- An edition (results/articles/<article>.html) highlights each claim of its article exactly once,
  with the ledger's verdict: checked on a synthetic ledger with every verdict, and on the small
  run's ledger; editing one published value in a copy of that run changes the verdict shown.
- In headless Chromium (as tests/test_html_report.py renders the report): each edition renders
  without a console error, its bar counts what the ledger says, and focusing a number shows its
  reproduced value.
"""

import collections
import html
import json
import math
import re
import shutil
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
import yaml

from attnrepro.dag import config as cfg
from attnrepro.report.editions import edition as editions
from attnrepro import paths
from attnrepro.articles import catalog, forms
from attnrepro.report.ledger import coverage, ledger_md, overview_figure, verdicts

from conftest import REPO, article_text, copy_repo, copy_run, planned_jobs, seed_articles, snakemake
from test_html_report import CHROMIUM, PROBE, console_errors, page_state, render

PUBLISHED = REPO / "config" / "published.yaml"
ARTICLES = tuple(seed_articles())  # the ids of config/config.yaml's articles
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                "nine": 9, "ten": 10}
SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
FRACTION = r"\b(?:one|two|three|four|five)\s+(?:halves|thirds?|quarters?|fifths?|sixths?)\b"
EDITED = "000.attention_vs_sdpa.weights.row-0.key-0"  # exact, published 0.367: reproduced by any run


@pytest.fixture(scope="module")
def claims():
    return verdicts.load_claims(PUBLISHED)


@pytest.fixture(scope="module")
def texts():
    """{article: its lines} of the texts config/config.yaml names (the articles the claims are
    transcribed from)."""
    return {a: article_text(a).split("\n") for a in ARTICLES}


# --- where each claim stands ----------------------------------------------------------------------

def printed_numbers(text):
    """The numbers a printed form states: "1,234", "0.5", "2.56e-06", "8.9 · 10⁶", "four"."""
    text = re.sub(r"(\d+(?:\.\d+)?)\s*·\s*10([⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)",
                  lambda m: f"{m.group(1)}e{m.group(2).translate(SUPERSCRIPT)}", text)
    values = [float(n.replace(",", "")) for n in re.findall(r"[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?", text)]
    fractions = [coverage.value(m.group())[0] for m in re.finditer(FRACTION, text.lower())]  # "one sixth"
    words = [NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in NUMBER_WORDS]
    return values + fractions + words


def _states(stated, wanted, published):
    """The printed number ``stated`` gives ``wanted``: equal, or, for a fraction in words ("one
    sixth"), equal at the published string's decimals (0.17)."""
    decimals = len(published.partition(".")[2]) if re.fullmatch(r"\d+\.\d+", published) else None
    return math.isclose(wanted, stated, rel_tol=1e-12) or (
        decimals is not None and math.isclose(round(stated, decimals), wanted, rel_tol=1e-12))


def _whole(line, start, end):
    """The span [start, end) is a whole token: no digit of a longer number on either side."""
    before, after = line[max(0, start - 2):start], line[end:end + 2]
    longer_before = (before[-1:].isdigit() or before[-1:] == "."
                     or (before[-1:] == "," and before[:1].isdigit()))
    longer_after = after[:1].isdigit() or (after[:1] in (".", ",") and after[1:2].isdigit())
    return not (longer_before or longer_after)


def location_problems(claim, lines):
    """What is wrong with a claim's location in its article's ``lines`` (empty when nothing)."""
    line, column = claim.location["line"], claim.location["column"]
    text = claim.location.get("text", claim.published)
    if line > len(lines):
        return [f"{claim.id}: line {line} is beyond the article's {len(lines)} lines"]
    found = lines[line - 1][column - 1:column - 1 + len(text)]
    if found != text:
        return [f"{claim.id}: line {line}, column {column} reads {found!r}, not {text!r}"]
    problems = []
    if not _whole(lines[line - 1], column - 1, column - 1 + len(text)):
        problems.append(f"{claim.id}: {text!r} at line {line}, column {column} is part of a longer number")
    if "text" in claim.location:  # printed otherwise: the published value is what that text states
        stated = printed_numbers(text)
        try:
            wanted = set(verdicts.published_range(claim.published))
        except ValueError:
            wanted = {math.nan}
        if not all(any(_states(s, w, claim.published) for s in stated) for w in wanted):
            problems.append(f"{claim.id}: {text!r} does not state the published {claim.published!r}")
    return problems


def test_every_claim_stands_where_its_location_says(claims, texts):
    assert len(claims) > 500 and {c.article for c in claims} == set(texts)
    problems = [p for c in claims for p in location_problems(c, texts[c.article])]
    assert not problems, "\n".join(problems)
    spans = collections.Counter((c.article, c.location["line"], c.location["column"]) for c in claims)
    assert not [k for k, n in spans.items() if n > 1], "two claims at one place"
    derived = sorted(c.id for c in claims if "text" in c.location)
    assert len(derived) <= 10, derived  # printed otherwise than published (words, "· 10⁷"): kept rare, listed


def test_the_location_check_catches_a_moved_or_mistyped_claim(claims, texts):
    """Positive control: one column off, a digit changed, a printed form that states another number."""
    by_id = {c.id: c for c in claims}
    lines = texts["000"]
    claim = by_id[EDITED]
    assert location_problems(claim, lines) == []
    moved = verdicts.Claim.from_dict({**_as_dict(claim), "location": {**claim.location,
                                                                  "column": claim.location["column"] + 1}})
    mistyped = verdicts.Claim.from_dict({**_as_dict(claim), "published": "0.368"})
    inside = verdicts.Claim.from_dict({**_as_dict(by_id["000.quadratic_cost.n-512.mib"]), "published": "1"})
    words = by_id["000.prose.quadratic_cost.time-per-doubling"]
    assert location_problems(words, lines) == []
    wrong_word = verdicts.Claim.from_dict({**_as_dict(words), "published": "5"})
    fraction = by_id["000.prose.scale_sweep.gradient-share-1024"]  # "one sixth", published 0.17
    assert location_problems(fraction, lines) == []
    wrong_fraction = verdicts.Claim.from_dict({**_as_dict(fraction), "published": "0.20"})
    for broken in (moved, mistyped, inside, wrong_word, wrong_fraction):
        assert location_problems(broken, lines), broken.id


def _as_dict(claim):
    """A claim as published.yaml writes it (for Claim.from_dict)."""
    out = {k: getattr(claim, k) for k in ("id", "article", "section", "claim", "published", "source",
                                          "tolerance", "band", "note", "decimals", "location")}
    return {"class": claim.cls, **{k: v for k, v in out.items() if v not in (None, "")}}


def test_a_claim_without_a_valid_location_is_refused(tmp_path, claims):
    entry = _as_dict(next(c for c in claims if c.cls == "exact"))
    for location, error in ((None, "'location' is a required property"),
                            ({"line": 0, "column": 3}, "key location.line: 0 is less than the minimum of 1"),
                            ({"line": 2, "column": 3, "row": 1}, "key location: unknown key 'row'"),
                            ({"line": 2, "column": 3, "text": " "}, "key location.text: ' ' does not match")):
        path = tmp_path / "published.yaml"
        changed = {k: v for k, v in entry.items() if k != "location"}
        entry_now = changed if location is None else {**changed, "location": location}
        path.write_text(yaml.safe_dump({"claims": [entry_now]}))
        with pytest.raises(ValueError, match=error):
            verdicts.load_claims(path)


# --- the editions, from a synthetic ledger ----------------------------------------------------------

class Highlights(HTMLParser):
    """The claims an edition highlights (id, verdict, text of the number, text of its details) and
    the counts of its bar."""

    def __init__(self, page):
        super().__init__()
        self.found, self.counts, self._stack, self.echoes = [], {}, [], None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if tag == "button" and "count" in classes:
            self.counts[attrs["data-verdict"]] = int(attrs["data-count"])
        if tag == "span" and "echoes" in classes:
            self.echoes = int(attrs["data-count"])
        if tag == "span" and "claim" in classes:
            self.found.append({"id": attrs["id"], "verdict": attrs["data-verdict"], "mark": "", "tip": ""})
        part = "mark" if tag == "mark" and self.found and not self.found[-1]["mark"] else (
            "tip" if tag == "span" and "tip" in classes else None)
        if tag != "br":
            self._stack.append(part)

    def handle_endtag(self, tag):
        if self._stack:
            self._stack.pop()

    def handle_data(self, data):
        parts = [p for p in self._stack if p]
        if parts and self.found:
            self.found[-1][parts[-1]] += data


def synthetic_ledger(claims):
    """Every claim with a verdict (cycling through all four) and a recognisable reproduced value."""
    return pd.DataFrame([{"id": c.id, "article": c.article, "published": c.published, "class": c.cls,
                          "verdict": verdicts.VERDICTS[i % len(verdicts.VERDICTS)], "reproduced": f"R{i}",
                          "reason": f"reason {i}"} for i, c in enumerate(claims)])


def test_every_claim_is_highlighted_once_with_its_verdict(claims, texts):
    table = synthetic_ledger(claims)
    config = cfg.load(REPO / "config" / "config.yaml")
    for article, lines in texts.items():
        page = Highlights(editions.build(article, "\n".join(lines), claims, table, config))
        mine = table[table["article"] == article]
        assert sorted(h["id"] for h in page.found) == sorted(mine["id"])  # each once, none other
        assert collections.Counter(h["verdict"] for h in page.found) == collections.Counter(mine["verdict"])
        computed = mine[mine["class"] != "echo"]  # the bar counts computed claims, the echoes apart
        assert page.counts == {v: int((computed["verdict"] == v).sum()) for v in verdicts.VERDICTS}
        assert page.echoes == int((mine["class"] == "echo").sum())
        reproduced = dict(zip(mine["id"], mine["reproduced"]))
        by_id = {c.id: c for c in claims}
        for h in page.found:
            assert h["mark"] == by_id[h["id"]].location.get("text", by_id[h["id"]].published), h
            assert f"reproduced {reproduced[h['id']]}" in " ".join(h["tip"].split()), h


def test_a_published_value_edited_away_from_the_article_is_marked_and_said(claims, texts):
    """The edition marks the number the article prints at the location, and says it differs from
    published.yaml (the location test above fails on such a claim)."""
    edited = [verdicts.Claim.from_dict({**_as_dict(c), "published": "0.368"}) if c.id == EDITED else c
              for c in claims]
    page = editions.build("000", "\n".join(texts["000"]), edited, synthetic_ledger(edited),
                          cfg.load(REPO / "config" / "config.yaml"))
    (mark,) = [h for h in Highlights(page).found if h["id"] == EDITED]
    assert mark["mark"] == "0.367" and "the article prints 0.367 here, not the published 0.368" in mark["tip"]
    nowhere = verdicts.Claim.from_dict({**_as_dict(edited[0]), "location": {"line": 2, "column": 1}})
    with pytest.raises(editions.LocationError, match="holds no number"):
        editions.build("000", "\n".join(texts["000"]), [nowhere], synthetic_ledger([nowhere]), {})


def test_the_overview_draws_every_numeric_claim_with_the_ledgers_window(claims):
    table = synthetic_ledger(claims)
    banded = {c.id: c.band for c in claims if c.band}
    table["accepted_low"] = [str(banded[i][0] if banded[i][0] is not None else "-inf") if i in banded else ""
                             for i in table["id"]]
    table["accepted_high"] = [str(banded[i][1] if banded[i][1] is not None else "inf") if i in banded else ""
                              for i in table["id"]]
    rows = overview_figure.numeric_rows(table, claims)
    numeric = [c for c in claims if overview_figure._value(c.published) is not None]
    assert len(rows) == len(numeric) > 400
    bands = rows.dropna(subset=["band_low"])
    assert set(bands["id"]) == set(banded)  # the ledger's windows, read as numbers
    one_sided = {c.id for c in claims if c.band and None in c.band}
    assert one_sided and set(bands[bands["band_high"] == float("inf")]["id"]) | set(
        bands[bands["band_low"] == -float("inf")]["id"]) == one_sided
    assert overview_figure.numeric_rows(synthetic_ledger(claims), claims)["band_low"].isna().all()
    assert set(rows.dropna(subset=["tolerance"])["id"]) == {c.id for c in claims if c.tolerance is not None}


# --- the editions of a run -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def run(small_run, tmp_path_factory):
    """The small run, with its editions (built by `snakemake` in a copy where it has none: the
    small run is shared read-only)."""
    if all((small_run / paths.edition_path(a)).is_file() for a in ARTICLES):
        return small_run
    root = copy_run(small_run, tmp_path_factory.mktemp("editions") / "run")
    proc = snakemake(root, "articles")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return root


def _ledger(root):
    return pd.read_csv(root / "results/ledger.csv", dtype=str, keep_default_na=False)


def test_each_edition_of_the_run_highlights_its_claims_by_verdict(run):
    table = _ledger(run)
    for article in ARTICLES:
        page = Highlights((run / paths.edition_path(article)).read_text(encoding="utf-8"))
        mine = table[table["article"] == article]
        assert sorted(h["id"] for h in page.found) == sorted(mine["id"])
        assert collections.Counter(h["verdict"] for h in page.found) == collections.Counter(mine["verdict"])
        computed = mine[mine["class"] != "echo"]  # the bar counts computed claims, the echoes apart
        assert page.counts == {v: int((computed["verdict"] == v).sum()) for v in verdicts.VERDICTS}
        assert page.echoes == int((mine["class"] == "echo").sum())
    svg = (run / paths.OVERVIEW).read_text()
    assert svg.lstrip().startswith("<?xml") and "reproduced = published" in svg


def test_ledger_md_and_the_index_link_to_the_editions(run):
    table = _ledger(run)
    text = (run / "results/LEDGER.md").read_text()
    links = dict(re.findall(r"\[([^\]]+)\]\((articles/\d{3}\.html#[^)]+)\)", text))
    off = table[table["verdict"] != "reproduced"]  # each claim not reproduced links to its number
    assert links == {i: ledger_md.edition_link(a, i) for i, a in zip(off["id"], off["article"])}
    assert all(f"\n| {i} | " in text for i in table["id"])  # every claim has its line
    for article in ARTICLES:
        page = (run / paths.edition_path(article)).read_text(encoding="utf-8")
        ids = set(re.findall(r'<span class="claim[^"]*" id="([^"]+)"', page))
        assert ids == set(table[table["article"] == article]["id"])
        assert {i for i, href in links.items() if href.startswith(f"articles/{article}.html#")} <= ids
        assert f"[annotated edition](articles/{article}.html)" in text
    index = (run / "results/README.md").read_text()
    for path in [*map(paths.edition_path, ARTICLES), paths.OVERVIEW]:
        assert f"`{path.removeprefix('results/')}`" in index, path


@pytest.mark.full
def test_editing_a_published_value_changes_the_verdict_in_the_edition(run, tmp_path):
    root = tmp_path / "copy"
    copy_run(run, root)  # only what the edit feeds reruns
    edition = root / paths.edition_path("000")

    def verdict():
        (found,) = [h for h in Highlights(edition.read_text(encoding="utf-8")).found if h["id"] == EDITED]
        return found

    assert verdict()["verdict"] == "reproduced"
    published = root / "config/published.yaml"
    lines = published.read_text(encoding="utf-8").split("\n")
    (at,) = [i for i, line in enumerate(lines) if line.startswith(f"  - {{id: {EDITED},")]
    assert "published: '0.367'" in lines[at]
    lines[at] = lines[at].replace("published: '0.367'", "published: '0.368'")
    published.write_text("\n".join(lines), encoding="utf-8")
    proc = snakemake(root, paths.edition_path("000"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    after = verdict()
    assert after["verdict"] == "differs"
    assert "published 0.368, reproduced 0.367" in " ".join(after["tip"].split())


# --- in a browser -------------------------------------------------------------------------------------

DRIVER = """<script id="attnrepro-driver">
(function () {
  function run() {
    var state = {rendered: !!document.querySelector("header.bar"), counts: {}, highlights: {}};
    document.querySelectorAll("button.count").forEach(function (b) {
      state.counts[b.dataset.verdict] = Number(b.dataset.count); });
    var claims = Array.prototype.slice.call(document.querySelectorAll(".claim"));
    claims.forEach(function (c) {
      state.highlights[c.dataset.verdict] = (state.highlights[c.dataset.verdict] || 0) + 1; });
    var probe = claims.filter(function (c) { return c.dataset.verdict !== "reproduced"; })[0] || claims[0];
    var tip = probe.querySelector(".tip"), mark = probe.querySelector("mark");
    var hidden = getComputedStyle(tip).display === "none";
    mark.focus();
    state.focus = {id: probe.id, hiddenBefore: hidden, focused: document.activeElement === mark,
                   shown: getComputedStyle(tip).display !== "none" && tip.getBoundingClientRect().height > 0,
                   text: tip.innerText};
    mark.blur();
    document.getElementById("next").click();
    var landed = document.activeElement && document.activeElement.closest(".claim");
    state.next = landed ? landed.dataset.verdict : null;
    state.tabbable = claims.every(function (c) { return c.querySelector("mark").tabIndex === 0; });
    state.errors = window.attnreproErrors;
    var out = document.createElement("pre");
    out.id = "attnrepro-state";
    out.textContent = JSON.stringify(state);
    document.body.appendChild(out);
  }
  setTimeout(run, 0);
})();
</script>"""


@pytest.fixture(scope="module")
def browsed(run, tmp_path_factory):
    """{article: (state the DRIVER recorded, console lines)} of each edition in headless Chromium."""
    folder = tmp_path_factory.mktemp("editions")
    out = {}
    for article in ARTICLES:
        page = (run / paths.edition_path(article)).read_text(encoding="utf-8")
        head, tag, rest = page.partition("<head>")
        body, end, tail = (head + tag + PROBE + rest).rpartition("</body>")
        instrumented = folder / f"{article}.html"
        instrumented.write_text(body + DRIVER + end + tail, encoding="utf-8")
        dom, console = render(instrumented, folder / f"profile-{article}")
        out[article] = (page_state(dom), console)
    return out


@pytest.mark.full
@pytest.mark.needs(None if CHROMIUM else "Debian's chromium is not installed (CI installs it)")
def test_each_edition_renders_in_a_browser_with_the_ledgers_counts(run, browsed):
    table = _ledger(run)
    for article, (state, console) in browsed.items():
        mine = table[table["article"] == article]
        expected = {v: int((mine["verdict"] == v).sum()) for v in verdicts.VERDICTS}
        computed = mine[mine["class"] != "echo"]  # the bar counts computed claims, the echoes apart
        errors = console_errors(console, state)
        assert state["rendered"] and not errors, (article, errors)
        counts = {v: int((computed["verdict"] == v).sum()) for v in verdicts.VERDICTS}
        assert state["counts"] == counts, article
        assert state["highlights"] == {v: n for v, n in expected.items() if n}, article  # every claim
        assert state["tabbable"], article
        if any(n for v, n in expected.items() if v != "reproduced"):
            assert state["next"] not in (None, "reproduced"), article  # "next" steps to one not reproduced


@pytest.mark.full
@pytest.mark.needs(None if CHROMIUM else "Debian's chromium is not installed (CI installs it)")
def test_focusing_a_number_shows_its_reproduced_value(run, browsed):
    table = _ledger(run).set_index("id")
    for article, (state, _) in browsed.items():
        focus = state["focus"]
        row = table.loc[focus["id"]]
        assert focus["hiddenBefore"] and focus["focused"] and focus["shown"], (article, focus)
        text = " ".join(focus["text"].split())
        assert f"reproduced {row['reproduced'] or 'none'}" in text and row["verdict"] in text, (article, text)


def test_an_edition_is_self_contained(run):
    for article in ARTICLES:
        page = (run / paths.edition_path(article)).read_text(encoding="utf-8")
        assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", page), article
        assert not re.search(r"https?://|@import|url\(", page), article
        assert json.dumps(page)  # one file, text
        assert Path(run / paths.edition_path(article)).stat().st_size > 50_000


def test_every_link_of_an_edition_reaches_a_file_of_the_run(run):
    """The tooltips' links to tables, figures and data files (relative to results/articles/)
    name files that the run wrote: a path built wrong would be a dead link."""
    checked = 0
    for article in ARTICLES:
        page = (run / paths.edition_path(article)).read_text(encoding="utf-8")
        for href in set(re.findall(r'<a href="(\.\./[^"#]+)"', page)):
            target = run / "results/articles" / html.unescape(href)
            assert target.exists(), f"{article}: dead link {href}"
            checked += 1
    pages = [(run / paths.edition_path(a)).read_text() for a in ARTICLES]
    kinds = {h.split("/")[1] for page in pages for h in re.findall(r'<a href="(\.\./[^"#]+)"', page)}
    assert {"tables", "figures", "data"} <= kinds and checked > 50, (kinds, checked)


# --- the articles, identified -----------------------------------------------------------------------

def test_the_recorded_hashes_are_the_articles_and_a_word_changed_is_refused(texts, tmp_path):
    seeds = seed_articles()
    assert catalog.problems(seeds) == {}
    path = tmp_path / "changed.txt"
    shutil.copy(seeds["001"].text, path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(" derive ", " deduce ", 1), encoding="utf-8")  # one word
    changed, recorded = catalog.sha256(path), seeds["001"].sha256
    assert changed != recorded
    assert catalog.problems([replace(seeds["001"], text=str(path))]) == {"001": (
        f"{path}: SHA-256 {changed}, but config articles[1].sha256 records {recorded}: another text than "
        "the one every location was read against")}
    with pytest.raises(editions.LocationError, match=(
            rf"^{path}: SHA-256 {changed}, but config articles\[1\]\.sha256 records {recorded}: .*; "
            "its edition is not built$")):
        _write("001", path, tmp_path)
    with pytest.raises(editions.LocationError, match=(
            rf"^{tmp_path}/gone.txt: not found \(config articles\[1\]\.text\); its edition is not built$")):
        _write("001", tmp_path / "gone.txt", tmp_path)
    with pytest.raises(editions.LocationError, match=r"^article 002: no entry of config articles has"):
        _write("002", path, tmp_path)
    assert not (tmp_path / "e.html").exists()


def _write(article, text, tmp_path):
    """editions.write of ``article`` from the text at ``text`` (an empty ledger, the default config)."""
    editions.write(article, text, _empty_ledger(tmp_path), PUBLISHED, _config(tmp_path), tmp_path / "e.html")


def _empty_ledger(tmp_path):
    path = tmp_path / "ledger.csv"
    path.write_text("id,article,section,claim,published,reproduced,class,verdict,reason\n")
    return path


def _config(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text((REPO / "config/config.yaml").read_text())
    return path


@pytest.mark.full
def test_a_missing_article_text_is_said_in_the_index_and_the_log(tmp_path):
    from attnrepro.report import index

    config = cfg.load(REPO / "config/config.yaml")
    moved = [{**entry, "text": f"../no-such-folder/{Path(entry['text']).name}"}
             for entry in config["articles"]]
    unbuilt = catalog.problems(catalog.from_config({"articles": moved}, root=tmp_path))
    assert set(unbuilt) == set(ARTICLES)
    name = Path(config["articles"][0]["text"]).name
    assert unbuilt["000"] == f"{tmp_path}/../no-such-folder/{name}: not found (config articles[0].text)"
    text = index.lines(config, unbuilt)
    title = config["articles"][0]["title"]
    assert f"- `articles/000.html` (article 000, \u201c{title}\u201d): not built: {unbuilt['000']}" in text
    root = copy_repo(tmp_path / "repo")
    (root / "elsewhere.yaml").write_text(yaml.safe_dump({"articles": moved}))
    proc = snakemake(root, "-n", configfile="config/small.yaml elsewhere.yaml")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (f"annotated edition not built: ../no-such-folder/{name}: not found (config articles[0].text)"
            in proc.stdout + proc.stderr)
    assert "edition_000" not in planned_jobs(proc) and "index" in planned_jobs(proc)


# --- the articles are configuration ----------------------------------------------------------------

CODE = ("src", "workflow", "Snakefile")  # where no article is named but by the experiments
EXPERIMENTS = "src/attnrepro/experiments/"  # each belongs to an article, named by its ARTICLE


def named_articles(root, words):
    """[(path, word)] of every file under ``root``'s CODE (outside EXPERIMENTS) that holds one of
    ``words``: what would name an article outside config/config.yaml."""
    found = []
    for top in CODE:
        base = Path(root) / top
        for path in sorted([base] if base.is_file() else base.rglob("*")):
            where = path.relative_to(root).as_posix()
            if not path.is_file() or where.startswith(EXPERIMENTS) or "__pycache__" in where:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [(where, word) for word in words if word in text]
    return found


def seed_words():
    """What names one of the seeds: its file's name, and its first 8 characters ("000_7517"), its
    title and its SHA-256."""
    return [word for a in seed_articles().values()
            for word in (Path(a.text).name, Path(a.text).name[:8], a.title, a.sha256)]


def test_no_article_is_named_in_the_code_but_by_its_experiments():
    assert len(seed_words()) == 12 and "000_7517" in seed_words()
    assert named_articles(REPO, seed_words()) == []


def test_a_title_or_a_file_name_in_the_code_is_found(tmp_path):
    """Positive control: a seed's title in a rule file, its file name in a module, are found; in
    an experiment, they are not."""
    seeds = seed_articles()
    (tmp_path / "Snakefile").write_text("")
    (tmp_path / "workflow" / "rules").mkdir(parents=True)
    (tmp_path / "workflow" / "rules" / "x.smk").write_text(f"# {seeds['003'].title}\n")
    (tmp_path / "src" / "attnrepro" / "experiments").mkdir(parents=True)
    (tmp_path / "src" / "attnrepro" / "y.py").write_text(f"NAME = '{Path(seeds['001'].text).name[:8]}'\n")
    (tmp_path / "src" / "attnrepro" / "experiments" / "z.py").write_text(f"# {seeds['000'].title}\n")
    assert named_articles(tmp_path, seed_words()) == [
        ("src/attnrepro/y.py", Path(seeds["001"].text).name[:8]),
        ("workflow/rules/x.smk", seeds["003"].title)]


def test_the_articles_are_read_from_the_config_in_its_order():
    config = cfg.load(REPO / "config/config.yaml")
    seeds = catalog.from_config(config)
    assert list(seeds) == ["000", "001", "003"]
    first = seeds["000"]
    assert (first.text, first.claims, first.place, forms.form_of(first.text)) == (
        config["articles"][0]["text"], "config/published.yaml", 0, "plain")
    assert first.text.startswith("../") and first.key("sha256") == "articles[0].sha256"
    assert seed_articles()["003"].text == str(REPO / config["articles"][2]["text"])  # root: the checkout
    assert catalog.from_config({}) == {}


def test_an_article_of_another_form_or_without_claims(tmp_path):
    post = tmp_path / "post.md"
    post.write_text("# A post\n\nIt prints `2`.\n", encoding="utf-8")
    entry = {"id": "post", "text": "post.md", "sha256": catalog.sha256(post), "title": "A post"}
    (found,) = catalog.from_config({"articles": [entry]}, root=tmp_path).values()
    assert (found.id, found.text, found.claims) == ("post", str(post), None)
    assert catalog.problem(found) is None
    gone = tmp_path / "gone.md"
    assert catalog.problems([replace(found, text=str(gone))]) == {
        "post": f"{gone}: not found (config articles[0].text)"}
    # its form is the parser's to say, by the suffix (the schema refuses another suffix in the config)
    assert [forms.form_of(name) for name in (found.text, "post.ipynb")] == ["markdown", "notebook"]
    with pytest.raises(ValueError, match=r"^post\.rst: not an article's form"):
        forms.form_of("post.rst")


def test_an_entry_the_schema_would_refuse_is_refused_by_name():
    entry = {"id": "post", "text": "post.md", "sha256": "0" * 64, "title": "A post"}
    twice = r"^config articles\[1\]\.id: 'post' is the id of articles\[0\] too$"
    with pytest.raises(ValueError, match=twice):
        catalog.from_config({"articles": [entry, {**entry, "title": "Again"}]})
    with pytest.raises(ValueError, match=r"^config articles\[0\]: no text, sha256$"):
        catalog.from_config({"articles": [{"id": "post", "title": "A post"}]})
    assert catalog.errors({"articles": [entry, {"id": 3}, {**entry}, "x", {**entry}]}) == [
        "articles[2].id: 'post' is the id of articles[0] too",
        "articles[4].id: 'post' is the id of articles[0] too"]
