"""Every number the articles print is a claim or is listed as not a claim (issue 31, item 6).

- The scan (src/attnrepro/report/ledger/coverage.py) reads every line outside a listing's Python
  source; each number it finds lies in a claim's printed span (config/published.yaml) or is
  listed in config/unclaimed.yaml with a reason; every listed entry names a number of the text.
- The scan's rule, on a synthetic text: digits with separators, decimals, exponents, glued
  superscripts, a "· 10⁷" factor; number words (cardinals, a time unit read with them, fractions,
  a dozen, twice, double, doubles, quadruples, half, halves, zero);
  names, "one" after a determiner and a listing's source left out.
- Positive controls: an entry removed, moved or naming the wrong claim, and a claim removed,
  each fail naming article, line, column and number.
- The numbers stated in words are judged: a bound by its band, a fraction at two decimals.
"""

import pytest
import yaml

from attnrepro.articles import catalog
from attnrepro.report.ledger import coverage, verdicts

from conftest import REPO, article_text, seed_articles

PUBLISHED = REPO / "config" / "published.yaml"
UNCLAIMED = REPO / "config" / "unclaimed.yaml"


@pytest.fixture(scope="module")
def texts():
    """{article: text} of the articles the claims and the list were read against."""
    seeds = seed_articles()
    texts = {name: article_text(name) for name in seeds}
    assert catalog.problems(seeds) == {}, "another text than config/config.yaml's articles record"
    return texts


@pytest.fixture(scope="module")
def claims():
    return verdicts.load_claims(PUBLISHED)


@pytest.fixture(scope="module")
def listed():
    return coverage.load(UNCLAIMED)[1]


def test_every_printed_number_is_a_claim_or_listed(texts, claims, listed):
    found = [n for a, t in texts.items() for n in coverage.numbers(a, t)]
    assert len(found) > 1450  # the three articles print 1,495 numbers outside their source, 233 in words
    assert coverage.problems(texts, claims, listed) == []
    spans = coverage.claim_spans(claims)
    covered = sum(coverage.claimed(n, spans) for n in found)
    assert covered + len(listed) == len(found)


def test_growth_and_zero_in_words_are_scanned_and_each_listed_with_a_reason(texts, listed):
    """"zero", "doubles", "quadruples", "halves" are numbers of the scan: 003's "roughly quadruples
    attention's time" is found and listed (a formula's factor, as its "twice ... four" the line before)."""
    found = [n for a, t in texts.items() for n in coverage.numbers(a, t)
             if n.text.lower() in ("zero", "doubles", "quadruples", "halves")]
    assert sorted((n.article, n.line, n.text) for n in found) == [
        ("000", 76, "zero"), ("000", 251, "zero"), ("000", 279, "zero"), ("000", 313, "quadruples"),
        ("001", 125, "zero"), ("001", 181, "zero"), ("001", 277, "Zero"), ("001", 296, "zero"),
        ("001", 337, "zero"), ("001", 879, "doubles"), ("001", 879, "quadruples"), ("003", 240, "quadruples")]
    why = {(e["article"], e["line"], e["column"]): e["why"] for e in listed}
    assert why[("003", 240, 69)] == "formula"
    assert all((n.article, n.line, n.column) in why for n in found)


def test_the_scan_reads_numbers_as_the_rule_says():
    text = "\n".join([
        "Intro with no numbers at all, long enough to be read as a paragraph of prose by the parser here.",
        "",
        "import numpy as np",
        "x = np.ones(48) * 3.5",
        "print(x.sum())",
        "total 168.0",
        "",
        ("The space is 20⁶ ≈ 6.4 · 10⁷ and the model sees 48,000 of them, 0.075%; √8 ≈ 2.83, eps 2.56e-06, "
         "float32 and W_1 are names, x16 is a factor, torch 2.12.0 on 2026-11-13, more than ten times, "
         "about one sixth, three seeds, 6..11."),
        ("From about one millisecond, a dozen runs, a sixth, twice, double the size in double precision, "
         "twenty-four blocks, two hundred steps, the one drawn, each one, no one, billions, the third role."),
        "Doubling n quadruples the cells, doubles the rows and halves nothing: zero, two halves.",
    ])
    read = [(n.line, n.column, n.text) for n in coverage.numbers("000", text)]
    assert [t for _, _, t in read] == [
        "168.0", "20⁶", "6.4 · 10⁷", "48,000", "0.075", "8", "2.83", "2.56e-06", "16", "2.12.0", "2026-11-13",
        "ten", "one sixth", "three", "6", "11",
        "one millisecond", "dozen", "a sixth", "twice", "double", "twenty-four", "two hundred", "billions",
        "quadruples", "doubles", "halves", "zero", "two halves"]
    assert [coverage.value(t)[0] for t in ("quadruples", "doubles", "halves", "zero", "two halves")] == [
        4, 2, 0.5, 0, 1]
    assert all(line in (6, 8, 9, 10) for line, _, _ in read)  # the listing's source (lines 3-5) is not read
    lines = text.split("\n")
    assert all(lines[n - 1][c - 1:c - 1 + len(t)] == t for n, c, t in read)


def test_the_value_of_a_printed_number():
    assert coverage.value("1,048,576") == (1048576.0, 7)
    assert coverage.value("2.56 · 10⁻⁶") == (2.56e-06, 3)
    assert coverage.value("20⁶") == (64e6, None)
    assert coverage.value("two thirds")[0] == pytest.approx(2 / 3)
    assert coverage.value("a sixth")[0] == pytest.approx(1 / 6) and coverage.value("half") == (0.5, None)
    assert [coverage.value(w)[0] for w in ("twenty-four", "two hundred", "a dozen", "billions", "Three")] == [
        24, 200, 12, 1e9, 3]
    assert coverage.value("one millisecond") == (0.001, None)  # a time in seconds, as the claims print it
    assert coverage.same_number("one millisecond", "0.001")
    assert not coverage.same_number("one millisecond", "1")
    assert coverage.same_number("20⁶", "6.4e7") and coverage.same_number("2.56 · 10⁻⁶", "2.56e-06")
    assert coverage.same_number("2.04", "1.99-2.04") and coverage.same_number("0.075", "0.075%")
    assert not coverage.same_number("0.98", "0.97") and not coverage.same_number("8", "64")


def _without(entries, index):
    return entries[:index] + entries[index + 1:]


def test_an_unlisted_a_stale_or_a_wrong_entry_fails_naming_it(texts, claims, listed):
    at = next(i for i, e in enumerate(listed) if e["article"] == "001" and e["text"] == "32,768")
    entry = listed[at]
    where = f"article 001, line {entry['line']}, column {entry['column']}: '32,768'"
    assert coverage.problems(texts, claims, _without(listed, at)) == [
        f"{where}: neither a claim of config/published.yaml nor listed in config/unclaimed.yaml"]
    moved = {**entry, "column": entry["column"] + 1}
    problems = coverage.problems(texts, claims, [*_without(listed, at), moved])
    stale = f"article 001, line {entry['line']}, column {entry['column'] + 1}: '32,768'"
    assert f"config/unclaimed.yaml: {stale} is no number of the text (stale entry: the scan finds none " \
           "there)" in problems
    assert f"{where}: neither a claim of config/published.yaml nor listed in config/unclaimed.yaml" \
           in problems
    same = next(i for i, e in enumerate(listed) if e["same_as"] == "001.prose.train.sequence-space")
    wrong = {**listed[same], "same_as": "001.prose.train.sequences-seen"}
    assert coverage.problems(texts, claims, [*_without(listed, same), wrong]) == [
        f"config/unclaimed.yaml: article 001, line {wrong['line']}, column {wrong['column']}: '20⁶': same_as "
        "001.prose.train.sequences-seen is no claim that prints '20⁶'"]
    assert coverage.problems(texts, claims, [*listed, entry]) == [
        f"config/unclaimed.yaml: {where} is listed twice"]


def test_a_number_in_words_is_listed_or_claimed_like_digits(texts, claims, listed):
    at = next(i for i, e in enumerate(listed) if e["text"] == "one millisecond")  # 000: "from about one
    entry = listed[at]  # millisecond to 0.07-0.09 s", the n = 512 time of the table printed again
    assert (entry["article"], entry["why"], entry["same_as"]) == (
        "000", "same", "000.quadratic_cost.n-512.mean-seconds")
    where = f"article 000, line {entry['line']}, column {entry['column']}: 'one millisecond'"
    assert coverage.problems(texts, claims, _without(listed, at)) == [
        f"{where}: neither a claim of config/published.yaml nor listed in config/unclaimed.yaml"]
    wrong = {**entry, "same_as": "000.quadratic_cost.n-512.mib"}  # 1.0 (MiB), not 0.001 s
    assert coverage.problems(texts, claims, [*_without(listed, at), wrong]) == [
        f"config/unclaimed.yaml: {where}: same_as 000.quadratic_cost.n-512.mib is no claim that prints "
        "'one millisecond'"]
    kept = [c for c in claims if c.id != "000.prose.quadratic_cost.time-per-doubling"]  # text: 'four'
    assert [p for p in coverage.problems(texts, kept, listed) if "'four'" in p] == [
        "article 000, line 313, column 88: 'four': neither a claim of config/published.yaml nor listed in "
        "config/unclaimed.yaml"]


def test_a_claim_removed_leaves_its_number_uncovered(texts, claims, listed):
    kept = [c for c in claims if c.id != "001.prose.train.sequences-seen"]
    assert coverage.problems(texts, kept, listed) == [
        "article 001, line 816, column 223: '48,000': neither a claim of config/published.yaml nor listed in "
        "config/unclaimed.yaml"]
    claimed = next(c for c in claims if c.id == "001.prose.train.seen-share")
    also = {"article": "001", "line": 816, "column": claimed.location["column"], "text": "0.075",
            "why": "setting", "same_as": None}
    assert coverage.problems(texts, claims, [*listed, also]) == [
        "config/unclaimed.yaml: article 001, line 816, column 239: '0.075' is a claim's number: listed and "
        "claimed"]


def test_a_malformed_list_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "unclaimed.yaml"
    for group, error in (({"article": "000", "why": "b", "at": ["1:1:1"]}, "why: 'b' is not one of"),
                         ({"article": "000", "why": "a", "at": ["1:1"]}, "'1:1' is not 'line:column:text'"),
                         ({"article": "000", "why": "a", "at": [], "x": 1}, "must be {article, why, at")):
        path.write_text(yaml.safe_dump({"reasons": {"a": "x"}, "unclaimed": [group]}))
        with pytest.raises(ValueError, match=error) as caught:
            coverage.load(path)
        assert str(path) in str(caught.value)


def test_a_number_stated_in_words_is_judged_by_what_its_words_admit(claims):
    by_id = {c.id: c for c in claims}
    bound = by_id["001.prose.causal_timing.matrix-over-qkv"]  # "more than ten times": band [10, null]
    assert verdicts.judge(bound, 32.0 / 3.0)[:2] == ("reproduced", "10.7")
    verdict, text, reason = verdicts.judge(bound, 9.5)
    assert (verdict, text) == ("differs", "9.5") and "'more than ten': a bound, 10 to inf" in reason
    share = by_id["000.prose.scale_sweep.gradient-share-1024"]  # "about one sixth", at two decimals
    assert verdicts.judge(share, 0.0504 / 0.3053)[:2] == ("reproduced", "0.17")
    assert verdicts.judge(share, 0.2)[:2] == ("differs", "0.20")
