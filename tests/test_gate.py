"""The CI gate (attnrepro.report.golden): each rule fails it on its own, and the golden files pass."""

import json
import os
import shutil

import pandas as pd
import pytest

from attnrepro import fingerprint, io
from attnrepro.report import cli, golden

from conftest import REPO

COLUMNS = ["id", "article", "section", "claim", "published", "reproduced", "class", "verdict", "reason",
           "numerics"]


def _claim(id, reproduced, cls="exact", verdict="reproduced", published=None, numerics="canonical"):
    return {"id": id, "article": "001", "section": "s", "claim": "c", "published": published or reproduced,
            "reproduced": reproduced, "class": cls, "verdict": verdict, "reason": "", "numerics": numerics}


PRINTS = {"libm.exp": "6518342356ad", "numpy.exp.float64": "bf6b0c8f08a9",
          "numpy.tanh.float64": "2f0e8d3a9ef4"}
NUMERICS = {"setting": "haswell-noavx512", "pinned": True, "canonical": True, "reason": "",
            "libc": "glibc 2.36", "fingerprint": PRINTS}
SCALE = "results/data/001/scale_table/d_k-8_scaled-true.parquet"
TIMING = "results/data/001/causal_timing/default.parquet"


@pytest.fixture
def run(tmp_path):
    """A finished run in miniature: a ledger, two data files (one of a timing experiment) with
    their numerics records, and its golden files written by the update command."""
    rows = [_claim("001.a", "0.367"),
            _claim("001.b", "4.441e-16", "round-off", "within tolerance", "4.2e-16"),
            _claim("001.c", "0.985", "stochastic", "within tolerance", "0.981"),
            _claim("001.t", "35 s", "machine-bound", "differs", "20 s")]
    ledger_csv = tmp_path / "results" / "ledger.csv"
    ledger_csv.parent.mkdir(parents=True)
    pd.DataFrame(rows, columns=COLUMNS).to_csv(ledger_csv, index=False)
    data = tmp_path / "results" / "data"
    table = pd.DataFrame({"d_k": [8, 64], "variance": [1.0, 2.5], "seconds": [0.1, 0.2]})
    io.write_parquet(table, tmp_path / SCALE, {"experiment": "scale_table", "numerics": NUMERICS})
    io.write_parquet(table, tmp_path / TIMING, {"experiment": "causal_timing", "numerics": NUMERICS})
    assert cli.main(["golden", "--ledger", str(ledger_csv), "--data", str(data),
                     "--out", str(tmp_path / "golden")]) == 0
    return tmp_path


def _gate(run, capsys, ledger=None):
    code = cli.main(["gate", str(ledger or run / "results/ledger.csv"), "--golden", str(run / "golden"),
                     "--data", str(run / "results/data")])
    return code, capsys.readouterr().out


def _numerics(run, path, **changes):
    """Rewrite the data file ``path`` with its numerics record changed (None: without one)."""
    table, meta = io.read_parquet(run / path), io.read_provenance(run / path)
    meta["numerics"] = None if changes.get("numerics", ...) is None else {**meta["numerics"], **changes}
    io.write_parquet(table, run / path, meta)


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
    assert list(tables["path"]) == [SCALE]
    numerics = json.loads((run / "golden" / golden.NUMERICS_FILE).read_text())
    assert numerics == {"libc": "glibc 2.36", "fingerprint": PRINTS}  # every file's, the timing one's too
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
    table, meta = io.read_parquet(path), io.read_provenance(path)
    io.write_parquet(table.assign(seconds=[9.0, 9.0]), path, meta)  # a wall time: not content
    assert _gate(run, capsys)[0] == 0
    table.loc[1, "variance"] = 2.5000000000000004  # one ulp
    io.write_parquet(table, path, meta)
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
    pd.concat([table, pd.DataFrame([_claim("001.d", "0.5")])]).to_csv(path, index=False)
    code, out = _gate(run, capsys)
    assert code == 1
    assert out.endswith("gate: 1 problem(s)\n  claim 001.d: new in this run, not in the golden file\n")


def test_a_table_that_appears_or_disappears_fails_the_gate(run, capsys):
    extra = run / "results/data/001/scale_table/d_k-64_scaled-true.parquet"
    shutil.copy(run / SCALE, extra)
    code, out = _gate(run, capsys)
    assert code == 1
    assert out.endswith(f"gate: 1 problem(s)\n  table {extra.relative_to(run)}: new in this run, not in the "
                        "golden file\n")
    extra.unlink()
    (run / SCALE).unlink()
    code, out = _gate(run, capsys)
    assert code == 1 and f"table {SCALE}: in the golden file, not in this run" in out


def test_a_missing_golden_folder_or_ledger_fails_the_gate_with_one_clear_line(run, capsys):
    shutil.rmtree(run / "golden")
    code, out = _gate(run, capsys)
    assert code == 1 and f"golden file missing: {run / 'golden' / golden.LEDGER_FILE}" in out
    assert f"golden file missing: {run / 'golden' / golden.NUMERICS_FILE}" in out
    code, out = _gate(run, capsys, ledger=run / "results/no-ledger.csv")
    assert code == 1 and out == (f"gate: no ledger at {run / 'results/no-ledger.csv'}: build it with "
                                 "`snakemake --cores N ledger`\n")


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
    those of an AVX2 host, where the article's own code gives that table: shared/seeds/README.md)."""
    from attnrepro.report import ledger

    claims = ledger.load_claims(REPO / "config" / "published.yaml")
    kept = golden.read_ledger(REPO / "tests" / "golden" / golden.LEDGER_FILE).set_index("id")
    assert set(kept.index) == {c.id for c in claims if c.cls != "machine-bound"}
    sort_rows = [c for c in claims if c.id.startswith("001.train.sort-L")]
    assert len(sort_rows) == 12
    readme = {4: ("0.995", "0.992", "0.985", "0.974"), 6: ("0.989", "0.980", "0.953", "0.922"),
              8: ("0.985", "0.973", "0.937", "0.900")}  # per L: token mean, min; sequence mean, min
    figures = ("token-mean", "token-min", "sequence-mean", "sequence-min")
    assert {c.id: kept.at[c.id, "reproduced"] for c in sort_rows} == {
        f"001.train.sort-L{n}.{f}": v for n, row in readme.items() for f, v in zip(figures, row)}
    tables = pd.read_csv(REPO / "tests" / "golden" / golden.TABLES_FILE)
    assert len(tables) > 100 and tables["sha256"].str.fullmatch("[0-9a-f]{64}").all()
    assert "gate results/ledger.csv --golden tests/golden" in (REPO / ".ci" / "run").read_text()



# --- the fingerprint of the math library ----------------------------------------------------------


def test_a_fingerprint_that_moved_fails_the_gate_naming_function_and_library(run, capsys):
    moved = {**PRINTS, "libm.exp": "000000000000", "numpy.exp.float64": "111111111111"}
    for path in (SCALE, TIMING):
        _numerics(run, path, libc="musl 1.2.5", fingerprint=moved)
    code, out = _gate(run, capsys)
    assert code == 1 and out.endswith(
        "gate: 2 problem(s)\n"
        "  numerics fingerprint libm.exp: was '6518342356ad' in the golden file (glibc 2.36), is "
        "'000000000000' now (musl 1.2.5): the math library computes other bits\n"
        "  numerics fingerprint numpy.exp.float64: was 'bf6b0c8f08a9' in the golden file (glibc 2.36), is "
        "'111111111111' now (musl 1.2.5): the math library computes other bits\n")


def test_files_that_disagree_on_a_fingerprint_fail_the_gate_and_the_golden_update(run, capsys):
    _numerics(run, TIMING, fingerprint={**PRINTS, "numpy.tanh.float64": "222222222222"})
    code, out = _gate(run, capsys)
    assert code == 1 and out.endswith(
        "gate: 1 problem(s)\n  numerics fingerprint numpy.tanh.float64: the run's files disagree "
        f"(222222222222 in {TIMING}; 2f0e8d3a9ef4 in {SCALE})\n")
    before = {p.name: p.read_text() for p in (run / "golden").iterdir()}
    _edit_ledger(run, "001.c", reproduced="0.986")
    assert _update(run, capsys)[0] == 1
    assert {p.name: p.read_text() for p in (run / "golden").iterdir()} == before  # nothing written


def _update(run, capsys):
    code = cli.main(["golden", "--ledger", str(run / "results/ledger.csv"),
                     "--data", str(run / "results/data"), "--out", str(run / "golden")])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("changes, problem", [
    ({"numerics": None}, f"numerics fingerprint: none recorded in {TIMING} (files from before the"),
    ({"pinned": False, "canonical": False}, f"numerics: {TIMING} ran without the pin"),
])
def test_the_golden_update_refuses_a_file_without_a_fingerprint_or_the_pin(run, capsys, changes, problem):
    _numerics(run, TIMING, **changes)
    code, out = _update(run, capsys)
    assert code == 1 and out.startswith("golden: refused, nothing written: 1 problem(s)\n") and problem in out


def test_the_golden_update_writes_the_fingerprint_from_the_run_and_keeps_an_unchanged_file(run, capsys):
    path = run / "golden" / golden.NUMERICS_FILE
    stamp = path.stat().st_mtime_ns - 10**9
    os.utime(path, ns=(stamp, stamp))  # an input of every rule: rewriting it would rerun every job
    assert _update(run, capsys)[0] == 0 and path.stat().st_mtime_ns == stamp
    for name in (SCALE, TIMING):
        _numerics(run, name, libc="glibc 2.41", fingerprint={**PRINTS, "libm.exp": "333333333333"})
    assert _update(run, capsys)[0] == 0
    assert fingerprint.load(path) == ("glibc 2.41", {**PRINTS, "libm.exp": "333333333333"})
    assert _gate(run, capsys)[0] == 0
