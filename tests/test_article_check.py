"""`python -m attnrepro article check`: an article checked from its text alone.

- tests/data/articles/weights.{txt,md,ipynb}: one short article written for these tests in the three
  forms, its output as its code prints it here. Checked as written, every number reproduces; with
  two numbers misprinted on purpose (one in an output block, one in the prose restating an
  output), both are flagged and nothing else, with the same verdicts in every form.
- A listing that loops forever, or allocates without bound, ends at its limit with one line in the
  ledger, and the rest of the article is still checked; an unseeded draw is never "differs".
- The drafts of 003 and 000, from their text alone, find every hand claim on their output blocks at
  the same line and column with the same value (the full tier: the seeds' listings, twice).
"""

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml

from attnrepro import paths
from attnrepro.articles import bounded, draft, forms, listings
from attnrepro.report import article_check
from attnrepro.report.ledger import ledger_md
from attnrepro.report.ledger import coverage, verdicts
from attnrepro.run import digests, io

from conftest import REPO, article_text, copy_repo, copy_run, planned_jobs, seed_articles, snakemake

DATA = REPO / "tests" / "data" / "articles"
FORMS = ("txt", "md", "ipynb")
OUTPUT_MISPRINT = ("0.1029 ", "0.1092 ")  # in the output block: weights: [0.4613 0.1029 ...]
PROSE_MISPRINT = ("weight, 0.4613,", "weight, 0.4631,")  # the prose restating the largest weight


def options(out, **given):
    values = dict(out=str(out), in_run=False, id=None, title=None, sha256=None, claims=None,
                  speed_rule=None, time_limit=60.0,
                  listing_time_limit=None, memory_limit=bounded.MEMORY_LIMIT_MIB, pin="haswell-noavx512",
                  threads=1)
    values.update(given)
    return argparse.Namespace(**values)


def written(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def misprinted(suffix, tmp_path):
    """weights.<suffix> with the two misprints (in a notebook, inside its JSON strings)."""
    text = (DATA / f"weights.{suffix}").read_text(encoding="utf-8")
    for right, wrong in (OUTPUT_MISPRINT, PROSE_MISPRINT):
        assert text.count(right) == 1, (suffix, right)
        text = text.replace(right, wrong)
    return written(tmp_path, f"weights.{suffix}", text)


def judged(table):
    """The ledger's rows as (published, class, verdict), in the article's order: the same in every form."""
    return list(zip(table["published"], table["class"], table["verdict"]))


@pytest.mark.parametrize("suffix", FORMS)
def test_the_article_as_written_reproduces_every_number(suffix, tmp_path):
    table = article_check.check(DATA / f"weights.{suffix}", options(tmp_path))
    document = forms.read(DATA / f"weights.{suffix}")
    unclaimed = yaml.safe_load((tmp_path / "claims" / "weights.unclaimed.yaml").read_text())["unclaimed"]
    drafted = yaml.safe_load((tmp_path / "claims" / "weights.yaml").read_text())["claims"]
    spans = coverage.claim_spans([verdicts.Claim.from_dict(c) for c in drafted])
    listed = {(u["line"], u["column"]) for u in unclaimed}
    scanned = coverage.numbers("weights", document.text, document.blocks)
    assert scanned and all(coverage.claimed(n, spans) or (n.line, n.column) in listed for n in scanned)
    assert len(table) == 15  # 12 printed, 3 restated by the prose ("key 0": a small integer, unclaimed)
    assert set(table["verdict"]) == {"reproduced"}
    assert Counter(table["class"]) == {"exact": 15}  # none the code states (0 and 1 never count)


def test_two_misprints_are_flagged_and_nothing_else_in_every_form(tmp_path):
    found = {}
    for suffix in FORMS:
        table = article_check.check(misprinted(suffix, tmp_path), options(tmp_path / suffix))
        flagged = table[table["verdict"] != "reproduced"]
        assert list(flagged["published"]) == ["0.1092", "0.4631"], suffix
        assert list(flagged["verdict"]) == ["differs", "differs"]
        output, prose = flagged.to_dict("records")
        assert output["reproduced"] == "0.1029" and ".listing-1." in output["id"]
        assert ".prose." in prose["id"] and prose["reproduced"] == "0.4613"
        assert "likely misprint" in prose["claim"]
        found[suffix] = judged(table)
    assert found["txt"] == found["md"] == found["ipynb"]


def test_the_command_writes_the_run_s_files_and_says_by_its_status(tmp_path):
    out = tmp_path / "check"
    done = subprocess.run([sys.executable, "-m", "attnrepro", "article", "check",
                           str(misprinted("md", tmp_path)), "--out", str(out)],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "15 claims, 13 reproduced, 2 differs" in done.stderr
    ledger = pd.read_csv(out / "ledger.csv", dtype=str, keep_default_na=False)
    assert list(ledger.columns) == verdicts.COLUMNS
    drafted = yaml.safe_load((out / "claims" / "weights.yaml").read_text())
    assert [c["id"] for c in drafted["claims"]] == list(ledger["id"])
    assert set(drafted["rationales"]) == set(draft.RATIONALES)
    page = (out / "articles" / "weights.html").read_text()
    marked = Counter(re.findall(r'id="weights\.[^"]+" data-verdict="([a-z ]+)"', page))
    assert marked == {"reproduced": 13, "differs": 2}
    assert "2 differs" in (out / "LEDGER.md").read_text()
    unclaimed = yaml.safe_load((out / "claims" / "weights.unclaimed.yaml").read_text())["unclaimed"]
    places = [(u["line"], u["column"]) for u in unclaimed]
    assert places == sorted(places) and {"four", "2", "3"} <= {u["text"] for u in unclaimed}
    numbers = pd.read_parquet(out / "data" / "weights" / "listings" / "numbers.parquet")
    assert list(numbers["text"][:4]) == ["1.5", "0.", "0.75", "0.75"]
    record = io.read_provenance(out / "data" / "weights" / "listings" / "numbers.parquet")
    assert record["threads"] == "the libraries' own (no limit set)" and record["form"] == "markdown"
    assert record["numerics"]["openblas_kernel"] == "Haswell"  # the pin, read back from the library
    assert [r["status"] for r in record["listings"]] == ["ran", "ran"]
    done = subprocess.run([sys.executable, "-m", "attnrepro", "article", "check",
                           str(DATA / "weights.txt"), "--out", str(tmp_path / "ok")],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("argv, said", [
    (["article", "check", "nowhere.md", "--out", "x"], "nowhere.md: "),
    (["article", "check", "tests/data/articles/weights.txt"], "--out DIR"),
    (["article", "check", "tests/data/articles/weights.txt", "--out", "x", "--id", "a b"], "--id 'a b'"),
    (["article", "check", "tests/data/articles/weights.txt", "--out", "x", "--sha256", "0" * 64],
     "weights.txt: SHA-256 "),
    (["article", "check", "tests/data/articles/weights.txt", "--out", "x", "--speed-rule", "none.yaml"],
     "--speed-rule none.yaml: "),
    (["article", "check", "tests/data/articles/weights.txt", "--out", "x", "--time-limit", "0"],
     "--time-limit 0: at least 1"),
    (["article", "check", "tests/data/articles/weights.txt", "--out", "x", "--threads", "0"],
     "--threads 0: at least 1"),
])
def test_a_usage_error_is_one_line_with_status_2(argv, said, tmp_path):
    done = subprocess.run([sys.executable, "-m", "attnrepro", *argv], capture_output=True, text=True,
                          cwd=REPO, timeout=60)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if "INFO" not in line]
    assert len(lines) == 1 and said in lines[0] and "Traceback" not in done.stderr


BOUNDED = """Limits

import numpy as np

print(f"first: {np.sqrt(2.0):.4f}")

first: 1.4142

A listing that never ends, then one that takes memory without end:

while True:
    pass

Each stops at its limit, and the article goes on:

hoard = []
while True:
    hoard.append(bytearray(10**7))

The last listing needs only the first:

print(f"after: {np.sqrt(3.0):.4f}")

after: 1.7321
"""

def test_a_listing_that_loops_or_hoards_ends_at_its_limit_and_the_rest_is_checked(tmp_path):
    path = written(tmp_path, "bounded.txt", BOUNDED)
    table = article_check.check(path, options(tmp_path / "out", listing_time_limit=3.0, memory_limit=512))
    rows = {r["id"]: r for r in table.to_dict("records")}
    assert rows["bounded.listing-1.line-7.number-1"]["verdict"] == "reproduced"
    assert rows["bounded.listing-4.line-24.number-1"]["verdict"] == "reproduced"
    stuck, hoard = rows["bounded.listing-2"], rows["bounded.listing-3"]
    # the article shows no output for either: no number is lost, neither match nor difference
    assert stuck["verdict"] == hoard["verdict"] == "inconclusive"
    assert stuck["reason"] == "listing 2: exceeded its time limit of 3 s; the article shows no output for it"
    assert hoard["reason"].startswith("listing 3: MemoryError") or "killed by signal" in hoard["reason"]
    assert len(table) == 4


MAGICS = """# Magics

```ipython
%matplotlib inline
!pip install numpy
import math
```

```ipython
%time root = math.sqrt(2.0)
print(f"root: {root:.4f}")
```

Output:

```
root: 1.4142
```
"""


def test_an_ipython_fence_runs_its_python_and_records_what_it_did_not_run(tmp_path):
    table = article_check.check(written(tmp_path, "magics.md", MAGICS), options(tmp_path / "out"))
    assert judged(table) == [("1.4142", "exact", "reproduced")]
    record = io.read_provenance(tmp_path / "out" / "data" / "magics" / "listings" / "numbers.parquet")
    assert [(r["status"], r["notes"]) for r in record["listings"]] == [
        ("ran", ["line 1: IPython magic not run: %matplotlib inline",
                 "line 2: shell command not run: !pip install numpy"]),
        ("ran", ["line 1: %time ran its statement once, its timing is not reproduced"]),
    ]


UNSEEDED = """Noise

import numpy as np

rng = np.random.default_rng()
print(f"mean of 1000 draws: {rng.normal(size=1000).mean():.3f}")

mean of 1000 draws: 0.123
"""


def test_a_number_an_unseeded_draw_moves_is_never_called_differs(tmp_path):
    table = article_check.check(written(tmp_path, "noise.txt", UNSEEDED), options(tmp_path / "out"))
    size, mean = table.to_dict("records")
    assert (size["published"], size["class"], size["verdict"]) == ("1000", "echo", "reproduced")
    assert mean["class"] == "stochastic" and mean["verdict"] == "inconclusive"
    assert "an unseeded draw moves it: two runs of listing 1 here printed" in mean["reason"]


# --- the proof on the articles we know: the drafts against the hand claims ----------------------

def output_lines(article):
    document = forms.read(seed_articles()[article].text)
    return document, {line.number for item in listings.extract(document, article) for line in item.lines()}


def drafted_claims(article):
    """The claims drafted from ``article``'s text alone: its listings run twice, as the check does."""
    document, _ = output_lines(article)
    found = listings.extract(document, article)
    given = [{"name": i.name, "first": i.first, "code": i.code, "display": i.display} for i in found]
    runs, _, _ = article_check.run_twice(given, options("unused", time_limit=600.0, threads=None))
    return draft.draft(article, document.blocks, found, *runs).claims


@pytest.mark.full
@pytest.mark.parametrize("article", ["003", "000"])
def test_the_draft_finds_every_hand_claim_on_an_output_block(article):
    article_text(article)  # skipped where the text is not beside the checkout
    hand = [c for c in verdicts.load_claims(REPO / "config" / "published.yaml") if c.article == article]
    _, shown = output_lines(article)
    drafted = {(c["location"]["line"], c["location"]["column"]): c for c in drafted_claims(article)}
    on_output = [c for c in hand if c.location["line"] in shown]
    assert on_output
    for claim in on_output:
        twin = drafted.get((claim.location["line"], claim.location["column"]))
        assert twin is not None and twin["published"] == claim.published, claim.id
    prose = [c for c in hand if c.location["line"] not in shown]
    found = [c for c in prose if (c.location["line"], c.location["column"]) in drafted]
    classes = Counter((c.cls, drafted[(c.location["line"], c.location["column"])]["class"])
                      for c in on_output)
    print(json.dumps({"article": article, "on_output": len(on_output), "prose": len(prose),
                      "prose_found": len(found),
                      "classes": {f"{a}->{b}": n for (a, b), n in classes.items()}}))


# --- an article added to the config: checked by the default run ------------------------------------

def with_weights(folder, sha256=None):
    """A config file listing the run's articles and this checkout's tests/data/articles/weights.md."""
    entries = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["articles"]
    text = DATA / "weights.md"
    entries.append({"id": "weights", "text": str(text), "sha256": sha256 or digests.file_sha256(text),
                    "title": "Attention weights for one query", "time_limit_s": 120,
                    "memory_limit_mib": 1024})
    path = Path(folder) / "with-weights.yaml"
    path.write_text(yaml.safe_dump({"articles": entries}, sort_keys=False))
    return path


def test_an_article_without_experiments_is_a_check_job_of_the_run_feeding_the_ledger(tmp_path):
    root = copy_repo(tmp_path / "repo")
    extra = with_weights(tmp_path)
    proc = snakemake(root, "-n", "ledger", configfile=f"config/small.yaml {extra}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = planned_jobs(proc)
    assert jobs["check_weights"] == 1 and jobs["ledger"] == 1
    assert "listings_article" not in jobs  # the evidence's listings stay the seeds'
    (tmp_path / "other").mkdir()
    other = with_weights(tmp_path / "other", sha256="0" * 64)  # another text than its entry records
    proc = snakemake(root, "-n", configfile=f"config/small.yaml {other}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "check_weights" not in planned_jobs(proc)
    found = digests.file_sha256(DATA / "weights.md")
    assert (f"article not checked: {DATA / 'weights.md'}: SHA-256 {found}, but config articles[3].sha256 "
            f"records {'0' * 64}") in proc.stdout + proc.stderr


@pytest.mark.full
def test_the_default_run_checks_an_added_article_and_judges_it_in_its_ledger(small_run, tmp_path):
    root = copy_run(small_run, tmp_path / "run")
    extra = with_weights(tmp_path)
    proc = snakemake(root, "ledger", "articles", configfile=f"config/small.yaml {extra}", timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ledger = pd.read_csv(root / paths.LEDGER_CSV, dtype=str, keep_default_na=False)
    checked = ledger[ledger["article"] == "weights"]
    assert len(checked) == 15 and set(checked["verdict"]) == {"reproduced"}
    assert set(ledger["article"]) == {"000", "001", "003", "weights"}
    assert "## Articles checked from their text" in (root / paths.LEDGER_MD).read_text()
    page = (root / paths.edition_path("weights")).read_text()
    assert len(re.findall(r'id="weights\.[^"]+" data-verdict="reproduced"', page)) == 15
    drafted = yaml.safe_load((root / paths.drafted_claims("weights")).read_text())
    assert sorted(c["id"] for c in drafted["claims"]) == sorted(checked["id"])


def test_confirmed_claims_are_judged_in_place_of_the_drafted(tmp_path):
    article_check.check(DATA / "weights.txt", options(tmp_path / "draft"))
    claims = yaml.safe_load((tmp_path / "draft" / "claims" / "weights.yaml").read_text())
    claims["claims"] = claims["claims"][:3]
    claims["claims"][2]["published"] = "0.76"  # a person's transcription error
    confirmed = written(tmp_path, "confirmed.yaml", yaml.safe_dump(claims, sort_keys=False))
    table = article_check.check(DATA / "weights.txt", options(tmp_path / "out", claims=str(confirmed)))
    assert list(table["verdict"]) == ["reproduced", "reproduced", "differs"]
    assert list(table["reproduced"]) == ["1.5", "0", "0.75"]


def test_ledger_md_counts_the_checked_articles_apart_each_claim_not_reproduced_with_its_reason():
    row = {"article": "w", "section": "s", "claim": "a number", "published": "0.1", "class": "exact",
           "reason": "", "accepted_low": "", "accepted_high": ""}
    checked = pd.DataFrame([{**row, "id": "w.a", "reproduced": "0.1", "verdict": "reproduced"},
                            {**row, "id": "w.b", "reproduced": "0.1", "verdict": "reproduced"},
                            {**row, "id": "w.c", "reproduced": "0.2", "verdict": "differs",
                             "reason": "exact claim: digits differ"}])
    lines = ledger_md.checked_lines(checked)
    assert "### Article w ([annotated edition](articles/w.html)): 3 claims, 2 reproduced, 1 differs" in lines
    assert lines[-3:] == ["- [w.c](articles/w.html#w.c) (exact, **differs**): a number: published 0.1, "
                          "reproduced 0.2.", "  Reason: exact claim: digits differ.", ""]
    assert ledger_md.checked_lines(checked.iloc[:0]) == []
