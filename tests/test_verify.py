"""`python -m attnrepro verify`: an archive compared with a finished results folder, or a rerun."""

import gzip
import hashlib
import io as bytes_io
import json
import random
import re
import shutil
import subprocess
import sys
import tarfile
import types

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from conftest import REPO, copy_repo, snakemake
from attnrepro.run import bounded, io
from attnrepro.dag import plan
from attnrepro.archive import verify, verify_extract, verify_limits, verify_rerun, verify_warnings
from attnrepro.archive import verify_compare as vc

# ---- unit: frames, Parquet files, the ledger, canonical numerics, the lock -----------------


def test_equal_frames_have_no_difference_and_nan_equals_nan():
    frame = pd.DataFrame({"x": [1.0, np.nan, 3.0], "s": ["a", None, "c"], "n": [1, 2, 3]})
    assert vc.first_difference(frame, frame.copy()) is None


def test_the_first_difference_names_row_column_and_both_values():
    archive = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [0.1, 0.2, 0.3, 0.4]})
    here = archive.copy()
    here.loc[2, "a"] = 3.0000000000000004  # one ulp: exact comparison
    here.loc[1, "b"] = np.nan  # NaN against a number differs
    sentence = vc.first_difference(archive, here)
    assert sentence.startswith("row 1, column 'b': archive 0.2, here nan")
    here.loc[1, "b"] = 0.2
    assert vc.first_difference(archive, here).startswith(
        "row 2, column 'a': archive 3.0, here 3.0000000000000004")


def test_columns_rows_and_types_must_match():
    frame = pd.DataFrame({"a": [1, 2]})
    assert "only here ['b']" in vc.first_difference(frame, frame.assign(b=0))
    assert "2 rows in archive, 1 here" in vc.first_difference(frame, frame.iloc[:1])
    assert "type int64 in archive, float64 here" in vc.first_difference(frame, frame.astype(float))


def test_cells_holding_arrays_are_compared_element_by_element():
    archive = pd.DataFrame({"v": [np.array([1.0, np.nan]), np.array([2.0])]})
    assert vc.first_difference(archive, archive.copy()) is None
    here = pd.DataFrame({"v": [np.array([1.0, np.nan]), np.array([2.5])]})
    assert vc.first_difference(archive, here).startswith("row 1, column 'v'")


def _parquet(root, rel, df):
    io.write_parquet(df, root / rel, {"experiment": rel})
    return root / rel


def test_measured_columns_are_ignored_and_the_rest_compared(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    rel = "data/001/scale_table/d_k-8_scaled-true.parquet"
    assert plan.measured_columns("scale_table", ["mean_std", "wall_seconds"]) == ["wall_seconds"]
    _parquet(a, rel, pd.DataFrame({"mean_std": [0.5], "wall_seconds": [1.0]}))
    _parquet(b, rel, pd.DataFrame({"mean_std": [0.5], "wall_seconds": [2.0]}))
    assert vc.compare_parquet(rel, a / rel, b / rel).status == "equal"
    _parquet(b, rel, pd.DataFrame({"mean_std": [0.25], "wall_seconds": [1.0]}))
    entry = vc.compare_parquet(rel, a / rel, b / rel)
    assert entry.status == "differs" and "column 'mean_std': archive 0.5, here 0.25" in entry.detail


def test_a_timing_experiment_compares_only_what_is_not_measured(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    rel = "data/001/causal_timing/default.parquet"
    _parquet(a, rel, pd.DataFrame({"T": [32], "min_ms": [1.0], "loglog_slope": [2.0], "matrix_mib": [0.1]}))
    _parquet(b, rel, pd.DataFrame({"T": [32], "min_ms": [3.0], "loglog_slope": [1.7], "matrix_mib": [0.1]}))
    assert vc.compare_parquet(rel, a / rel, b / rel).status == "equal"
    _parquet(b, rel, pd.DataFrame({"T": [32], "min_ms": [3.0], "loglog_slope": [1.7], "matrix_mib": [0.2]}))
    assert vc.compare_parquet(rel, a / rel, b / rel).status == "differs"
    machine = "data/001/causal_timing/default.machine.parquet"
    _parquet(a, machine, pd.DataFrame({"cpu": ["one"]}))
    _parquet(b, machine, pd.DataFrame({"cpu": ["another"]}))
    assert vc.compare_parquet(machine, a / machine, b / machine).status == "skipped"


SAME_TIMING = ("; 1 machine-bound, compared without what comes from the clock (times, bounds, verdicts): "
               "the same verdicts on both sides (1 within tolerance)")


def _ledger(changes=None):
    rows = [
        {"id": "001.exact", "class": "exact", "published": "5", "reproduced": "5", "verdict": "reproduced",
         "reason": "", "article_code": "", "accepted_low": "", "accepted_high": ""},
        {"id": "001.timing", "class": "machine-bound", "published": "0.2 s", "reproduced": "0.25",
         "verdict": "within tolerance", "reason": "band", "article_code": "0.24", "accepted_low": "0.2",
         "accepted_high": "0.3"},
    ]
    for (claim, column), value in (changes or {}).items():
        next(r for r in rows if r["id"] == claim)[column] = value
    return pd.DataFrame(rows)


def test_the_ledger_ignores_a_machine_bound_claims_measurement_only():
    base = _ledger()
    clock = {"reproduced": "0.31", "verdict": "differs", "reason": "other CPU", "article_code": "0.3",
             "accepted_low": "0.25", "accepted_high": "0.35"}
    timing = _ledger({("001.timing", column): value for column, value in clock.items()})
    assert vc.ledger_differences(base, timing) == []
    for column, value in clock.items():  # an exact claim's every column is compared
        assert vc.ledger_differences(base, _ledger({("001.exact", column): value})) == [
            f"claim 001.exact, column {column!r}: archive {base.loc[0, column]!r}, here {value!r}"]
    published = _ledger({("001.timing", "published"): "0.3 s"})
    assert vc.ledger_differences(base, published) == [
        "claim 001.timing, column 'published': archive '0.2 s', here '0.3 s'"]
    exact = _ledger({("001.exact", "reproduced"): "6"})
    assert vc.ledger_differences(base, exact) == [
        "claim 001.exact, column 'reproduced': archive '5', here '6'"]
    assert vc.ledger_differences(base, base.iloc[:1]) == ["claim 001.timing only in archive"]
    assert vc.ledger_differences(base.iloc[:1], base) == ["claim 001.timing only here"]


def test_a_ledger_column_on_one_side_only_differs(tmp_path):
    _ledger().to_csv(tmp_path / "a.csv", index=False)
    _ledger().assign(numerics="haswell-noavx512").to_csv(tmp_path / "b.csv", index=False)
    entry = vc.compare_ledger("results/ledger.csv", tmp_path / "a.csv", tmp_path / "b.csv")
    assert (entry.status, entry.detail) == ("differs", "columns only in archive [], only here ['numerics']")
    _ledger().to_csv(tmp_path / "b.csv", index=False)
    entry = vc.compare_ledger("results/ledger.csv", tmp_path / "a.csv", tmp_path / "b.csv")
    assert (entry.status, entry.detail) == ("equal", f"2 claims{SAME_TIMING}")


def test_the_verdicts_of_machine_bound_claims_are_said_by_count_on_each_side():
    two = pd.concat([_ledger(), _ledger().iloc[1:].assign(id="001.other", verdict="disturbed")])
    here = two.assign(verdict=["reproduced", "disturbed", "disturbed"])
    assert vc.machine_bound_note(two, here) == (
        "; 2 machine-bound, compared without what comes from the clock (times, bounds, verdicts): their "
        "verdicts differ, archive (1 disturbed, 1 within tolerance), here (2 disturbed)")
    assert vc.machine_bound_note(two.iloc[:1], here.iloc[:1]) == ""  # none machine-bound
    three = pd.concat([two, _ledger().iloc[1:].assign(id="001.third")])  # by count, then by name
    assert vc.machine_bound_note(three, three).endswith(
        "the same verdicts on both sides (2 within tolerance, 1 disturbed)")
    bare = three[["class", "verdict"]]  # the two columns it reads, and no other
    assert vc.machine_bound_note(bare, bare).startswith("; 3 machine-bound")
    assert vc.machine_bound_note(two.drop(columns="verdict"), here) == ""  # no verdicts to count


def test_cells_of_mixed_types_compare_element_by_element_with_their_types():
    # as NumPy arrays of their common type, [1, "1"] would read ["1", "1"]: cell by cell they differ
    assert not vc._same([1, "1"], ["1", "1"]) and not vc._same(["1", "1"], [1, "1"])
    assert vc._same([1, "1"], (1, "1")) and vc._same(np.array([0.5, np.nan]), [0.5, None])


def test_claim_ids_found_twice_are_named_in_the_ledgers_order():
    ledger = pd.DataFrame({"id": ["b", "a", "b", "a", "a", "c"]})  # "a" more often than "b"
    assert vc._unpaired(ledger, "here") == [
        "claim id(s) b, a on more than one row of the ledger here: its claims cannot be compared"]


def test_a_ledger_with_a_claim_id_twice_is_not_compared(tmp_path):
    twice = pd.concat([_ledger(), _ledger().iloc[:1]], ignore_index=True)
    assert vc.ledger_differences(twice, _ledger()) == ["claim id(s) 001.exact on more than one row of the "
                                                       "ledger of the archive: its claims cannot be compared"]
    assert vc.ledger_differences(_ledger(), twice.drop(columns="id")) == [
        "no column 'id' in the ledger here: its claims cannot be compared"]
    twice.to_csv(tmp_path / "a.csv", index=False)
    _ledger().to_csv(tmp_path / "b.csv", index=False)
    entry = vc.compare_ledger("results/ledger.csv", tmp_path / "b.csv", tmp_path / "a.csv")
    assert entry.status == "differs" and entry.detail.startswith("claim id(s) 001.exact on more than one row "
                                                                 "of the ledger here")


def test_a_table_that_changed_or_cannot_be_read_differs(tmp_path):
    rel = "results/tables/scale_table.csv"
    pd.DataFrame({"d_k": ["8", "64"], "mean_std": ["2.83", "8.00"]}).to_csv(tmp_path / "a.csv", index=False)
    pd.DataFrame({"d_k": ["8", "64"], "mean_std": ["2.83", "8.01"]}).to_csv(tmp_path / "b.csv", index=False)
    entry = vc.compare_table(rel, tmp_path / "a.csv", tmp_path / "b.csv")
    assert (entry.status, entry.detail) == (
        "differs", "row 1, column 'mean_std': archive '8.00', here '8.01' (1 value(s) differ in that column)")
    assert vc.compare_table(rel, tmp_path / "a.csv", tmp_path / "a.csv").status == "equal"
    (tmp_path / "empty.csv").write_bytes(b"")
    entry = vc.compare_table(rel, tmp_path / "a.csv", tmp_path / "empty.csv")
    assert (entry.status, entry.detail) == ("differs", "unreadable here: EmptyDataError: No columns to parse "
                                                       "from file")


def test_a_parquet_file_with_a_measured_column_on_one_side_only_differs(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    rel = "data/001/scale_table/d_k-8_scaled-true.parquet"
    _parquet(a, rel, pd.DataFrame({"mean_std": [0.5], "wall_seconds": [1.0]}))
    _parquet(b, rel, pd.DataFrame({"mean_std": [0.5]}))
    entry = vc.compare_parquet(rel, a / rel, b / rel)
    assert (entry.status, entry.detail) == ("differs",
                                            "columns only in archive ['wall_seconds'], only here []")
    (b / rel).write_bytes((a / rel).read_bytes()[:-100])  # a corrupt file on one side
    entry = vc.compare_parquet(rel, a / rel, b / rel)
    assert entry.status == "differs" and entry.detail.startswith("corrupt here: unreadable: ArrowInvalid")
    assert (entry.kind, entry.path) == ("parquet", rel)  # listed with the Parquet files, under its name
    entry = vc.compare_parquet(rel, b / rel, a / rel)  # the archive's: no advice to rebuild a temporary path
    assert (entry.kind, entry.path, entry.status) == ("parquet", rel, "differs")
    assert entry.detail.startswith("corrupt in archive: unreadable: ArrowInvalid")
    assert "forcerun" not in entry.detail


def test_canonical_status_of_a_side(tmp_path):
    def side(name, *canonical):
        for i, flag in enumerate(canonical):
            meta = {} if flag is None else {"numerics": {"setting": "x", "canonical": flag}}
            io.write_parquet(pd.DataFrame({"a": [i]}), tmp_path / name / f"data/001/e/c{i}.parquet", meta)
        return verify.canonical_status(tmp_path / name)

    assert side("all", True, True).startswith("all (2 canonical, 0 not, 0 unknown")
    assert side("none", False).startswith("none")
    assert side("mixed", True, False, None).startswith("mixed (1 canonical, 1 not, 1 unknown")
    assert side("unknown", None, None).startswith("unknown")


def test_the_lock_is_compared_with_this_checkouts(tmp_path):
    assert verify_warnings._lock_warnings(tmp_path) == [
        "the archive holds no requirements/runtime.lock: the locks are not compared"]
    lock = (REPO / "requirements/runtime.lock").read_text()
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements/runtime.lock").write_text(lock)
    assert verify_warnings._lock_warnings(tmp_path) == []
    (tmp_path / "requirements/runtime.lock").write_text(lock.replace("numpy==", "numpy==0.0.0+", 1))
    (warning,) = verify_warnings._lock_warnings(tmp_path)
    assert "requirements/runtime.lock differs" in warning and "numpy==0.0.0+" in warning



def test_values_are_shown_as_they_are_stored():
    """Integers without numpy's repr, a long array summarised, the first differing column of a row."""
    frame = pd.DataFrame({"n": [1, 2], "m": [3, 4]})
    assert vc.first_difference(frame, frame.assign(n=[1, 5], m=[3, 6])) == (
        "row 1, column 'n': archive 2, here 5 (1 value(s) differ in that column)")
    cells = pd.DataFrame({"v": [np.arange(9.0)]})
    assert vc.first_difference(cells, pd.DataFrame({"v": [np.arange(9.0) + 1]})) == (
        "row 0, column 'v': archive [0. 1. 2. ... 6. 7. 8.], here [1. 2. 3. ... 7. 8. 9.] "
        "(1 value(s) differ in that column)")


def test_missing_values_and_mixed_cells_are_compared_exactly():
    """A missing value on either side against a value differs; pd.NA equals pd.NA; a list cell
    equals only the same items (1 is not '1'), ragged lists included; an array is not a missing value."""
    nan_first = pd.DataFrame({"x": [np.nan, 1.0]})
    assert vc.first_difference(nan_first, pd.DataFrame({"x": [2.0, 1.0]})).startswith(
        "row 0, column 'x': archive nan, here 2.0")
    strings = pd.DataFrame({"s": pd.array(["a", pd.NA, pd.NA], dtype="string")})
    assert vc.first_difference(strings, strings.copy()) is None
    here = pd.DataFrame({"s": pd.array(["a", "b", pd.NA], dtype="string")})
    assert vc.first_difference(strings, here) == (
        "row 1, column 's': archive <NA>, here 'b' (1 value(s) differ in that column)")
    assert vc.first_difference(here, strings).startswith("row 1, column 's': archive 'b', here <NA>")
    mixed, text = pd.DataFrame({"v": [[1, "a"]]}), pd.DataFrame({"v": [["1", "a"]]})
    assert vc.first_difference(mixed, text).startswith("row 0, column 'v'")
    assert vc.first_difference(text, mixed).startswith("row 0, column 'v'")
    ragged = pd.DataFrame({"v": [[[1.0], [1.0, 2.0]]]})
    assert vc.first_difference(ragged, pd.DataFrame({"v": [[[1.0], [1.0, 2.0]]]})) is None
    assert vc.first_difference(ragged, pd.DataFrame({"v": [[[1.0], [1.0, 3.0]]]})).startswith("row 0")
    arrays = pd.DataFrame({"v": [np.array([1.0, 2.0]), None]})
    assert vc.first_difference(arrays, pd.DataFrame({"v": [None, None]})).startswith(
        "row 0, column 'v': archive [1. 2.], here None")


def test_plain_columns_are_compared_whole_not_cell_by_cell(monkeypatch):
    """Numbers and strings are compared as arrays (a table of a million rows stays fast)."""
    monkeypatch.setattr(vc, "_same", lambda x, y: pytest.fail("compared cell by cell"))
    frame = pd.DataFrame({"x": [1.0, np.nan], "s": ["a", "b"]})
    assert vc.first_difference(frame, frame.assign(s=["a", "c"])).startswith("row 1, column 's'")


def test_an_archive_file_from_before_integrity_records_is_compared(tmp_path):
    """Read without its integrity record in the archive; here, a file without one differs."""
    rel = "data/001/scale_table/d_k-8_scaled-true.parquet"
    old = _old_parquet(tmp_path / "a" / rel, pd.DataFrame({"mean_std": [0.5]}), {"experiment": "x"})
    new = _parquet(tmp_path / "b", rel, pd.DataFrame({"mean_std": [0.5]}))
    assert vc.compare_parquet(rel, old, new) == vc.Entry("parquet", rel, "equal", "")
    entry = vc.compare_parquet(rel, new, old)
    assert (entry.status, entry.detail) == (
        "differs", "corrupt here: no integrity record: not written by attnrepro.run.io, or before it "
                   "recorded one")


def _old_parquet(path, df, provenance):
    """A result file as written before integrity records: provenance, no record."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    meta = {**(table.schema.metadata or {}), io.KEY: json.dumps(provenance).encode()}
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.replace_schema_metadata(meta), path)
    return path


def test_a_ledger_pairs_claims_whatever_their_class_on_either_side():
    """A claim machine-bound on one side only is compared as one: its class differs, its measurement
    does not; every column after the machine-bound ones is still compared."""
    for a, b in (("machine-bound", "exact"), ("exact", "machine-bound")):
        archive = _ledger({("001.timing", "class"): a})
        here = _ledger({("001.timing", "class"): b, ("001.timing", "reproduced"): "9"})
        assert vc.ledger_differences(archive, here) == [
            f"claim 001.timing, column 'class': archive {a!r}, here {b!r}"]
    archive, here = _ledger().assign(unit="s"), _ledger().assign(unit=["s", "ms"])
    assert vc.ledger_differences(archive, here) == ["claim 001.timing, column 'unit': archive 's', here 'ms'"]


def test_claim_ids_on_several_rows_are_named_in_the_ledgers_order():
    ids = ["z", "y", "y", "z", "z", "x", "x", "w", "w", "v", "v"]
    ledger = pd.DataFrame({"id": ids, "class": "exact"})
    assert vc.ledger_differences(_ledger(), ledger) == [
        "claim id(s) z, y, x, w, v on more than one row of the ledger here: its claims cannot be compared"]
    ledger = pd.DataFrame({"id": ids + ["u", "u"], "class": "exact"})
    assert vc.ledger_differences(_ledger(), ledger)[0].startswith("claim id(s) z, y, x, w, v ... on more")


def test_a_ledger_entry_names_the_first_difference_and_counts_the_others(tmp_path):
    _ledger().to_csv(tmp_path / "a.csv", index=False)
    _ledger({("001.exact", "reproduced"): "6", ("001.timing", "published"): "1 s"}).to_csv(
        tmp_path / "b.csv", index=False)
    entry = vc.compare_ledger("results/ledger.csv", tmp_path / "a.csv", tmp_path / "b.csv")
    assert entry == vc.Entry("ledger", "results/ledger.csv", "differs",
                             "claim 001.exact, column 'reproduced': archive '5', here '6' (and 1 more)")
    (tmp_path / "empty.csv").write_bytes(b"")
    entry = vc.compare_ledger("results/ledger.csv", tmp_path / "empty.csv", tmp_path / "a.csv")
    assert entry == vc.Entry("ledger", "results/ledger.csv", "differs",
                             "unreadable in archive: EmptyDataError: No columns to parse from file")
    entry = vc.compare_ledger("results/ledger.csv", tmp_path / "a.csv", tmp_path / "a.csv")
    assert entry == vc.Entry("ledger", "results/ledger.csv", "equal", f"2 claims{SAME_TIMING}")


# ---- in-process: two small results folders, every kind of file -----------------------------

SCALE = "data/001/scale_table/d_k-8_scaled-true.parquet"
RESULTS = {  # rel: a frame (a Parquet file) or bytes
    SCALE: pd.DataFrame({"d_k": [8], "mean_std": [0.5], "wall_seconds": [1.0]}),
    "data/001/causal_timing/default.parquet": pd.DataFrame({"T": [32], "min_ms": [1.0], "matrix_mib": [0.1]}),
    "data/001/causal_timing/default.machine.parquet": pd.DataFrame({"cpu": ["one"]}),
    "summary/extra.parquet": pd.DataFrame({"wall_seconds": [1.0]}),  # of no experiment: all compared
    "tables/scale_table.csv": b"d_k,mean_std\n8,2.83\n",
    "tables/causal_timing.csv": b"T,min_ms\n32,1.0\n",
    "tables/notes.csv": b"a\n1\n",  # of no product
    "ledger.csv": _ledger().to_csv(index=False).encode(),
}
CHANGED = {  # what the second folder has instead: equal or skipped but for summary/extra.parquet
    SCALE: RESULTS[SCALE].assign(wall_seconds=2.0),
    "data/001/causal_timing/default.parquet": pd.DataFrame({"T": [32], "min_ms": [3.0], "matrix_mib": [0.1]}),
    "data/001/causal_timing/default.machine.parquet": pd.DataFrame({"cpu": ["another"]}),
    "summary/extra.parquet": pd.DataFrame({"wall_seconds": [2.0]}),
    "tables/causal_timing.csv": b"T,min_ms\n32,9.0\n",
}


def _results(root, files, canonical=True):
    """A results folder of ``files`` ({rel: frame or bytes}); Parquet files record ``canonical``."""
    for rel, content in files.items():
        if isinstance(content, bytes):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(content)
        else:
            io.write_parquet(content, root / rel, {"experiment": rel, "numerics": {"canonical": canonical}})
    return root


def _two_sides(tmp_path):
    """(archive's results, results here, each in a checkout): CHANGED, a file only in the archive,
    a table only here."""
    only_archive = {"data/001/scale_table/d_k-64_scaled-true.parquet": RESULTS[SCALE]}
    archive = _results(tmp_path / "a/results", {**RESULTS, **only_archive})
    here = _results(tmp_path / "b/results", {**RESULTS, **CHANGED, "tables/only_here.csv": b"a\n1\n"},
                    canonical=False)
    return archive, here


COMPARED = [  # the entries of _two_sides, by kind then path
    ("parquet", "results/data/001/causal_timing/default.machine.parquet", "skipped",
     "describes the machine that ran it"),
    ("parquet", "results/data/001/causal_timing/default.parquet", "equal", ""),
    ("parquet", "results/data/001/scale_table/d_k-64_scaled-true.parquet", "only in archive", ""),
    ("parquet", "results/data/001/scale_table/d_k-8_scaled-true.parquet", "equal", ""),
    ("parquet", "results/summary/extra.parquet", "differs",
     "row 0, column 'wall_seconds': archive 1.0, here 2.0 (1 value(s) differ in that column)"),
    ("table", "results/tables/causal_timing.csv", "skipped",
     "built from a timing experiment (its Parquet is compared)"),
    ("table", "results/tables/notes.csv", "equal", ""),
    ("table", "results/tables/only_here.csv", "only here", ""),
    ("table", "results/tables/scale_table.csv", "equal", ""),
    ("ledger", "results/ledger.csv", "equal", f"2 claims{SAME_TIMING}"),
]


def test_compare_lists_every_file_of_either_side_by_kind_then_path(tmp_path):
    archive, here = _two_sides(tmp_path)
    assert [(e.kind, e.path, e.status, e.detail) for e in vc.compare(archive, here)] == COMPARED
    assert vc.compare(archive, tmp_path / "nowhere")[-1] == vc.Entry(
        "ledger", "results/ledger.csv", "only in archive")


# ---- archives and folders that cannot be used: one line on stderr, exit status 2 ------------

LEDGER_BYTES = _ledger().to_csv(index=False).encode()
BLOB = random.Random(0).randbytes(200_000)  # incompressible: gzip stores it, a flipped byte stays data


def _tar(members):
    """An uncompressed tar of ``members`` ({path: bytes}, in this order; no folder entries)."""
    out = bytes_io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, bytes_io.BytesIO(data))
    return out.getvalue()


def _synthetic(tmp_path):
    """(archive bytes, the folder it holds): a ledger and a blob under top/results."""
    members = {"top/results/ledger.csv": LEDGER_BYTES, "top/results/data/blob.bin": BLOB}
    for name, data in members.items():
        (tmp_path / "side" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "side" / name).write_bytes(data)
    return gzip.compress(_tar(members), mtime=0), tmp_path / "side/top/results"


def _flip(data, at):
    data = bytearray(data)
    data[at] ^= 0xFF
    return bytes(data)


def _bad_header(data):
    """The tar inside ``data`` with its second member's header checksum broken."""
    raw = bytearray(gzip.decompress(data))
    second = 512 + -(-len(LEDGER_BYTES) // 512) * 512  # the first header, then its padded data
    assert raw[second:second + 11] == b"top/results"
    raw[second + 148:second + 156] = b"0000000\0"
    return gzip.compress(bytes(raw), mtime=0)


def _invalid_block(data):
    """``data`` with the type of its first deflate block set to the reserved one (0b11)."""
    data = bytearray(data)
    data[10] |= 0b110  # after gzip.compress's 10-byte header: BFINAL, then BTYPE
    return bytes(data)


MEMBERS_END = 1024 + -(-len(LEDGER_BYTES) // 512) * 512 + -(-len(BLOB) // 512) * 512  # two headers, data


def _garbage_after_members(data):
    """The tar inside ``data`` with a block of b"X" after its members: an invalid header, which
    tarfile takes for the end of the archive."""
    raw = gzip.decompress(data)
    return gzip.compress(raw[:MEMBERS_END] + b"X" * 512 + raw[MEMBERS_END:], mtime=0)


UNREADABLE = {  # name: (the archive's bytes from a good one's, what the line says)
    "empty": (lambda data: b"", "an empty file"),
    "not gzip": (lambda data: gzip.decompress(data),
                 "not gzip-compressed (an archive of a run is a .tar.gz)"),
    "not a tar": (lambda data: gzip.compress(b"just text\n" * 200), "not a tar archive inside its gzip "
                                                                     "compression (invalid header)"),
    "truncated": (lambda data: data[:len(data) // 2],
                  "truncated: the compressed data ends before its end marker"),
    "member cut short": (lambda data: gzip.compress(gzip.decompress(data)[:100_000]),
                         "truncated: a member ends before its recorded size"),
    "corrupt member data": (lambda data: _flip(data, len(data) // 2), "corrupt compressed data (CRC check "
                                                                      "failed"),
    "corrupt member header": (_bad_header, "a corrupt member header at byte 1024 of the tar (the members "
                                           "after it cannot be read)"),
    "invalid compressed block": (_invalid_block, "corrupt compressed data (zlib error: Error -3 while "
                                                 "decompressing data: invalid block type)"),
    "garbage after the members": (_garbage_after_members, f"a corrupt member header at byte {MEMBERS_END} "
                                                          "of the tar"),
}
REFUSED = {  # name: (members, what the line says after "refused before extraction: ")
    "a member outside its folder": ({"top/results/ledger.csv": LEDGER_BYTES, "../outside.txt": b"x"},
                                    "member '../outside.txt' climbs out of the archive's folder (..)"),
    "an absolute member": ({"top/results/ledger.csv": LEDGER_BYTES, "/etc/x": b"x"},
                           "member '/etc/x' has an absolute name"),
    "two folders": ({"top/results/ledger.csv": LEDGER_BYTES, "other/x": b"x"},
                    "not an attnrepro archive (one folder holding results/; it holds other, top)"),
}


@pytest.mark.parametrize("name", UNREADABLE)
def test_an_unreadable_archive_is_one_line_on_stderr_and_exit_2(tmp_path, capsys, name):
    good, results = _synthetic(tmp_path)
    (tmp_path / "good.tar.gz").write_bytes(good)
    assert verify.main([str(tmp_path / "good.tar.gz"), "--results", str(results)]) == 0
    assert capsys.readouterr().out.startswith(f"archive: {tmp_path / 'good.tar.gz'}\n")  # what is verified
    change, reason = UNREADABLE[name]
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(change(good))
    status = verify.main([str(bad), "--results", str(results)])
    out, err = capsys.readouterr()
    assert (status, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith(f"verify: {bad}: unreadable archive: {reason}")


@pytest.mark.parametrize("name", REFUSED)
def test_a_member_that_cannot_be_extracted_as_it_is_is_refused_by_name(tmp_path, capsys, name):
    members, reason = REFUSED[name]
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(gzip.compress(_tar(members)))
    assert verify.main([str(bad), "--results", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert (out, err.splitlines()) == ("", [f"verify: {bad}: refused before extraction: {reason}"])
    assert not (tmp_path / "etc").exists() and not (tmp_path / "outside.txt").exists()


def test_no_traceback_reaches_the_user_from_the_command_line(tmp_path):
    good, results = _synthetic(tmp_path)
    (tmp_path / "cut.tar.gz").write_bytes(good[:len(good) // 2])
    cmd = [sys.executable, "-m", "attnrepro", "verify", str(tmp_path / "cut.tar.gz"), "--results", results]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.splitlines() == [f"verify: {tmp_path / 'cut.tar.gz'}: unreadable archive: truncated: "
                                        "the compressed data ends before its end marker"]


def test_an_archive_without_results_a_missing_results_folder_or_config_exit_2(tmp_path, capsys):
    good, results = _synthetic(tmp_path)
    (tmp_path / "good.tar.gz").write_bytes(good)
    (tmp_path / "other.tar.gz").write_bytes(gzip.compress(_tar({"top/notes.txt": b"no results"})))
    cases = {  # arguments: the line on stderr
        ("other.tar.gz", "--results", str(results)):
            f"verify: {tmp_path / 'other.tar.gz'}: refused before extraction: not an attnrepro archive "
            "(one folder holding results/; it holds top)",
        ("good.tar.gz", "--results", str(tmp_path / "nowhere")): f"verify: --results {tmp_path / 'nowhere'}: "
                                                                  "no such folder",
        ("good.tar.gz", "--workdir", str(tmp_path / "rerun")):
            "verify: the archive holds no config.resolved.yaml: nothing to rerun",
    }
    for (archive, *args), line in cases.items():
        status = verify.main([str(tmp_path / archive), *args])
        out, err = capsys.readouterr()
        assert (status, err.splitlines()) == (2, [line]), archive
    assert not (tmp_path / "rerun").exists()  # nothing copied for a rerun that cannot start


@pytest.mark.parametrize("text, problem", [
    (b"train:\n  lr: .nan\n", "train.lr: .nan is not a finite number"),
    (b"train:\n  lr: -1\n  steps: many\n", "train.lr: -1 is less than or equal to the minimum of 0"),
    (b"- a list\n", "a config file is a mapping of sections, not a list"),
    (b"numerics:\n  environments:\n    mine: {python: /bin/sh, packages: x, settings: [default]}\n",
     "numerics.environments.mine: {'python': '/bin/sh', 'packages': 'x', 'settings': ['default']} is not "
     "this checkout's 'mine' environment (None): an archive's config never chooses a program to run"),
    (b"when: 2026-12-04\n", "when: a date is not a config value"),
])
def test_an_archive_config_that_cannot_be_rerun_is_one_line_before_anything_is_copied(tmp_path, capsys,
                                                                                        text, problem):
    members = {"top/results/ledger.csv": LEDGER_BYTES, "top/config.resolved.yaml": text}
    (tmp_path / "a.tar.gz").write_bytes(gzip.compress(_tar(members)))
    status = verify.main([str(tmp_path / "a.tar.gz"), "--workdir", str(tmp_path / "rerun"), "--cores", "1"])
    out, err = capsys.readouterr()
    (line,) = err.splitlines()
    assert status == 2 and "verdict" not in out
    assert line.startswith("verify: the archive's config top/config.resolved.yaml") and problem in line, line
    assert not (tmp_path / "rerun").exists()  # nothing copied, nothing run


def test_without_workdir_the_rerun_runs_in_the_temporary_folder_beside_the_extracted_archive(
        tmp_path, capsys, monkeypatch):
    members = {"top/results/ledger.csv": LEDGER_BYTES, "top/config.resolved.yaml": b"skip: []\n"}
    (tmp_path / "a.tar.gz").write_bytes(gzip.compress(_tar(members)))
    seen = []

    def rerun(top, workdir, cores, budget, remove):
        assert budget is None  # verify_budget's default
        seen.append((top, workdir, cores, (workdir.parent / "archive/top/config.resolved.yaml").is_file(),
                     remove))

    monkeypatch.setattr(verify, "rerun", rerun)
    assert verify.main([str(tmp_path / "a.tar.gz"), "--cores", "2"]) == 2  # the fake rerun failed
    ((top, workdir, cores, beside, remove),) = seen
    assert (workdir.name, cores, beside, remove) == ("rerun", "2", True, workdir.parent)
    assert workdir.parent.name.startswith("attnrepro-verify-")  # a temporary folder named for us
    assert top == workdir.parent / "archive/top" and not workdir.parent.exists()  # removed after
    out = capsys.readouterr().out.splitlines()
    assert "warning: the archive holds no requirements/runtime.lock: the locks are not compared" in out
    assert out[-1] == "verdict: RERUN FAILED (see above)"


def test_a_missing_archive_or_a_folder_is_one_line_naming_it(tmp_path, capsys):
    _, results = _synthetic(tmp_path)
    (tmp_path / "link.tar.gz").symlink_to(tmp_path / "gone.tar.gz")
    for path, said in ((tmp_path / "none.tar.gz", "no such file"), (tmp_path / "link.tar.gz", "no such file"),
                       (tmp_path, "a folder, not an archive (a .tar.gz file)")):
        assert verify.main([str(path), "--results", str(results)]) == 2
        assert capsys.readouterr() == ("", f"verify: {path}: {said}\n")  # the archive is not blamed


def test_the_end_of_an_archive_is_read_in_bounded_chunks_and_never_past_its_limit():
    """Not all of a large archive in memory at once; a byte not zero anywhere after the offset counts;
    past ``limit`` bytes nothing more is read (a gzip stream of zeros can decompress for ever)."""
    class Stream(bytes_io.BytesIO):
        def __init__(self, data):
            super().__init__(data)
            self.sizes = []

        def read(self, size=-1):
            self.sizes.append(size)
            return super().read(size)

    stream = Stream(b"X" + b"\0" * (3 << 20))
    assert verify_extract.tail(stream, 1, 4 << 20) == "zeros"
    assert len(stream.sizes) > 1 and all(isinstance(n, int) and 0 < n <= 1 << 20 for n in stream.sizes)
    assert verify_extract.tail(Stream(b"\0" * (3 << 20) + b"X"), 0, 4 << 20) == "data"
    stream = Stream(b"\0" * (5 << 20))
    assert verify_extract.tail(stream, 0, 2 << 20) == "long"
    assert sum(stream.sizes) == (2 << 20) + 1  # one byte past the limit, and no more
    assert verify_extract.tail(Stream(b"\0" * 100), 0, 100) == "zeros"  # the limit itself is allowed


def test_manifest_mismatches_name_files_changed_missing_or_outside_the_archive(tmp_path):
    top = tmp_path / "top"
    assert verify_warnings.manifest_mismatches(top) == (["MANIFEST.sha256 (absent)"], 0)
    for name, data in {"results/a.csv": b"a", "results/b.csv": b"b", "../outside.txt": b"o"}.items():
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_bytes(data)
    digests = {"results/a.csv": b"a", "results/b.csv": b"changed", "results/gone.csv": b"",
               "../outside.txt": b"o"}
    (top / "MANIFEST.sha256").write_text("".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n"
                                                 for name, data in digests.items()))
    assert verify_warnings.manifest_mismatches(top) == (
        ["results/b.csv", "results/gone.csv", "../outside.txt"], 0)
    (top / "MANIFEST.sha256").write_bytes(b"\xff\xfe\xff not text")
    assert verify_warnings.manifest_mismatches(top) == (["MANIFEST.sha256 (unreadable)"], 0)


def test_a_file_named_by_many_manifest_lines_is_hashed_once(tmp_path, monkeypatch):
    top = tmp_path / "top"
    (top / "results").mkdir(parents=True)
    (top / "results/a.csv").write_bytes(b"a")
    good, bad = hashlib.sha256(b"a").hexdigest(), "0" * 64
    lines = [f"{good}  results/a.csv"] * 40 + [f"{bad}  results/a.csv", f"{good}  results/nul\0.csv",
                                                f"{good}  results/nul\0.csv", "no separator"]
    (top / "MANIFEST.sha256").write_text("\n".join(lines) + "\n")
    hashed = []
    real = verify_warnings.digests.file_sha256
    monkeypatch.setattr(verify_warnings.digests, "file_sha256",
                        lambda path: hashed.append(path) or real(path))
    assert verify_warnings.manifest_mismatches(top) == (["results/a.csv", "results/nul\0.csv", ""], 41)
    assert hashed == [top / "results/a.csv"]  # once, not 41 times; a name with a NUL is no file
    said = verify_warnings.warnings(top)
    assert "41 line(s) of its MANIFEST.sha256 name a file that an earlier line names" in said


@pytest.mark.parametrize("limits, message", [
    (verify_limits.Limits(manifest_bytes=100), "MANIFEST.sha256 holds more than 100 bytes"),
    (verify_limits.Limits(text_lines=2), "MANIFEST.sha256 holds more than 2 lines")])
def test_a_manifest_beyond_its_caps_is_refused_before_it_is_read(tmp_path, limits, message):
    top = tmp_path / "top"
    top.mkdir()
    (top / "MANIFEST.sha256").write_text(f"{'0' * 64}  a\n" * 3)  # 3 lines, 201 bytes
    with pytest.raises(bounded.Exceeded) as raised:
        verify_warnings.manifest_mismatches(top, limits)
    assert str(raised.value) == message


@pytest.fixture
def this_checkout(monkeypatch):
    """This checkout at commit abc, clean, with numpy 2.0 and torch 2.1 (provenance replaced)."""
    from attnrepro.run import provenance

    state = {"commit": "abc", "dirty": False}
    monkeypatch.setattr(provenance, "git_state", lambda repo=verify.REPO: (
        dict(state) if repo == verify.REPO else pytest.fail(f"the git state of {repo}")))
    monkeypatch.setattr(provenance, "package_versions", lambda: {"numpy": "2.0", "torch": "2.1"})
    return state


def _archive_top(root, files):
    """An extracted archive's folder holding ``files`` ({name: bytes}) and their MANIFEST.sha256."""
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    (root / "MANIFEST.sha256").write_text("".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n"
                                                  for name, data in files.items()))
    return root


def test_warnings_name_what_differs_from_this_checkout(tmp_path, this_checkout):
    lock = (verify.REPO / verify_warnings.LOCK).read_bytes()
    env = {"git": {"commit": "abc", "dirty": False}, "versions": {"numpy": "2.0", "scipy": "1.0"}}
    same = {"results/a.csv": b"a", "environment.json": json.dumps(env).encode(), verify_warnings.LOCK: lock}
    assert verify_warnings.warnings(_archive_top(tmp_path / "same", same)) == []

    env = {"git": {"commit": "def", "dirty": True}, "versions": {"numpy": "1.0", "torch": "2.0"}}
    top = _archive_top(tmp_path / "other", {**{f"results/{n}.csv": b"" for n in "abcd"},
                                            "environment.json": json.dumps(env).encode()})
    for name in "abcd":
        (top / f"results/{name}.csv").write_text("changed")
    this_checkout["dirty"] = True
    assert verify_warnings.warnings(top) == [
        "4 file(s) of the archive do not match its MANIFEST.sha256 (changed after it was written): "
        "results/a.csv, results/b.csv, results/c.csv",
        "the archive's commit (def) is not this checkout's HEAD (abc)",
        "the archive's run had uncommitted changes to tracked files",
        "this checkout had uncommitted changes to tracked files",
        "the archive holds no requirements/runtime.lock: the locks are not compared",
        "package versions differ: archive numpy 1.0 here 2.0; torch 2.0 here 2.1"]
    this_checkout["commit"] = None
    assert verify_warnings.warnings(top)[1] == ("the archive's commit (def) is not this checkout's HEAD "
                                       "(not a git checkout)")


@pytest.mark.parametrize("environment", [None, b"{", b"[]", b'{"git": "abc"}', b'{"versions": ["x"]}'])
def test_an_archive_without_a_readable_environment_is_warned_of(tmp_path, this_checkout, environment):
    files = {"requirements/runtime.lock": (verify.REPO / verify_warnings.LOCK).read_bytes()}
    top = _archive_top(tmp_path, {**files, **({"environment.json": environment} if environment else {})})
    (top / "MANIFEST.sha256").unlink()
    unreadable = ["the archive's environment.json cannot be read: its commit and package versions are not "
                  "compared"] if environment else []
    assert verify_warnings.warnings(top) == [
        "1 file(s) of the archive do not match its MANIFEST.sha256 (changed after it was written): "
        "MANIFEST.sha256 (absent)", *unreadable,
        "the archive's commit (not recorded) is not this checkout's HEAD (abc)"]


def test_results_are_taken_as_given_or_from_the_checkout_holding_them(tmp_path):
    (tmp_path / "checkout/results").mkdir(parents=True)
    assert verify._results_dir(tmp_path / "checkout") == tmp_path / "checkout/results"
    (tmp_path / "checkout/results/tables").mkdir()
    assert verify._results_dir(tmp_path / "checkout/results") == tmp_path / "checkout/results"
    (tmp_path / "checkout/results/data").mkdir()  # a results folder, whatever else it holds
    (tmp_path / "checkout/results/results").mkdir()
    assert verify._results_dir(tmp_path / "checkout/results") == tmp_path / "checkout/results"


def _archived_results(tmp_path, results):
    """``results`` archived as `snakemake archive` does it (attnrepro.archive.pack.write), with this lock."""
    from attnrepro.archive import pack as archive

    files = [p.relative_to(results.parent).as_posix() for p in sorted(results.rglob("*")) if p.is_file()]
    shutil.copy(verify.REPO / "Snakefile", results.parent)  # the crate's main workflow, as archived
    files.append("Snakefile")
    return archive.write(tmp_path / "attnrepro-results-test.tar.gz", files, "skip: []\n", results.parent,
                         (verify.REPO / verify_warnings.LOCK).read_text())


def test_verify_reports_every_file_its_counts_and_the_verdict(tmp_path, capsys, this_checkout):
    archive_results, here = _two_sides(tmp_path)
    archive = _archived_results(tmp_path, archive_results)
    assert verify.main([str(archive), "--results", str(here.parent)]) == 1  # the checkout holding it
    assert capsys.readouterr().out.splitlines() == [
        f"archive: {archive}",
        f"here: {here}",
        "skipped          results/data/001/causal_timing/default.machine.parquet: describes the machine "
        "that ran it",
        "equal            results/data/001/causal_timing/default.parquet",
        "only in archive  results/data/001/scale_table/d_k-64_scaled-true.parquet",
        "equal            results/data/001/scale_table/d_k-8_scaled-true.parquet",
        "differs          results/summary/extra.parquet: row 0, column 'wall_seconds': archive 1.0, here 2.0 "
        "(1 value(s) differ in that column)",
        "skipped          results/tables/causal_timing.csv: built from a timing experiment (its Parquet is "
        "compared)",
        "equal            results/tables/notes.csv",
        "only here        results/tables/only_here.csv",
        "equal            results/tables/scale_table.csv",
        f"equal            results/ledger.csv: 2 claims{SAME_TIMING}",
        "parquet: 2 equal, 1 differs, 1 only in archive, 0 only here, 1 skipped",
        "table: 2 equal, 0 differs, 0 only in archive, 1 only here, 1 skipped",
        "ledger: 1 equal, 0 differs, 0 only in archive, 0 only here, 0 skipped",
        "canonical numerics: archive all (4 canonical, 0 not, 0 unknown, of 4 data files)",
        "canonical numerics: here    none (0 canonical, 3 not, 0 unknown, of 3 data files)",
        "verdict: DIFFERS: 3 of 8 files differ or are on one side only"]
    assert verify.main([str(archive), "--results", str(archive_results)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "verdict: REPRODUCED: all 7 compared files are equal"


def test_nothing_compared_is_not_a_reproduction(tmp_path, capsys):
    (tmp_path / "a.tar.gz").write_bytes(gzip.compress(_tar({"top/results/notes.txt": b"no results"})))
    (tmp_path / "here").mkdir()
    assert verify.main([str(tmp_path / "a.tar.gz"), "--results", str(tmp_path / "here")]) == 1
    none = "unknown (0 canonical, 0 not, 0 unknown, of 0 data files)"
    assert capsys.readouterr().out.splitlines()[-6:] == [
        "parquet: 0 equal, 0 differs, 0 only in archive, 0 only here, 0 skipped",
        "table: 0 equal, 0 differs, 0 only in archive, 0 only here, 0 skipped",
        "ledger: 0 equal, 0 differs, 0 only in archive, 0 only here, 0 skipped",
        f"canonical numerics: archive {none}", f"canonical numerics: here    {none}",
        "verdict: NOTHING COMPARED: neither side holds results"]


def test_canonical_status_reads_old_files_and_counts_what_it_cannot_read_as_unknown(tmp_path):
    _old_parquet(tmp_path / "data/001/e/old.parquet", pd.DataFrame({"a": [1]}),
                 {"numerics": {"canonical": True}})
    assert verify.canonical_status(tmp_path) == "all (1 canonical, 0 not, 0 unknown, of 1 data files)"
    io.write_parquet(pd.DataFrame({"a": [1]}), tmp_path / "data/001/e/text.parquet",
                     {"numerics": {"canonical": "yes"}})
    (tmp_path / "data/001/e/broken.parquet").write_bytes(b"not parquet")
    assert verify.canonical_status(tmp_path) == "mixed (1 canonical, 0 not, 2 unknown, of 3 data files)"


# ---- the rerun's pieces, in-process: the files it copies, the command it runs ---------------

CHECKOUT = {  # a small checkout: what a rerun copies, in this order, and what it leaves
    "Snakefile": "rule all:\n", "workflow/rules/a.smk": "", "src/pkg/__init__.py": "x = 1\n",
    "config/config.yaml": "a: 1\n", "envs/env.yaml": "", "requirements/runtime.lock": "numpy==2.0\n",
    "src/pkg/stray.pyc": "", "src/pkg/__pycache__/m.cpython-311.pyc.4242": "", "README.md": "",
    "results/ledger.csv": "",
}


def _checkout(root):
    for name, text in CHECKOUT.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "config/link.yaml").symlink_to("config.yaml")
    return root


def test_a_rerun_copies_the_workflow_its_code_config_and_lock(tmp_path):
    assert verify_rerun.workflow_files(_checkout(tmp_path)) == [
        "Snakefile", "workflow/rules/a.smk", "src/pkg/__init__.py", "config/config.yaml", "config/link.yaml",
        "envs/env.yaml", "requirements/runtime.lock"]


@pytest.fixture
def fake_snakemake(tmp_path, monkeypatch):
    """This checkout replaced by a small one, Snakemake by a function that records how it is run,
    writes ``log`` lines to its log and exits ``status``; what was printed when it started."""
    monkeypatch.setattr(verify, "REPO", _checkout(tmp_path / "repo"))
    snakemake = types.SimpleNamespace(calls=[], log=["done\n"], status=0)

    def run(cmd, workdir, remove):
        printed = sys.stdout.buffer.getvalue().decode() if hasattr(sys.stdout, "buffer") else ""
        snakemake.calls.append({"cmd": cmd, "workdir": workdir, "printed": printed, "remove": remove})
        (workdir / verify_rerun.LOG).write_text("".join(snakemake.log))
        return snakemake.status

    monkeypatch.setattr(verify_rerun, "run", run)
    top = tmp_path / "archive/top"
    top.mkdir(parents=True)
    (top / "config.resolved.yaml").write_text("skip: [train]\n")
    snakemake.top = top
    return snakemake


def test_a_rerun_runs_snakemake_on_the_archives_config_as_json_in_a_copy(tmp_path, fake_snakemake,
                                                                         monkeypatch):
    """Its command line and folder; the config handed over as JSON; the line saying so is flushed
    before it starts."""
    monkeypatch.setattr(sys, "stdout", bytes_io.TextIOWrapper(bytes_io.BytesIO(), encoding="utf-8"))
    work = tmp_path / "work"
    assert verify.rerun(fake_snakemake.top, work, 3, remove=tmp_path / "temporary") == work / "results"
    config = work / "verify-config.json"
    ((call),) = fake_snakemake.calls
    assert call["remove"] == tmp_path / "temporary"
    assert call["cmd"] == [sys.executable, "-m", "snakemake", "--cores", "3", "--configfile", str(config)]
    assert call["workdir"] == work
    handed = json.loads(config.read_text())  # JSON: Snakemake never reads it as YTE
    assert handed == {"skip": ["train"], "articles": verify_rerun.texts_here({})["articles"]}  # texts here
    assert call["printed"] == ("rerun estimate: 19 core-minutes in 102 jobs; its largest job asks 1782 MB "
                               "(scale_sweep default); budget 1.5 core-hours (--budget)\n"
                               f"rerunning in {work}: -m snakemake --cores 3 --configfile {config} "
                               f"(log: {work / 'verify-snakemake.log'})\n")
    copied = sorted(p.relative_to(work).as_posix() for p in work.rglob("*") if not p.is_dir())
    assert copied == sorted(verify_rerun.workflow_files(verify.REPO) + ["verify-snakemake.log",
                                                                       "verify-config.json"])
    assert (work / "src/pkg/__init__.py").read_text() == "x = 1\n"
    assert (work / "config/link.yaml").is_symlink()  # copied as a link, as in the checkout
    assert (work / "verify-snakemake.log").read_text() == "done\n"


def test_the_rerun_runs_in_a_session_of_its_own_without_this_pythonpath_or_venv(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "elsewhere")
    monkeypatch.setenv("VIRTUAL_ENV", "another venv")
    monkeypatch.setenv("ATTNREPRO_PROBE", "kept")
    code = ("import json, os; print(json.dumps([os.getsid(0) == os.getpid(), os.environ.get('PYTHONPATH'), "
            "os.environ.get('VIRTUAL_ENV'), os.environ.get('ATTNREPRO_PROBE'), os.getcwd()]))")
    assert verify_rerun.run([sys.executable, "-c", code], tmp_path) == 0
    assert json.loads((tmp_path / verify_rerun.LOG).read_text()) == [True, None, None, "kept", str(tmp_path)]
    assert verify_rerun.run([sys.executable, "-c", "raise SystemExit(3)"], tmp_path) == 3


def test_a_failed_rerun_prints_the_tail_of_its_log(tmp_path, fake_snakemake, capsys):
    fake_snakemake.log, fake_snakemake.status = [f"line {i}\n" for i in range(1, 46)], 1
    assert verify.rerun(fake_snakemake.top, tmp_path / "work", 1) is None
    assert capsys.readouterr().err == "".join(f"line {i}\n" for i in range(6, 46)) + "\n"


def test_a_rerun_that_cannot_copy_the_workflow_exits_2(tmp_path, fake_snakemake):
    (tmp_path / "file").write_text("")
    line = f"cannot copy this checkout's workflow into {tmp_path / 'file'}: [Errno 17] File exists"
    with pytest.raises(verify.CannotVerify, match=f"^{re.escape(line)}"):
        verify.rerun(fake_snakemake.top, tmp_path / "file", 1)
    assert fake_snakemake.calls == []


# ---- the archive of the small run --------------------------------------------------------


# the session's `archived` fixture (conftest.py): (results folder, archive) of the small run


def _altered(archive, dest, change):
    """A copy of ``archive`` in ``dest`` after ``change(top folder)``."""
    top = verify.extract(archive, dest / "x")
    change(top)
    out = dest / archive.name
    with tarfile.open(out, "w:gz") as tar:
        tar.add(top, arcname=top.name)
    return out


def _verify(capsys, archive, results):
    status = verify.main([str(archive), "--results", str(results)])
    return status, capsys.readouterr().out


def test_the_archive_carries_the_lock_in_its_manifest(archived, tmp_path):
    _, archive = archived
    top = verify.extract(archive, tmp_path)
    assert (top / "requirements/runtime.lock").read_text() == (REPO / "requirements/runtime.lock").read_text()
    assert "  requirements/runtime.lock" in (top / "MANIFEST.sha256").read_text()
    assert verify_warnings.manifest_mismatches(top) == ([], 0)


def test_verify_passes_on_the_run_it_archived(archived):
    results, archive = archived
    cmd = [sys.executable, "-m", "attnrepro", "verify", str(archive), "--results", str(results)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr[-3000:]
    lines = out.splitlines()
    assert "equal            results/data/001/scale_table/d_k-64_scaled-true.parquet" in lines
    assert "equal            results/tables/scale_table.csv" in lines
    assert any(line.startswith("equal            results/ledger.csv: ") for line in lines)
    assert "skipped          results/tables/causal_timing.csv" in out
    assert "parquet: " in out and ", 0 differs, 0 only in archive, 0 only here" in out
    assert verify_warnings.LOCK not in out and "MANIFEST" not in out  # the lock archived, equal to ours
    assert "canonical numerics: archive " in out and "canonical numerics: here " in out
    assert lines[-1].startswith("verdict: REPRODUCED")


PARQUET = "results/data/001/scale_table/d_k-64_scaled-true.parquet"


@pytest.mark.full
def test_one_altered_parquet_value_fails_naming_file_and_value(archived, tmp_path, capsys):
    results, archive = archived
    original = io.read_parquet(results.parent / PARQUET)
    column = next(c for c in original.columns
                  if c not in plan.measured_columns("scale_table", original.columns)
                  and pd.api.types.is_float_dtype(original[c]))

    def change(top):
        df = io.read_parquet(top / PARQUET)
        df.loc[0, column] = 12345.5
        io.write_parquet(df, top / PARQUET, io.read_provenance(top / PARQUET))

    status, out = _verify(capsys, _altered(archive, tmp_path, change), results)
    assert status == 1
    (line,) = [x for x in out.splitlines() if x.startswith("differs")]
    here = float(original.loc[0, column])
    assert PARQUET in line and f"row 0, column {column!r}: archive 12345.5, here {here!r}" in line
    assert ("1 file(s) of the archive do not match its MANIFEST.sha256 (changed after it was written): "
            f"{PARQUET}") in out
    assert out.splitlines()[-1].startswith("verdict: DIFFERS: 1 of")


@pytest.mark.full
def test_one_altered_ledger_value_fails_naming_the_claim(archived, tmp_path, capsys):
    results, archive = archived
    ledger = pd.read_csv(results / "ledger.csv", dtype=str, keep_default_na=False)
    claim = ledger[(ledger["class"] == "exact") & (ledger["reproduced"] != "")].iloc[0]

    def change(top):
        table = pd.read_csv(top / "results/ledger.csv", dtype=str, keep_default_na=False)
        table.loc[table["id"] == claim["id"], "reproduced"] = "-7.25"
        table.to_csv(top / "results/ledger.csv", index=False)

    status, out = _verify(capsys, _altered(archive, tmp_path, change), results)
    assert status == 1
    assert (f"differs          results/ledger.csv: claim {claim['id']}, column 'reproduced': "
            f"archive '-7.25', here {claim['reproduced']!r}") in out
    assert out.splitlines()[-1].startswith("verdict: DIFFERS: 1 of")


@pytest.mark.full
def test_a_file_on_one_side_only_fails(archived, tmp_path, capsys):
    results, archive = archived
    status, out = _verify(capsys, _altered(archive, tmp_path, lambda top: (top / PARQUET).unlink()), results)
    assert status == 1 and f"only here        {PARQUET}" in out.splitlines()
    status, out = _verify(capsys, _altered(archive, tmp_path / "2", lambda top: (top / PARQUET).rename(
        top / PARQUET.replace("64", "65"))), results)
    assert status == 1 and f"only in archive  {PARQUET.replace('64', '65')}" in out.splitlines()


@pytest.mark.full
def test_a_changed_table_differs_naming_row_column_and_values(archived, tmp_path, capsys):
    results, archive = archived
    table = "results/tables/scale_table.csv"
    here = pd.read_csv(results.parent / table, dtype=str, keep_default_na=False)
    column = here.columns[-1]

    def change(top):
        frame = pd.read_csv(top / table, dtype=str, keep_default_na=False)
        frame.loc[0, column] = "-1"
        frame.to_csv(top / table, index=False)

    status, out = _verify(capsys, _altered(archive, tmp_path, change), results)
    assert status == 1
    assert (f"differs          {table}: row 0, column {column!r}: archive '-1', here {here.loc[0, column]!r} "
            "(1 value(s) differ in that column)") in out.splitlines()
    assert out.splitlines()[-1].startswith("verdict: DIFFERS: 1 of")


@pytest.mark.full
def test_an_archive_whose_ledger_lost_its_verdicts_differs(archived, tmp_path, capsys):
    results, archive = archived

    def gut(top):
        ledger = pd.read_csv(top / "results/ledger.csv", dtype=str, keep_default_na=False)
        ledger.drop(columns=["reproduced", "verdict"]).to_csv(top / "results/ledger.csv", index=False)

    status, out = _verify(capsys, _altered(archive, tmp_path, gut), results)
    assert status == 1
    assert ("differs          results/ledger.csv: columns only in archive [], only here ['reproduced', "
            "'verdict']") in out.splitlines()
    assert out.splitlines()[-1].startswith("verdict: DIFFERS: 1 of")


# ---- the rerun: a run of two cheap experiments, archived, then rerun by verify -------------


@pytest.mark.full
def test_verify_reruns_the_archived_config(tmp_path, capsys):
    """~20 s: two runs of a config that skips every experiment but two cheap ones."""
    root = copy_repo(tmp_path / "theirs")
    shutil.copy(REPO / "requirements/runtime.lock", root / "requirements/runtime.lock")
    keep = {"scale_table", "self_attention_tokens"}
    tiny = {"skip": sorted(set(plan.EXPERIMENTS) - keep), "scale_table": {"d_k": [8], "repetitions": 5},
            "seed_distribution": {"build": False}, "numerics": {"sweep": False}}
    (root / "config/tiny.yaml").write_text(yaml.safe_dump(tiny))
    proc = snakemake(root, "all", "archive", configfile="config/tiny.yaml")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (archive,) = (root / "results/archive").glob("attnrepro-results-*.tar.gz")
    status = verify.main([str(archive), "--cores", "2", "--workdir", str(tmp_path / "ours")])
    out = capsys.readouterr().out
    assert status == 0, out
    assert f"here: {tmp_path / 'ours/results'}" in out.splitlines()  # the rerun's results, not the archive's
    assert "equal            results/data/001/scale_table/d_k-8_scaled-true.parquet" in out.splitlines()
    assert (tmp_path / "ours/results/data/001/scale_table/d_k-8_scaled-true.parquet").is_file()
    assert not (tmp_path / "ours/results/data/001/scale_table/d_k-64_scaled-true.parquet").exists()
    assert out.splitlines()[-1].startswith("verdict: REPRODUCED")


def test_the_command_line_reads_as_documented():
    parser = verify._parser()
    assert parser.prog == "attnrepro verify"
    assert parser.description == verify.__doc__.split("\n")[0] and parser.description.strip()
    helps = {a.dest: a.help for a in parser._actions}
    assert helps == {"help": "show this help message and exit", "archive": "attnrepro-results-<sha>.tar.gz",
                     "results": "a finished results folder (default: rerun the archive's config)",
                     "cores": "Snakemake's --cores for the rerun (default all)",
                     "workdir": "where to rerun, a new or empty folder (default: a temporary folder, "
                                "removed after)",
                     "max_size": "the ceiling of the archive's files once extracted (default 1G; 4G, 512M); "
                                 "an eighth of it bounds a Parquet file's uncompressed data",
                     "budget": "the most core time a rerun may take, by the project's estimates: a number "
                               "and s, m, h, d or y (90m, 2h, 3d); the sum of its jobs' seconds, a run on N "
                               "cores takes about 1/N of it (default: 4 times the default run's estimate, "
                               "config/config.yaml's: 1.5 core-hours). A config beyond it is refused before "
                               "any job"}
    args = parser.parse_args(["a.tar.gz"])
    assert (args.archive, args.results, args.cores, args.workdir) == ("a.tar.gz", None, "all", None)
    assert args.budget is None and parser.parse_args(["a", "--budget", "2h"]).budget == 7200
    assert args.max_size == 1 << 30 and parser.parse_args(["a", "--max-size", "4G"]).max_size == 4 << 30
    assert "128+N  ended by signal N" in parser.format_help()  # the exit codes, in --help
    assert parser.get_default("cores") == "all"


def test_a_lock_that_differs_is_named_by_its_first_three_lines_on_each_side(tmp_path):
    lines = (REPO / verify_warnings.LOCK).read_text().splitlines()
    ours = [line for line in lines if "==" in line]
    theirs = [line for line in lines if line not in ours[:4]]
    (tmp_path / "requirements").mkdir()
    (tmp_path / verify_warnings.LOCK).write_text("\n".join(theirs + [f"extra{i}==1" for i in range(4)]))
    assert verify_warnings._lock_warnings(tmp_path) == [
        f"{verify_warnings.LOCK} differs: archive {['extra0==1', 'extra1==1', 'extra2==1']}, here {ours[:3]}"]
    (tmp_path / "requirements/runtime.lock").write_bytes(b"\xff\xfe not text")
    assert verify_warnings._lock_warnings(tmp_path) == [
        "a requirements/runtime.lock cannot be read (UnicodeDecodeError): the locks are not compared"]


def test_a_manifest_line_names_a_file_whose_name_holds_two_spaces(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results/a  b.csv").write_text("x")
    digest = hashlib.sha256(b"x").hexdigest()
    (tmp_path / "MANIFEST.sha256").write_text(f"{digest}  results/a  b.csv\n")
    assert verify_warnings.manifest_mismatches(tmp_path) == ([], 0)


# ---- an archive is data: the bounds, as verify applies them (tests/test_hostile.py: the corpus) --

SMALL = verify_extract.Limits(total_bytes=64 * 100)  # a Parquet file of 100 cells at most


def test_a_parquet_file_beyond_the_limits_differs_unread_on_either_side(tmp_path):
    rel = "data/001/scale_table/d_k-8_scaled-true.parquet"
    big = _parquet(tmp_path / "a", rel, pd.DataFrame({"x": np.zeros(101)}))
    small = _parquet(tmp_path / "b", rel, pd.DataFrame({"x": np.zeros(100)}))
    why = "its 101 rows of 1 columns make more than the 100 cells a file may (--max-size / 64)"
    assert vc.compare_parquet(rel, big, small, SMALL) == vc.Entry("parquet", rel, "differs",
                                                                  f"not read in archive: {why}")
    assert vc.compare_parquet(rel, small, big, SMALL) == vc.Entry("parquet", rel, "differs",
                                                                  f"not read here: {why}")
    entries = vc.compare(tmp_path / "a", tmp_path / "b", SMALL)  # its limits go to the Parquet files
    assert [(e.kind, e.status, e.detail) for e in entries if e.kind == "parquet"] == [
        ("parquet", "differs", f"not read in archive: {why}")]
    assert vc.compare_parquet(rel, small, small, SMALL).status == "equal"  # the limit itself is allowed


def test_a_corrupt_file_is_said_by_its_problem_or_its_error():
    corrupt = io.CorruptResult("x.parquet", "its  content\ndoes not match")
    assert vc._why(corrupt) == "its content does not match"
    assert vc._why(OSError(5, "Input/output  error")) == "[Errno 5] Input/output error"


def _archive(tmp_path, members, name="a.tar.gz"):
    (tmp_path / name).write_bytes(gzip.compress(_tar(members)))
    return tmp_path / name


def test_parquet_files_too_large_to_read_refuse_the_archive_before_any_rerun(tmp_path, capsys, monkeypatch):
    files = {f"top/results/data/f{i}.parquet": pd.DataFrame({"x": np.zeros(201)}) for i in range(4)}
    for rel, frame in files.items():
        _parquet(tmp_path / "src", rel, frame)
    archive = _archive(tmp_path, {rel: (tmp_path / "src" / rel).read_bytes() for rel in files})
    monkeypatch.setattr(verify, "rerun", lambda *a: pytest.fail("a rerun started"))
    assert verify.main([str(archive), "--max-size", "12800", "--workdir", str(tmp_path / "w")]) == 2
    why = "its 201 rows of 1 columns make more than the 200 cells a file may (--max-size / 64)"
    assert capsys.readouterr().err == (
        f"verify: {archive}: refused: 4 Parquet file(s) too large to read: "
        + "; ".join(f"results/data/f{i}.parquet: {why}" for i in range(3)) + "\n")


def test_the_room_for_a_rerun_is_checked_with_the_extraction_and_not_without_a_rerun(tmp_path, capsys,
                                                                                       monkeypatch):
    archive = _archive(tmp_path, {"top/results/ledger.csv": LEDGER_BYTES, "top/results/blob.bin": BLOB})
    results = _archive_top(tmp_path / "here", {"results/ledger.csv": LEDGER_BYTES, "results/blob.bin": BLOB})
    room = 64 * verify_extract.MiB + len(LEDGER_BYTES) + len(BLOB) + 100  # the extraction, not twice it
    monkeypatch.setattr(verify_extract.shutil, "disk_usage", lambda path: types.SimpleNamespace(free=room))
    assert verify.main([str(archive), "--results", str(results / "results")]) == 0  # no rerun: room enough
    capsys.readouterr()
    monkeypatch.setattr(verify, "rerun", lambda *a: pytest.fail("a rerun started"))
    assert verify.main([str(archive), "--workdir", str(tmp_path / "w")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("verify: the local disk holding ")
    extracting = verify_extract.shown(len(LEDGER_BYTES) + len(BLOB))
    assert f"free; extracting its {extracting} and a rerun of its results needs 64.4 MiB" in line, line


def test_a_disk_that_fills_while_extracting_or_copying_is_named_as_this_machines(tmp_path, monkeypatch):
    import errno

    full = OSError(errno.ENOSPC, "No space left on device")

    def fill(*args, **kwargs):
        raise full

    monkeypatch.setattr(verify_extract, "open_checked", fill)
    (tmp_path / "x.tar.gz").write_bytes(b"x")
    with pytest.raises(verify.CannotVerify) as info:
        verify.extract(tmp_path / "x.tar.gz", tmp_path / "new/dest")
    full_here = (f"the local disk holding {tmp_path} is full (No space left on device): the archive is "
                 "not to blame")
    assert str(info.value) == full_here
    monkeypatch.setattr(verify_rerun, "config_for_rerun", lambda top: verify_rerun.ForRerun(
        {}, yaml.safe_load((REPO / "config/config.yaml").read_text()), []))
    monkeypatch.setattr(verify_rerun, "copy_workflow", fill)
    with pytest.raises(verify.CannotVerify) as info:
        verify.rerun(tmp_path, tmp_path / "work/rerun", 1)
    assert str(info.value) == full_here


def test_zeros_beyond_what_a_tar_pads_are_refused_naming_the_byte(tmp_path):
    raw = _tar({"top/results/ledger.csv": LEDGER_BYTES})
    archive = tmp_path / "a.tar.gz"
    archive.write_bytes(gzip.compress(raw + bytes(2 << 20)))
    end = 512 + -(-len(LEDGER_BYTES) // 512) * 512
    with pytest.raises(verify.CannotVerify) as info:
        verify.extract(archive, tmp_path / "x")
    assert str(info.value) == f"{archive}: refused: more than 1.0 MiB follow the end of its tar at byte {end}"


def test_a_signal_is_said_and_its_status_is_128_plus_its_number(tmp_path, capsys, monkeypatch):
    import signal

    def stopped(during_rerun):
        def stop(args, tmp):
            interrupted = verify_rerun.Interrupted(signal.SIGTERM)
            interrupted.during_rerun = during_rerun
            raise interrupted
        return stop

    monkeypatch.setattr(verify, "_verify", stopped(True))
    assert verify.main(["a.tar.gz"]) == 143
    said = "verify: stopped by SIGTERM: the rerun was ended and the temporary folder removed\n"
    assert capsys.readouterr() == ("", said)
    monkeypatch.setattr(verify, "_verify", stopped(False))  # before a rerun, or with --results: none
    assert verify.main(["a.tar.gz"]) == 143
    assert capsys.readouterr() == ("", "verify: stopped by SIGTERM: the temporary folder removed\n")


def test_a_signal_during_the_rerun_is_said_to_have_ended_it(tmp_path, monkeypatch):
    import signal

    class Guard:
        stdin = type("Pipe", (), {"close": lambda self: None})()

        def __init__(self, *args, **kwargs):
            self.waits = 0

        def wait(self):
            self.waits += 1
            if self.waits == 1:
                raise verify_rerun.Interrupted(signal.SIGINT)
            return 130

    monkeypatch.setattr(verify_rerun.subprocess, "Popen", Guard)
    with pytest.raises(verify_rerun.Interrupted) as info:
        verify_rerun.run(["snakemake"], tmp_path)
    assert info.value.during_rerun is True


def test_max_size_reads_a_size_and_names_what_it_cannot_read(capsys):
    parser = verify._parser()
    assert "--max-size SIZE" in parser.format_help()
    with pytest.raises(SystemExit) as info:
        parser.parse_args(["a.tar.gz", "--max-size", "four"])
    assert info.value.code == 2
    assert capsys.readouterr().err == ("attnrepro verify: argument --max-size: 'four' is not a size (4G, "
                                       "512M, 3GiB, or bytes) (see attnrepro verify --help)\n")


def test_the_comparison_reads_within_the_ceiling_given_on_the_command_line(tmp_path, capsys):
    rel = "results/data/001/scale_table/d_k-8_scaled-true.parquet"
    _parquet(tmp_path / "src/top", rel, pd.DataFrame({"x": np.zeros(100)}))
    archive = _archive(tmp_path, {f"top/{rel}": (tmp_path / "src/top" / rel).read_bytes()})
    _parquet(tmp_path / "here", rel, pd.DataFrame({"x": np.zeros(300)}))  # beyond 200 cells, here only
    here = str(tmp_path / "here/results")
    assert verify.main([str(archive), "--results", here, "--max-size", "12800"]) == 1
    assert (f"differs          {rel}: not read here: its 300 rows of 1 columns make more than the 200 cells "
            "a file may (--max-size / 64)") in capsys.readouterr().out.splitlines()
