"""The page around an annotated edition: the bar of verdict counts, the legend, the inline CSS and
script (no external font, style sheet or script: the file works offline, alone).

The bar counts the article's claims per verdict (each count also a button: the next number of
that verdict) and steps through the numbers that are not reproduced (buttons, or the keys ``n``
and ``p``); below it, the same numbers as a list of links, for reading without the script.
"""

import html

import pandas as pd

from attnrepro.report.ledger import headline
from attnrepro.report.ledger.claims import SYMBOLS

VERDICT_CLASSES = {"reproduced": "v-reproduced", "within tolerance": "v-within",
                   "differs": "v-differs", "missing": "v-missing", "other parameters": "v-other",
                   "disturbed": "v-disturbed", "inconclusive": "v-inconclusive"}
CLAIM_CLASSES = {"exact": "c-exact", "echo": "c-echo", "round-off": "c-roundoff",
                 "finite-difference": "c-finite", "stochastic": "c-stochastic", "machine-bound": "c-machine"}
# each class's underline in the legend (an inline style), as the CSS below draws its marks
CLASS_STYLES = (("exact", "text-decoration-style:solid"), ("echo", "text-decoration-style:wavy"),
                ("round-off", "text-decoration-style:dotted"),
                ("finite-difference", "text-decoration-style:dotted;text-decoration-thickness:3px"),
                ("stochastic", "text-decoration-style:dashed"),
                ("machine-bound", "text-decoration-style:double"))

CSS = """
:root { --ink: #1b1b1b; --muted: #5a5a5a; --line: #d0d4d9; --focus: #1a5fb4;
  --reproduced: #cdebd6; --within: #fbe7a6; --differs: #f6b9b3; --missing: #d9dcdf;
  --other: #e4e7f0; --disturbed: #e8d9f2; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff; line-height: 1.6;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 50rem; margin: 0 auto; padding: 1rem 1.25rem 6rem; }
h1 { font-size: 1.7rem; line-height: 1.25; margin: 1.5rem 0 1rem; }
h2 { font-size: 1.25rem; line-height: 1.3; margin: 2rem 0 .6rem; }
p, ul.items { margin: 0 0 1rem; }
ul.items { list-style: none; padding-left: 1rem; }
ul.items li { margin: .25rem 0; }
pre { font: .84rem/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace;
  background: #f5f7f9; border: 1px solid var(--line); border-radius: 6px; padding: .7rem .9rem;
  margin: 0 0 1rem; overflow: visible; width: max-content; min-width: 100%; }
pre.output { background: #fffdf6; border-left: 4px solid #c9b98a; }
pre.output::before { content: "output"; display: block; font: .7rem system-ui, sans-serif;
  color: var(--muted); text-transform: uppercase; letter-spacing: .06em; margin-bottom: .2rem; }
a { color: var(--focus); }
.bar { position: sticky; top: 0; z-index: 30; background: #fff; border-bottom: 1px solid var(--line);
  padding: .5rem 1.25rem; display: flex; flex-wrap: wrap; gap: .4rem .8rem; align-items: center;
  font-size: .85rem; }
.bar .name { font-weight: 600; margin-right: .4rem; }
.bar button { font: inherit; border: 1px solid #9aa1a9; border-radius: 4px; background: #fff;
  padding: .15rem .5rem; cursor: pointer; color: var(--ink); }
.bar button.count { border-color: transparent; }
.bar button:disabled { opacity: .5; cursor: default; }
.bar button:focus-visible, mark:focus-visible, a:focus-visible { outline: 3px solid var(--focus);
  outline-offset: 1px; }
.legend { color: var(--muted); }
.legend span { margin-right: .6rem; }
.claim { position: relative; scroll-margin: 7rem 0 6rem; }
mark { color: inherit; border-radius: 2px; padding: 0 .05em; border-bottom: 2px solid #444;
  position: relative; cursor: help; }
mark::after { position: absolute; right: -.4em; top: -.7em; font-size: .55em; line-height: 1;
  font-family: system-ui, sans-serif; }
.v-reproduced mark, .count.v-reproduced { background: var(--reproduced); }
.v-within mark, .count.v-within { background: var(--within); }
.v-differs mark, .count.v-differs { background: var(--differs); }
.v-missing mark, .count.v-missing { background: var(--missing); }
.v-other mark, .count.v-other { background: var(--other); }
.v-disturbed mark, .count.v-disturbed { background: var(--disturbed); }
.v-inconclusive mark, .count.v-inconclusive { background: var(--disturbed); }
.v-reproduced mark::after { content: "✓"; }
.v-within mark::after { content: "≈"; }
.v-differs mark::after { content: "✗"; }
.v-missing mark::after { content: "?"; }
.v-other mark::after { content: "○"; }
.v-disturbed mark::after { content: "~"; }
.v-inconclusive mark::after { content: "◐"; }
.c-exact mark { border-bottom-style: solid; }
.c-echo mark { border-bottom: 0; text-decoration: underline wavy #888; }
.c-roundoff mark { border-bottom-style: dotted; }
.c-finite mark { border-bottom: 3px dotted #444; }
.c-stochastic mark { border-bottom-style: dashed; }
.c-machine mark { border-bottom: 3px double #444; }
.claim:target mark { outline: 3px solid var(--focus); }
.tip { display: none; position: absolute; left: 0; top: 100%; z-index: 40; width: max-content;
  max-width: min(32rem, 92vw); padding: .5rem .65rem; background: #fff; color: var(--ink);
  border: 1px solid #8a9096; border-radius: 6px; box-shadow: 0 4px 14px rgba(0,0,0,.18);
  font: .82rem/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif;
  white-space: normal; text-align: left; }
.claim:hover .tip, .claim:focus-within .tip { display: block; }
.tip-head, .tip-row { display: block; }
.tip-head { margin-bottom: .2rem; }
.tip-reason { color: var(--muted); }
.tip-warning { color: #9b1c1c; font-weight: 600; }
.tip-links { margin-top: .25rem; }
details.others { font-size: .9rem; margin: .5rem 0 1.5rem; }
details.others li { margin: .15rem 0; }
"""

SCRIPT = """
(function () {
  var all = Array.prototype.slice.call(document.querySelectorAll(".claim"));
  var off = all.filter(function (c) { return c.dataset.verdict !== "reproduced"; });
  var status = document.getElementById("position");
  var at = -1, byVerdict = {};
  function show(claim) {
    claim.scrollIntoView({block: "center"});
    claim.querySelector("mark").focus({preventScroll: true});
  }
  function step(delta) {
    if (!off.length) { return; }
    at = (at + delta + off.length) % off.length;
    show(off[at]);
  }
  function place(claim) {  // keep the details inside the window
    var tip = claim.querySelector(".tip");
    tip.style.left = "";
    var box = tip.getBoundingClientRect();
    if (box.right > window.innerWidth - 8) {
      tip.style.left = (-(box.right - window.innerWidth + 8)) + "px";
    }
  }
  all.forEach(function (claim) {
    claim.addEventListener("mouseenter", function () { place(claim); });
    claim.addEventListener("focusin", function () {
      place(claim);
      var i = off.indexOf(claim);
      if (i >= 0) { at = i; }
      status.textContent = i >= 0 ? (i + 1) + " of " + off.length + " not reproduced" : "";
    });
  });
  document.getElementById("next").addEventListener("click", function () { step(1); });
  document.getElementById("previous").addEventListener("click", function () { step(-1); });
  document.querySelectorAll("button.count").forEach(function (button) {
    button.addEventListener("click", function () {
      var verdict = button.dataset.verdict;
      var list = all.filter(function (c) { return c.dataset.verdict === verdict; });
      if (!list.length) { return; }
      byVerdict[verdict] = ((byVerdict[verdict] === undefined ? -1 : byVerdict[verdict]) + 1) % list.length;
      show(list[byVerdict[verdict]]);
    });
  });
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) { return; }
    if (event.key === "n") { step(1); }
    if (event.key === "p") { step(-1); }
    if (event.key === "Escape" && document.activeElement) { document.activeElement.blur(); }
  });
  if (!off.length) {
    document.getElementById("next").disabled = true;
    document.getElementById("previous").disabled = true;
  }
  var target = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
  if (target && target.classList.contains("claim")) { show(target); }
})();
"""


def _table(notes):
    """The notes as the ledger's columns that headline counts (class, verdict)."""
    return pd.DataFrame({"class": [n.cls for n in notes], "verdict": [n.verdict for n in notes]},
                        columns=["class", "verdict"], dtype=str)


def counts(notes):
    """{verdict: number of notes} of the computed claims (echoes of the configuration are counted
    apart: :func:`echoes`), every verdict of the ledger present: headline.counts, as LEDGER.md."""
    return headline.counts(_table(notes))


def echoes(notes):
    """The notes of claims that echo the configuration (class echo), counted apart."""
    return [n for n in notes if n.cls == "echo"]


def bar(article, title, notes):
    """The sticky bar: counts per verdict, the steps through what is not reproduced, the legend."""
    chips = "".join(
        f'<button type="button" class="count {VERDICT_CLASSES.get(v, "v-missing")}"'
        f' data-verdict="{html.escape(v)}" data-count="{n}" title="the next number judged {html.escape(v)}">'
        f'{SYMBOLS.get(v, "")} <b>{n}</b> {html.escape(v)}</button>'
        for v, n in counts(notes).items())
    legend = "".join(f'<span><u style="{style}">{name}</u></span>' for name, style in CLASS_STYLES)
    echoed = echoes(notes)
    apart = sum(n.verdict == "reproduced" for n in echoed)
    computed = len(notes) - len(echoed)
    return (f'<header class="bar" aria-label="verdicts of article {article}">'
            f'<span class="name">Article {article}: {computed} computed numbers judged</span>{chips}'
            f'<span class="echoes" data-count="{len(echoed)}">and {len(echoed)} echoes of the configuration '
            f"({apart} reproduced)</span>"
            '<button type="button" id="previous" aria-label="previous number not reproduced">'
            "◀ previous</button>"
            '<button type="button" id="next" aria-label="next number not reproduced">next ▶</button>'
            '<span id="position" aria-live="polite"></span>'
            f'<span class="legend">class: {legend}</span>'
            '<a href="../LEDGER.md">ledger</a></header>')


def others(notes):
    """The numbers that are not reproduced, as links (readable without the script)."""
    off = [n for n in sorted(notes, key=lambda n: (n.line, n.column)) if n.verdict != "reproduced"]
    items = "".join(f'<li><a href="#{html.escape(n.id)}">{html.escape(n.printed)}</a>: '
                    f"{html.escape(n.verdict)} ({html.escape(n.cls)}), {html.escape(n.claim)}</li>"
                    for n in off)
    found = {v: k for v in headline.verdict_names(_table(off)) if (k := sum(n.verdict == v for n in off))}
    return (f'<details class="others"><summary>{len(off)} numbers whose verdict is not reproduced '
            f"({html.escape(headline.counts_sentence(found))}), in reading order</summary>"
            f"<ol>{items}</ol></details>")


def page(article, title, body, notes, factor=None):
    """The whole HTML document of an edition; ``factor`` (a speed.Factor): this machine's speed."""
    intro = (f'<p class="about"><i>Annotated edition of article {article}, "{html.escape(title)}": the text '
             "as published, every number the ledger judges marked by its verdict (colour and sign) and "
             "its class (underline); hover or focus a number for the value this run reproduced.</i></p>")
    if factor is not None:
        intro += (f'<p class="about speed"><i>Machine speed: {html.escape(factor.sentence())}; each raw '
                  "time is judged by whether it moves with that factor.</i></p>")
    return ("<!doctype html>\n"
            f'<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>Article {article}, annotated: {html.escape(title)}</title>"
            f"<style>{CSS}</style></head>\n<body>\n{bar(article, title, notes)}\n<main>\n{intro}\n"
            f"{others(notes)}\n<article>\n{body}\n</article>\n</main>\n<script>{SCRIPT}</script>\n"
            "</body></html>\n")
