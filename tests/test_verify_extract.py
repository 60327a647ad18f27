"""The bounds of a stranger's archive (:mod:`attnrepro.archive.verify_extract`), one function at a
time and in this process: the exact values and the sentences a user reads. Tar members are built in
memory, Parquet files are a few rows, and the local disk is what ``shutil.disk_usage`` and
``os.stat`` are made to say. tests/test_hostile.py puts the same guards through the command."""

import errno
import gzip
import io
import json
import os
import struct
import tarfile
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from attnrepro.archive import verify_extract as vx, verify_limits
from attnrepro.run import bounded
from attnrepro.archive.verify_extract import CRATE, Limits, NoRoom, Refused
from attnrepro.run.bounded import GiB, KiB, MiB

MARGIN = 64 * MiB  # check_room's margin
ROOM_HINT = "free space, or set TMPDIR or --workdir elsewhere"


def file(name, size=0, mode=0o644):
    info = tarfile.TarInfo(name)
    info.size, info.mode = size, mode
    return info


def folder(name, size=0):
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.size = tarfile.DIRTYPE, 0o755, size
    return info


def special(name, kind):
    info = tarfile.TarInfo(name)
    info.type = kind
    return info


class Headers:
    """A tar as :func:`scan` reads it: its members' headers, one by one."""

    def __init__(self, members):
        self._members = iter(members)

    def next(self):
        return next(self._members, None)


def tar_bytes(entries):
    """An uncompressed tar of ``entries`` ({name: bytes, None for a folder, or (TarInfo, bytes)})."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in entries.items():
            if data is None:
                tar.addfile(folder(name))
            elif isinstance(data, tuple):
                tar.addfile(data[0], io.BytesIO(data[1]))
            else:
                tar.addfile(file(name, len(data)), io.BytesIO(data))
    return raw.getvalue()


def refusal(call, *args, error=Refused, **kwargs):
    """The sentence of the ``error`` that ``call(*args, **kwargs)`` raises."""
    with pytest.raises(error) as raised:
        call(*args, **kwargs)
    return str(raised.value)


# ---- sizes ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, size", [
    ("4G", 4 * GiB), ("512M", 512 * MiB), ("3GiB", 3 * GiB), ("2mb", 2 * MiB), ("1.5K", 1536),
    ("1000", 1000), ("1", 1), (" 7k ", 7 * KiB), ("1T", 1 << 40), ("10B", 10), (12, 12)])
def test_a_size_is_read_as_people_write_it(text, size):
    assert verify_limits.parse_size(text) == size


@pytest.mark.parametrize("text, why", [
    ("", "is not a size (4G, 512M, 3GiB, or bytes)"), ("G", "is not a size (4G, 512M, 3GiB, or bytes)"),
    ("B", "is not a size (4G, 512M, 3GiB, or bytes)"), ("four", "is not a size (4G, 512M, 3GiB, or bytes)"),
    ("1X", "is not a size (4G, 512M, 3GiB, or bytes)"), ("0", "is not a positive size"),
    ("-1G", "is not a positive size"), ("nan", "is not a positive size"), ("inf", "is not a finite size"),
    ("1e400", "is not a finite size"), ("1e308G", "is not a finite size")])
def test_a_size_that_is_none_says_why(text, why):
    assert refusal(verify_limits.parse_size, text, error=ValueError) == f"{text!r} {why}"


@pytest.mark.parametrize("size, text", [
    (0, "0 bytes"), (1023, "1023 bytes"), (KiB, "1.0 KiB"), (1536, "1.5 KiB"), (MiB - 1, "1024.0 KiB"),
    (MiB, "1.0 MiB"), (12 * MiB, "12.0 MiB"), (GiB - 1, "1024.0 MiB"), (GiB, "1.0 GiB"),
    (3 * GiB // 2, "1.5 GiB"), (5 << 40, "5120.0 GiB")])
def test_a_byte_count_is_shown_in_the_largest_unit_it_reaches(size, text):
    assert bounded.shown(size) == text


# ---- the headers ----------------------------------------------------------------------------

@pytest.mark.parametrize("name, problem", [
    ("top/results/a.csv", None), ("a", None), ("ab", None), ("ab:c", None), ("top/..x", None),
    ("/etc/passwd", "has an absolute name"), ("\\evil", "has an absolute name"),
    ("C:", "has an absolute name"), ("C:evil", "has an absolute name"), ("c:/x", "has an absolute name"),
    ("..", "climbs out of the archive's folder (..)"),
    ("top/../../evil", "climbs out of the archive's folder (..)"),
    ("/".join("a" * 4), None), ("/".join("a" * 5), "nests 5 folders deep, more than 4"),
    ("a" * 30, None), ("a" * 31, "has a name of 31 characters, more than 30"),
    ("top/" + "b" * 255, "has a name of 259 characters, more than 30")])
def test_a_name_that_cannot_be_extracted_as_it_is_says_why(name, problem):
    assert vx._name_problem(name, Limits(name_parts=4, name_chars=30)) == problem


@pytest.mark.parametrize("part, problem", [
    ("b" * 255, None), ("é" * 127, None),
    ("b" * 256, "has a part of its name longer than 255 bytes (the file system's limit)"),
    ("é" * 128, "has a part of its name longer than 255 bytes (the file system's limit)")])
def test_a_part_of_a_name_may_take_the_file_systems_255_bytes(part, problem):
    assert vx._name_problem(f"top/{part}/x", Limits()) == problem


def pax_tar(*headers, name="top/results/a", data=b"x", end=True):
    """An uncompressed tar whose member ``name`` follows ``headers`` ((tar type, bytes declared, bytes
    written)) written by hand: a header may declare more than follows it. ``end``: the tar's
    end-of-archive blocks after it."""
    blocks = []
    for kind, declared, body in headers:
        info = tarfile.TarInfo("././@PaxHeader")
        info.type, info.size = kind, declared
        blocks.append(info.tobuf(format=tarfile.USTAR_FORMAT) + body + bytes(-len(body) % 512))
    member = file(name, len(data)).tobuf(format=tarfile.USTAR_FORMAT) + data + bytes(-len(data) % 512)
    return b"".join(blocks) + member + bytes(1024 if end else 0)


def scanned(raw, limits=Limits()):
    with tarfile.open(fileobj=io.BytesIO(raw), tarinfo=vx.guarded(limits)) as tar:
        return vx.scan(tar, limits)


def pax(records):
    """A PAX header's body holding ``records`` ({key: value})."""
    out = b""
    for key, value in records.items():
        line = f" {key}={value}\n"
        size = len(line) + len(str(len(line)))
        size += len(str(size)) - len(str(len(line)))
        out += f"{size}{line}".encode()
    return out


def test_an_extended_header_may_declare_its_cap_not_a_byte_more_before_it_is_read():
    body = pax({"path": "top/results/long-name"})
    limits = Limits(extended_bytes=len(body))
    members, _ = scanned(pax_tar((tarfile.XHDTYPE, len(body), body)), limits)
    assert [m.name for m in members] == ["top/results/long-name"]
    small = Limits(extended_bytes=len(body) - 1)
    assert refusal(scanned, pax_tar((tarfile.XHDTYPE, len(body), body)), small) == (
        f"a PAX extended header at byte 0 of the tar declares {len(body)} bytes, more than "
        f"{len(body) - 1} bytes")
    # 2 GiB declared, 512 bytes written: refused before tarfile reads (it would read all it declares)
    assert refusal(scanned, pax_tar((tarfile.XHDTYPE, 2 * GiB, bytes(512)))) == (
        "a PAX extended header at byte 0 of the tar declares 2.0 GiB, more than 64.0 KiB")
    assert refusal(scanned, pax_tar((tarfile.GNUTYPE_LONGNAME, 3 * MiB, b"x" * 512))) == (
        "a GNU long name header at byte 0 of the tar declares 3.0 MiB, more than 64.0 KiB")
    assert refusal(scanned, pax_tar((tarfile.GNUTYPE_LONGLINK, 65 * KiB, b"x" * 512))) == (
        "a GNU long name header at byte 0 of the tar declares 65.0 KiB, more than 64.0 KiB")


def test_extended_headers_may_chain_up_to_their_cap_before_each_member():
    body = pax({"comment": "x"})
    headers = [(tarfile.XHDTYPE, len(body), body)] * 4
    members, _ = scanned(pax_tar(*headers, end=False) + pax_tar(*headers, name="top/results/b"))
    assert [m.name for m in members] == ["top/results/a", "top/results/b"]  # counted anew per member
    assert refusal(scanned, pax_tar(*headers * 750)) == (
        "more than 4 extended headers in a row (at byte 4096 of the tar)")  # the fifth; no RecursionError


def test_extended_headers_may_take_their_total_not_a_byte_more():
    body = pax({"comment": "x" * 100})
    one = pax_tar((tarfile.XHDTYPE, len(body), body), end=False)
    assert len(scanned(one * 3 + bytes(1024), Limits(extended_total=3 * len(body)))[0]) == 3
    assert refusal(scanned, one * 3 + bytes(1024), Limits(extended_total=3 * len(body) - 1)) == (
        f"its extended headers take more than {3 * len(body) - 1} bytes (at byte {2 * len(one)} of the tar)")


def test_a_global_pax_header_or_a_sparse_file_is_refused():
    body = pax({"comment": "x"})
    assert refusal(scanned, pax_tar((tarfile.XGLTYPE, len(body), body))) == (
        "a global PAX header at byte 0 of the tar: an archive of a run has none")
    sparse = file("top/results/s", 10)
    sparse.type = tarfile.GNUTYPE_SPARSE
    raw = sparse.tobuf(format=tarfile.GNU_FORMAT) + bytes(1536)
    assert refusal(scanned, raw) == (
        "member 'top/results/s' is a sparse file: an archive of a run holds only plain files")


def test_a_member_declaring_a_negative_size_is_refused():
    members = [folder("top"), file("top/a", -5)]
    assert refusal(vx.scan, Headers(members), Limits()) == "member 'top/a' declares a negative size"


def test_scan_returns_every_member_and_the_bytes_of_all():
    members = [folder("top"), folder("top/results"), file("top/results/a", 10), file("top/b", 5)]
    assert vx.scan(Headers(members), Limits()) == (members, 15)
    assert vx.scan(Headers([]), Limits()) == ([], 0)


@pytest.mark.parametrize("name, problem", [
    ("/etc/passwd", "has an absolute name"), ("top/../../evil", "climbs out of the archive's folder (..)")])
def test_a_member_is_refused_by_its_name_before_its_kind(name, problem):
    members = [folder("top"), special(name, tarfile.SYMTYPE)]
    assert refusal(vx.scan, Headers(members), Limits()) == f"member {name!r} {problem}"


@pytest.mark.parametrize("kind, what", [
    (tarfile.SYMTYPE, "a symbolic link"), (tarfile.LNKTYPE, "a hard link"),
    (tarfile.CHRTYPE, "a character device"), (tarfile.BLKTYPE, "a block device"),
    (tarfile.FIFOTYPE, "a fifo"), (b"9", "of tar type b'9'")])
def test_a_member_neither_file_nor_folder_is_refused_by_its_kind(kind, what):
    members = [folder("top"), file("top/a"), special("top/x", kind)]
    assert refusal(vx.scan, Headers(members), Limits()) == (
        f"member 'top/x' is {what}: an archive of a run holds only files and folders")


def test_the_members_may_number_the_limit_not_one_more():
    members = [folder("top"), file("top/a"), file("top/b")]
    assert vx.scan(Headers(members), Limits(members=3)) == (members, 0)
    assert refusal(vx.scan, Headers(members), Limits(members=2)) == "more than 2 members"


def test_the_files_may_take_the_ceiling_not_a_byte_more():
    members = [folder("top"), file("top/a", 3 * MiB), file("top/b", MiB)]
    assert vx.scan(Headers(members), Limits(total_bytes=4 * MiB)) == (members, 4 * MiB)
    assert refusal(vx.scan, Headers(members), Limits(total_bytes=4 * MiB - 1)) == (
        "its files take more than 4.0 MiB once extracted (at member 'top/b', 1.0 MiB); --max-size raises "
        "the ceiling")


def test_the_top_folder_is_the_one_folder_holding_results():
    assert vx.top_folder([folder("top"), folder("top/results"), file("top/results/a")]) == "top"
    assert vx.top_folder([file("run/results/a.parquet"), file("run/config.yaml")]) == "run"


@pytest.mark.parametrize("names, found", [
    ([], "nothing"), (["."], "nothing"), (["top", "top/data/a"], "top"), (["results/a"], "results"),
    (["a/results/x", "b/y"], "a, b"), (["d/results/x", "c/y", "b/z", "a/w"], "a, b, c")])
def test_anything_else_is_not_an_attnrepro_archive(names, found):
    assert refusal(vx.top_folder, [file(n) for n in names]) == (
        f"not an attnrepro archive (one folder holding results/; it holds {found})")


# ---- the sizes its crate declares -----------------------------------------------------------

GRAPH = [{"@id": "./", "@type": "Dataset"}, {"@id": "results/a.csv", "@type": "File", "contentSize": "12"},
         {"@id": "results/b.csv", "contentSize": 7}, {"@id": "results/c.csv", "contentSize": None},
         {"@id": 5, "contentSize": "3"}, {"contentSize": "4"}, "a string", ["a list"]]
SIZES = {"top/results/a.csv": 12, "top/results/b.csv": 7}


def declared(crate, limits=Limits(), name=f"top/{CRATE}", top="top"):
    """declared_sizes of a tar holding ``crate`` (bytes, or None for a folder) as ``name``."""
    entries = {"top": None, "top/results": None, "top/results/a.csv": b"x" * 12, name: crate}
    with tarfile.open(fileobj=io.BytesIO(tar_bytes(entries))) as tar:
        return vx.declared_sizes(tar, tar.getmembers(), top, limits)


def test_the_crate_declares_the_sizes_of_the_files_it_names_with_one():
    assert declared(json.dumps({"@graph": GRAPH}).encode()) == SIZES


def test_a_crate_is_read_up_to_its_limit_not_a_byte_more():
    crate = json.dumps({"@graph": GRAPH}).encode()
    assert declared(crate, Limits(crate_bytes=len(crate))) == SIZES
    assert refusal(declared, crate, Limits(crate_bytes=len(crate) - 1)) == (
        f"member 'top/{CRATE}' takes {len(crate)} bytes, more than the {len(crate) - 1} bytes verify reads "
        "of it")


def test_a_crate_nested_deeper_than_its_cap_is_refused_in_one_line():
    graph = json.dumps({"@graph": GRAPH})
    assert declared(graph.encode(), Limits(json_depth=3)) == SIZES  # the graph, an entity, a list
    assert refusal(declared, graph.encode(), Limits(json_depth=2)) == (
        f"{CRATE} nests lists or objects more than 2 deep")
    deep = ('{"@graph": [' + "[" * 100_000 + "]" * 100_000 + "]}").encode()
    assert refusal(declared, deep) == f"{CRATE} nests lists or objects more than 64 deep"


@pytest.mark.parametrize("crate, name", [
    (None, f"top/{CRATE}"),  # a folder of its name
    (json.dumps({"@graph": GRAPH}).encode(), f"top/results/{CRATE}"),  # not in the top folder
    (b"{not json", f"top/{CRATE}"), (b"[1]", f"top/{CRATE}"), (b'{"graph": []}', f"top/{CRATE}"),
    (b'{"@graph": 5}', f"top/{CRATE}")])
def test_without_a_readable_crate_nothing_is_checked(crate, name):
    assert declared(crate, name=name) is None


@pytest.mark.parametrize("size, bytes_", [
    ('"12"', 12), ("12", 12), ('"007"', 7), ("0", 0), ('"0"', 0), ('"9999999999999999999"', 10**19 - 1),
    ('"99999999999999999999"', None), ("1e999", None), ('"1e999"', None), ("12.0", None), ('"12.5"', None),
    ("-3", None), ('"-3"', None), ("true", None), ('"ten"', None), ("[1]", None), ("null", None),
    ('" 12"', None), ('"12\\n"', None)])
def test_a_declared_size_is_a_whole_number_of_bytes_or_none(size, bytes_):
    crate = ('{"@graph": [{"@id": "results/a.csv", "contentSize": %s}]}' % size).encode()
    assert declared(crate) == ({} if bytes_ is None else {"top/results/a.csv": bytes_})


def test_the_files_verify_reads_may_take_their_caps_not_a_byte_more():
    limits = Limits(crate_bytes=10, manifest_bytes=20, config_bytes=30, lock_bytes=40, environment_bytes=50)
    members = [file(f"top/{name}", cap) for name, cap in limits.read_caps.items()]
    assert vx.check_read_caps(members + [file("top/results/x", 100), file("top/a/environment.json", 99)],
                              "top", limits) is None
    for name, cap in limits.read_caps.items():
        assert refusal(vx.check_read_caps, [file(f"top/{name}", cap + 1)], "top", limits) == (
            f"member 'top/{name}' takes {cap + 1} bytes, more than the {cap} bytes verify reads of it")
    assert vx.check_read_caps([folder(f"top/{CRATE}", size=11)], "top", limits) is None  # a folder
    assert set(Limits().read_caps) == {CRATE, "MANIFEST.sha256", "config.resolved.yaml",
                                       "requirements/runtime.lock", "environment.json"}


def test_files_may_exceed_their_declared_sizes_by_the_allowance_in_all():
    members = [folder("top"), folder("top/d", size=50), file("top/a", 10), file("top/same", 4),
               file("top/b", 8), file("top/smaller", 3), file(f"top/{CRATE}", 999),
               file("top/MANIFEST.sha256", 99)]
    sizes = {"top/d": 0, "top/a": 7, "top/same": 4, "top/b": 6, "top/smaller": 5}
    assert vx.check_declared(members, sizes, 5, "top") is None  # 3 + 2 bytes beyond; a folder is no file
    assert vx.check_declared(members + [file("top/undeclared", 100)], None, 0, "top") is None  # no crate
    assert refusal(vx.check_declared, members, sizes, 4, "top") == (
        f"its files exceed the sizes its {CRATE} declares by more than 4 bytes (at member 'top/b': 8 bytes, "
        "6 declared)")
    assert refusal(vx.check_declared, members, sizes, 2, "top") == (
        f"its files exceed the sizes its {CRATE} declares by more than 2 bytes (at member 'top/a': 10 bytes, "
        "7 declared)")
    assert refusal(vx.check_declared, [file("top/a", 3 * MiB)], {"top/a": MiB}, MiB, "top") == (
        f"its files exceed the sizes its {CRATE} declares by more than 1.0 MiB (at member 'top/a': "
        f"{3 * MiB} bytes, {MiB} declared)")


def test_a_file_without_a_declared_size_counts_in_full():
    members = [file("top/a", 10), file("top/undeclared", 5)]
    assert vx.check_declared(members, {"top/a": 10}, 5, "top") is None
    assert refusal(vx.check_declared, members, {"top/a": 10}, 4, "top") == (
        f"its files exceed the sizes its {CRATE} declares by more than 4 bytes (at member 'top/undeclared': "
        "5 bytes, none declared)")
    assert refusal(vx.check_declared, members, {}, 14, "top") == (
        f"its files exceed the sizes its {CRATE} declares by more than 14 bytes (at member 'top/undeclared': "
        "5 bytes, none declared)")
    # the crate and the manifest, which the crate does not describe, have caps of their own
    own = [file(f"top/{CRATE}", MiB), file("top/MANIFEST.sha256", MiB), file(f"other/{CRATE}", 1)]
    assert refusal(vx.check_declared, own, {}, 0, "top") == (
        f"its files exceed the sizes its {CRATE} declares by more than 0 bytes (at member 'other/{CRATE}': "
        "1 bytes, none declared)")


# ---- the local disk -------------------------------------------------------------------------

@pytest.fixture
def disk(monkeypatch):
    """{folder: its free bytes}: what shutil.disk_usage says (of no other folder)."""
    free = {}
    monkeypatch.setattr(vx.shutil, "disk_usage", lambda path: SimpleNamespace(free=free[Path(path)]))
    return free


@pytest.fixture
def devices(monkeypatch):
    """{folder: its device}: what os.stat says of these folders (the rest as they are)."""
    given, real = {}, os.stat

    def stat(path, *args, **kwargs):
        result = real(path, *args, **kwargs)
        if isinstance(path, (str, os.PathLike)) and Path(path) in given:
            fields = list(result[:10])
            fields[2] = given[Path(path)]  # st_dev
            return os.stat_result(fields)
        return result

    monkeypatch.setattr(os, "stat", stat)
    return given


def test_the_nearest_existing_folder_stands_for_one_to_be_made(tmp_path, monkeypatch):
    assert vx._existing(tmp_path / "a/b/c") == tmp_path
    assert vx._existing(tmp_path) == tmp_path
    monkeypatch.chdir(tmp_path)
    assert vx._existing("new") == tmp_path


def test_the_room_needed_is_the_bytes_and_a_margin_on_the_nearest_existing_folder(tmp_path, disk):
    disk[tmp_path] = 10 * MiB + MARGIN
    assert vx.check_room(tmp_path / "new/folder", 10 * MiB, "this") is None  # exactly enough
    assert vx.check_room(tmp_path, 20 * MiB, "this", margin=0) is None
    assert refusal(vx.check_room, tmp_path / "new/folder", 10 * MiB + 1, "this", error=NoRoom) == (
        f"the local disk holding {tmp_path} has 74.0 MiB free; this needs 74.0 MiB: {ROOM_HINT}")
    disk[tmp_path] = 10 * MiB
    assert refusal(vx.check_room, tmp_path, 20 * MiB, "extracting its 20.0 MiB", error=NoRoom) == (
        f"the local disk holding {tmp_path} has 10.0 MiB free; extracting its 20.0 MiB needs 84.0 MiB: "
        f"{ROOM_HINT}")


def test_the_room_to_extract_alone(tmp_path, disk):
    disk[tmp_path] = 2 * MiB + MARGIN
    assert vx.check_rooms(tmp_path / "out", 2 * MiB, None, 5 * GiB) is None
    disk[tmp_path] -= 1
    assert refusal(vx.check_rooms, tmp_path / "out", 2 * MiB, None, 5 * GiB, error=NoRoom) == (
        f"the local disk holding {tmp_path} has 66.0 MiB free; extracting its 2.0 MiB needs 66.0 MiB: "
        f"{ROOM_HINT}")


def test_the_room_to_extract_and_rerun_on_one_disk_is_for_both_at_once(tmp_path, disk):
    (tmp_path / "out").mkdir()
    disk[tmp_path / "out"] = 2 * MiB + 3 * MiB + MARGIN
    assert vx.check_rooms(tmp_path / "out", 2 * MiB, tmp_path / "rerun", 3 * MiB) is None
    disk[tmp_path / "out"] -= 1
    assert refusal(vx.check_rooms, tmp_path / "out", 2 * MiB, tmp_path / "rerun", 3 * MiB, error=NoRoom) == (
        f"the local disk holding {tmp_path / 'out'} has 69.0 MiB free; extracting its 2.0 MiB and a rerun of "
        f"its results needs 69.0 MiB: {ROOM_HINT}")


def test_the_room_to_extract_and_rerun_on_two_disks_is_for_each_on_its_own(tmp_path, disk, devices):
    out, rerun = tmp_path / "out", tmp_path / "rerun"
    out.mkdir()
    rerun.mkdir()
    devices.update({out: 1001, rerun: 1002})
    disk.update({out: 2 * MiB + MARGIN, rerun: 3 * MiB + MARGIN})
    assert vx.check_rooms(out, 2 * MiB, rerun / "work", 3 * MiB) is None
    disk[rerun] -= 1
    assert refusal(vx.check_rooms, out, 2 * MiB, rerun / "work", 3 * MiB, error=NoRoom) == (
        f"the local disk holding {rerun} has 67.0 MiB free; a rerun of its results (3.0 MiB) needs 67.0 MiB: "
        f"{ROOM_HINT}")
    disk[rerun] += 1
    disk[out] -= 1
    assert refusal(vx.check_rooms, out, 2 * MiB, rerun / "work", 3 * MiB, error=NoRoom) == (
        f"the local disk holding {out} has 66.0 MiB free; extracting its 2.0 MiB needs 66.0 MiB: {ROOM_HINT}")


@pytest.mark.parametrize("number, state", [
    (errno.ENOSPC, "is full"), (errno.EDQUOT, "is over its quota"), (errno.EROFS, "is read-only")])
def test_a_write_error_of_the_local_disk_names_the_disk(tmp_path, number, state):
    error = OSError(number, os.strerror(number))
    assert vx.local_problem(error, tmp_path / "new") == (
        f"the local disk holding {tmp_path} {state} ({os.strerror(number)}): the archive is not to blame")
    assert vx.local_problem(OSError(errno.EIO, "I/O error"), tmp_path) is None


# ---- extraction -----------------------------------------------------------------------------

RESULT = b"id,value\n1,2\n"
NOTES = b"what this run was\n"


def honest(mode=0o644):
    """The entries of a small archive of a run: a result, notes, and a crate declaring both."""
    crate = json.dumps({"@graph": [{"@id": "results/a.csv", "contentSize": str(len(RESULT))},
                                   {"@id": "notes.txt", "contentSize": 1}]}).encode()
    return {"top": None, "top/results": None, "top/results/a.csv": (file("top/results/a.csv", len(RESULT),
                                                                           mode), RESULT),
            "top/notes.txt": NOTES, f"top/{CRATE}": crate}


def written(path, entries, after=b"", compress=True):
    """``entries`` as a tar, then ``after``, gzip-compressed into ``path``; (its total bytes, the
    byte where its members end, the bytes of the uncompressed tar)."""
    raw = tar_bytes(entries) + after
    path.write_bytes(gzip.compress(raw) if compress else raw)
    sizes = [len(d[1]) if isinstance(d, tuple) else len(d or b"") for d in entries.values()]
    return sum(sizes), sum(512 + -(-size // 512) * 512 for size in sizes), len(raw)


def test_an_archive_within_its_bounds_is_extracted_as_data(tmp_path, disk):
    archive, out = tmp_path / "a.tar.gz", tmp_path / "out"
    out.mkdir()
    disk[out] = GiB
    total, end, size = written(archive, honest(mode=0o666))
    assert vx.open_checked(archive, out, Limits()) == (out / "top", "zeros", end)
    assert (out / "top/results/a.csv").read_bytes() == RESULT
    assert (out / "top/notes.txt").read_bytes() == NOTES
    assert (out / "top/results/a.csv").stat().st_mode & 0o777 == 0o644  # no group or other write


def test_what_follows_the_end_of_its_tar_is_said(tmp_path, disk):
    archive, out = tmp_path / "a.tar.gz", tmp_path / "out"
    out.mkdir()
    disk[out] = GiB
    total, end, size = written(archive, honest())
    after = size - end  # the end-of-archive blocks and the padding of the last record
    assert vx.open_checked(archive, out / "1", Limits(tail_bytes=after)) == (out / "1/top", "zeros", end)
    assert vx.open_checked(archive, out / "2", Limits(tail_bytes=after - 1)) == (out / "2/top", "long", end)
    written(archive, honest(), after=b"junk")
    assert vx.open_checked(archive, out / "3", Limits()) == (out / "3/top", "data", end)


def test_the_room_for_its_files_and_a_rerun_of_its_results_is_checked_before_extraction(tmp_path, disk):
    archive, out = tmp_path / "a.tar.gz", tmp_path / "out"
    out.mkdir()
    total, end, size = written(archive, honest())
    disk[out] = total + len(RESULT) + MARGIN - 1
    assert refusal(vx.open_checked, archive, out, Limits(), tmp_path / "rerun", error=NoRoom) == (
        f"the local disk holding {out} has {vx.shown(disk[out])} free; extracting its {vx.shown(total)} and "
        f"a rerun of its results needs 64.0 MiB: {ROOM_HINT}")
    assert list(out.iterdir()) == []  # nothing extracted
    disk[out] += 1
    assert vx.open_checked(archive, out, Limits(), tmp_path / "rerun") == (out / "top", "zeros", end)


def test_an_archive_beyond_what_its_crate_declares_is_refused_before_extraction(tmp_path, disk):
    archive, out = tmp_path / "a.tar.gz", tmp_path / "out"
    out.mkdir()
    disk[out] = GiB
    written(archive, honest())
    excess = len(NOTES) - 1
    assert refusal(vx.open_checked, archive, out, Limits(excess_bytes=excess - 1)) == (
        f"its files exceed the sizes its {CRATE} declares by more than {excess - 1} bytes (at member "
        f"'top/notes.txt': {len(NOTES)} bytes, 1 declared)")
    assert refusal(vx.open_checked, archive, out, Limits(members=4)) == "more than 4 members"
    assert list(out.iterdir()) == []
    assert vx.open_checked(archive, out, Limits(excess_bytes=excess))[0] == out / "top"


def test_an_archive_not_gzip_compressed_is_not_read(tmp_path, disk):
    archive, out = tmp_path / "a.tar.gz", tmp_path / "out"
    out.mkdir()
    disk[out] = GiB
    written(archive, honest(), compress=False)
    with pytest.raises(tarfile.ReadError):
        vx.open_checked(archive, out, Limits())
    assert list(out.iterdir()) == []


# ---- Parquet files, from their footers ------------------------------------------------------

def footer(length, magic=b"PAR1", head=b"PAR1"):
    return head + struct.pack("<I", length) + magic


@pytest.mark.parametrize("data, length", [
    (b"", None), (b"PAR" + footer(5, head=b""), None), (footer(7), 7), (footer(7, magic=b"PAR2"), None),
    (b"x" * 12, None), (footer(0xFFFFFFFF), 0xFFFFFFFF), (b"PAR1" * 10 + footer(300), 300)])
def test_a_footers_length_is_read_from_the_last_8_bytes_of_a_file_of_12_or_more(tmp_path, data, length):
    (tmp_path / "f").write_bytes(data)
    assert vx._footer_length(tmp_path / "f") == length


def test_a_parquet_files_footer_length_is_its_own(tmp_path):
    pq.write_table(pa.table({"a": [1, 2, 3]}), tmp_path / "a.parquet")
    data = (tmp_path / "a.parquet").read_bytes()
    assert vx._footer_length(tmp_path / "a.parquet") == struct.unpack("<I", data[-8:-4])[0] > 0


def test_a_footer_may_declare_its_limit_of_metadata_not_a_byte_more(tmp_path):
    (tmp_path / "big.parquet").write_bytes(footer(16 * MiB + 1))
    (tmp_path / "limit.parquet").write_bytes(footer(16 * MiB))
    assert vx.parquet_problem(tmp_path / "big.parquet", Limits()) == (
        "its footer declares 16.0 MiB of metadata, more than 16.0 MiB")
    assert vx.parquet_problem(tmp_path / "big.parquet", Limits(footer_bytes=KiB)) == (
        "its footer declares 16.0 MiB of metadata, more than 1.0 KiB")
    assert vx.parquet_problem(tmp_path / "limit.parquet", Limits()) is None  # unreadable: compared later
    (tmp_path / "short.parquet").write_bytes(b"PAR1")
    assert vx.parquet_problem(tmp_path / "short.parquet", Limits(footer_bytes=0)) is None


def strings(path, rows, row_group_size):
    """A Parquet file of a column of distinct 20-character strings (no dictionary): many bytes a cell;
    the sum of its row groups' uncompressed bytes."""
    table = pa.table({"s": [f"{i:020d}" for i in range(rows)]})
    pq.write_table(table, path, row_group_size=row_group_size, use_dictionary=False)
    meta = pq.read_metadata(path)
    assert meta.num_row_groups == -(-rows // row_group_size)
    return sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))


def test_a_parquet_files_data_may_take_an_eighth_of_the_ceiling_not_a_byte_more(tmp_path):
    data = strings(tmp_path / "s.parquet", 100, 40)
    assert vx.parquet_problem(tmp_path / "s.parquet", Limits(total_bytes=8 * data)) is None
    assert vx.parquet_problem(tmp_path / "s.parquet", Limits(total_bytes=8 * data - 1)) == (
        f"its data take {vx.shown(data)} uncompressed, more than the {vx.shown(data - 1)} a file may (an "
        "eighth of --max-size)")


@pytest.mark.parametrize("columns", [1, 3])
def test_a_parquet_file_may_hold_a_64th_of_the_ceiling_in_cells_not_one_more(tmp_path, columns):
    path = tmp_path / "z.parquet"
    pq.write_table(pa.table({f"c{i}": [0] * 1000 for i in range(columns)}), path)
    cells = 1000 * columns
    assert vx.parquet_problem(path, Limits(total_bytes=64 * cells)) is None
    assert vx.parquet_problem(path, Limits(total_bytes=64 * cells - 1)) == (
        f"its 1000 rows of {columns} columns make more than the {cells - 1} cells a file may "
        "(--max-size / 64)")


def test_parquet_errors_name_every_file_under_results_not_to_be_read_in_order(tmp_path):
    results = tmp_path / "top/results"
    (results / "a").mkdir(parents=True)
    (results / "d.parquet").mkdir()  # a folder of that name
    for path in (results / "b.parquet", results / "a/c.parquet"):
        pq.write_table(pa.table({"z": [0] * 1000}), path)
    pq.write_table(pa.table({"z": [0] * 10}), results / "ok.parquet")
    (results / "x.csv").write_bytes(footer(1 << 30))
    why = "its 1000 rows of 1 columns make more than the 999 cells a file may (--max-size / 64)"
    assert vx.parquet_errors(results, Limits(total_bytes=64 * 999)) == [
        f"results/a/c.parquet: {why}", f"results/b.parquet: {why}"]
    assert vx.parquet_errors(results, Limits()) == []


# ---- after the gzip stream ------------------------------------------------------------------

def test_what_follows_the_gzip_stream_is_measured_in_the_compressed_file_unread(tmp_path):
    data = os.urandom(64 * KiB)
    packed = gzip.compress(data)
    for trailing in (0, 3 * MiB):
        path = tmp_path / f"t{trailing}.gz"
        path.write_bytes(packed + bytes(trailing))
        with gzip.open(path) as stream:
            assert stream.read(len(data)) == data
            after = vx.compressed_after(stream)
        assert trailing - 256 * KiB < after <= trailing + len(packed), (trailing, after)


def test_an_archive_followed_by_more_than_the_tail_limit_in_its_compressed_file_is_refused(tmp_path):
    raw = tar_bytes({"top": None, "top/results": None, "top/results/a.csv": b"a"})
    limits = Limits(tail_bytes=MiB)
    for trailing, after in ((0, "zeros"), (MiB // 2, "zeros"), (2 * MiB, "trailing")):
        path = tmp_path / f"{trailing}.tar.gz"
        path.write_bytes(gzip.compress(raw) + bytes(trailing))
        top, found, end = vx.open_checked(path, tmp_path / f"out{trailing}", limits)
        assert (top.name, found, end) == ("top", after, 2048), trailing


# ---- open_checked, in this process --------------------------------------------------------

def test_open_checked_guards_the_headers_and_the_read_caps(tmp_path):
    import hostile

    assert refusal(vx.open_checked, hostile.pax_of_2gib(tmp_path), tmp_path / "a", Limits()) == (
        "a PAX extended header at byte 0 of the tar declares 2.0 GiB, more than 64.0 KiB")
    raw = tar_bytes({"top": None, "top/results": None, "top/results/a.csv": b"a",
                     "top/MANIFEST.sha256": b"ab"})
    path = tmp_path / "manifest.tar.gz"
    path.write_bytes(gzip.compress(raw))
    assert refusal(vx.open_checked, path, tmp_path / "b", Limits(manifest_bytes=1)) == (
        "member 'top/MANIFEST.sha256' takes 2 bytes, more than the 1 bytes verify reads of it")


def test_a_gnu_long_name_within_its_cap_is_read(tmp_path):
    name = "top/results/" + "n" * 150
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        tar.addfile(file(name, 1), io.BytesIO(b"x"))
    members, total = scanned(raw.getvalue())
    assert ([m.name for m in members], total) == ([name], 1)
