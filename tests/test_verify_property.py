"""Random corruptions of a small honest archive: verify ends in 0, 1 or 2, never in a traceback.

The archive is written by the honest tools (tests/hostile.py): a ledger, a table, a Parquet file
with its provenance, the config, the lock, the environment, the crate and the manifest. A case
corrupts it at one of three depths: the compressed bytes, the tar's bytes (then compressed again),
or one member's content, re-signed so that its crate and manifest agree (a forgery), or the crate
or manifest itself. Every case runs ``verify --results`` in this process; exit 2 is one line.
The examples are derandomized (the same on every machine); ATTNREPRO_PROPERTY_EXAMPLES sets how many.
"""

import functools
import gzip
import hashlib
import io
import json
import os
import tarfile

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hostile
from attnrepro.archive import verify
from attnrepro.run import io as results_io

EXAMPLES = int(os.environ.get("ATTNREPRO_PROPERTY_EXAMPLES", "60"))
PARQUET = "results/data/001/scale_table/d_k-8_scaled-true.parquet"
TABLE = "results/tables/scale_table.csv"
META = ("ro-crate-metadata.json", "MANIFEST.sha256")
# what a hostile user writes into a member: escapes, NUL, numbers JSON and YAML hold badly, deep nesting
PAYLOADS = [b"\0", b"\x1b[2K\x1b[1A", b"1e999", b'"@id": ["a", "b"]', b"[" * 3000, b"{" * 3000,
            b'"contentSize": -1', b"\xff\xfe", b"- " * 2000, b"&a [*a, *a]", b"\n" * 1000, b","]


@functools.lru_cache(maxsize=1)
def _honest(folder):
    """(the honest archive's members {name: bytes}, in order, its top folder); built once."""
    from pathlib import Path

    parquet = Path(folder) / "d.parquet"
    frame = pd.DataFrame({"d_k": [8, 8], "scaled": [True, True], "std": [1.0, float("nan")]})
    results_io.write_parquet(frame, parquet, {"experiment": "scale_table", "numerics": {"canonical": True}})
    archive = hostile.honest(folder, extra={PARQUET: parquet.read_bytes(),
                                            TABLE: b"d_k,std\n8,1.0\n"})
    with tarfile.open(archive) as tar:
        members = {m.name: (tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()}
    return members, archive.name.removesuffix(".tar.gz")


def _tar(members):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def _resigned(members, top, name, data):
    """``members`` with ``name`` holding ``data``, its digest and size in the crate and manifest
    updated as an honest tool would (a crate or manifest that cannot be parsed is left as it is)."""
    members = {**members, f"{top}/{name}": data}
    digest = hashlib.sha256(data).hexdigest()
    crate = json.loads(members[f"{top}/{META[0]}"])
    for entity in crate["@graph"]:
        if entity.get("@id") == name:
            entity.update(sha256=digest, contentSize=str(len(data)))
    members[f"{top}/{META[0]}"] = json.dumps(crate).encode()
    lines = members[f"{top}/{META[1]}"].decode().splitlines()
    members[f"{top}/{META[1]}"] = "".join(
        f"{digest}  {name}\n" if line.endswith(f"  {name}") else line + "\n" for line in lines).encode()
    return members


class Case(bytes):
    """A corrupted archive's bytes, shown in a failure by what was done to them, not whole."""

    def __new__(cls, data, edits):
        case = super().__new__(cls, data)
        case.edits = edits
        return case

    def __repr__(self):
        return f"Case({'; '.join(self.edits)})"


def _edited(data, draw, edits, where):
    """``data`` cut, replaced, or with a payload (or random bytes) put in at a drawn place; what
    was done is appended to ``edits``."""
    kind = draw(st.sampled_from(["insert", "replace", "cut", "random"]))
    at = draw(st.integers(0, len(data)))
    payload = draw(st.one_of(st.sampled_from(PAYLOADS), st.binary(min_size=1, max_size=64)))
    edits.append(f"{where}: {kind} at {at} of {len(data)}" + ("" if kind == "cut" else f": {payload[:40]!r}"))
    if kind == "insert":
        return data[:at] + payload + data[at:]
    if kind == "replace":
        return data[:at] + payload + data[at + len(payload):]
    if kind == "cut":
        return data[:at]
    return payload


@st.composite
def corrupted(draw, folder):
    """The bytes of a corrupted archive (the module's docstring)."""
    members, top = _honest(folder)
    depth = draw(st.sampled_from(["compressed", "tar", "member", "meta"]))
    edits = []
    if depth in ("member", "meta"):
        files = sorted(n for n, d in members.items() if d is not None
                       and (n.split("/", 1)[1] in META) == (depth == "meta"))
        name = draw(st.sampled_from(files))
        data = _edited(members[name], draw, edits, name)
        if depth == "member":
            members = _resigned(members, top, name.split("/", 1)[1], data)
        else:
            members = {**members, name: data}
        return Case(gzip.compress(_tar(members), mtime=0), edits)
    raw = _tar(members)
    if depth == "tar":
        return Case(gzip.compress(_edited(raw, draw, edits, "the tar"), mtime=0), edits)
    return Case(_edited(gzip.compress(raw, mtime=0), draw, edits, "the .tar.gz"), edits)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return str(tmp_path_factory.mktemp("honest"))


def test_the_honest_archive_verifies_against_its_own_results(folder, tmp_path, capsys):
    members, top = _honest(folder)
    archive = tmp_path / "a.tar.gz"
    archive.write_bytes(gzip.compress(_tar(members), mtime=0))
    assert verify.main([str(archive), "--results", f"{folder}/run"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "verdict: REPRODUCED: all 3 compared files are equal"


@settings(max_examples=EXAMPLES, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(data=st.data())
def test_a_corrupted_archive_ends_in_0_1_or_2_and_one_line_when_it_cannot_verify(folder, tmp_path_factory,
                                                                                  capsys, data):
    archive = tmp_path_factory.mktemp("case") / "a.tar.gz"
    archive.write_bytes(data.draw(corrupted(folder)))
    status = verify.main([str(archive), "--results", f"{folder}/run"])
    out, err = capsys.readouterr()
    assert status in (0, 1, 2), (status, out, err)
    if status == 2:
        (line,) = err.splitlines()
        assert line.startswith("verify: "), err
    else:
        assert out.splitlines()[-1].startswith("verdict: "), out
