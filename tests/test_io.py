"""Parquet with provenance, written atomically."""

from pathlib import Path

import pandas as pd
import pytest

from attnrepro.run import io, provenance


def test_round_trip_keeps_table_and_provenance(tmp_path):
    df = pd.DataFrame({"d_k": [8, 64], "value": [0.5, 1e-16]})
    meta = provenance.record("x", "000", "a listing", {"seed": 3, "d_k": [8, 64]}, "t0", "t1")
    path = io.write_parquet(df, tmp_path / "sub" / "x.parquet", meta)
    pd.testing.assert_frame_equal(io.read_parquet(path), df)
    back = io.read_provenance(path)
    assert back["experiment"] == "x" and back["seeds"] == {"seed": 3}
    assert back["versions"]["numpy"] and back["versions"]["pyarrow"]
    assert {"commit", "dirty"} <= set(back["git"])
    assert back["blas"] and back["blas"][0]["internal_api"]
    assert back["machine"]["cores"] >= 1


def test_failed_write_leaves_nothing(tmp_path, monkeypatch):
    target = tmp_path / "out.parquet"

    def explode(table, where, **options):
        where.write(b"PAR1 half a file")
        raise KeyboardInterrupt  # as if the job were interrupted mid-write

    monkeypatch.setattr(io.pq, "write_table", explode)
    with pytest.raises(KeyboardInterrupt):
        io.write_parquet(pd.DataFrame({"a": [1]}), target, {})
    assert list(tmp_path.iterdir()) == []


def test_existing_file_survives_a_failed_rewrite(tmp_path, monkeypatch):
    target = io.write_parquet(pd.DataFrame({"a": [1]}), tmp_path / "out.parquet", {})
    monkeypatch.setattr(io.pq, "write_table", lambda *a, **k: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError):
        io.write_parquet(pd.DataFrame({"a": [2]}), target, {})
    assert io.read_parquet(target)["a"].tolist() == [1]
    assert [p.name for p in tmp_path.iterdir()] == ["out.parquet"]


def test_results_get_the_mode_of_an_ordinary_file(tmp_path):
    # mkstemp creates 0600 files: results shared on a cluster must follow the umask instead
    import os

    old = os.umask(0o022)
    try:
        parquet = io.write_parquet(pd.DataFrame({"a": [1]}), tmp_path / "x.parquet", {})
        text = io.write_text(tmp_path / "x.md", "# x\n")
    finally:
        os.umask(old)
    assert oct(parquet.stat().st_mode & 0o777) == oct(0o644) == oct(text.stat().st_mode & 0o777)


# --- integrity: page checksums, the content hash, errors that name the file ---------------------

def _result(tmp_path, rows=300):
    import numpy as np

    df = pd.DataFrame({"step": np.arange(rows), "loss": np.random.default_rng(0).random(rows),
                       "task": ["copy", "sort"] * (rows // 2)})
    return df, io.write_parquet(df, tmp_path / "001" / "train" / "copy-L6-seed0.parquet",
                                {"params": {"steps": 100}})


def _flipped(path, position, bit=0, dest=None):
    """A copy of ``path`` (or ``path`` itself) with one bit flipped, its mtime kept."""
    import os

    stat = path.stat()
    data = bytearray(path.read_bytes())
    data[position] ^= 1 << bit
    dest = dest or path
    dest.write_bytes(bytes(data))
    os.utime(dest, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return dest


def _outcome(path, df):
    """'same' when the file reads back as written, 'corrupt' on CorruptResult; anything else fails."""
    try:
        back, meta = io.read_parquet(path), io.read_provenance(path)
    except io.CorruptResult as error:
        assert str(path) in str(error) and f"--forcerun {path}" in str(error), error
        return "corrupt"
    assert back.equals(df) and meta == {"params": {"steps": 100}}, "a flipped bit was read as data"
    return "same"


def _refused(read, path, problem, **options):
    """Assert that ``read(path)`` raises CorruptResult with exactly the message a user reads."""
    with pytest.raises(io.CorruptResult) as caught:
        read(path, **options)
    assert str(caught.value) == (f"{path}: corrupt result file ({problem}); "
                                 f"rebuild it with `snakemake --cores N --forcerun {path}`")
    assert caught.value.path == str(path) and caught.value.problem == problem  # kept for its readers


@pytest.mark.full
def test_no_flipped_bit_is_read_as_data(tmp_path):
    df, path = _result(tmp_path)
    size = len(path.read_bytes())
    outcomes = [_outcome(_flipped(path, pos, pos % 8, tmp_path / "f.parquet"), df)
                for pos in range(0, size, 5)]
    assert outcomes.count("corrupt") > 0.7 * len(outcomes)


def test_a_flipped_bit_in_a_data_page_fails_its_page_checksum(tmp_path):
    import pyarrow.parquet as pq

    df, path = _result(tmp_path)
    chunks = pq.ParquetFile(path).metadata.row_group(0)
    for i in range(chunks.num_columns):
        chunk = chunks.column(i)
        start = chunk.dictionary_page_offset or chunk.data_page_offset
        for position in (start + chunk.total_compressed_size // 2, start + chunk.total_compressed_size - 3):
            flipped = _flipped(path, position, 3, tmp_path / "f.parquet")
            with pytest.raises(io.CorruptResult) as caught:
                io.read_parquet(flipped)
            assert str(caught.value).startswith(
                f"{flipped}: corrupt result file (unreadable: OSError: could not verify page integrity, "
                "CRC checksum verification failed")


def test_a_flipped_bit_in_the_footer_fails_the_content_hash(tmp_path):
    # the footer (schema, column names, key-value metadata) has no page checksum
    df, path = _result(tmp_path)
    data = path.read_bytes()
    footer = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    for name in (b"step", b"loss", b"task"):  # a column's name in the Thrift schema
        for bit in range(7):
            flipped = _flipped(path, data.index(name, footer), bit, tmp_path / "f.parquet")
            _refused(io.read_parquet, flipped, "its content does not match the hash recorded at write")


def test_an_altered_provenance_fails_its_digest(tmp_path):
    import json

    import pyarrow.parquet as pq

    df, path = _result(tmp_path)
    table = pq.read_table(path)
    meta = dict(table.schema.metadata)
    meta[io.KEY] = json.dumps({"params": {"steps": 2500}}).encode()  # the integrity record kept
    pq.write_table(table.replace_schema_metadata(meta), path)
    for read in (io.read_provenance, io.read_parquet):
        _refused(read, path, "its provenance does not match the digest recorded at write")


def test_a_file_with_an_integrity_record_is_verified_even_when_records_are_optional(tmp_path):
    """``require_integrity=False`` (verify reading an old archive) admits a file without a record,
    never a file whose record fails: its content hash and provenance digest are still checked."""
    import json

    import pyarrow.parquet as pq

    df, path = _result(tmp_path)
    data = path.read_bytes()
    footer = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    flipped = _flipped(path, data.index(b"loss", footer), 1, tmp_path / "f.parquet")
    with pytest.raises(io.CorruptResult, match="content does not match the hash recorded at write"):
        io.read_parquet(flipped, require_integrity=False)
    table = pq.read_table(path)
    meta = {**table.schema.metadata, io.KEY: json.dumps({"params": {"steps": 2500}}).encode()}
    pq.write_table(table.replace_schema_metadata(meta), tmp_path / "p.parquet")
    for read in (io.read_provenance, io.read_parquet):
        with pytest.raises(io.CorruptResult, match="its provenance does not match the digest"):
            read(tmp_path / "p.parquet", require_integrity=False)
    assert io.read_parquet(path, require_integrity=False).equals(io.read_parquet(path))


def test_truncated_empty_or_foreign_files_stop_the_reader_naming_the_file(tmp_path):
    df, path = _result(tmp_path)
    data = path.read_bytes()
    broken = {"truncated": data[: len(data) // 2], "tail cut": data[:-3], "empty": b""}
    for name, content in broken.items():
        bad = tmp_path / f"{name}.parquet"
        bad.write_bytes(content)
        for read in (io.read_parquet, io.read_provenance):
            with pytest.raises(io.CorruptResult) as caught:
                read(bad)
            assert str(bad) in str(caught.value) and "corrupt result file" in str(caught.value)
            assert f"`snakemake --cores N --forcerun {bad}`" in str(caught.value)
    df.to_parquet(tmp_path / "plain.parquet")  # not written by attnrepro.run.io: no integrity record
    with pytest.raises(io.CorruptResult, match="no integrity record"):
        io.read_parquet(tmp_path / "plain.parquet")
    assert io.read_parquet(tmp_path / "plain.parquet", require_integrity=False).equals(df)
    with pytest.raises(FileNotFoundError):  # absent is not corrupt
        io.read_parquet(tmp_path / "absent.parquet")


def test_a_corrupt_result_is_never_a_missing_value_in_the_ledger(tmp_path):
    # ArrowInvalid is a ValueError, which the ledger reads as "missing": CorruptResult is neither
    from attnrepro.report.ledger import verdicts
    from attnrepro.report.products.results import Loader

    path = io.write_parquet(pd.DataFrame({"mean_ratio": [0.5]}),
                            tmp_path / "data/001/scale_table/default.parquet", {})
    claim = verdicts.Claim(id="c", article="001", section="s", claim="a ratio", published="0.5", cls="exact",
                         source={"experiment": "scale_table", "column": "mean_ratio"})
    assert verdicts.evaluate([claim], Loader([path]))["verdict"].tolist() == ["reproduced"]
    path.write_bytes(path.read_bytes()[:100])
    assert not issubclass(io.CorruptResult, (ValueError, KeyError, OSError))
    with pytest.raises(io.CorruptResult, match="default.parquet"):
        verdicts.evaluate([claim], Loader([path]))


def test_a_result_written_with_other_parameters_is_stale(tmp_path):
    planned = {"steps": 400, "seed": 0, "task": "copy"}
    path = io.write_parquet(pd.DataFrame({"a": [1]}), tmp_path / "data/001/train/copy-L6-seed0.parquet",
                            {"params": {**planned, "steps": 2500}})
    with pytest.raises(io.StaleResult) as caught:
        io.check_params(path, planned)
    message = str(caught.value)
    assert message.startswith(f"{path}: written with steps = 2500, but this run's config plans steps = 400")
    assert f"`snakemake --cores N --forcerun {path}`" in message
    io.check_params(path, {**planned, "steps": 2500})
    with pytest.raises(io.StaleResult, match="written with seed = \\(absent\\)"):
        io.check_params(io.write_parquet(pd.DataFrame({"a": [1]}), tmp_path / "x.parquet",
                                         {"params": {"steps": 400, "task": "copy"}}), planned)
    # check_inputs: only the cases the plan names are compared
    io.check_inputs([path], {"train": {"other-case": planned}})
    io.check_inputs([path], {"attention_map": {"default": planned}})  # no plan for train at all
    with pytest.raises(io.StaleResult):
        io.check_inputs([path], {"train": {"copy-L6-seed0": planned}})
    assert not issubclass(io.StaleResult, (ValueError, KeyError, OSError))


def test_an_experiment_job_stops_on_a_stale_upstream_file_before_running(tmp_path):
    """attention_map reads a training: a training of other parameters than the run plans (an orphan
    of an earlier run) stops the job with status 1, naming the file and the key; nothing is written."""
    import json
    import os
    import subprocess
    import sys

    from conftest import REPO

    planned = {"steps": 400, "seed": 0, "task": "copy", "L": 6}
    training = tmp_path / "results/data/001/train/copy-L6-seed0.parquet"
    io.write_parquet(pd.DataFrame({"a": [1]}), training, {"params": {**planned, "steps": 2500}})
    out = tmp_path / "results/data/001/attention_map/default.parquet"
    env = {k: v for k, v in os.environ.items() if k != "ATTNREPRO_RUN"}
    env["PYTHONPATH"] = str(REPO / "src")
    proc = subprocess.run(
        [sys.executable, "-m", "attnrepro.jobs.experiment", "attention_map", "--article", "001",
         "--section", "s",
         "--params-json", "{}", "--out", str(out), "--input", f"main={training}",
         "--input", f"parameters={training}", "--expected-params",
         json.dumps({"train": {"copy-L6-seed0": planned}})],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert (f"{training}: written with steps = 2500, but this run's config plans steps = 400"
            in proc.stderr), proc.stderr[-2000:]
    assert not out.exists() and not (out.parent.is_dir() and any(out.parent.iterdir()))


# --- a job's tables as one set; temporaries of a killed attempt -----------------------------------

def test_a_jobs_tables_land_as_one_set_main_last(tmp_path, monkeypatch):
    import os

    paths = {t: tmp_path / f"case{'' if t == 'main' else '.' + t}.parquet"
             for t in ("main", "curve", "parameters")}
    renamed = []
    real_replace = os.replace
    monkeypatch.setattr(io.os, "replace",
                        lambda a, b: (renamed.append(os.path.basename(b)), real_replace(a, b)))
    outputs = io.OutputSet(paths)
    with outputs:
        for name in paths:
            outputs.stage(name, pd.DataFrame({"v": [name]}), {"table": name})
            assert not any(p.exists() for p in paths.values())  # nothing visible before the commit
        outputs.commit()
    assert renamed == ["case.curve.parquet", "case.parameters.parquet", "case.parquet"]
    assert [io.read_parquet(paths[t])["v"][0] for t in paths] == list(paths)
    assert [io.read_provenance(paths[t]) for t in paths] == [{"table": t} for t in paths]
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_failure_between_two_table_writes_leaves_no_complete_looking_set(tmp_path, monkeypatch):
    import os

    paths = {t: tmp_path / f"case{'' if t == 'main' else '.' + t}.parquet" for t in ("main", "curve")}
    for name, path in paths.items():  # an earlier, complete set
        io.write_parquet(pd.DataFrame({"v": ["old"]}), path, {})
    with pytest.raises(KeyboardInterrupt), io.OutputSet(paths) as outputs:  # killed while staging
        outputs.stage("main", pd.DataFrame({"v": ["new"]}), {})
        raise KeyboardInterrupt
    assert [io.read_parquet(p)["v"][0] for p in paths.values()] == ["old", "old"]
    assert not list(tmp_path.glob(".*.tmp"))
    real_replace = os.replace

    def second_rename_fails(a, b):
        if b == str(paths["main"]) or Path(b) == paths["main"]:
            raise KeyboardInterrupt  # killed between the renames: curve is new, main not yet
        return real_replace(a, b)

    monkeypatch.setattr(io.os, "replace", second_rename_fails)
    with pytest.raises(KeyboardInterrupt), io.OutputSet(paths) as outputs:
        for name in paths:
            outputs.stage(name, pd.DataFrame({"v": ["new"]}), {})
        outputs.commit()
    # no main table: the set does not look complete (old main with new curve)
    assert not paths["main"].exists()
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_job_removes_the_temporaries_of_a_killed_earlier_attempt(tmp_path):
    own = [tmp_path / "eps-0.0001.parquet", tmp_path / "eps-0.0001.curve.parquet"]
    left = [tmp_path / ".eps-0.0001.parquet.k2j3.tmp", tmp_path / ".eps-0.0001.curve.parquet.x9.tmp"]
    other = [tmp_path / ".eps-0.001.parquet.k2j3.tmp", tmp_path / ".eps-0.0001.parquet.x9.tmp.keep"]
    for path in left + other:
        path.write_bytes(b"PAR1 half a file")
    assert sorted(io.remove_leftovers(own)) == sorted(map(str, left))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in other)


def test_each_staged_table_reaches_the_fault_hook_by_its_name(tmp_path, monkeypatch, caplog):
    from attnrepro.run import ownership

    monkeypatch.setenv(ownership.FAULT, "pause-after-table:curve")
    monkeypatch.setattr(ownership, "PAUSE_SECONDS", 0)

    def kill(pid, sig):  # a pause taken for a kill fails the test, instead of killing pytest
        raise AssertionError(f"the fault hook killed pid {pid} instead of pausing")

    monkeypatch.setattr(ownership.os, "kill", kill)
    paths = {t: tmp_path / f"case.{t}.parquet" for t in ("main", "curve")}
    with io.OutputSet(paths) as outputs:
        outputs.stage("main", pd.DataFrame({"v": [1]}), {})
        assert caplog.messages == []
        outputs.stage("curve", pd.DataFrame({"v": [2]}), {})
    assert caplog.messages == ["ATTNREPRO_FAULT=pause-after-table:curve: pausing 0 s after writing the "
                               "temporary of table curve"]


def test_a_discarded_set_leaves_no_temporary_and_commits_nothing(tmp_path):
    import re

    from attnrepro.run import ownership

    paths = {"main": tmp_path / "case.parquet", "curve": tmp_path / "case.curve.parquet"}
    with io.OutputSet(paths) as outputs:
        staged = [outputs.stage(name, pd.DataFrame({"v": [1]}), {}) for name in paths]
        assert [(tmp.parent, re.fullmatch(r"\.(case\.(curve\.)?parquet)\.\w{8}\.tmp", tmp.name)[1])
                for tmp in staged] == [(tmp_path, "case.parquet"), (tmp_path, "case.curve.parquet")]
        assert all(str(tmp) in ownership._TEMPORARIES for tmp in staged)  # the watchdog would remove them
        outputs.discard()
        assert not list(tmp_path.iterdir())
        assert not any(str(tmp) in ownership._TEMPORARIES for tmp in staged)
        assert outputs.commit() == [] and not list(tmp_path.iterdir())
    assert not list(tmp_path.iterdir())


def test_the_temporaries_of_a_finished_set_are_no_longer_the_watchdogs(tmp_path):
    from attnrepro.run import ownership

    outputs = io.OutputSet({"main": tmp_path / "case.parquet"})
    tmp = outputs.stage("main", pd.DataFrame({"v": [1]}), {})
    outputs.commit()
    assert str(tmp) not in ownership._TEMPORARIES and (tmp_path / "case.parquet").exists()


def test_leftovers_of_an_absent_folder_or_removed_meanwhile_are_no_error(tmp_path, monkeypatch):
    assert io.remove_leftovers([tmp_path / "absent" / "x.parquet"]) == []
    left = [tmp_path / ".x.parquet.a1.tmp", tmp_path / ".x.parquet.b2.tmp"]
    for path in left:
        path.write_bytes(b"PAR1 half a file")
    real_glob = Path.glob

    def listed_then_removed(self, pattern):
        found = list(real_glob(self, pattern))
        found[0].unlink()  # another job's cleanup, between the listing and the removal
        return found

    monkeypatch.setattr(io.Path, "glob", listed_then_removed)
    assert io.remove_leftovers([tmp_path / "x.parquet"]) == list(map(str, left))
    assert not list(tmp_path.iterdir())


def test_stale_parameters_are_named_with_both_values(tmp_path):
    """check_params: what a file says it was computed with, against what the run plans."""
    path = tmp_path / "x.parquet"
    planned = {"seed": 0, "data": Path("data/x.csv"), "shape": (2, 3)}
    io.write_parquet(pd.DataFrame({"a": [1]}), path,
                     {"params": {"seed": 0, "data": "data/x.csv", "shape": [2, 3]}})
    io.check_params(path, planned)  # planned as the file records it: a path as text, a tuple a list

    def stale(provenance, expected):
        """(key, 'found, but planned') of the StaleResult of a file written with ``provenance``."""
        io.write_parquet(pd.DataFrame({"a": [1]}), path, provenance)
        with pytest.raises(io.StaleResult) as caught:
            io.check_params(path, expected)
        assert caught.value.path == str(path)
        message = str(caught.value)
        assert message.startswith(f"{path}: written with ")
        return caught.value.key, message.split(": written with ")[1].split(" (an earlier")[0]

    plans = "but this run's config plans"
    assert stale({"params": {"seed": 0}}, {"seed": 0, "extra": None}) == (
        "extra", f"extra = (absent), {plans} extra = null")
    assert stale({"params": {"seed": 0, "extra": None}}, {"seed": 0}) == (
        "extra", f"extra = null, {plans} extra = (absent)")
    assert stale({"params": {"opt": {"b": 1, "a": 1}}}, {"opt": {"b": 1, "a": 2}}) == (
        "opt", f'opt = {{"a": 1, "b": 1}}, {plans} opt = {{"a": 2, "b": 1}}')
    assert stale({"params": 5}, {"seed": 0}) == ("params", f'params = 5, {plans} params = {{"seed": 0}}')
    assert stale({}, {"seed": 0}) == ("params", f'params = (absent), {plans} params = {{"seed": 0}}')


def test_inconsistent_inputs_name_both_files_and_sorted_values():
    error = io.InconsistentInputs("a.parquet", "opt", {"b": 1, "a": 1}, "b.parquet", {"b": 2, "a": 1})
    assert error.path == "a.parquet" and error.key == "opt"
    assert str(error).startswith('a.parquet: computed with opt = {"a": 1, "b": 1}, but b.parquet with '
                                 'opt = {"a": 1, "b": 2}: they cannot be combined')


def test_a_result_reads_back_exactly_as_written_without_its_index(tmp_path):
    import numpy as np

    df = pd.DataFrame({"n": pd.array([1, None, 3], dtype="Int64"), "x": [-0.0, np.nan, 1.5],
                       "task": ["copy", "sort", "copy"], "cells": [[1, 2], [3], []],
                       "kind": pd.Categorical(["a", "b", "a"]), "ok": [True, False, True],
                       "at": pd.to_datetime(["2020-01-01", "2021-01-01", "2022-01-01"]).tz_localize("UTC")})
    kept = df[df["ok"]]  # index [0, 2]: a result is its columns, its index is not stored
    path = io.write_parquet(kept, tmp_path / "x.parquet", {"params": {"data": Path("data/x.csv")}})
    back = io.read_parquet(path)
    pd.testing.assert_frame_equal(back, kept.reset_index(drop=True))
    assert io.read_provenance(path) == {"params": {"data": "data/x.csv"}}  # a path as its text


def test_a_results_bytes_do_not_depend_on_the_order_of_its_provenance(tmp_path):
    df = pd.DataFrame({"a": [1, 2]})
    first = io.write_parquet(df, tmp_path / "1.parquet", {"params": {"seed": 0, "steps": 5}, "id": "001"})
    second = io.write_parquet(df, tmp_path / "2.parquet", {"id": "001", "params": {"steps": 5, "seed": 0}})
    assert first.read_bytes() == second.read_bytes()


def test_the_content_hash_is_pinned(tmp_path):
    """content_hash is recorded in every file and in tests/golden/tables.csv (report/golden.py): the
    same table must hash the same across versions, and any change of name, type, value or row order
    must change it; the index is not content."""
    import numpy as np

    df = pd.DataFrame({"step": np.arange(3), "loss": [0.5, -0.0, np.nan], "task": ["copy", "sort", "copy"],
                       "cells": [[1, 2], [3], []]})
    assert io.content_hash(df) == PINNED_HASH
    assert io.content_hash(df.set_axis([7, 8, 9])) == PINNED_HASH
    changed = {"a name": df.rename(columns={"loss": "lost"}), "a type": df.astype({"step": "int32"}),
               "a value": df.assign(loss=[0.5, 0.25, np.nan]), "a cell": df.assign(cells=[[1, 2], [3], [4]]),
               "the row order": df.iloc[[1, 0, 2]].reset_index(drop=True),
               "a text": df.assign(task=["copy", "sort", "sort"])}
    for what, other in changed.items():
        assert io.content_hash(other) != PINNED_HASH, what


PINNED_HASH = "f35eb063b95652ce58b969e36430dcc923738a4abcb2bda538ad2663f272e308"


def _with_metadata(tmp_path, name, **meta):
    """A Parquet file of one column whose schema metadata is ``meta`` (bytes values), pandas' kept."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(pd.DataFrame({"a": [1]}), preserve_index=False)
    keys = {"provenance": io.KEY, "integrity": io.INTEGRITY}
    table = table.replace_schema_metadata({**table.schema.metadata, **{keys[k]: v for k, v in meta.items()}})
    pq.write_table(table, tmp_path / name)
    return tmp_path / name


def test_a_file_without_an_integrity_record_is_refused_unless_records_are_optional(tmp_path):
    import json

    plain = _with_metadata(tmp_path, "plain.parquet")
    recorded = {"numerics": {"canonical": True}}
    old = _with_metadata(tmp_path, "old.parquet", provenance=json.dumps(recorded).encode())
    for read in (io.read_parquet, io.read_provenance):
        for path in (plain, old):
            _refused(read, path, "no integrity record: not written by attnrepro.run.io, "
                                 "or before it recorded one")
    assert io.read_provenance(plain, require_integrity=False) == {}
    assert io.read_provenance(old, require_integrity=False) == recorded
    assert io.read_parquet(old, require_integrity=False)["a"].tolist() == [1]


def test_an_unreadable_record_or_provenance_is_refused_naming_it(tmp_path):
    import hashlib
    import json

    provenance = json.dumps({"params": {}}).encode()
    digest = json.dumps({"provenance_sha256": hashlib.sha256(provenance).hexdigest()}).encode()
    cases = {
        "not JSON": dict(provenance=provenance, integrity=b"{not json"),
        "no digest": dict(provenance=provenance, integrity=b"{}"),
        "not a record": dict(provenance=provenance, integrity=b"[1, 2]"),
        "no provenance": dict(integrity=digest),
    }
    problems = {"not JSON": "unreadable integrity record: Expecting property name enclosed in double quotes: "
                            "line 1 column 2 (char 1)",
                "no digest": "unreadable integrity record: 'provenance_sha256'",
                "not a record": "unreadable integrity record: "
                                "list indices must be integers or slices, not str",
                "no provenance": "unreadable integrity record: b'attnrepro'"}
    for name, meta in cases.items():
        path = _with_metadata(tmp_path, f"{name}.parquet", **meta)
        for read in (io.read_parquet, io.read_provenance):
            _refused(read, path, problems[name])
    garbage = b"not json"
    record = json.dumps({"provenance_sha256": hashlib.sha256(garbage).hexdigest()}).encode()
    path = _with_metadata(tmp_path, "garbage.parquet", provenance=garbage, integrity=record)
    _refused(io.read_provenance, path, "unreadable provenance: Expecting value: line 1 column 1 (char 0)")
    empty = tmp_path / "empty.parquet"
    empty.write_bytes(b"")
    for read in (io.read_parquet, io.read_provenance):
        _refused(read, empty, "unreadable: ArrowInvalid: Parquet file size is 0 bytes")


@pytest.mark.parametrize("provenance, problem", [
    (b"[" * 100_000 + b"]" * 100_000, "unreadable provenance: its provenance nests lists or objects more "
                                      "than 64 deep"),
    (b'{"a": ' * 65 + b"1" + b"}" * 65, "unreadable provenance: its provenance nests lists or objects more "
                                        "than 64 deep"),
    (b"[1, 2]", "unreadable provenance: a JSON list, not an object"),
    (b'"text"', "unreadable provenance: a JSON str, not an object")])
def test_a_provenance_too_deep_or_not_an_object_is_a_corrupt_result(tmp_path, provenance, problem):
    """Someone else's file (an archive's): refused in one sentence, by both readers, never a
    RecursionError; 64 levels are read."""
    import hashlib
    import json

    record = json.dumps({"provenance_sha256": hashlib.sha256(provenance).hexdigest()}).encode()
    path = _with_metadata(tmp_path, "deep.parquet", provenance=provenance, integrity=record)
    for read in (io.read_parquet, io.read_provenance):
        _refused(read, path, problem)
    deepest = b'{"a": ' * 63 + b"{}" + b"}" * 63
    record = json.dumps({"provenance_sha256": hashlib.sha256(deepest).hexdigest()}).encode()
    path = _with_metadata(tmp_path, "deepest.parquet", provenance=deepest, integrity=record)
    assert io.bounded.depth(io.read_provenance(path, require_integrity=False)) == 64


def test_an_integrity_record_nested_too_deep_is_a_corrupt_result(tmp_path):
    path = _with_metadata(tmp_path, "deep.parquet", provenance=b"{}", integrity=b"[" * 10**5 + b"]" * 10**5)
    for read in (io.read_parquet, io.read_provenance):
        _refused(read, path, "unreadable integrity record: its integrity record nests lists or objects more "
                             "than 64 deep")
