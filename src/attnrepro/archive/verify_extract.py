"""Extract a stranger's archive as data: what it costs is known and bounded before it is paid.

An archive of a run is untrusted input to ``python -m attnrepro verify``. Before one byte is
written, the tar's headers are read, one at a time (a header says its member's size before its
data is decompressed), and the archive is refused, with one line naming the member, when:

- an extended header (PAX, GNU long name or link) declares more than :attr:`Limits.extended_bytes`,
  more than :attr:`Limits.extended_chain` of them precede one member, or they add up to more than
  :attr:`Limits.extended_total`: checked by :class:`Guarded` before tarfile reads one (tarfile
  reads such a header whole, and each one in a chain one call deeper);
- a member's name is absolute or climbs out (``..``), nests deeper than :attr:`Limits.name_parts`
  or is longer than :attr:`Limits.name_chars`, or the members are not one folder holding
  ``results/`` (an archive of a run: :mod:`attnrepro.archive.pack`);
- a member is not a file or a folder (a link, a device, a fifo);
- the members number more than :attr:`Limits.members`, or their sizes add up to more than the
  ceiling :attr:`Limits.total_bytes` (``verify --max-size`` raises it);
- a file that verify reads (:attr:`Limits.read_caps`: its crate, manifest, config, lock,
  environment) is larger than its cap; the same caps bound those reads after extraction
  (:mod:`attnrepro.run.bounded`);
- its files hold more than :attr:`Limits.excess_bytes` beyond the sizes its RO-Crate declares
  (``contentSize``: a file edited after archiving holds a few bytes more or less, and is compared;
  a file it declares no size for counts in full, the crate and the manifest excepted);
- the local disk has less room than the extraction needs (said as the local disk, not the archive);
- more than :attr:`Limits.tail_bytes` follow the tar's end, or anything but zeros, counted both
  decompressed and in the compressed file (gzip skips zeros after its stream, a byte at a time).

Then every Parquet file is checked from its footer alone (:func:`parquet_errors`): its rows and
uncompressed bytes, before any is read into memory.
"""

import errno
import os
import re
import shutil
import struct
import tarfile
from pathlib import Path, PurePosixPath

from attnrepro import paths
from attnrepro.archive.verify_limits import CRATE, MANIFEST, Limits
from attnrepro.run import bounded
from attnrepro.run.bounded import MiB, shown

LOCAL = {errno.ENOSPC: "is full", errno.EDQUOT: "is over its quota", errno.EROFS: "is read-only"}
NAME_MAX = 255  # bytes of one part of a name: the file system's own limit


class Refused(Exception):
    """The archive is refused before its cost is paid: one sentence naming the member."""


class NoRoom(Exception):
    """This machine's disk has no room for what the archive needs: one sentence naming the disk."""


# ---- the headers -------------------------------------------------------------------------

def _name_problem(name, limits):
    """Why a member's name cannot be extracted as it is, or None."""
    path = PurePosixPath(name)
    if path.is_absolute() or name.startswith("\\") or (len(name) > 1 and name[1] == ":"):
        return "has an absolute name"
    if ".." in path.parts:
        return "climbs out of the archive's folder (..)"
    if len(path.parts) > limits.name_parts:
        return f"nests {len(path.parts)} folders deep, more than {limits.name_parts}"
    if len(name) > limits.name_chars:
        return f"has a name of {len(name)} characters, more than {limits.name_chars}"
    if any(len(part.encode("utf-8", "surrogateescape")) > NAME_MAX for part in path.parts):
        return f"has a part of its name longer than {NAME_MAX} bytes (the file system's limit)"
    return None


class Guarded(tarfile.TarInfo):
    """A tar header that checks an extended header's declared size, and how many precede a member,
    before tarfile reads it (tarfile reads one whole, then the next header one call deeper), and
    refuses what an archive of a run never holds: a global PAX header, a GNU sparse file.
    :func:`guarded` makes one class per archive: ``limits`` and ``seen`` (the headers so far)."""

    limits = Limits()
    seen = {"chain": 0, "total": 0}

    def _extended(self, what):
        seen, limits = self.seen, self.limits
        seen["chain"] += 1
        seen["total"] += self.size
        where = f"at byte {self.offset} of the tar"
        if self.size > limits.extended_bytes:
            raise Refused(f"{what} {where} declares {shown(self.size)}, more than "
                          f"{shown(limits.extended_bytes)}")
        if seen["chain"] > limits.extended_chain:
            raise Refused(f"more than {limits.extended_chain} extended headers in a row ({where})")
        if seen["total"] > limits.extended_total:
            raise Refused(f"its extended headers take more than {shown(limits.extended_total)} ({where})")

    def _proc_pax(self, tar):
        if self.type == tarfile.XGLTYPE:
            raise Refused(f"a global PAX header at byte {self.offset} of the tar: an archive of a run "
                          "has none")
        self._extended("a PAX extended header")
        return super()._proc_pax(tar)

    def _proc_gnulong(self, tar):
        self._extended("a GNU long name header")
        return super()._proc_gnulong(tar)

    def _proc_sparse(self, tar):
        raise Refused(f"member {self.name!r} is a sparse file: an archive of a run holds only plain files")

    def _proc_builtin(self, tar):
        self.seen["chain"] = 0  # a member: the next one's extended headers are counted anew
        return super()._proc_builtin(tar)


def guarded(limits):
    """A :class:`Guarded` class for one archive (``tarfile.open(..., tarinfo=guarded(limits))``)."""
    return type(
        "Guarded",  # pragma: no mutate (equivalent: the class's name is shown nowhere)
        (Guarded,), {"limits": limits, "seen": {"chain": 0, "total": 0}})


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
        if (problem := _name_problem(member.name, limits)) is not None:
            raise Refused(f"member {member.name!r} {problem}")
        if not (member.isfile() or member.isdir()):
            raise Refused(f"member {member.name!r} is {_kind(member)}: an archive of a run holds only "
                          "files and folders")
        if member.size < 0:
            raise Refused(f"member {member.name!r} declares a negative size")
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


def check_read_caps(members, top, limits):
    """:class:`Refused` when a file that verify reads (:attr:`Limits.read_caps`) is larger than its
    cap: refused before extraction, not after."""
    for member in members:
        cap = limits.read_caps.get(member.name.removeprefix(f"{top}/"))
        if member.isfile() and cap is not None and member.size > cap:
            raise Refused(f"member {member.name!r} takes {shown(member.size)}, more than the "
                          f"{shown(cap)} verify reads of it")


def _size(value):
    """A ``contentSize`` as bytes (a whole number, or its digits as a string), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return int(value) if isinstance(value, str) and re.fullmatch(r"[0-9]{1,19}", value) else None


def declared_sizes(tar, members, top, limits):
    """{member name: size} that the archive's RO-Crate declares (``contentSize`` of its files,
    whole numbers); None without a crate, or with one that is not JSON or has no ``@graph`` (verify
    warns of it after extraction). :class:`Refused` when the crate is larger than
    :attr:`Limits.crate_bytes` or nests deeper than :attr:`Limits.json_depth`."""
    crate = next((m for m in members if m.name == f"{top}/{CRATE}" and m.isfile()), None)
    if crate is None:
        return None
    check_read_caps([crate], top, limits)
    try:
        data = bounded.loads_json(tar.extractfile(crate).read(), limits.json_depth, CRATE)
    except bounded.Exceeded as error:
        raise Refused(str(error)) from None
    except ValueError:
        return None
    entities = data.get("@graph") if isinstance(data, dict) else None
    if not isinstance(entities, list):
        return None
    return {f"{top}/{e['@id']}": size for e in entities
            if isinstance(e, dict) and isinstance(e.get("@id"), str)
            and (size := _size(e.get("contentSize"))) is not None}


def check_declared(members, declared, allowance, top):
    """:class:`Refused` once the files hold more than ``allowance`` bytes beyond what the crate
    declares for them, a file it declares no size for counted in full (``declared`` None: no
    crate, nothing checked; its crate and manifest, which it does not describe, are left to
    :func:`check_read_caps`): a file edited after archiving (a few bytes; verify warns of its digest
    and compares it) passes, an archive that understates its cost does not."""
    if declared is None:
        return
    excess, own = 0, (f"{top}/{CRATE}", f"{top}/{MANIFEST}")
    for member in members:
        if not member.isfile() or member.name in own:
            continue
        size = declared.get(member.name)
        excess += max(member.size - (size or 0), 0)
        if excess > allowance:
            said = "none" if size is None else size
            raise Refused(f"its files exceed the sizes its {CRATE} declares by more than "
                          f"{shown(allowance)} (at member {member.name!r}: {member.size} bytes, "
                          f"{said} declared)")


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


def compressed_after(gzip_file):
    """Bytes of the compressed file that follow where its gzip reader stands (a few kB of the
    stream's end, unless more follows: gzip skips zeros after its stream a byte at a time, and
    reads a further stream), from the file's size alone."""
    raw = gzip_file.fileobj
    return os.fstat(raw.fileno()).st_size - raw.tell()


def open_checked(archive, dest, limits, rerun_folder=None):
    """Extract ``archive`` into ``dest`` once every check above passed. Returns (its top folder, what
    follows the tar's end: :func:`tail`, or "trailing" when more than ``limits.tail_bytes`` of the
    compressed file do, the byte where the tar ends). ``rerun_folder``: where a rerun will write as
    much as the archive's results (its room is checked too)."""
    with tarfile.open(archive, "r:gz", tarinfo=guarded(limits)) as tar:
        members, total = scan(tar, limits)
        top = top_folder(members)
        check_read_caps(members, top, limits)
        check_declared(members, declared_sizes(tar, members, top, limits), limits.excess_bytes, top)
        results = sum(m.size for m in members if PurePosixPath(m.name).parts[1:2] == (paths.RESULTS,))
        check_rooms(dest, total, rerun_folder, results)
        end = tar.offset
        tar.extractall(dest, members=(
            members  # pragma: no mutate (equivalent: scan read every header: None extracts the same members)
        ), filter="data")
        if compressed_after(tar.fileobj) > (  # pragma: no mutate (equivalent: >= moves it one byte)
                limits.tail_bytes):  # (the reader's read-ahead blurs the count by kilobytes anyway)
            return Path(dest) / top, "trailing", end
        after = tail(tar.fileobj, end, limits.tail_bytes)
    return Path(dest) / top, after, end
