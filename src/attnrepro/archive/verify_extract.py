"""Extract a stranger's archive as data: what it costs is known and bounded before it is paid.

An archive of a run is untrusted input to ``python -m attnrepro verify``. Before one byte is
written, the tar's headers are read, one at a time (a header says its member's size before its
data is decompressed), and the archive is refused, with one line naming the member, when:

- a member's name is absolute or climbs out (``..``), or the members are not one folder holding
  ``results/`` (an archive of a run: :mod:`attnrepro.archive.pack`);
- a member is not a file or a folder (a link, a device, a fifo);
- the members number more than :attr:`Limits.members`, or their sizes add up to more than the
  ceiling :attr:`Limits.total_bytes` (``verify --max-size`` raises it);
- its files hold more than :attr:`Limits.excess_bytes` beyond the sizes its RO-Crate declares
  (``contentSize``: a file edited after archiving holds a few bytes more or less, and is compared);
- the local disk has less room than the extraction needs (said as the local disk, not the archive);
- more than :attr:`Limits.tail_bytes` follow the tar's end, or anything but zeros.

Then every Parquet file is checked from its footer alone (:func:`parquet_errors`): its rows and
uncompressed bytes, before any is read into memory.
"""

import errno
import json
import math
import shutil
import struct
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from attnrepro import paths

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
CRATE = "ro-crate-metadata.json"
UNITS = {"": 1, "K": KiB, "M": MiB, "G": GiB, "T": 1 << 40}
LOCAL = {errno.ENOSPC: "is full", errno.EDQUOT: "is over its quota", errno.EROFS: "is read-only"}


@dataclass(frozen=True)
class Limits:
    """What one archive may cost. ``total_bytes``: its files once extracted (the ceiling); the
    rest follow from what an archive of the default run holds (docs/archive.md, "Bounds")."""

    total_bytes: int = 1 * GiB  # 30 times the default run's archive (33 MiB in 792 members)
    members: int = 50_000  # files and folders (the default run's: 792)
    crate_bytes: int = 64 * MiB  # its ro-crate-metadata.json, read before extraction
    tail_bytes: int = 1 * MiB  # after the tar's end marker (tarfile pads to 10 KiB)
    footer_bytes: int = 16 * MiB  # a Parquet file's footer (its metadata)
    excess_bytes: int = 1 * MiB  # beyond the sizes its crate declares (files edited after archiving)

    @property
    def parquet_bytes(self):
        """A Parquet file's uncompressed data: an eighth of the ceiling (pandas holds a few copies;
        the default run's largest: 0.34 MB)."""
        return self.total_bytes // 8

    @property
    def parquet_cells(self):
        """A Parquet file's rows times columns: a cell decoded may take 64 bytes (a Python object;
        the default run's largest: 82,143 cells)."""
        return self.total_bytes // 64


class Refused(Exception):
    """The archive is refused before its cost is paid: one sentence naming the member."""


class NoRoom(Exception):
    """This machine's disk has no room for what the archive needs: one sentence naming the disk."""


def parse_size(text):
    """Bytes of a size as ``--max-size`` takes it: ``4G``, ``512M``, ``3GiB``, ``1000000``."""
    raw = str(text).strip().upper().removesuffix("IB").removesuffix("B")
    number, unit = (raw[:-1], raw[-1]) if raw[-1:] in UNITS and raw[
        -1:  # pragma: no mutate (equivalent: [1:] or [-2:] differ only for a lone unit: no size either way)
    ] != "" else (raw, "")
    try:
        value = float(number) * UNITS[unit]
    except ValueError:
        raise ValueError(f"{text!r} is not a size (4G, 512M, 3GiB, or bytes)") from None
    if not value > 0:
        raise ValueError(f"{text!r} is not a positive size")
    if math.isinf(value):
        raise ValueError(f"{text!r} is not a finite size")
    return int(value)


def shown(size):
    """A byte count as people read it: 1.5 GiB, 12.0 MiB, 300 bytes."""
    for unit, factor in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if size >= factor:
            return f"{size / factor:.1f} {unit}"
    return f"{size} bytes"


# ---- the headers -------------------------------------------------------------------------

def _name_problem(name):
    """Why a member's name cannot be extracted as it is, or None."""
    path = PurePosixPath(name)
    if path.is_absolute() or name.startswith("\\") or (len(name) > 1 and name[1] == ":"):
        return "has an absolute name"
    if ".." in path.parts:
        return "climbs out of the archive's folder (..)"
    return None


def _kind(member):
    """What a member is, for a refusal: a link, a device, ..."""
    kinds = ((member.issym, "a symbolic link"), (member.islnk, "a hard link"),
             (member.ischr, "a character device"), (member.isblk, "a block device"),
             (member.isfifo, "a fifo"))
    return next((name for test, name in kinds if test()), f"of tar type {member.type!r}")


def scan(tar, limits):
    """The members of ``tar``, their headers read one by one and checked before any data is
    decompressed past them (the module's docstring); :class:`Refused` naming the first that is not
    allowed. Returns (members, total bytes)."""
    members, total = [], 0
    while (member := tar.next()) is not None:
        if (problem := _name_problem(member.name)) is not None:
            raise Refused(f"member {member.name!r} {problem}")
        if not (member.isfile() or member.isdir()):
            raise Refused(f"member {member.name!r} is {_kind(member)}: an archive of a run holds only "
                          "files and folders")
        total += member.size
        if len(members) >= limits.members:
            raise Refused(f"more than {limits.members} members")
        if total > limits.total_bytes:
            raise Refused(f"its files take more than {shown(limits.total_bytes)} once extracted (at "
                          f"member {member.name!r}, {shown(member.size)}); --max-size raises the ceiling")
        members.append(member)
    return members, total


def top_folder(members):
    """The archive's one top folder, or :class:`Refused`: an archive of a run is one folder
    holding ``results/``."""
    tops = {PurePosixPath(m.name).parts[0] for m in members if PurePosixPath(m.name).parts}
    top = next(iter(tops)) if len(tops) == 1 else None
    inside = top and any(PurePosixPath(m.name).parts[1:2] == (paths.RESULTS,) for m in members)
    if not inside:
        found = ", ".join(sorted(tops)[:3]) or "nothing"
        raise Refused(f"not an attnrepro archive (one folder holding {paths.RESULTS}/; it holds {found})")
    return top


def declared_sizes(tar, members, top, limits):
    """{member name: size} that the archive's RO-Crate declares (``contentSize`` of its files);
    {} without a crate, or with one too large or unreadable (verify warns of it after extraction)."""
    crate = next((m for m in members if m.name == f"{top}/{CRATE}" and m.isfile()), None)
    if crate is None or crate.size > limits.crate_bytes:
        return {}
    try:
        data = json.loads(tar.extractfile(crate).read())
        entities = data["@graph"]
        sizes = {f"{top}/{e['@id']}": int(e["contentSize"]) for e in entities
                 if isinstance(e, dict) and isinstance(e.get("@id"), str)
                 and e.get("contentSize") is not None}
    except (ValueError, TypeError, KeyError):
        return {}
    return sizes


def check_declared(members, declared, allowance):
    """:class:`Refused` once the members hold more than ``allowance`` bytes beyond what the crate
    declares for them: a file edited after archiving (a few bytes; verify warns of its digest and
    compares it) passes, an archive that understates its cost does not."""
    excess = 0
    for member in members:
        if member.isfile() and member.name in declared and (member.size
                > declared[member.name]  # pragma: no mutate (equivalent: >= adds 0 bytes to the excess)
        ):
            excess += member.size - declared[member.name]
            if excess > allowance:
                raise Refused(f"its files exceed the sizes its {CRATE} declares by more than "
                              f"{shown(allowance)} (at member {member.name!r}: {member.size} bytes, "
                              f"{declared[member.name]} declared)")


# ---- the local disk ----------------------------------------------------------------------

def _existing(folder):
    folder = Path(folder).absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def check_room(folder, needed, what, margin=64 * MiB):
    """:class:`NoRoom` naming the local disk when ``folder`` (or its nearest existing parent) has
    less than ``needed`` bytes (and a margin) free."""
    where = _existing(folder)
    free = shutil.disk_usage(where).free
    if free < needed + margin:
        raise NoRoom(f"the local disk holding {where} has {shown(free)} free; {what} needs "
                      f"{shown(needed + margin)}: free space, or set TMPDIR or --workdir elsewhere")


def local_problem(error, dest):
    """A sentence when ``error`` (an OSError while extracting into ``dest``) is this machine's
    disk's doing (full, over quota, read-only), else None: the archive is not to blame."""
    state = LOCAL.get(error.errno)
    if state is None:
        return None
    return (f"the local disk holding {_existing(dest)} {state} ({error.strerror}): the archive is not "
            "to blame")


# ---- after the last member ---------------------------------------------------------------

def tail(stream, offset, limit, chunk=MiB):
    """What follows ``offset`` in ``stream`` (a gzip stream verifies its CRC and length at its
    end): "zeros" (the tar's end-of-archive blocks), "data", or "long" (more than ``limit``
    bytes: not read on). Read in chunks of ``chunk`` bytes, never all at once."""
    stream.seek(offset)
    read = 0
    while block := stream.read(min(chunk, limit + 1 - read)):
        read += len(block)
        if block.strip(b"\0"):
            return "data"
        if read > limit:
            return "long"
    return "zeros"


# ---- Parquet files, from their footers ---------------------------------------------------

def _footer_length(path):
    """The length of a Parquet file's footer, from its last 8 bytes (length, then ``PAR1``)."""
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        if fh.tell() < 12:
            return None
        fh.seek(-8, 2)
        length, magic = struct.unpack("<I4s", fh.read(
            8,  # pragma: no mutate (equivalent: 8 bytes are left: read(9) and read() read them)
        ))
    return length if magic == b"PAR1" else None


def parquet_problem(path, limits):
    """Why the Parquet file ``path`` is not read (its footer, rows or uncompressed bytes beyond the
    limits), or None. A file whose footer cannot be read is left to the comparison, which says so."""
    import pyarrow.parquet as pq

    length = _footer_length(path)
    if length is None:
        return None
    if length > limits.footer_bytes:
        return f"its footer declares {shown(length)} of metadata, more than {shown(limits.footer_bytes)}"
    try:
        meta = pq.read_metadata(path)
    except Exception:  # noqa: BLE001 (any unreadable footer: the comparison reports it)
        return None
    data = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    cells = meta.num_rows * max(meta.num_columns, 1)
    if data > limits.parquet_bytes:
        return (f"its data take {shown(data)} uncompressed, more than the {shown(limits.parquet_bytes)} "
                "a file may (an eighth of --max-size)")
    if cells > limits.parquet_cells:
        return (f"its {meta.num_rows} rows of {meta.num_columns} columns make more than the "
                f"{limits.parquet_cells} cells a file may (--max-size / 64)")
    return None


def parquet_errors(results, limits):
    """[sentence] for every Parquet file under ``results`` that is not to be read."""
    out = []
    for path in sorted(Path(results).rglob("*.parquet")):
        if path.is_file() and (problem := parquet_problem(path, limits)) is not None:
            out.append(f"{path.relative_to(Path(results).parent).as_posix()}: {problem}")
    return out


# ---- all of it ---------------------------------------------------------------------------

def _device(folder):
    return _existing(folder).stat().st_dev


def check_rooms(dest, total, rerun_folder, results):
    """Room for the extraction (``total`` bytes in ``dest``) and, given a ``rerun_folder``, for a
    rerun's results (as much as the archive's ``results``): on one disk, for both at once."""
    if rerun_folder is None:
        check_room(dest, total, f"extracting its {shown(total)}")
    elif _device(rerun_folder) == _device(dest):
        check_room(dest, total + results, f"extracting its {shown(total)} and a rerun of its results")
    else:
        check_room(dest, total, f"extracting its {shown(total)}")
        check_room(rerun_folder, results, f"a rerun of its results ({shown(results)})")


def open_checked(archive, dest, limits, rerun_folder=None):
    """Extract ``archive`` into ``dest`` once every check above passed. Returns (its top folder, what
    follows the tar's end: :func:`tail`, the byte where the tar ends). ``rerun_folder``: where a
    rerun will write as much as the archive's results (its room is checked too)."""
    with tarfile.open(archive, "r:gz") as tar:
        members, total = scan(tar, limits)
        top = top_folder(members)
        check_declared(members, declared_sizes(tar, members, top, limits), limits.excess_bytes)
        results = sum(m.size for m in members if PurePosixPath(m.name).parts[1:2] == (paths.RESULTS,))
        check_rooms(dest, total, rerun_folder, results)
        end = tar.offset
        tar.extractall(dest, members=(
            members  # pragma: no mutate (equivalent: scan read every header: None extracts the same members)
        ), filter="data")
        after = tail(tar.fileobj, end, limits.tail_bytes)
    return Path(dest) / top, after, end
