"""`snakemake --report` builds a self-contained HTML report that renders in headless Chromium:
its app replaces the loading placeholder, shows every product's caption, and logs no error.

Chromium runs a copy of the report with two scripts added (`instrument`): PROBE, first in <head>,
records every console.error, uncaught error and failed load (Chromium's own log gives a console
line without its level, and no line for a failed load); DRIVER, last in <body>, waits for the
report's app, records the visible text, then shows each result's details as a click on it does
(`app.showResultInfo`) and records the caption displayed. Both write JSON into the dumped DOM.
"""

import html
import json
import re
import shutil
import subprocess

import pytest

from attnrepro import evidence
from attnrepro.report.products import catalog
from attnrepro.report import index

from conftest import copy_run, small_config, snakemake

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# conftest.missing: skipped without chromium, a failure where ATTNREPRO_REQUIRE_ALL=1 (CI)
pytestmark = [pytest.mark.full,  # a browser (CONTRIBUTING.md, "Tests")
              pytest.mark.needs(None if CHROMIUM else "Debian's chromium is not installed (CI installs it)")]

# results of the report that are not catalog products: path -> caption (workflow/rules/*.smk)
OTHER_CAPTIONS = {
    "results/LEDGER.md": "ledger",
    **{p.paths[key]: p.captions[key] for p in evidence.PRODUCTS.values() for key in ("md", "svg")},
    # the annotated editions and the ledger's overview (workflow/rules/articles.smk)
    **{f"results/articles/{article}.html": "edition" for article in ("000", "001", "003")},
    "results/figures/ledger_overview.svg": "ledger_overview",
    "results/figures/machine_speed.svg": "machine_speed",  # the speed factors (articles.smk)
}
ARTICLE_RESULTS = [path for path in OTHER_CAPTIONS
                   if path.startswith(("results/articles/", "results/figures/ledger_overview",
                                       "results/figures/machine_speed"))]

PROBE = """<script id="attnrepro-probe">
window.attnreproErrors = [];
(function () {
  const record = (kind, text) => window.attnreproErrors.push(kind + ": " + text);
  const error = console.error.bind(console);
  console.error = function (...args) { record("console.error", args.map(String).join(" ")); error(...args); };
  window.addEventListener("error", function (event) {
    const target = event.target;
    if (target && target !== window) {
      record("failed to load", target.src || target.href || target.tagName);
    } else {
      record("uncaught", event.message);
    }
  }, true);
  window.addEventListener("unhandledrejection", (event) => record("rejection", String(event.reason)));
})();
</script>"""

DRIVER = """<script id="attnrepro-driver">
(function () {
  let tries = 0;
  function report(state) {
    state.errors = window.attnreproErrors;
    const out = document.createElement("pre");
    out.id = "attnrepro-state";
    out.textContent = JSON.stringify(state);
    document.body.appendChild(out);
  }
  function run() {
    const ready = typeof app !== "undefined" && app && document.querySelector("#app").children.length > 0;
    if (!ready) {
      if (++tries < 200) { setTimeout(run, 50); } else { report({rendered: false}); }
      return;
    }
    const state = {rendered: true, visible: document.body.innerText, captions: {}};
    for (const path of Object.keys(results)) {
      ReactDOM.flushSync(() => app.showResultInfo(path));
      const caption = document.querySelector(".prose-invert");  // ResultInfo's "Description"
      state.captions[path] = caption ? caption.innerText : null;
    }
    report(state);
  }
  setTimeout(run, 0);
})();
</script>"""


def instrument(page):
    """``page`` (HTML) with PROBE first in its <head> and DRIVER last in its <body> (the last
    </body>: the report's scripts hold that string too)."""
    head, tag, rest = page.partition("<head>")
    body, end, tail = (head + tag + PROBE + rest).rpartition("</body>")
    return body + DRIVER + end + tail


def render(page, profile):
    """Headless Chromium on the file ``page``: (the DOM once its scripts ran, its console lines)."""
    browser = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=15000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=180,
    )
    assert browser.returncode == 0, browser.stderr[-3000:]
    return browser.stdout, [line for line in browser.stderr.splitlines() if ":CONSOLE" in line]


def page_state(dom):
    """What PROBE and DRIVER recorded in the dumped DOM."""
    found = re.search(r'<pre id="attnrepro-state">(.*?)</pre>', dom, re.S)
    assert found, "DRIVER wrote nothing: the page's scripts did not run"
    return json.loads(html.unescape(found.group(1)))


def console_errors(console, state):
    """Errors of a rendered page: Chromium's console lines that report one, and PROBE's records."""
    logged = [line for line in console if re.search(r"Uncaught|Error|Failed to load", line)]
    return logged + state["errors"]


EMPTY_APP = r'<div id="app">\s*</div>'  # the report's app before it renders


def words(text):
    """Caption text compared as displayed: whitespace collapsed, reST's inline-literal marks gone."""
    return " ".join(text.replace("`", "").split())


@pytest.fixture(scope="module")
def rendered(small_run, tmp_path_factory):
    root = copy_run(small_run, tmp_path_factory.mktemp("report") / "run")  # the small run is shared read-only
    report = root / "report.html"
    proc = snakemake(root, "--report", str(report))
    assert proc.returncode == 0, proc.stderr[-3000:]
    folder = tmp_path_factory.mktemp("chromium")
    page = folder / "report.html"
    page.write_text(instrument(report.read_text()))
    dom, console = render(page, folder / "profile")
    return report, dom, page_state(dom), console


def test_report_is_self_contained(rendered):
    report = rendered[0]
    assert report.stat().st_size > 100_000
    assert not re.search(r"<(img|link|script)[^>]+(src|href)=\"https?://", report.read_text())


def test_the_app_replaces_the_loading_placeholder(rendered):
    report, dom, state, _ = rendered
    static = report.read_text()  # the page before its scripts run: the placeholder, an empty app
    assert re.search(r'<div id="loading-screen">\s*<p id="loading-animation">Loading Snakemake', static)
    assert re.search(EMPTY_APP, static)
    assert state["rendered"], state["errors"]  # after them: the app rendered ...
    assert '<div id="loading-screen" style="display: none;">' in dom and not re.search(EMPTY_APP, dom)
    assert "Loading Snakemake Report" not in state["visible"]  # ... and the placeholder is hidden
    for category in ("Results", "Article 000", "Article 001", "Article 003", "Ledger", "Evidence",
                     "Articles, annotated"):
        assert category.lower() in state["visible"].lower(), category  # the menu: CSS upper-cases headings


def test_every_product_shows_its_caption(rendered):
    """Each result of the run, shown as a click shows it: its caption file's text, displayed."""
    _, _, state, _ = rendered
    assert state["rendered"], state["errors"]
    config = small_config()
    expected = {path: p.name for p in catalog.enabled(config) for path in p.outputs.values()}
    switched_on = [path for p in evidence.enabled(config).values() for path in p.paths.values()]
    expected.update({path: OTHER_CAPTIONS[path]
                     for path in ["results/LEDGER.md", *switched_on, *ARTICLE_RESULTS]
                     if path.endswith((".md", ".svg", ".html"))})
    assert len(expected) > 80 and set(state["captions"]) == set(expected)
    caption = {name: words(index.render_caption(name, config)) for name in expected.values()}
    wrong = {path: state["captions"][path] for path, name in expected.items()
             if words(state["captions"][path] or "") != caption[name]}
    assert not wrong, wrong


def test_report_has_no_console_errors(rendered):
    _, _, state, console = rendered
    errors = console_errors(console, state)
    assert not errors, errors


def test_the_console_check_catches_a_deliberate_error(tmp_path):
    """Positive control: the same instrumentation, rendering and checker on a page that logs a
    console error, throws, and loads a missing image; a page without them gives none."""
    broken = tmp_path / "broken.html"
    broken.write_text(instrument(
        "<!doctype html><html><head></head><body><p>control</p>"
        "<script>console.log('a plain log line'); console.error('deliberate console error');</script>"
        "<script>undefined_function_on_purpose();</script>"
        '<img src="missing-on-purpose.png"></body></html>'
    ))
    dom, console = render(broken, tmp_path / "profile")
    errors = console_errors(console, page_state(dom))
    assert any("console.error: deliberate console error" in e for e in errors), errors
    assert any("undefined_function_on_purpose is not defined" in e for e in errors), errors
    assert any(e.startswith("failed to load") and "missing-on-purpose.png" in e for e in errors), errors
    assert not any("a plain log line" in e for e in errors), errors
    clean = tmp_path / "clean.html"
    clean.write_text(instrument("<!doctype html><html><head></head><body><p>control</p></body></html>"))
    dom, console = render(clean, tmp_path / "profile")
    assert console_errors(console, page_state(dom)) == []
