"""The CI gate (attnrepro.report.ledger.golden): each rule fails it on its own, and the golden files pass."""

import json
import os
import re
import shutil

import pandas as pd
import pytest

from attnrepro.numerics import fingerprint
from attnrepro.run import io
from attnrepro.report import cli
from attnrepro.report.ledger import golden

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
    kept = (run / "golden" / golden.LEDGER_FILE).read_text()  # the timing claim is the machine's
    assert kept == ("id,class,reproduced\n"
                    "001.a,exact,0.367\n001.b,round-off,4.441e-16\n001.c,stochastic,0.985\n")
    tables = (run / "golden" / golden.TABLES_FILE).read_text().splitlines()
    assert tables[0] == "path,rows,sha256" and len(tables) == 2
    assert tables[1] == f"{SCALE},2,{golden.table_hash(run / SCALE)[1]}"
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
    assert code == 1  # once: a missing exact claim is not also "not reproduced"
    assert out.endswith("gate: 2 problem(s)\n  claim 001.a: missing (no result file holds this value)\n"
                        "  claim 001.a: reproduced was '0.367' in the golden file, is '' now\n")


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
    assert golden.read_ledger(run / "results/ledger.csv").empty
    assert list(golden.read_ledger(run / "results/ledger.csv").columns) == COLUMNS  # the same, either way
    code, out = _gate(run, capsys)
    assert code == 1 and out == ("gate: 4 problem(s)\n  the ledger is empty\n"
                                 + "".join(f"  claim {id}: in the golden file, not in this run\n"
                                           for id in ("001.a", "001.b", "001.c")))


def test_an_exact_claim_not_reproduced_fails_even_without_golden_files(run, capsys):
    _edit_ledger(run, "001.a", verdict="differs")
    assert cli.main(["gate", str(run / "results/ledger.csv")]) == 1
    assert "claim 001.a: exact claim not reproduced" in capsys.readouterr().out


def test_non_canonical_numerics_fail_the_gate(run, capsys):
    _edit_ledger(run, "001.c", numerics="non-canonical: sort-L4-seed0.parquet: numerics.pin is native")
    code, out = _gate(run, capsys)
    assert code == 1 and "claim 001.c: non-canonical: sort-L4-seed0.parquet" in out


def test_a_verdict_that_its_own_value_and_bounds_contradict_fails_the_gate(run, capsys):
    _edit_ledger(run, "001.t", accepted_low="10", accepted_high="20")  # 35 s outside: it differs
    assert _gate(run, capsys)[0] == 0
    _edit_ledger(run, "001.t", accepted_low="30", accepted_high="40")
    code, out = _gate(run, capsys)
    assert code == 1
    assert "claim 001.t: differs, but the value it prints, 35 s, lies inside its bounds 30 to 40" in out


def test_the_committed_golden_files_are_complete():
    """tests/golden holds the default run: every claim of config/published.yaml that is not
    machine-bound, and the seeds README's sort rows digit for digit (the canonical numerics are
    those of an AVX2 host, where the article's own code gives that table: shared/seeds/README.md)."""
    from attnrepro.report.ledger import verdicts as ledger

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
    ({"numerics": None}, f"numerics fingerprint: none recorded in {TIMING} (files from before the "
                         "fingerprint: rebuild them)\n"),
    ({"pinned": False, "canonical": False}, f"numerics: {TIMING} ran without the pin: not the canonical "
                                             "numerics\n"),
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


def test_differences_are_listed_in_the_order_of_their_keys_whatever_the_golden_file_order(run, capsys):
    path = run / "golden" / golden.LEDGER_FILE
    header, *rows = path.read_text().splitlines()
    path.write_text("\n".join([header, *reversed(rows)]) + "\n")  # reordered by hand: still the same claims
    assert _gate(run, capsys)[0] == 0
    _edit_ledger(run, "001.a", reproduced="0.368")
    _edit_ledger(run, "001.c", reproduced="0.986")
    code, out = _gate(run, capsys)
    assert code == 1 and out.endswith(
        "gate: 2 problem(s)\n"
        "  claim 001.a: reproduced was '0.367' in the golden file, is '0.368' now\n"
        "  claim 001.c: reproduced was '0.985' in the golden file, is '0.986' now\n")


def test_the_gate_names_golden_and_ledger_values_as_written(run, capsys):
    """No cell is read as a number or as "not available": the messages quote the files' text."""
    path = run / "golden" / golden.TABLES_FILE
    digits = "0" * 64  # a hash of digits alone is no number
    path.write_text(f"path,rows,sha256\n{SCALE},,{digits}\n")  # rows emptied by hand
    _edit_ledger(run, "001.c", reproduced="NaN")
    kept = run / "golden" / golden.LEDGER_FILE
    kept.write_text(kept.read_text().replace(",0.367\n", ",0.3670\n"))  # the digits, not the number
    code, out = _gate(run, capsys)
    now = golden.table_hash(run / SCALE)[1]
    assert code == 1 and out.endswith(
        "gate: 4 problem(s)\n"
        "  claim 001.a: reproduced was '0.3670' in the golden file, is '0.367' now\n"
        "  claim 001.c: reproduced was '0.985' in the golden file, is 'NaN' now\n"
        f"  table {SCALE}: rows was '' in the golden file, is '2' now\n"
        f"  table {SCALE}: sha256 was '{digits}' in the golden file, is '{now}' now\n")


def test_a_function_only_the_golden_file_or_only_the_run_has_fails_the_gate(run, capsys):
    prints = {k: v for k, v in PRINTS.items() if k != "numpy.tanh.float64"}
    prints["torch.exp.float32"] = "444444444444"
    for path in (SCALE, TIMING):
        _numerics(run, path, fingerprint=prints)
    code, out = _gate(run, capsys)
    assert code == 1 and out.endswith(
        "gate: 2 problem(s)\n"
        "  numerics fingerprint numpy.tanh.float64: in the golden file, not in this run\n"
        "  numerics fingerprint torch.exp.float32: new in this run, not in the golden file\n")


def test_a_file_without_a_fingerprint_fails_the_gate_once_and_the_others_still_count(run, capsys):
    _numerics(run, TIMING, numerics=None)  # sorted first: the files after it are read all the same
    code, out = _gate(run, capsys)
    assert code == 1 and out.endswith(
        f"gate: 1 problem(s)\n  numerics fingerprint: none recorded in {TIMING} (files from before the "
        "fingerprint: rebuild them)\n")


def test_the_golden_update_lists_every_reason_it_refuses(run, capsys):
    _numerics(run, TIMING, numerics=None)
    _numerics(run, SCALE, pinned=False, canonical=False)
    code, out = _update(run, capsys)
    assert code == 1 and out == (
        "golden: refused, nothing written: 2 problem(s)\n"
        f"  numerics fingerprint: none recorded in {TIMING} (files from before the fingerprint: rebuild "
        f"them)\n  numerics: {SCALE} ran without the pin: not the canonical numerics\n")
    empty = run / "empty"
    empty.mkdir()
    with pytest.raises(golden.Refused) as refused:
        golden.golden_fingerprint(empty)
    assert str(refused.value) == f"no result file under {empty}"


def test_a_run_fingerprint_joins_its_files_c_libraries_and_names_the_unknown():
    records = [("a.parquet", {}),  # no fingerprint: listed, and the files after it still read
               ("b.parquet", {"fingerprint": {"libm.exp": "555555555555"}}),  # no C library named
               ("c.parquet", {"libc": "musl 1.2.5", "fingerprint": {"libm.exp": "555555555555"}})]
    assert golden.run_fingerprint(records) == ("musl 1.2.5, unknown", {"libm.exp": "555555555555"}, {},
                                               ["a.parquet"])
    assert golden.run_fingerprint([]).libc == "unknown"


@pytest.mark.parametrize("count, named", [
    (3, "a, b, c"),
    (5, "a, b, c and 2 more"),
])
def test_a_message_about_many_files_names_the_first_three(count, named):
    bare = list("abcde"[:count])
    assert golden.RunFingerprint("glibc 2.36", {}, {}, bare).problems() == [
        f"numerics fingerprint: none recorded in {named} (files from before the fingerprint: rebuild them)"]


def test_a_claim_with_other_parameters_is_one_problem_named_for_what_it_is():
    rows = [_claim("001.a", "0.367"), _claim("001.p", "0.5", verdict="other parameters", published="0.4")]
    table = pd.DataFrame(rows, columns=COLUMNS).assign(reason=["", "trials = 200; the article: 4000"])
    assert golden.ledger_problems(table) == [
        "claim 001.p: not comparable with the article (trials = 200; the article: 4000)"]


def test_the_seed_distributions_trainings_are_hashed_beside_the_runs(tmp_path):
    data, seeds = tmp_path / "results" / "data", tmp_path / "results" / "seeds" / "data"
    for path in (data / "001/train/sort-L4-seed0.parquet", seeds / "001/train/sort-L4-seed5.parquet",
                 data / "001/causal_timing/default.parquet"):  # a timing experiment: not hashed
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    assert [p.relative_to(tmp_path).as_posix() for p in golden.hashed_files(data)] == [
        "results/data/001/train/sort-L4-seed0.parquet", "results/seeds/data/001/train/sort-L4-seed5.parquet"]


def test_the_gate_on_the_small_run_flags_exactly_its_claims_of_other_parameters(small_run, tmp_path, capsys,
                                                                                 monkeypatch):
    """End to end on the tests' one pipeline run: the golden update, then the gate against it, as
    CI runs them on the default run. The small run computes many claims with other parameters than
    the article's: the gate names each of them, and nothing else."""
    monkeypatch.chdir(small_run)
    ledger, data, out = "results/ledger.csv", "results/data", str(tmp_path / "golden")
    assert cli.main(["golden", "--ledger", ledger, "--data", data, "--out", out]) == 0
    capsys.readouterr()
    code = cli.main(["gate", ledger, "--golden", out, "--data", data, "--tables", "results/tables"])
    said = capsys.readouterr().out
    table = golden.read_ledger(small_run / ledger)
    other = set(table.loc[table["verdict"] == "other parameters", "id"])
    assert code == 1 and len(other) > 100 and (table["verdict"] == "reproduced").sum() > 300
    assert set(re.findall(r"^  claim (\S+): not comparable with the article", said, re.M)) == other
    assert f"gate: {len(other)} problem(s)" in said


PRINTED = "000.attention_vs_sdpa.max-diff-torch"  # a claim of config/published.yaml (a one-row table)


def test_the_gate_reads_each_printed_claim_in_the_runs_tables(run, capsys, monkeypatch):
    """``--tables``: a printed cell that does not read as the ledger is one more problem, listed
    beside the ledger's own; the claims (``--published``) name the cells. Its command line and
    what it prints when it passes, as CI reads them."""
    with pytest.raises(SystemExit):
        cli.main(["gate", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    for option in ("ledger results/ledger.csv",
                   "--golden GOLDEN the golden files' folder (tests/golden): compare the run with them",
                   "--data DATA the run's Parquet folder (with --golden)",
                   "--tables TABLES the run's results/tables: each claim's printed cell must read as the "
                   "ledger's reproduced value (attnrepro.report.ledger.agreement)",
                   "--published PUBLISHED the claims, which name their printed cells (with --tables)"):
        assert option in said, option
    monkeypatch.chdir(run)  # --data: results/data by default
    assert cli.main(["gate", "results/ledger.csv", "--golden", "golden"]) == 0
    assert capsys.readouterr().out.endswith("; equal to the golden files in golden\n")
    ledger, tables = run / "results/ledger.csv", run / "results/tables"
    assert cli.main(["gate", str(ledger)]) == 0
    said = capsys.readouterr().out
    assert said.startswith("ledger: 4 claims\nclass          verdict         \n")
    assert said.endswith("\ngate passed: every claim present, every exact claim reproduced, canonical "
                         "numerics\n")
    rows = pd.concat([golden.read_ledger(ledger),
                      pd.DataFrame([_claim(PRINTED, "3.33e-16", "round-off", "within tolerance")])])
    rows.to_csv(ledger, index=False)
    tables.mkdir()
    cells = pd.DataFrame({"max |numpy - torch|": [3.33e-16]})
    cells.to_csv(tables / "attention_check.csv", index=False)
    words = ["gate", str(ledger), "--tables", str(tables), "--published", str(REPO / "config/published.yaml")]
    assert cli.main(words) == 0
    assert capsys.readouterr().out.endswith(
        "gate passed: every claim present, every exact claim reproduced, canonical numerics; "
        f"every printed claim of {tables} reads as the ledger\n")
    (run / "config").mkdir()  # --published: config/published.yaml by default
    shutil.copy(REPO / "config/published.yaml", run / "config/published.yaml")
    assert cli.main(words[:4]) == 0 and capsys.readouterr().out.endswith(f"{tables} reads as the ledger\n")
    cells["max |numpy - torch|"] = [4.44e-16]
    cells.to_csv(tables / "attention_check.csv", index=False)
    _edit_ledger(run, "001.a", verdict="differs")
    assert cli.main(words) == 1
    assert capsys.readouterr().out == (
        "ledger: 5 claims\nclass          verdict         \nexact          differs             1\n"
        "machine-bound  differs             1\nround-off      within tolerance    2\n"
        "stochastic     within tolerance    1\ngate: 2 problem(s)\n"
        "  claim 001.a: exact claim not reproduced (published 0.367, reproduced 0.367)\n"
        f"  claim {PRINTED}: table attention_check 'max |numpy - torch|' prints 4.44e-16 at the article's "
        "precision (np.float64(4.44e-16)), the ledger 3.33e-16\n")
    assert cli.main([*words[:3], str(run / "none"), *words[4:]]) == 1
    assert capsys.readouterr().out.endswith(
        "gate: 2 problem(s)\n  claim 001.a: exact claim not reproduced (published 0.367, reproduced 0.367)\n"
        f"  no tables folder {run / 'none'}\n")
    (run / "bad.yaml").write_text("claims: [\n")
    assert cli.main([*words[:-1], str(run / "bad.yaml")]) == 2  # the claims load first: one line names it
    assert capsys.readouterr().err.startswith(f"attnrepro.report: {run / 'bad.yaml'}: not valid YAML: line ")
