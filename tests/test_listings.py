"""The articles' own code as evidence: listings read from a text, run in one interpreter, and their
printed output set against the published one number by number, claim by claim.

Every test builds its own small synthetic article (never an article's text): two listings, the
second using a name the first defines, each followed by its output block, and a claims file whose
locations point into those blocks. No real listing runs here (`snakemake --cores 2 listings` does).
"""

import json
import re

import pandas as pd
import pytest
import yaml

from attnrepro.dag import yamlfile
from attnrepro.report.evidence_tables import citations, listings_evaluate, listings_render
from attnrepro.articles import plain
from attnrepro.articles.listings import extract
from attnrepro.evidence import listings_run
from attnrepro.report.ledger import verdicts
from attnrepro.report.commands import ledger as ledger_command
from conftest import REPO
from report_helpers import FrameLoad

LOCK = "requirements/runtime.lock"  # what the listings job checks the imports against

PROSE = ("A paragraph of prose, long enough to be one in the article's text: it says what the two "
         "listings below compute and print.")
ARTICLE = f"""Synthetic article

{PROSE}

import math

x = 3
print("three:", x, "- root:", round(math.sqrt(x), 3))
print("flag:", x > 2)
three: 3 - root: 1.732
flag: True

{PROSE}

y = x * 2
print(f"twice: {{y}}  half: {{x / 2:.2f}}")
twice: 6  half: 1.49

The prose restates the root of the first listing, 1.73, in a sentence long enough to be a paragraph here.
"""


def locate(text, line_start, number, occurrence=0):
    """{line, column} of ``number`` on the line of ``text`` that starts with ``line_start``."""
    lines = text.split("\n")
    found = [i for i, line in enumerate(lines) if line.startswith(line_start)][occurrence]
    return {"line": found + 1, "column": lines[found].index(number) + 1}


def claim(id_, published, line_start, cls="exact", column="value", **extra):
    return {"id": id_, "article": "900", "section": "s", "claim": id_, "published": published,
            "class": cls, "source": {"experiment": "synthetic", "column": column},
            "location": locate(ARTICLE, line_start, published), **extra}


CLAIMS = [
    claim("900.three", "3", "three:"),
    claim("900.root", "1.732", "three:", column="root"),
    claim("900.flag", "True", "flag:", column="flag"),
    claim("900.half", "1.49", "twice:", cls="round-off", column="half", tolerance=1.0, why="synthetic"),
    claim("900.prose.root", "1.73", "The prose", column="root"),
]


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    path = tmp_path_factory.mktemp("published") / "published.yaml"
    rationales = {"synthetic": "a synthetic round-off claim, its tolerance chosen for the test"}
    path.write_text(yaml.safe_dump({"claims": CLAIMS, "rationales": rationales}, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def run_record(tmp_path_factory):
    """The synthetic article's listings, run as the listings job runs an article's."""
    text = tmp_path_factory.mktemp("article") / "900.txt"
    text.write_text(ARTICLE)
    return listings_run.run("900", text, "haswell-noavx512", timeout=60, lock=REPO / LOCK)


def test_listings_and_their_output_blocks_are_read_from_the_text():
    listings = extract(plain.document(ARTICLE), "900")
    assert [(item.index, item.first) for item in listings] == [(1, 5), (2, 15)]
    assert listings[0].code == ('import math\n\nx = 3\n'
                                'print("three:", x, "- root:", round(math.sqrt(x), 3))\n'
                                'print("flag:", x > 2)\n')
    assert [[line.text for line in block] for block in listings[0].blocks] == [["three: 3 - root: 1.732",
                                                                                "flag: True"]]
    assert [t.text for t in listings[0].blocks[0][0].tokens()] == ["3", "1.732"]
    # 000's style: the output as comments after "# Output:", columns counted in the article's line
    commented = extract(plain.document("import math\nprint(-1.5, math.pi)\n\n# Output:\n# -1.5 3.14\n"), "x")
    line = commented[0].blocks[0][0]
    assert (line.number, line.text, line.offset) == (5, "-1.5 3.14", 2)
    assert [(t.text, t.column) for t in line.tokens()] == [("-1.5", 3), ("3.14", 8)]


def test_the_listings_run_in_one_interpreter_as_written(run_record):
    rows = run_record["listings"]
    assert [(r["name"], r["status"], r["error"]) for r in rows] == [("900.listing-1", "ran", ""),
                                                                     ("900.listing-2", "ran", "")]
    # the second listing uses x of the first: one session, in order
    assert rows[1]["stdout"] == "twice: 6  half: 1.50\n"
    assert rows[0]["outside_lock"] == [] and rows[0]["seconds"] >= 0
    assert run_record["pin"]["pin"] == "haswell-noavx512" and run_record["environment"]["python"]


def test_the_printed_output_is_compared_number_by_number_and_claim_by_claim(run_record, published):
    claims = verdicts.load_claims(published)
    listings, table = listings_evaluate.evaluate(claims, {"900": run_record}, {"900": ARTICLE})
    assert listings[["listing", "numbers_published", "numbers_printed", "numbers_equal", "output"]].to_dict(
        "records") == [
        {"listing": 1, "numbers_published": 3, "numbers_printed": 3, "numbers_equal": 3, "output": "equal"},
        {"listing": 2, "numbers_published": 2, "numbers_printed": 2, "numbers_equal": 1, "output": "differs"},
    ]
    summary = listings_evaluate.summary(listings).iloc[0]
    assert (summary["ran"], summary["numbers_equal"], summary["outputs_equal"]) == (2, 4, "1 of 2")
    values = dict(zip(table["id"], zip(table["article_code"], table["equal"])))
    assert values == {"900.three": ("3", True), "900.root": ("1.732", True), "900.flag": ("True", True),
                      "900.half": ("1.50", False), "900.prose.root": ("1.73", True)}
    assert "restates 900.root" in table.set_index("id").at["900.prose.root", "why"]


def test_a_listing_that_fails_or_imports_outside_the_lock_is_reported(tmp_path):
    text = tmp_path / "901.txt"
    text.write_text(f"{PROSE}\n\nimport not_a_locked_package_xyz\n\n{PROSE}\n\nprint('still', 1)\nstill 1\n")
    record = listings_run.run("901", text, "haswell-noavx512", timeout=60, lock=REPO / LOCK)
    failed, after = record["listings"]
    assert failed["status"] == "failed" and failed["outside_lock"] == ["not_a_locked_package_xyz"]
    assert failed["error"] == "ModuleNotFoundError: No module named 'not_a_locked_package_xyz' (line 1)"
    assert (after["status"], after["stdout"]) == ("ran", "still 1\n")  # the session goes on
    listings, _ = listings_evaluate.evaluate([], {"901": record}, {"901": text.read_text()})
    assert list(listings["output"]) == ["failed", "equal"]


def test_packages_outside_the_lock_are_found_by_their_distribution():
    code = "import os, numpy as np\nfrom torch import nn\nimport sklearn.linear_model\nimport yaml\n"
    dists = {"numpy": ["numpy"], "torch": ["torch"], "sklearn": ["scikit-learn"], "yaml": ["PyYAML"]}
    assert listings_run.outside_lock(code, {"numpy", "torch", "pyyaml"}, dists) == ["sklearn"]
    assert "numpy" in listings_run.lock_names(REPO / LOCK)


class CanonicalLoad(FrameLoad):
    """Frames in memory, every one computed with the canonical numerics (the ledger's column)."""

    def numerics(self, experiment, table="main"):
        return "canonical"


@pytest.fixture
def products(tmp_path, run_record, published):
    """The listings' products written from the run, as the listings target writes them."""
    run = tmp_path / "900.json"
    run.write_text(json.dumps({**run_record, "text": str(tmp_path / "900.txt")}))
    (tmp_path / "900.txt").write_text(ARTICLE)
    out = {k: tmp_path / f"p.{k}" for k in ("csv", "listings", "md", "svg")}
    assert listings_render.write(published, [run], out["csv"], out["listings"], out["md"], out["svg"]) == 0
    return out


def test_the_ledger_shows_published_article_code_and_reproduced_side_by_side(tmp_path, products, published):
    frame = pd.DataFrame({"value": [3], "root": [1.7320508], "flag": [True], "half": [1.5]})
    load = CanonicalLoad({("synthetic", "main"): frame})
    csv, md = tmp_path / "ledger.csv", tmp_path / "LEDGER.md"
    assert ledger_command.write(published, load, csv, md, listings_csv=products["csv"]) == 0
    table = pd.read_csv(csv, dtype=str, keep_default_na=False).set_index("id")
    assert list(table.columns[3:6]) == ["published", "article_code", "reproduced"]
    three = ["published", "article_code", "reproduced"]
    assert table.loc["900.half", three].tolist() == ["1.49", "1.50", "1.50"]
    # the Markdown table beside the CSV the ledger read
    assert f"the article's own code prints 1.50 here [{products['md']}]" in table.at["900.half", "reason"]
    assert re.search(r"\| published +\| article_code +\| reproduced +\|", md.read_text())
    without = tmp_path / "without.csv"
    ledger_command.write(published, load, without, tmp_path / "w.md")
    plain = pd.read_csv(without, dtype=str, keep_default_na=False).set_index("id")
    assert set(plain["article_code"]) == {""}
    assert ("`snakemake --cores 2 listings` makes results/listings/article_code.md"
            in plain.at["900.half", "reason"])


def test_the_products_say_what_ran_and_what_differs(products):
    text = products["md"].read_text()
    # per article; its seconds printed to 0.1 s, as each listing's
    assert re.search(r"\| 900 +\| 2 +\| 2 +\| [0-9]+\.[0-9] +\| 5 +\| 4 +\| 1 of 2 +\|", text)
    assert "Python 3.14 is not available on this machine kind" in text
    claims = text.split("## Claims")[1]
    assert re.search(r"\| 900.half +\| round-off +\| 2 +\| 17 +\| 1.49 +\| 1.50 +\|", claims)
    assert "900.root" not in claims
    listings = pd.read_csv(products["listings"])
    assert list(listings["output"]) == ["equal", "differs"]
    assert citations.listing_reasons(products["csv"])["900.root"].startswith(
        "the article's own code prints the published 1.732 here")


def test_published_yaml_holds_only_what_the_articles_print():
    """What the article's own code gives here is computed by the listings, never transcribed."""
    entries = yamlfile.load(REPO / "config" / "published.yaml", fast=True)["claims"]
    transcribed = [e["id"] for e in entries if "here" in e]
    assert transcribed == []
    with pytest.raises(ValueError, match="'here' is not a key of a claim"):
        verdicts.Claim.from_dict({**CLAIMS[0], "here": "3"})


@pytest.mark.parametrize("build", [False, True])
def test_the_index_of_results_lists_the_listings_under_their_switch(default_config, build):
    from attnrepro.report import index

    config = {**default_config, "listings": {**default_config["listings"], "build": build}}
    text = index.lines(config)
    evidence = text[text.index("## Evidence for the ledger"):text.index("## Logs")]
    if build:
        assert "- `listings/article_code.md`: The articles' own code, run here" in evidence
        assert "- `listings/listings.csv`: one row per listing of the reproduced articles" in evidence
        assert "- `listings/runs/<article>.json`: each article's listings as run here" in evidence
    else:
        assert ("- The articles' own code (`listings/article_code.{csv,md,svg}`): not part of this run; "
                "`snakemake --cores 2 listings` builds it, `listings.build: true`") in evidence
        assert "listings/listings.csv" not in evidence
