"""Tables as the articles print them: their rows, labels and headers, and beside each cell that prints
a published number, the article's value and the ledger's verdict (attnrepro.report.ledger.printed).

The article's own words are read from its text (config/config.yaml, articles) at test time, never
copied here.
"""

import re

import pandas as pd
import pytest

from attnrepro.dag import plan
from attnrepro.report import cli as report_cli
from attnrepro.report.editions import page
from attnrepro.report.ledger import claims as published, printed
from attnrepro.report.products import formats, render, tables_checks, tables_decoder

from conftest import REPO, article_text
from report_helpers import FrameLoad, assert_csv_at_full_precision, loader, row

PUBLISHED = REPO / "config/published.yaml"


def _article_lines(article):
    return article_text(article).split("\n")


def _listing_after(lines, opening):
    """The lines of the listing output that follow the line starting with ``opening``, to the first blank."""
    start = next(i for i, line in enumerate(lines) if line.startswith(opening))
    out = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        out.append(line)
    return out


def _train_runs(ablations):
    """train's main: the base run of the grid and one run per ablation name (what the tables read)."""
    settings = {"steps": 1500, "batch": 32, "d": 32, "heads": 4, "layers": 2, "d_ff": 128, "lr": 0.003,
                "alphabet": 20, "scale": True, "post_ln": False, "position": True, "eval_sequences": 500,
                "task": "copy", "L": 6, "seed": 0}
    rows = [{**settings, "ablation": "full", "case": "copy-L6-seed0"}]
    rows += [{**settings, "ablation": name, "case": f"ablation-{name}"} for name in ablations]
    frame = pd.DataFrame(rows)
    return frame.assign(final_loss=0.0002, token_accuracy=1.0, sequence_accuracy=1.0)


# --- rows and headers as printed ------------------------------------------------------------------

def test_the_ablations_are_listed_in_the_articles_order_and_words(default_config):
    listing = _listing_after(_article_lines("001"), "Ablations on the copy task")
    words = [line.split("final loss")[0].strip() for line in listing]
    assert len(words) == 6 and words[0] == "full"
    config = list(default_config["train"]["ablations"])
    shuffled = sorted(config, reverse=True) + ["zz_extra", "aa_extra"]  # the files' order does not count
    table = tables_decoder.build_ablations(FrameLoad({("train", "main"): _train_runs(shuffled)}))
    assert table.data["run"].tolist() == words + ["aa_extra", "zz_extra"]  # others after, by name
    assert [formats.ablation_label(n) for n in ["full", *config]] == words
    # the claims name their cells by those words: each of the 18 the listing prints finds its own
    claims = printed.of_table(published.load_claims(PUBLISHED), "ablations")
    ledger = pd.DataFrame({"id": [c.id for c in claims], "published": [c.published for c in claims],
                           "reproduced": [c.published for c in claims], "verdict": "reproduced"})
    found = printed.cells(table, "ablations", claims, ledger)
    assert len(claims) == len(found) == 18
    assert {(table.data["run"][row], column) for row, column, *_ in found} == {
        (w, c) for w in words for c in ("final loss", "token", "sequence")}


def test_copy_without_position_names_its_run_as_the_article_does():
    runs = _train_runs(["no_position"])
    runs.loc[runs["ablation"] == "no_position", "position"] = False
    runs["distinct_share_expected"] = 0.436
    sequences = pd.DataFrame({"case": ["ablation-no_position", "copy-L6-seed0"] * 2,
                              "correct": [True, True, False, True],
                              "all_distinct": [True, True, False, False]})
    table = tables_decoder.build_copy_without_position(
        FrameLoad({("train", "main"): runs, ("train", "sequences"): sequences}))
    assert table.data["run"].tolist() == ["no position", "full"]


def test_the_scale_table_has_the_headers_the_listing_prints():
    header = next(line for line in _article_lines("001") if line.startswith("d_k  divided"))
    frame = pd.DataFrame({"d_k": [8, 8], "scaled": [True, False], "var_dot": 7.98, "sd_scores": 1.0,
                          "max_weight": 0.1, "entropy": 3.6, "sensitivity": 0.96, "T": 64, "repetitions": 400,
                          "max_entropy": 4.1589, "max_sensitivity": 0.9844})
    table = tables_checks.build_scale_table(FrameLoad({("scale_table", "main"): frame}))
    assert list(table.data.columns) == re.split(r"\s{2,}", header.strip())
    assert table.data["divided"].tolist() == ["no", "yes"]  # the listing's order: without, then with


# --- the published value and the ledger's verdict beside a printed cell ------------------------

def _claim(cid, published_text, column, L):
    return published.Claim.from_dict({
        "id": cid, "article": "001", "section": "s", "claim": "c", "published": published_text,
        "class": "stochastic", "location": {"line": 1, "column": 1},
        "source": {"experiment": "train", "where": {"task": "sort", "L": L}, "column": "x", "reduce": "mean"},
        "printed": {"table": "t", "row": {"task": "sort", "L": L}, "column": column}})


CLAIMS = [_claim("a.sort-L8.sequence-mean", "0.951", "per-sequence mean", 8),
          _claim("a.sort-L8.token-mean", "0.987", "per-token mean", 8),
          _claim("a.sort-L4.token-mean", "0.995", "per-token mean", 4),
          _claim("a.sort-L6.token-mean", "0.990", "per-token mean", 6)]  # a row this run does not hold
LEDGER = pd.DataFrame({"id": [c.id for c in CLAIMS], "published": [c.published for c in CLAIMS],
                       "reproduced": ["0.937", "0.985", "0.995", ""],
                       "verdict": ["within tolerance", "differs", "reproduced", "other parameters"]})


def _table():
    data = pd.DataFrame({"task": ["sort", "sort"], "L": [4, 8], "per-token mean": [0.9954999999999999, 0.985],
                         "per-sequence mean": [0.97, 0.9366666666666666]})
    return render.Table(data, {"per-token mean": "{:.3f}", "per-sequence mean": "{:.3f}"}, "The note.")


def test_a_printed_cell_shows_the_published_value_and_a_flagged_verdict(tmp_path):
    table = printed.annotate(_table(), "t", CLAIMS, LEDGER)
    text = render.markdown(table)
    # reproduced: its symbol, no published value (the same text), no footnote
    assert row(text, "sort", "4")[2:] == ["0.995 ✓", "0.970"]
    # not reproduced: the article's value beside it, the verdict's symbol and a footnote naming it
    # (footnotes numbered in the table's reading order)
    assert row(text, "sort", "8")[2:] == ["0.985 ✗ (published 0.987) [1]", "0.937 ≈ (published 0.951) [2]"]
    assert "- [1] a.sort-L8.token-mean: differs (published 0.987, reproduced 0.985)" in text
    assert "- [2] a.sort-L8.sequence-mean: within tolerance (published 0.951, reproduced 0.937)" in text
    assert "a.sort-L4.token-mean" not in text and "[3]" not in text
    assert "✓ reproduced, ≈ within tolerance, ✗ differs" in table.note
    # the CSV: values at full precision, then the claim, published value and verdict of each printed cell
    render.write_table(table, tmp_path / "t.md", tmp_path / "t.csv")
    assert_csv_at_full_precision(table, tmp_path / "t.csv")
    csv = pd.read_csv(tmp_path / "t.csv", dtype=str, keep_default_na=False)
    assert csv.columns.tolist()[4:] == [f"{c}: {p}" for c in ("per-token mean", "per-sequence mean")
                                        for p in ("claim", "published", "verdict")]
    assert csv["per-token mean: published"].tolist() == ["0.995", "0.987"]
    assert csv["per-token mean: verdict"].tolist() == ["reproduced", "differs"]
    assert csv["per-sequence mean: verdict"].tolist() == ["", "within tolerance"]
    assert csv["per-token mean"].tolist() == ["0.9954999999999999", "0.985"]  # the value, unmarked


def test_a_reproduced_cell_printed_otherwise_gives_the_published_value_unflagged():
    ledger = LEDGER.assign(reproduced=["0.937", "0.985", "0.99", ""],
                           verdict=["reproduced", "reproduced", "reproduced", "missing"])
    table = printed.annotate(_table(), "t", CLAIMS, ledger)
    assert row(render.markdown(table), "sort", "4")[2] == "0.995 ✓ (published 0.995)"
    assert table.footnotes == [] and "[" not in "".join(table.marks["per-sequence mean"])


def test_a_cell_that_prints_two_claims_carries_both_marks():
    """A listing's value and the prose's range on one cell: each verdict shown, neither hidden."""
    prose = _claim("a.prose.sort-L8.sequence-range", "95-98%", "per-sequence mean", 8)
    ledger = pd.concat([LEDGER, pd.DataFrame({"id": [prose.id], "published": ["95-98%"],
                                              "reproduced": ["94-98%"], "verdict": ["differs"]})])
    table = printed.annotate(_table(), "t", [*CLAIMS, prose], ledger)
    assert row(render.markdown(table), "sort", "8")[3] == (
        "0.937 ≈ (published 0.951) [2] ✗ (published 95-98%) [3]")
    assert table.extra["per-sequence mean: verdict"].tolist() == ["", "within tolerance; differs"]
    assert table.extra["per-sequence mean: claim"][1] == f"a.sort-L8.sequence-mean; {prose.id}"
    twice = printed.annotate(_table(), "t", [CLAIMS[2], CLAIMS[2]], LEDGER)
    assert twice.marks["per-token mean"] == [" ✓", ""]  # two reproduced claims: one mark


def test_a_cell_its_table_marks_disturbed_shows_the_mark_once_beside_the_ledgers_verdict():
    """The builder marks a time read from a disturbed measurement (products.disturbance); the ledger's
    verdict on it follows, its symbol not repeated when it is the same mark."""
    for verdict, shown in (("disturbed", "0.985 ~ (published 0.987) [1]"),
                           ("differs", "0.985 ~ ✗ (published 0.987) [1]")):
        table = _table()
        table.marks = {"per-token mean": ["", " ~"], "L": ["", " ~"]}
        ledger = LEDGER.assign(verdict=["within tolerance", verdict, "reproduced", "other parameters"])
        text = render.markdown(printed.annotate(table, "t", CLAIMS, ledger))
        assert row(text, "sort", "8 ~")[2] == shown, verdict
        assert row(text, "sort", "4")[2] == "0.995 ✓"


def test_a_table_that_prints_no_claim_is_left_as_built():
    table = printed.annotate(_table(), "other", CLAIMS, LEDGER)
    assert table.marks == {} and table.extra is None and table.note == "The note."


def test_every_verdict_has_a_symbol_of_its_own_and_a_style_in_the_editions():
    """One vocabulary: the tables and the editions show each of the ledger's verdicts by one symbol."""
    assert set(printed.SYMBOLS) == set(published.VERDICTS) == set(page.VERDICT_CLASSES)
    assert len(set(printed.SYMBOLS.values())) == len(printed.SYMBOLS)
    assert printed.OTHER not in printed.SYMBOLS.values()
    for verdict, css in page.VERDICT_CLASSES.items():  # the editions' marks draw the same symbol
        assert f'.{css} mark::after {{ content: "{printed.SYMBOLS[verdict]}"; }}' in page.CSS, verdict


def test_a_ledger_without_a_verdict_column_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "ledger.csv"
    LEDGER.drop(columns="verdict").to_csv(path, index=False)
    with pytest.raises(ValueError, match=f"{path}: .* no column verdict"):
        printed.read_ledger(path)


def test_the_table_job_marks_the_scale_table_from_the_ledger_and_the_claims(tmp_path, run_case,
                                                                           default_config):
    """The real claims of config/published.yaml on the real scale table, through the job's command."""
    cases = plan.cases("scale_table", default_config)
    load = loader(tmp_path, {("scale_table", case): run_case("scale_table", case) for case in cases})
    claims = printed.of_table(published.load_claims(PUBLISHED), "scale_table")
    assert len(claims) == 30  # 3 d_k x divided or not x 5 columns, as the listing prints them
    flagged = "001.scale_table.d_k-512.divided-no.sensitivity"
    ledger = pd.DataFrame({"id": [c.id for c in claims], "published": [c.published for c in claims],
                           "reproduced": [c.published for c in claims], "verdict": "reproduced"})
    ledger.loc[ledger["id"] == flagged, ["reproduced", "verdict"]] = ["0.0997", "differs"]
    ledger.to_csv(tmp_path / "ledger.csv", index=False)
    md, csv = tmp_path / "scale_table.md", tmp_path / "scale_table.csv"
    inputs = [str(p) for files in load.files.values() for _, p in files]
    assert report_cli.main(["--expected-params", "{}", "table", "scale_table", "--md", str(md), "--csv",
                            str(csv), "--ledger", str(tmp_path / "ledger.csv"), "--published", str(PUBLISHED),
                            "--inputs", *inputs]) == 0
    text = md.read_text()
    assert row(text, "8", "no")[2:] == ["7.98 ✓", "2.825 ✓", "0.4240 ✓", "2.0727 ✓", "0.7203 ✓"]
    assert row(text, "512", "no")[-1] == "0.0998 ✗ (published 0.0998) [1]"
    assert f"- [1] {flagged}: differs (published 0.0998, reproduced 0.0997)" in text
    read = pd.read_csv(csv, dtype=str, keep_default_na=False)
    assert (read["sensitivity: verdict"] == "differs").sum() == 1
    assert read["Var(q.k): published"].tolist() == ["7.98", "7.98", "63.99", "63.99", "512.59", "512.59"]
