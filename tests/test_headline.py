"""The verdict first: one summary for LEDGER.md and results/README.md, one vocabulary in every product."""

import re

import matplotlib
import pandas as pd
import pytest
import yaml

from attnrepro import paths
from attnrepro.dag import config as cfg
from attnrepro.report import index, job, ledger_io
from attnrepro.report.editions import page
from attnrepro.report.ledger import claims as published, headline, overview_figure, speed, speed_figure
from attnrepro.run import io

matplotlib.use("Agg")
REPO = paths.REPO
# every verdict of the ledger, and one it does not know yet (a verdict is handled by its name)
NAMES = (*published.VERDICTS, "disturbed")
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
    named = [i for *_, ids in found for i in ids]
    off = table[table["verdict"] != "reproduced"]
    assert sorted(named) == sorted(off["id"]) and len(named) == len(set(named))
    for verdict, cls, experiment, head, ids in found:
        rows = table.set_index("id").loc[ids]
        assert (rows["verdict"] == verdict).all() and (rows["class"] == cls).all()
        assert all(i.split(".")[1] == experiment for i in ids)
        assert "(" not in head and not re.search(r"\d", head)  # the rule, not its values
    assert len(found) < len(named) and max(len(ids) for *_, ids in found) > 1  # claims grouped by cause
    assert headline.reason_head(REASONS[0]) == "machine-bound: accepted band N to N"
    lines = headline.lines(table)
    for verdict, cls, experiment, head, ids in found:
        line = f"- **{verdict}**, {cls}, {experiment} ({len(ids)}): {head}: "
        assert line + ", ".join(f"`{i}`" for i in ids[:headline.MOST]) + (
            f" and {len(ids) - headline.MOST} more (LEDGER.md lists every claim)" if len(ids) > headline.MOST
            else "") in lines
    many = [f"001.x.c{i}" for i in range(headline.MOST + 5)]  # a long cause: its first claims, a count
    last = f"`001.x.c{headline.MOST - 1}`"
    assert headline.named(many).endswith(f"{last} and 5 more (LEDGER.md lists every claim)")
    raw = ("raw time: this machine runs article 001's raw times 3.5x as fast (median of 4 ratios; 95% "
           "bootstrap interval 2x to 5x); this time's ratio 1.2 is outside it")
    assert headline.reason_head(raw) == "raw time: this machine runs article N's raw times Nx as fast"


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
    text = ledger_io.markdown(table)
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
    assert job.main(["index", "--config", str(config), "--ledger", str(tmp_path / "ledger.csv"),
                     "--published", str(REPO / "config/published.yaml"), "--inputs", str(data),
                     "--out", str(out)]) in (0, None)
    readme = out.read_text()
    read = pd.read_csv(tmp_path / "ledger.csv", dtype=str, keep_default_na=False)
    run = headline.run_environment([data])
    stated = headline.stated_environment(REPO / "config/published.yaml")
    expected = "\n".join(headline.lines(read, run, stated))
    assert expected in readme and expected in ledger_io.markdown(read, run=run, stated=stated)  # one text
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
    assert [t.get_text() for t in fig.axes[1].get_yticklabels() if t.get_text()][:3] == ["1", "2", "5"]


def test_a_cause_names_no_claim_id_inside_its_words():
    """A reason that names cells (one rule per number) groups by the cells' verdicts, its ids hidden."""
    head = headline.reason_head("restates the cells 001.train.sort-L4.sequence-mean: within tolerance, "
                                "and takes the least good of their verdicts (one rule per number)")
    assert head == "restates the cells [claim]: within tolerance, and takes the least good of their verdicts"
