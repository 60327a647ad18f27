"""The CI gate (attnrepro.report.golden): each rule fails it on its own, and the golden files pass."""

import pandas as pd
import pytest

from attnrepro import io
from attnrepro.report import cli, golden

from conftest import REPO

COLUMNS = ["id", "article", "section", "claim", "published", "reproduced", "class", "verdict", "reason",
           "numerics"]


def _claim(id, reproduced, cls="exact", verdict="reproduced", published=None, numerics="canonical"):
    return {"id": id, "article": "001", "section": "s", "claim": "c", "published": published or reproduced,
            "reproduced": reproduced, "class": cls, "verdict": verdict, "reason": "", "numerics": numerics}


@pytest.fixture
def run(tmp_path):
    """A finished run in miniature: a ledger, two data files (one of a timing experiment), and its
    golden files written by the update command."""
    rows = [_claim("001.a", "0.367"),
            _claim("001.b", "4.441e-16", "round-off", "within tolerance", "4.2e-16"),
            _claim("001.c", "0.985", "stochastic", "within tolerance", "0.981"),
            _claim("001.t", "35 s", "machine-bound", "differs", "20 s")]
    ledger_csv = tmp_path / "results" / "ledger.csv"
    ledger_csv.parent.mkdir(parents=True)
    pd.DataFrame(rows, columns=COLUMNS).to_csv(ledger_csv, index=False)
    data = tmp_path / "results" / "data"
    table = pd.DataFrame({"d_k": [8, 64], "variance": [1.0, 2.5], "seconds": [0.1, 0.2]})
    io.write_parquet(table, data / "001/scale_table/d_k-8_scaled-true.parquet", {"experiment": "scale_table"})
    io.write_parquet(table, data / "001/causal_timing/default.parquet", {"experiment": "causal_timing"})
    assert cli.main(["golden", "--ledger", str(ledger_csv), "--data", str(data),
                     "--out", str(tmp_path / "golden")]) == 0
    return tmp_path


def _gate(run, capsys, ledger=None):
    code = cli.main(["gate", str(ledger or run / "results/ledger.csv"), "--golden", str(run / "golden"),
                     "--data", str(run / "results/data")])
    return code, capsys.readouterr().out


def _edit_ledger(run, id, **changes):
    path = run / "results/ledger.csv"
    table = golden.read_ledger(path)
    for key, value in changes.items():
        table.loc[table["id"] == id, key] = value
    table.to_csv(path, index=False)


def test_the_golden_files_hold_what_the_update_wrote(run, capsys):
    kept = golden.read_ledger(run / "golden" / golden.LEDGER_FILE)
    assert list(kept["id"]) == ["001.a", "001.b", "001.c"]  # the timing claim is the machine's
    assert list(kept["reproduced"]) == ["0.367", "4.441e-16", "0.985"]
    tables = pd.read_csv(run / "golden" / golden.TABLES_FILE)
    assert list(tables["path"]) == ["results/data/001/scale_table/d_k-8_scaled-true.parquet"]
    code, out = _gate(run, capsys)
    assert code == 0 and "equal to the golden files" in out


def test_a_changed_reproduced_value_fails_the_gate(run, capsys):
    _edit_ledger(run, "001.c", reproduced="0.986")
    code, out = _gate(run, capsys)
    assert code == 1 and "claim 001.c: reproduced was '0.985' in the golden file, is '0.986' now" in out


def test_a_golden_value_changed_by_hand_fails_the_gate(run, capsys):
    path = run / "golden" / golden.LEDGER_FILE
    path.write_text(path.read_text().replace("4.441e-16", "4.233e-16"))
    code, out = _gate(run, capsys)
    assert code == 1 and "claim 001.b: reproduced was '4.233e-16'" in out


def test_a_changed_table_value_fails_the_gate_but_a_measured_column_does_not(run, capsys):
    path = run / "results/data/001/scale_table/d_k-8_scaled-true.parquet"
    table = io.read_parquet(path)
    io.write_parquet(table.assign(seconds=[9.0, 9.0]), path, {})  # a wall time: not content
    assert _gate(run, capsys)[0] == 0
    table.loc[1, "variance"] = 2.5000000000000004  # one ulp
    io.write_parquet(table, path, {})
    code, out = _gate(run, capsys)
    assert code == 1 and "table results/data/001/scale_table/d_k-8_scaled-true.parquet: sha256 was" in out


def test_a_missing_claim_fails_the_gate(run, capsys):
    _edit_ledger(run, "001.a", verdict="missing", reproduced="", reason="no result file holds this value")
    code, out = _gate(run, capsys)
    assert code == 1 and "claim 001.a: missing (no result file holds this value)" in out


def test_a_claim_that_left_the_ledger_or_a_new_one_fails_the_gate(run, capsys):
    path = run / "results/ledger.csv"
    table = golden.read_ledger(path)
    table[table["id"] != "001.b"].to_csv(path, index=False)
    code, out = _gate(run, capsys)
    assert code == 1 and "claim 001.b: in the golden file, not in this run" in out


@pytest.mark.parametrize("text", [",".join(COLUMNS) + "\n", ""])  # a header alone; no byte at all
def test_an_empty_ledger_fails_the_gate(run, capsys, text):
    (run / "results/ledger.csv").write_text(text)
    code, out = _gate(run, capsys)
    assert code == 1 and "the ledger is empty" in out


def test_an_exact_claim_not_reproduced_fails_even_without_golden_files(run, capsys):
    _edit_ledger(run, "001.a", verdict="differs")
    assert cli.main(["gate", str(run / "results/ledger.csv")]) == 1
    assert "claim 001.a: exact claim not reproduced" in capsys.readouterr().out


def test_non_canonical_numerics_fail_the_gate(run, capsys):
    _edit_ledger(run, "001.c", numerics="non-canonical: sort-L4-seed0.parquet: numerics.pin is native")
    code, out = _gate(run, capsys)
    assert code == 1 and "claim 001.c: non-canonical: sort-L4-seed0.parquet" in out


def test_the_committed_golden_files_are_complete():
    """tests/golden holds the default run: every claim of config/published.yaml that is not
    machine-bound, and the seeds README's sort rows digit for digit (the canonical numerics are
    those of an AVX2 host, where the article's own code gives that table)."""
    from attnrepro.report import ledger

    claims = ledger.load_claims(REPO / "config" / "published.yaml")
    kept = golden.read_ledger(REPO / "tests" / "golden" / golden.LEDGER_FILE).set_index("id")
    assert set(kept.index) == {c.id for c in claims if c.cls != "machine-bound"}
    sort_rows = [c for c in claims if c.id.startswith("001.train.sort-L")]
    assert len(sort_rows) == 12
    assert {c.id: kept.at[c.id, "reproduced"] for c in sort_rows} == {c.id: c.here for c in sort_rows}
    tables = pd.read_csv(REPO / "tests" / "golden" / golden.TABLES_FILE)
    assert len(tables) > 100 and tables["sha256"].str.fullmatch("[0-9a-f]{64}").all()
    assert "gate results/ledger.csv --golden tests/golden" in (REPO / ".ci" / "run").read_text()

