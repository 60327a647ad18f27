"""The verdict first: one summary for LEDGER.md and results/README.md, one vocabulary in every product."""

import re

import matplotlib
import pandas as pd
import pytest
import yaml

from attnrepro import paths
from attnrepro.dag import config as cfg
from attnrepro.jobs import index as index_job
from attnrepro.report import index
from attnrepro.report.ledger import ledger_md
from attnrepro.report.editions import page
from attnrepro.report.ledger import claims as published, headline, overview_figure, speed, speed_figure
from attnrepro.run import io

matplotlib.use("Agg")
REPO = paths.REPO
# every verdict of the ledger, and one it does not know yet (a verdict is handled by its name)
NAMES = (*published.VERDICTS, "disturbed")
PER, INT, CEL, FAC, PUB = (f"\u2039{name}\u203a" for name in (  # the markers of a cause
    "percentile", "interval", "cells", "factor", "published"))
REASONS = ("machine-bound: accepted band 12.1 to 24.2 (a ratio of minimum times); the run was busy",
           "round-off: both below 1e-14 (float64 round-off); the last bits move with the numerics",
           "L = 8 outside the published range (its 95% interval overlaps the range)")


@pytest.fixture(scope="module")
def claims():
    return published.load_claims(REPO / "config/published.yaml")


def synthetic(claims):
    """The real claims with verdicts cycling through NAMES (every seventh reproduced), reasons of
    the ledger's length and kinds, as ledger.csv holds them."""
    rows = []
    for i, c in enumerate(claims):
        verdict = "reproduced" if i % 7 else NAMES[(i // 7) % len(NAMES)]
        rows.append({"id": c.id, "article": c.article, "section": c.section, "claim": c.claim, "published":
                     c.published, "reproduced": c.published if verdict == "reproduced" else "9.99",
                     "class": c.cls, "verdict": verdict,
                     "reason": "" if verdict == "reproduced" else REASONS[i % len(REASONS)]})
    return pd.DataFrame(rows)


def test_the_summarys_counts_are_the_ledgers_crosstab(claims, tmp_path):
    table = synthetic(claims)
    table.to_csv(tmp_path / "ledger.csv", index=False)
    table = pd.read_csv(tmp_path / "ledger.csv", dtype=str, keep_default_na=False)  # as both jobs read it
    text = "\n".join(headline.lines(table))
    crosstab = pd.crosstab(table["class"], table["verdict"])
    names = headline.verdict_names(table)
    assert names[:len(published.VERDICTS)] == list(published.VERDICTS) and "disturbed" in names
    header = [line for line in text.splitlines() if line.startswith("| class |")]
    assert header == ["| class | claims | " + " | ".join(names) + " |"]
    for cls in published.CLASSES:  # the per-class table, cell by cell
        cells = [f"| {cls} | {int(crosstab.loc[cls].sum())} |"]
        cells += [f" {int(crosstab.loc[cls].get(v, 0))} |" for v in names]
        assert "".join(cells) in text.splitlines(), cls
    computed = table[table["class"] != "echo"]
    sentence = ", ".join(f"{int((computed['verdict'] == v).sum())} {v}" for v in names)
    assert f"{len(table)} claims, {len(computed)} computed and {len(table) - len(computed)} echoes" in text
    assert f"Computed: {sentence}." in text
    assert int((computed["verdict"] == "disturbed").sum()) > 0  # the new verdict is counted


def test_each_claim_not_reproduced_is_named_by_exactly_one_cause(claims):
    table = synthetic(claims)
    found = headline.causes(table)
    named = [c[0] for cause in found for c in cause.claims]
    off = table[table["verdict"] != "reproduced"]
    assert sorted(named) == sorted(off["id"]) and len(named) == len(set(named))
    for cause in found:
        rows = table.set_index("id").loc[[c[0] for c in cause.claims]]
        assert (rows["verdict"] == cause.verdict).all() and (rows["class"] == cause.cls).all()
        assert all(c[0].split(".")[1] == cause.experiment for c in cause.claims)
        assert "(" not in cause.head  # the rule, not the rationale it quotes
    assert len(found) < len(named) and max(len(cause.claims) for cause in found) > 1  # grouped by cause
    assert headline.reason_head(REASONS[0]) == "machine-bound: accepted band 12.1 to 24.2"
    lines = headline.lines(table)
    for cause in found:
        line = f"- **{cause.verdict}**, {cause.cls}, {cause.experiment} ({len(cause.claims)}): {cause.head}: "
        texts = [f"`{i}` {p} \u2192 {r}" for i, p, r, _ in cause.claims]
        more = len(texts) - headline.MOST
        assert line + "; ".join(texts[:headline.MOST]) + (
            f" and {more} more (LEDGER.md lists every claim)" if more > 0 else "") in lines
    many = [f"`001.x.c{i}`" for i in range(headline.MOST + 5)]  # a long cause: its first claims, a count
    last = f"`001.x.c{headline.MOST - 1}`"
    assert headline.named(many).endswith(f"{last} and 5 more (LEDGER.md lists every claim)")
    raw = ("raw time: this machine runs article 001's raw times 3.5x as fast (median of 4 ratios; 95% "
           "bootstrap interval 2x to 5x); this time's ratio 1.2 is outside it")
    assert headline.reason_head(raw) == "raw time: this machine runs article 001's raw times 3.5x as fast"


def _row(claim_id, cls, verdict, published, reproduced, reason):
    return {"id": claim_id, "article": claim_id[:3], "section": "s", "claim": "c", "published": published,
            "reproduced": reproduced, "class": cls, "verdict": verdict, "reason": reason}


def _seeds(percentile, low, high):
    return (f"published lies at percentile {percentile} of the 84 means of 3 of the 9 seeds measured here, "
            f"inside their 95% interval {low} to {high} [results/seeds/seed_distribution.md]")


def several_causes():
    """A ledger of several causes: values shared by a cause's claims and values of each claim's own."""
    rows = [_row(f"000.exact_{i}.x", "exact", "reproduced", "0.5", "0.5", "") for i in range(4)]
    rows += [_row("000.echo_0.x", "echo", "reproduced", "1", "1", "")]
    within, shared = "within tolerance", "round-off: both below 1e-14 (float64: 45 ulps); the last bits move"
    rows += [_row(f"001.check.c{i}", "round-off", within, f"{i + 1}.1e-16", f"{i + 2}.3e-16", shared)
             for i in range(3)]
    rows += [_row("001.train.L4", "stochastic", within, "0.981", "0.985", _seeds(12, "0.975", "0.990")),
             _row("001.train.L6", "stochastic", within, "0.970", "0.953", _seeds(51, "0.900", "0.989")),
             _row("001.train.L8", "stochastic", "differs", "0.951", "0.8", "L = 8 outside the range")]
    rows += [_row(f"001.timing.r{i}", "machine-bound", "differs", p, r,
                  "machine-bound: accepted band 12.13 to 24.25 (4^1.8 to 4^2.3)")
             for i, (p, r) in enumerate((("20.2", "33.9"), ("14.2", "8.5")))]
    rows += [_row(f"001.prose.timing.r{i}", "machine-bound", "differs", p, r,
                  f"restates the cells 001.timing.r{i}: differs, and takes the least good of their verdicts")
             for i, (p, r) in enumerate((("17.8-20.2", "33.9"), ("13.2-14.2", "8.5")))]
    rows += [_row("001.kv.speedup", "machine-bound", "inconclusive", "56.6", "13.3",
                  "disturbed measurement: kv case default, generated = 128: the thread ran 90% of the time")]
    return pd.DataFrame(rows)


def test_no_headline_line_carries_a_bare_n_and_each_claim_shows_its_own_values(claims):
    for table in (several_causes(), synthetic(claims)):
        text = "\n".join(headline.lines(table))
        assert not [line for line in text.splitlines() if re.search(r"\bN\b", line)]
        for _, r in table[table["verdict"] != "reproduced"].iterrows():  # its values, in its cause's line
            assert f"`{r['id']}` {r['published']} \u2192 {r['reproduced']}" in text, r["id"]
    lines = headline.lines(several_causes())
    seeds = next(line for line in lines if "`001.train.L4`" in line)
    assert seeds.startswith("- **within tolerance**, stochastic, train (2): published lies at percentile "
                            f"{PER} of the 84 means of 3 of the 9 seeds measured here, inside "
                            f"their 95% interval {INT} [results/seeds/seed_distribution.md]: ")
    assert seeds.endswith(": `001.train.L4` 0.981 \u2192 0.985 (percentile 12, interval 0.975 to 0.990); "
                          "`001.train.L6` 0.970 \u2192 0.953 (percentile 51, interval 0.900 to 0.989)")
    assert ("- **within tolerance**, round-off, check (3): round-off: both below 1e-14: `001.check.c0` "
            "1.1e-16 \u2192 2.3e-16; `001.check.c1`") in "\n".join(lines)  # a shared bound said once
    assert (f"restates the cells {CEL}: differs, and takes the least good of their verdicts: "
            "`001.prose.timing.r0` "
            "17.8-20.2 \u2192 33.9 (cells `001.timing.r0`); `001.prose.timing.r1` 13.2-14.2 \u2192 8.5 "
            "(cells `001.timing.r1`)") in "\n".join(lines)


def test_the_headline_opens_with_plain_sentences_counted_from_the_rows():
    """What reproduces by class, what does not by verdict, the rules the reasons open with, and what to
    conclude, in the order of claims.CLASSES and claims.VERDICTS."""
    table = pd.concat([several_causes(), pd.DataFrame([_row(
        "001.grad.eps", "finite-difference", "within tolerance", "4.9e-05", "6.8e-05",
        "finite difference: both below 0.001 (cancellation)")])], ignore_index=True)
    sentences = headline.opening(table)
    assert 3 <= len(sentences) <= 5 and all(s.endswith(".") for s in sentences)
    assert sentences[0] == (
        "4 of the 16 computed claims reproduce as printed (4 of 4 exact, 0 of 3 round-off, 0 of 1 "
        "finite-difference, 0 of 3 stochastic, 0 of 5 machine-bound); of the 1 echo claim, counted apart, 1 "
        "reproduce.")
    assert sentences[1] == (
        "The other 12 are 6 within tolerance (3 round-off, 1 finite-difference, 2 stochastic), 1 "
        "inconclusive (1 machine-bound) and 5 differs (1 stochastic, 4 machine-bound).")
    assert sentences[2] == (
        "Why, by the rule each reason opens with: within tolerance: round-off (3), stochastic (2), finite "
        "difference (1); inconclusive: disturbed measurement (1); differs: restates the cells (2), "
        "machine-bound (2), stochastic (1).")
    assert sentences[3] == (
        "So every exact claim reproduces as printed, and 10 of the 16 computed claims reproduce or lie "
        "within their tolerance; this run does not confirm the other 6 (1 stochastic and 5 machine-bound): "
        "their reasons below say what decided.")
    assert headline.lines(table)[0] == "**In short**: " + " ".join(sentences)
    quiet = table.assign(verdict="reproduced")
    assert headline.opening(quiet)[1] == "Every computed claim reproduces as printed."


def test_the_environment_sets_the_runs_versions_beside_the_articles(tmp_path):
    files = []
    for i, numpy in enumerate(["2.4.6", "2.4.6"]):
        files.append(tmp_path / f"data/001/scale_table/case-{i}.parquet")
        io.write_parquet(pd.DataFrame({"x": [1]}), files[-1],
                         {"versions": {"python": "3.11.9", "numpy": numpy, "torch": "2.13.0", "pandas": "2"}})
    run = headline.run_environment(files)
    assert run == {"python": ["3.11.9"], "numpy": ["2.4.6"], "torch": ["2.13.0"]}
    stated = headline.stated_environment(REPO / "config/published.yaml")
    assert stated["001"] == {"python": "3.14.4", "numpy": "2.3.5", "torch": "2.12.0"}
    line = headline.environment_line(run, stated)
    assert line.startswith("**Environment**: this run used Python 3.11.9, NumPy 2.4.6, PyTorch 2.13.0")
    assert ("article 001 states Python 3.14.4, NumPy 2.3.5, PyTorch 2.12.0 (Python, NumPy, PyTorch differ)"
            in line)
    assert "article 000 states NumPy 2.4.6, PyTorch 2.12.0 (PyTorch differs)" in line
    same = headline.environment_line({"numpy": ["2.4.6"]}, {"000": {"numpy": "2.4.6"}})
    assert "article 000 states NumPy 2.4.6 (the same)" in same


def test_a_stated_version_of_an_unknown_package_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "published.yaml"
    path.write_text("environment:\n  '001': {numpi: 2.3.5}\nclaims: []\n")
    with pytest.raises(ValueError, match=r"published.yaml: environment.001 must map python, numpy, torch"):
        headline.stated_environment(path)


def test_the_sort_rows_line_names_each_stochastic_claim_with_its_verdict(claims):
    table = synthetic(claims)
    line = headline.stochastic_line(table)
    rows = table[table["class"] == "stochastic"]
    assert line.startswith(f"**Sort rows** (the {len(rows)} stochastic claims")
    for _, r in rows.iterrows():
        assert f"`{r['id']}` {r['published']} \u2192 {r['reproduced']}" in line
    for verdict, n in rows["verdict"].value_counts().items():
        assert f"{n} {verdict} (" in line


def test_ledger_md_is_tens_of_kb_without_padded_rows(claims, tmp_path):
    table = synthetic(claims)
    table["numerics"] = "canonical"
    table.to_csv(tmp_path / "ledger.csv", index=False)
    text = ledger_md.markdown(table)
    size, csv = len(text.encode()), (tmp_path / "ledger.csv").stat().st_size
    assert size < 80_000 and size < csv, (size, csv)
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert len(rows) > len(table)
    assert not [line for line in rows if re.search(r"\s{2,}\||\|\s{2,}", line)]  # no padding around a cell
    assert all(re.fullmatch(r"\|(---\|)+|\| .* \|", line) for line in rows)
    assert headline.table_lines(["a"], [["x|y"]])[2] == "| x\\|y |"  # a pipe in a cell escaped
    for _, r in table.iterrows():  # every claim in its section; linked to its number when not reproduced
        cells = [str(r[k]).replace("|", "\\|") for k in ("id", "published", "reproduced")]
        assert "\n| " + " | ".join(cells) + " |" in text
        link = f"[{r['id']}](articles/{r['article']}.html#{r['id']})"
        assert text.count(link) == (r["verdict"] != "reproduced")


def test_the_index_opens_with_the_ledgers_summary(claims, tmp_path):
    table = synthetic(claims)
    table.to_csv(tmp_path / "ledger.csv", index=False)
    data = tmp_path / "data/001/scale_table/case-0.parquet"
    io.write_parquet(pd.DataFrame({"x": [1]}), data, {"versions": {"python": "3.11.9", "numpy": "2.4.6"}})
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(cfg.load(REPO / "config/config.yaml")))
    out = tmp_path / "README.md"
    assert index_job.main(["--config", str(config), "--ledger", str(tmp_path / "ledger.csv"),
                     "--published", str(REPO / "config/published.yaml"), "--inputs", str(data),
                     "--out", str(out)]) in (0, None)
    readme = out.read_text()
    read = pd.read_csv(tmp_path / "ledger.csv", dtype=str, keep_default_na=False)
    run = headline.run_environment([data])
    stated = headline.stated_environment(REPO / "config/published.yaml")
    expected = "\n".join(headline.lines(read, run, stated))
    assert expected in readme and expected in ledger_md.markdown(read, run=run, stated=stated)  # one text
    assert readme.index("**Verdict**") < readme.index("Generated by the `index` rule")
    assert "this run used Python 3.11.9, NumPy 2.4.6" in readme
    alone = index.lines(yaml.safe_load(config.read_text())).splitlines()
    assert alone[2].startswith("The ledger of this run is not built")


class Note:
    def __init__(self, i, verdict, cls="exact"):
        self.id, self.verdict, self.cls, self.line, self.column = f"c{i}", verdict, cls, i, 1
        self.printed, self.claim = "1", "c"


def test_the_editions_list_says_its_verdicts_by_name_and_counts_as_the_ledger():
    notes = [Note(0, "within tolerance", "round-off"), Note(1, "within tolerance", "stochastic"),
             Note(2, "differs"), Note(3, "reproduced"), Note(4, "disturbed", "machine-bound"),
             Note(5, "reproduced", "echo")]
    summary = re.search(r"<summary>(.*?)</summary>", page.others(notes)).group(1)
    assert summary == ("4 numbers whose verdict is not reproduced (2 within tolerance, 1 disturbed, "
                       "1 differs), in reading order")  # the ledger's order of verdicts
    table = pd.DataFrame({"class": [n.cls for n in notes], "verdict": [n.verdict for n in notes]})
    assert page.counts(notes) == headline.counts(table)
    assert page.counts(notes)["within tolerance"] == 2 and page.counts(notes)["reproduced"] == 1


def test_the_overview_counts_the_ledger_and_names_the_claims_it_leaves_out(claims):
    table = synthetic(claims)
    rows = overview_figure.numeric_rows(table, claims)
    out = overview_figure.left_out(table, rows)
    assert set(out["id"]) == {c.id for c in claims if overview_figure._value(c.published) is None}
    assert len(out) + len(rows) == len(table) == len(claims)
    title = overview_figure.title(table, rows)
    computed = headline.counts(table)
    assert f"{len(table)} claims" in title and headline.counts_sentence(computed) in title
    assert f"{len(rows)} drawn" in title and f"{len(out)} left out" in title
    foot = overview_figure.foot(table, rows)
    assert foot.startswith(f"Left out: the {len(out)} claims whose published value is no number")
    assert "001.attention_map (13)" in foot and "000.permutation_position (2)" in foot
    fig = overview_figure.draw(table, claims)
    fig.canvas.draw()
    a, b = fig.axes[:2]
    labels = [t.get_text() for t in a.get_xticklabels()]
    decades = [f"1e{e}" for e in range(-16, 10)]
    assert labels[0] == "0" and all(d in labels for d in decades)  # a tick on every decade
    picked = rows[rows["class"].isin(["machine-bound", "stochastic"]) & (rows["pub_high"] != 0)]
    assert sorted(t.get_text() for t in b.get_xticklabels()) == sorted(picked["id"])  # each claim named
    assert len([t for t in b.get_yticklabels() if t.get_text()]) >= 3
    legend = fig.legends[0]
    assert legend.get_title().get_text().replace("\n", " ") == foot
    assert any(t.get_text().startswith("disturbed (") for t in legend.get_texts())


def test_machine_speed_reads_plain_ticks_and_its_legend_hides_no_point():
    factors = speed.factors({"000": {"000.a.x": 3.1, "000.b.x": 2.4, "000.c.x": 2.9},
                             "001": {"001.a.x": 4.1, "001.b.x": 1.9, "001.c.x": 30.0}})
    fig = speed_figure.draw(factors, 3.0)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert not [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    box = fig.legends[0].get_window_extent(renderer)
    for ax in fig.axes:
        labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
        assert labels and all(re.fullmatch(r"\d+(\.\d+)?", t) for t in labels), labels  # not 3x10^0
        assert not box.overlaps(ax.get_window_extent(renderer))
    shown = [t.get_text() for t in fig.axes[1].get_yticklabels() if t.get_text()]
    assert {"1", "2", "5", "10"} <= set(shown)


def test_a_cause_says_the_values_its_claims_share_and_leaves_each_claim_its_own():
    """Two prose claims restating other cells by one rule: the rule said once, each cell with its claim;
    a value in a word (float64) or ending a sentence ("1e-14.") is read as a value, not the word's."""
    cells = [f"restates the cells 001.train.sort-L{n}.sequence-mean: within tolerance, and takes the least "
             "good of their verdicts" for n in (4, 6)]
    head, own = headline.shared(cells)
    assert head == (f"restates the cells {CEL}: within tolerance, and takes the least good of their "
                    "verdicts")
    assert own == [[("cells", f"001.train.sort-L{n}.sequence-mean")] for n in (4, 6)]
    assert headline.shared(cells[:1]) == (
        "restates the cells `001.train.sort-L4.sequence-mean`: within tolerance, and takes the least good of "
        "their verdicts", [[]])
    assert headline.values("float64 sums: both below 1e-14. Then 27,253 and 0.07-0.09 s, 4.18x as fast") == [
        ("below", "1e-14"), ("Then", "27,253"), ("and", "0.07-0.09"), ("factor", "4.18x")]


def test_machine_speed_draws_beside_each_raw_time_the_window_of_the_others_factor():
    factors = speed.factors({"001": {"001.a.x": 4.1, "001.b.x": 1.9, "001.c.x": 30.0}})
    ax = speed_figure.draw(factors, 3.0).axes[0]
    from matplotlib.collections import LineCollection

    bars = [s for c in ax.collections if isinstance(c, LineCollection) for s in c.get_segments()]
    spans = [(round(s[0][1], 3), round(s[1][1], 3)) for s in bars]
    others = [(1.9 + 30.0) / 2, (4.1 + 30.0) / 2, (4.1 + 1.9) / 2]  # each the median of the other two
    assert spans == [(round(f / 3, 3), round(f * 3, 3)) for f in others]


def _raw(factor, ratio):
    return (f"raw time, judged by the article's other raw times: this machine runs article 001's raw times "
            f"{factor} as fast as its author's machine (median of 5 ratios; 95% bootstrap interval 4.33x to "
            f"13.2x); this time's ratio {ratio} is consistent with it")


def _seed(published, percentile, interval):
    return (f"published {published} (mean over 3 seeds) lies at percentile {percentile} of the 1140 means "
            f"of 3 of the 20 seeds measured here, inside their 95% interval {interval} (per seed: percentile "
            "45) [results/seeds/seed_distribution.md]; a statistic over three seeds")


def cause_rows():
    """Reasons as the ledger writes them: a factor and a percentile that differ from claim to claim."""
    within = "within tolerance"
    return pd.DataFrame([
        _row("001.causal_timing.T-128.min-ms", "machine-bound", within, "1.28", "0.36", _raw("3.55x", 3.56)),
        _row("001.causal_timing.T-512.min-ms", "machine-bound", within, "25.92", "7.3", _raw("3.62x", 3.55)),
        _row("001.train.L4.mean", "stochastic", within, "0.981", "0.985", _seed("0.981", 47, "0.967-0.994")),
        _row("001.train.L6.mean", "stochastic", within, "0.993", "0.989", _seed("0.993", 50, "0.974-0.998")),
        _row("001.train.L8.mean", "stochastic", within, "0.987", "0.985", _seed("0.987", 50, "0.976-0.995"))])


def test_a_cause_line_keeps_every_value_its_claims_reasons_open_with():
    """The factor and the percentile that differ between claims stand as markers in the line's words
    and beside each claim; a value each claim prints as published is marked so; none is lost."""
    table = cause_rows()
    lines = headline.lines(table)
    raw = next(line for line in lines if "`001.causal_timing.T-128.min-ms`" in line)
    assert raw == ("- **within tolerance**, machine-bound, causal_timing (2): raw time, judged by the "
                   f"article's other raw times: this machine runs article 001's raw times {FAC} as fast as "
                   "its author's machine: `001.causal_timing.T-128.min-ms` 1.28 \u2192 0.36 (factor 3.55x); "
                   "`001.causal_timing.T-512.min-ms` 25.92 \u2192 7.3 (factor 3.62x)")
    seeds = next(line for line in lines if "`001.train.L4.mean`" in line)
    assert seeds == (f"- **within tolerance**, stochastic, train (3): published {PUB} lies at "
                     f"percentile {PER} of the 1140 means of 3 of the 20 seeds measured here, "
                     f"inside their 95% interval {INT} [results/seeds/seed_distribution.md]: "
                     "`001.train.L4.mean` 0.981 \u2192 0.985 (percentile 47, interval 0.967-0.994); "
                     "`001.train.L6.mean` 0.993 \u2192 0.989 (percentile 50, interval 0.974-0.998); "
                     "`001.train.L8.mean` 0.987 \u2192 0.985 (percentile 50, interval 0.976-0.995)")
    for table in (cause_rows(), several_causes()):  # each claim's line gives back its head, value by value
        text = "\n".join(headline.lines(table))
        for cause in headline.causes(table):
            for claim, (_, row) in zip(cause.claims, table.set_index("id").loc[
                    [c[0] for c in cause.claims]].iterrows()):
                head = headline.reason_head(row["reason"])
                assert headline.restored(cause.head, claim) == head
                line = next(line for line in text.splitlines() if f"`{claim[0]}` " in line)
                assert all(value in line for _, value in headline.values(head)), claim[0]


def test_a_cause_line_whose_words_lost_a_value_is_refused():
    head = "this machine runs article 001's raw times 3.55x as fast"
    claim = ("001.t.x", "1.28", "0.36", [])
    lost = headline.Cause("within tolerance", "machine-bound", "t", "this machine runs article 001's raw "
                          "times as fast", [claim], [head])
    with pytest.raises(ValueError, match=r"headline: the cause line of 001\.t\.x lost a value of its reason"):
        lost.line()
    marked = f"this machine runs article 001's raw times {FAC} as fast"
    for own in ([], [("factor", "")], [("factor", "nan")], [("factor", "None")], [("other", "3.55x")]):
        cause = headline.Cause("within tolerance", "machine-bound", "t", marked, [(*claim[:3], own)], [head])
        with pytest.raises(ValueError, match="lost a value"):
            cause.line()
    kept = headline.Cause("within tolerance", "machine-bound", "t", marked,
                          [(*claim[:3], [("factor", "3.55x")])], [head])
    assert kept.line().endswith(": `001.t.x` 1.28 \u2192 0.36 (factor 3.55x)")
