"""Parquet with provenance, written atomically."""

import pandas as pd
import pytest

from attnrepro import io, provenance


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

    def explode(table, where):
        where.write(b"PAR1 half a file")
        raise KeyboardInterrupt  # as if the job were interrupted mid-write

    monkeypatch.setattr(io.pq, "write_table", explode)
    with pytest.raises(KeyboardInterrupt):
        io.write_parquet(pd.DataFrame({"a": [1]}), target, {})
    assert list(tmp_path.iterdir()) == []


def test_existing_file_survives_a_failed_rewrite(tmp_path, monkeypatch):
    target = io.write_parquet(pd.DataFrame({"a": [1]}), tmp_path / "out.parquet", {})
    monkeypatch.setattr(io.pq, "write_table", lambda *a: (_ for _ in ()).throw(OSError("disk full")))
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
