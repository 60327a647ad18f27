"""The claims drafted from an article's text and two runs of its listings (attnrepro.articles.draft).

Each rule of the module's docstring on made-up listings and runs: the class of a printed number
(a clock, an unseeded draw, round-off, a number the code states, exact), the prose's numbers
(restating, a likely misprint, unclaimed, and what states no result), the pairing of printed and
published lines, and the rows of a listing that failed or printed other lines.
"""

import pytest

from attnrepro.articles import draft, listings
from attnrepro.articles.blocks import Block
from attnrepro.report import article_check
from attnrepro.report.ledger.claims import format_like
from attnrepro.run import usage


def listing(index, first, code, *published):
    """A Listing whose output block holds ``published`` lines, from line ``first + 2`` on."""
    lines = [listings.Line(first + 2 + k, text) for k, text in enumerate(published)]
    return listings.Listing("t", index, first, code, [lines] if lines else [])


def ran(*lines, status="ran", error=""):
    return {"status": status, "error": error, "stdout": "".join(f"{line}\n" for line in lines)}


def drafted(item, first, second, blocks=()):
    return draft.draft("t", list(blocks), [item], {item.name: first}, {item.name: second})


def test_the_class_of_a_printed_number_follows_the_stated_rules():
    code = "import time\nn = 64\nt = time.perf_counter()\nprint(n, n / 128, n * 5e-19, t)\n"
    item = listing(1, 1, code, "64 0.5 3e-17 0.012", "64 0.5 3e-17 0.013")
    first = ran("64 0.5 3e-17 0.012", "64 0.5 3e-17 0.013")
    second = ran("64 0.5 3e-17 0.011", "64 0.5 3e-17 0.013")  # the second time printed alike by chance
    classes = [(c["published"], c["class"], c.get("why")) for c in drafted(item, first, second).claims]
    assert classes == [
        ("64", "echo", "echo-stated"), ("0.5", "exact", None), ("3e-17", "round-off", "round-off"),
        ("0.012", "machine-bound", "clock"),
        ("64", "echo", "echo-stated"), ("0.5", "exact", None), ("3e-17", "round-off", "round-off"),
        ("0.013", "machine-bound", "clock")]  # its field moved in the other line: from the clock too
    unseeded = drafted(listing(1, 1, "print(rng.random())", "0.3"), ran("0.3"), ran("0.7")).claims
    assert unseeded[0]["class"] == "stochastic"
    assert unseeded[0]["note"] == "an unseeded draw moves it: two runs of listing 1 here printed 0.3 and 0.7"


def test_numbers_the_code_states_are_echoes_but_never_0_or_1():
    assert draft.stated_numbers("d = 64\nprint(f'eps = 1e-6, scale {d}')\nx = 0\ny = 1.0\n") == {64.0, 1e-6}


def test_padding_for_a_sign_does_not_shift_the_rows_paired():
    published = [listings.Line(1, "[[ 0.1, 0.2],"), listings.Line(2, " [-0.3, 0.4],"),
                 listings.Line(3, " [-0.5, 0.6],"), listings.Line(4, " [-0.7, 0.8]]")]
    printed = ["[[-0.1, 0.2],", " [ 0.3, 0.4],", " [-0.5, 0.6],", " [ 0.7, 0.8]]"]
    assert listings.pair_lines(published, printed) == [(0, 0), (1, 1), (2, 2), (3, 3)]


def test_a_version_a_section_or_a_date_is_no_number():
    item = listing(1, 1, "print(torch.__version__, 0.25)", "2.4.0 0.25")
    claims = drafted(item, ran("2.13.0 0.25"), ran("2.13.0 0.25")).claims
    assert [c["published"] for c in claims] == ["0.25"]
    line = "see $x^{(2)}$ and <img src='fig/3.png'> in 3.3.2 of 2022-10-22: 0.4613"
    figures, left = draft.prose_figures(line)
    assert [t.text for t in figures] == ["0.4613"] and [t.text for t in left] == ["2", "3"]


PROSE = [Block("heading", 1, ["Scores"]), Block("code", 3, ["print(...)"], display="print"),
         Block("output", 5, ["largest: 0.4613 at key 0, 12 keys"]),
         Block("paragraph", 7, ["The largest, 0.4613, at key 0; a misprint 0.4631; 0.9 and 7 and 12."])]


def test_prose_numbers_restate_a_printed_one_or_are_a_likely_misprint_or_are_listed():
    item = listing(1, 3, "print(...)", "largest: 0.4613 at key 0, 12 keys")
    printed = ran("largest: 0.4613 at key 0, 12 keys")
    result = drafted(item, printed, printed, PROSE)
    prose = [(c["published"], c["claim"].split(":")[0]) for c in result.claims if ".prose." in c["id"]]
    assert prose == [("0.4613", "the prose restates number 1 of listing 1's output line 5"),
                     ("0.4631", "likely misprint"),
                     ("12", "the prose restates number 3 of listing 1's output line 5")]
    assert [(u["text"], u["reason"]) for u in result.unclaimed] == [
        ("0", draft.SMALL_INTEGER), ("0.9", "no number the listings print has this value at its digits"),
        ("7", draft.SMALL_INTEGER)]
    assert draft.SMALL_INTEGER.startswith("a small integer of the prose")
    assert result.claims[0]["section"] == "Scores"


@pytest.mark.parametrize("prose, value, restated, near", [
    ("0.46", 0.4613, True, False), ("0.4631", 0.4613, False, True), ("0.5", 0.62, False, False),
    ("10", 8.0, False, False), ("0", 0.001, False, False), ("1.5e-05", 1.5e-5, True, False),
    ("8", 8.0, True, False), ("1.2505", 1.2550, False, True), ("4.0", 4.15, False, False),
])
def test_restating_and_nearness_at_the_prose_digits(prose, value, restated, near):
    assert draft.restates(prose, value) is restated
    assert restated or draft.near(prose, value) is near  # a misprint is looked for only where none restates


def test_a_prose_number_the_code_states_is_an_input_not_a_misprint():
    item = listing(1, 3, "x = [4.0, -1.0]\nprint(round(max(x) * 1.0375, 2))", "4.15")
    result = drafted(item, ran("4.15"), ran("4.15"), [Block("paragraph", 7, ["the 4.0 stays the largest"])])
    assert [c["published"] for c in result.claims] == ["4.15"]
    assert [(u["text"], u["reason"]) for u in result.unclaimed] == [("4.0", draft.STATED)]


def test_a_zero_padded_number_is_written_back_padded():
    assert [format_like(v, p) for v, p in [(1, "001"), (12, "003"), (-2, "-02"), (0.5, "0.50")]] == [
        "001", "012", "-02", "0.50"]


def rows_of(item, first, second):
    return article_check.failure_rows("t", drafted(item, first, second), [])


def test_a_listing_that_fails_or_prints_other_lines_is_one_row():
    needs = listing(1, 1, "import tiktoken", "tokens: 42")
    failed = ran(status="failed", error="ModuleNotFoundError: No module named 'tiktoken'")
    (row,) = rows_of(needs, failed, failed)
    assert (row["id"], row["verdict"], row["published"]) == ("t.listing-1", "missing", "1 numbers")
    assert row["reason"] == "listing 1: ModuleNotFoundError: No module named 'tiktoken'"
    other = listing(2, 10, "print(1.5)", "total: 1.5 of 3")  # a line of another form: other numbers
    (row,) = rows_of(other, ran("sum = 1.5"), ran("sum = 1.5"))
    assert row["verdict"] == "differs"
    assert row["reason"].startswith("listing 2 printed no line like the article's line(s) 12:")
    assert rows_of(listing(3, 20, "print(2)", "2"), ran("2"), ran("2")) == []
    shell = listing(4, 30, "!wget x", "saved 1024 bytes")  # what printed the output is not run here
    (row,) = rows_of(shell, {**ran(), "notes": ["line 1: shell command not run: !wget x"]}, ran())
    assert row["verdict"] == "inconclusive"
    assert row["reason"].endswith(
        "; what it does not run printed them (line 1: shell command not run: !wget x)")


def test_the_check_s_id_is_refused_unless_plain_and_its_files_are_laid_out_as_a_run_s():
    assert article_check.article_id("my post (v2).md") == "my-post-v2"
    with pytest.raises(usage.UsageError, match="--id 'a/b'"):
        article_check.article_id("x.md", "a/b")
    under = article_check.Outputs.under("out", "p")
    assert [str(path) for path in under.all()] == [
        "out/claims/p.yaml", "out/claims/p.unclaimed.yaml", "out/data/p/listings/numbers.parquet",
        "out/ledger.csv", "out/LEDGER.md", "out/articles/p.html"]
    in_run = article_check.Outputs.of_run("p")  # beside the run's ledger, which takes its rows in
    assert str(in_run.ledger_csv) == "results/claims/p.ledger.csv" and in_run.ledger_md is None
    assert len(in_run.all()) == 5
