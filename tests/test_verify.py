"""`python -m attnrepro verify`: an archive compared with a finished results folder, or a rerun."""

import gzip
import io as bytes_io
import random
import shutil
import subprocess
import sys
import tarfile

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import REPO, copy_repo, snakemake
from attnrepro import io, plan, verify
from attnrepro import verify_compare as vc

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


def _ledger(changes=None):
    rows = [
        {"id": "001.exact", "class": "exact", "published": "5", "reproduced": "5", "verdict": "reproduced",
         "reason": ""},
        {"id": "001.timing", "class": "machine-bound", "published": "0.2 s", "reproduced": "0.25",
         "verdict": "within tolerance", "reason": "band"},
    ]
    for (claim, column), value in (changes or {}).items():
        next(r for r in rows if r["id"] == claim)[column] = value
    return pd.DataFrame(rows)


def test_the_ledger_ignores_a_machine_bound_claims_measurement_only():
    base = _ledger()
    timing = _ledger({("001.timing", "reproduced"): "0.31", ("001.timing", "verdict"): "differs",
                      ("001.timing", "reason"): "other CPU"})
    assert vc.ledger_differences(base, timing) == []
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
    assert (entry.status, entry.detail) == ("equal", "2 claims")


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
    assert entry.status == "differs" and "d_k-8_scaled-true.parquet" in entry.detail


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
    assert verify._lock_warnings(tmp_path) == [
        "the archive holds no requirements.lock: the locks are not compared"]
    lock = (REPO / "requirements.lock").read_text()
    (tmp_path / "requirements.lock").write_text(lock)
    assert verify._lock_warnings(tmp_path) == []
    (tmp_path / "requirements.lock").write_text(lock.replace("numpy==", "numpy==0.0.0+", 1))
    (warning,) = verify._lock_warnings(tmp_path)
    assert "requirements.lock differs" in warning and "numpy==0.0.0+" in warning


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
}


@pytest.mark.parametrize("name", UNREADABLE)
def test_an_unreadable_archive_is_one_line_on_stderr_and_exit_2(tmp_path, capsys, name):
    good, results = _synthetic(tmp_path)
    (tmp_path / "good.tar.gz").write_bytes(good)
    assert verify.main([str(tmp_path / "good.tar.gz"), "--results", str(results)]) == 0
    capsys.readouterr()
    change, reason = UNREADABLE[name]
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(change(good))
    status = verify.main([str(bad), "--results", str(results)])
    out, err = capsys.readouterr()
    assert (status, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith(f"verify: {bad}: unreadable archive: {reason}")


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
            f"verify: {tmp_path / 'other.tar.gz'}: not an attnrepro archive (one folder holding results/)",
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


def test_a_rerun_that_fails_exits_2(tmp_path, capsys):
    """~3 s: Snakemake refuses the archive's config before any job."""
    members = {"top/results/ledger.csv": LEDGER_BYTES, "top/config.resolved.yaml": b"train:\n  lr: .nan\n"}
    (tmp_path / "a.tar.gz").write_bytes(gzip.compress(_tar(members)))
    status = verify.main([str(tmp_path / "a.tar.gz"), "--workdir", str(tmp_path / "rerun"), "--cores", "1"])
    out, err = capsys.readouterr()
    assert status == 2 and out.splitlines()[-1] == "verdict: RERUN FAILED (see above)"
    assert "train.lr: .nan is not a finite number" in err  # the tail of Snakemake's log
    assert not (tmp_path / "rerun/results").exists()


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
    assert (top / "requirements.lock").read_text() == (REPO / "requirements.lock").read_text()
    assert "  requirements.lock" in (top / "MANIFEST.sha256").read_text()
    assert verify.manifest_mismatches(top) == []


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
    assert "requirements.lock" not in out and "MANIFEST" not in out  # the lock archived, equal to ours
    assert "canonical numerics: archive " in out and "canonical numerics: here " in out
    assert lines[-1].startswith("verdict: REPRODUCED")


PARQUET = "results/data/001/scale_table/d_k-64_scaled-true.parquet"


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


def test_a_file_on_one_side_only_fails(archived, tmp_path, capsys):
    results, archive = archived
    status, out = _verify(capsys, _altered(archive, tmp_path, lambda top: (top / PARQUET).unlink()), results)
    assert status == 1 and f"only here        {PARQUET}" in out.splitlines()
    status, out = _verify(capsys, _altered(archive, tmp_path / "2", lambda top: (top / PARQUET).rename(
        top / PARQUET.replace("64", "65"))), results)
    assert status == 1 and f"only in archive  {PARQUET.replace('64', '65')}" in out.splitlines()


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


def test_verify_reruns_the_archived_config(tmp_path, capsys):
    """~20 s: two runs of a config that skips every experiment but two cheap ones."""
    root = copy_repo(tmp_path / "theirs")
    shutil.copy(REPO / "requirements.lock", root / "requirements.lock")
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
