"""A corpus of hostile inputs to ``python -m attnrepro verify``, built at test time (nothing binary
is committed): each entry builds its archive in a folder and names the refusal it must get.

Each archive is made as a hostile user would make it: the honest tools write it
(:func:`attnrepro.archive.pack.write`: its MANIFEST.sha256 and RO-Crate agree with its files),
or a tar is written by hand around what the honest tools would not write.
"""

import gzip
import hashlib
import io
import json
import struct
import tarfile
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from attnrepro import paths
from attnrepro.archive import pack

LEDGER = b"id,class,reproduced\n001.a,exact,1\n"
PAYLOAD = "pwned"  # the file a payload would write, beside the archive


def honest(folder, config_text="skip: []\n", extra=None):
    """An archive written by :func:`attnrepro.archive.pack.write` of a results folder holding a
    ledger (and ``extra``: {path under the run: bytes}), with ``config_text`` as its resolved config:
    its MANIFEST and crate agree with every file."""
    run = Path(folder) / "run"
    files = {"results/ledger.csv": LEDGER, "Snakefile": (paths.REPO / "Snakefile").read_bytes(),
             **(extra or {})}
    for name, data in files.items():
        (run / name).parent.mkdir(parents=True, exist_ok=True)
        (run / name).write_bytes(data)
    lock = (paths.REPO / paths.RUNTIME_LOCK).read_text()
    out = Path(folder) / "attnrepro-results-hostile.tar.gz"
    return pack.write(out, sorted(files), config_text, run, lock)


def forged(folder, files):
    """An honest archive, then ``files`` ({path in its folder: bytes}) put in (replaced or added),
    its MANIFEST.sha256 lines and its crate's ``sha256`` and ``contentSize`` updated to match:
    nothing in the archive tells the forgery."""
    archive = honest(folder)
    with tarfile.open(archive) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    top = archive.name.removesuffix(".tar.gz")
    crate = json.loads(members[f"{top}/ro-crate-metadata.json"])
    manifest = members[f"{top}/MANIFEST.sha256"].decode().splitlines()
    for name, data in files.items():
        digest = hashlib.sha256(data).hexdigest()
        members[f"{top}/{name}"] = data
        entities = [e for e in crate["@graph"] if e.get("@id") == name]
        if not entities:
            entities = [{"@id": name, "@type": "File"}]
            crate["@graph"] += entities
        for entity in entities:
            entity.update(sha256=digest, contentSize=str(len(data)))
        manifest = [line for line in manifest if not line.endswith(f"  {name}")] + [f"{digest}  {name}"]
    members[f"{top}/ro-crate-metadata.json"] = json.dumps(crate).encode()
    members[f"{top}/MANIFEST.sha256"] = ("\n".join(manifest) + "\n").encode()
    return by_hand(archive, members)


def config(text):
    return {"config.resolved.yaml": text.encode()}


def by_hand(path, members, tail=b""):
    """A .tar.gz of ``members`` ({name: bytes, or a TarInfo to add as it is}), then ``tail``."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in members.items():
            if isinstance(data, tarfile.TarInfo):
                tar.addfile(data)
                continue
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    Path(path).write_bytes(gzip.compress(raw.getvalue() + tail, compresslevel=1))
    return Path(path)


def zeros_member(path, name, size, chunk=16 << 20, before=None):
    """A .tar.gz whose member ``name`` holds ``size`` zero bytes, compressed as it is written
    (a few MB on disk for GiBs of zeros; never all of it in memory), after the members ``before``
    ({name: bytes})."""
    info = tarfile.TarInfo(name)
    info.size = size
    header = info.tobuf(format=tarfile.GNU_FORMAT)
    compressor = zlib.compressobj(1, zlib.DEFLATED, 31)  # gzip
    zero = bytes(chunk)
    with open(path, "wb") as out:
        for first, data in (before or {}).items():
            first_info = tarfile.TarInfo(first)
            first_info.size = len(data)
            out.write(compressor.compress(first_info.tobuf(format=tarfile.GNU_FORMAT) + data
                                          + bytes(-len(data) % 512)))
        out.write(compressor.compress(header))
        left = size + (-size % 512) + 1024  # the data, its padding, the end-of-archive blocks
        while left:
            n = min(left, chunk)
            out.write(compressor.compress(zero[:n]))
            left -= n
        out.write(compressor.flush())
    return Path(path)


def parquet_of_zeros(path, rows, per_group=1 << 22):
    """A Parquet file of ``rows`` zeros in one column: a few kB per million rows on disk."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    group = pa.table({"x": np.zeros(per_group, dtype=np.int64)})
    with pq.ParquetWriter(path, group.schema, compression="zstd") as writer:
        for start in range(0, rows, per_group):
            writer.write_table(group.slice(0, min(per_group, rows - start)))
    return path


def member_typed(name, kind, target=""):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


# ---- the corpus --------------------------------------------------------------------------

def templated_config(folder):
    """A config that asks Snakemake's YTE to run Python: the payload writes a file."""
    target = Path(folder) / PAYLOAD
    text = (f"__use_yte__: true\ncrate:\n  title: \"?[__import__('pathlib').Path({str(target)!r})"
            ".write_text('x'), None][1]\"\n")
    return forged(folder, config(text))


def aliased_config(folder):
    """A billion laughs as the archive's config."""
    levels = "abcdefghi"
    text = "".join(f"{n}: &{n} [{', '.join(['0'] * 10 if i == 0 else [f'*{levels[i - 1]}'] * 10)}]\n"
                   for i, n in enumerate(levels))
    return forged(folder, config(text))


def tagged_config(folder):
    return forged(folder, config("crate: !!python/object/apply:os.system ['true']\n"))


def program_config(folder):
    """A config naming an interpreter of its own: a script inside the archive."""
    text = json.dumps({"numerics": {"environments": {"article": {
        "python": "../archive/attnrepro-results-hostile/results/evil", "packages": "x",
        "settings": ["default"]}}}})
    return forged(folder, {**config(text), "results/evil": b"#!/bin/sh\ntouch pwned\n"})


def steps_config(folder):
    """A valid config of 8.3 core-days (a million training steps, the schema's bound), honestly archived."""
    return honest(folder, "train: {steps: 1000000}\n")


def memory_config(folder):
    """A valid config whose score_memory job needs 327 GiB, with a memory limit that would allow it."""
    return honest(folder, "memory: {limit_gib: 1000000}\nscore_memory: {n: [256, 100000]}\n")


def zeros_2gib(folder):
    return zeros_member(Path(folder) / "zeros.tar.gz", "top/results/zeros.bin", 2 << 30)


def understated(folder):
    """A member larger than its crate says (the crate itself is consistent otherwise)."""
    archive = honest(folder)
    with tarfile.open(archive) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    name = next(n for n in members if n.endswith("results/ledger.csv"))
    members[name] += b"002.b,exact,2\n" * 100_000  # 1.4 MB more
    return by_hand(Path(folder) / "understated.tar.gz", members)


def symlink_member(folder):
    return by_hand(Path(folder) / "link.tar.gz", {
        "top/results/ledger.csv": LEDGER, "top/results/passwd": member_typed("top/results/passwd",
                                                                             tarfile.SYMTYPE, "/etc/passwd")})


def fifo_member(folder):
    return by_hand(Path(folder) / "fifo.tar.gz", {
        "top/results/ledger.csv": LEDGER,
        "top/results/pipe": member_typed("top/results/pipe", tarfile.FIFOTYPE)})


def absolute_member(folder):
    return by_hand(Path(folder) / "absolute.tar.gz", {"top/results/ledger.csv": LEDGER, "/tmp/x": b"x"})


def zeros_after_the_end(folder):
    """Two MiB of zeros after the tar's end: zeros, but more than any tar pads."""
    return by_hand(Path(folder) / "tail.tar.gz", {"top/results/ledger.csv": LEDGER}, tail=bytes(2 << 20))


def many_members(folder):
    return by_hand(Path(folder) / "many.tar.gz",
                   {"top/results/ledger.csv": LEDGER, **{f"top/results/f{i}": b"" for i in range(50_001)}})


def parquet_bomb(folder):
    """A Parquet file of 200 million zeros (about 1 MB) in an honest archive."""
    run = Path(folder) / "bomb"
    parquet_of_zeros(run / "results/bomb.parquet", 200_000_000)
    return forged(folder, {"results/bomb.parquet": (run / "results/bomb.parquet").read_bytes()})


def footer_bomb(folder):
    """A Parquet file whose last bytes declare a footer of 1 GiB."""
    data = b"PAR1" + bytes(100) + struct.pack("<I", 1 << 30) + b"PAR1"
    return forged(folder, {"results/footer.parquet": data})


def _members(archive):
    """{name: bytes} of the files of an archive, and its top folder."""
    with tarfile.open(archive) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    return members, Path(archive).name.removesuffix(".tar.gz")


def recrated(folder, change, files=None):
    """A forged archive (``files``, :func:`forged`), then its crate's text passed through ``change``
    (the MANIFEST still names the crate's first digest: it is only warned of)."""
    archive = forged(folder, files or {})
    members, top = _members(archive)
    name = f"{top}/ro-crate-metadata.json"
    members[name] = change(members[name].decode()).encode()
    return by_hand(archive, members)


def raw_tar(folder, blocks, name="raw.tar.gz"):
    """A .tar.gz of tar ``blocks`` written by hand (headers that declare more than follows them)."""
    return _gzip(Path(folder) / name, b"".join(blocks) + bytes(1024))


def _gzip(path, raw, tail=b""):
    Path(path).write_bytes(gzip.compress(raw, compresslevel=1) + tail)
    return Path(path)


def _header(name, kind, size):
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, size
    return info.tobuf(format=tarfile.USTAR_FORMAT)


def _member(name, data):
    return _header(name, tarfile.REGTYPE, len(data)) + data + bytes(-len(data) % 512)


def pax_of_2gib(folder):
    """A PAX extended header declaring 2 GiB, followed by 512 bytes: tarfile would read 2 GiB."""
    return raw_tar(folder, [_header("././@PaxHeader", tarfile.XHDTYPE, 2 << 30), bytes(512),
                            _member("top/results/ledger.csv", LEDGER)])


def chained_pax(folder):
    """3,000 PAX headers before one member: tarfile reads each one call deeper."""
    record = b"13 comment=x\n"
    one = _header("././@PaxHeader", tarfile.XHDTYPE, len(record)) + record + bytes(512 - len(record))
    return raw_tar(folder, [one * 3000, _member("top/results/ledger.csv", LEDGER)])


def nested_folders(folder):
    name = "top/results/" + "a/" * 1500 + "deep.csv"
    return by_hand(Path(folder) / "nested.tar.gz", {"top/results/ledger.csv": LEDGER, name: b"x"})


def zeros_after_the_gzip_stream(folder):
    """10 MiB of zeros after the gzip stream, in the compressed file (gzip skips them)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        info = tarfile.TarInfo("top/results/ledger.csv")
        info.size = len(LEDGER)
        tar.addfile(info, io.BytesIO(LEDGER))
    return _gzip(Path(folder) / "trailing.tar.gz", raw.getvalue(), tail=bytes(10 << 20))


def large_crate(folder):
    """A crate of 128 MiB (zeros, compressed as written: a few hundred kB)."""
    return zeros_member(Path(folder) / "crate.tar.gz", "top/ro-crate-metadata.json", 128 << 20,
                        before={"top/results/ledger.csv": LEDGER})


def deep_json(depth=100_000):
    return "[" * depth + "]" * depth


def deep_crate(folder):
    return recrated(folder, lambda text: text.replace('"@graph": [', '"@graph": [' + deep_json() + ", ", 1))


def size_of_1e999(folder):
    """A file of 2 MiB whose crate says ``"contentSize": 1e999`` (infinity, as JSON reads it)."""
    return recrated(folder, lambda text: text.replace(f'"contentSize": "{2 << 20}"', '"contentSize": 1e999'),
                    {"results/big.bin": bytes(2 << 20)})


def size_removed(folder):
    """A file of 2 MiB whose crate declares no size."""
    return recrated(folder, lambda text: text.replace(f', "contentSize": "{2 << 20}"', ""),
                    {"results/big.bin": bytes(2 << 20)})


def large_config(folder):
    return forged(folder, config("skip: []\n" + "# filler\n" * (2 << 20)))  # 18 MiB


def manifest_of_many_lines(folder):
    """A MANIFEST.sha256 of 4 Mi empty lines (8 MiB: within its cap in bytes)."""
    archive = honest(folder)
    members, top = _members(archive)
    members[f"{top}/MANIFEST.sha256"] = b"\n" * (4 << 20)
    return by_hand(archive, members)


def lock_of_many_lines(folder):
    return forged(folder, {paths.RUNTIME_LOCK: b"\n" * (2 << 20)})  # 2 Mi lines in 2 MiB


def deep_environment(folder):
    """environment.json nested 100,000 deep, in an archive without a crate (read from the file)."""
    archive = forged(folder, {"environment.json": deep_json().encode()})
    members, top = _members(archive)
    del members[f"{top}/ro-crate-metadata.json"]
    return by_hand(archive, members)


# name: (build(folder) -> archive, extra arguments, what the one line on stderr holds)
CORPUS = {
    "templated config": (templated_config, [],
                         "__use_yte__: attnrepro reads YAML as plain data, never a template"),
    "aliased config": (aliased_config, [], "an anchor &a (and 88 more): attnrepro reads YAML as plain data"),
    "tagged config": (tagged_config, [], "the tag !!python/object/apply:os.system"),
    "a program of its own": (program_config, [], "numerics.environments.article: "),
    "a million training steps": (steps_config, [], "the archive's config asks about 8.3 core-days of jobs "
                                                   "(116 jobs; train 8.3 core-days; train.steps 1000000 "
                                                   "(here 1500)), beyond this verifier's budget of 1.5 "
                                                   "core-hours: allow it with --budget 9d"),
    # refused by this machine's limit (80% of its memory: below 327 GiB), never the archive's
    "a memory limit of its own": (memory_config, [], "score_memory.n[1]: 100000 needs about 3.5e+11 bytes = "
                                                     "327 GiB (causal attention: 4 x (n, n) float64 and its "
                                                     "mask) in one job; the limit is "),
    "2 GiB of zeros": (zeros_2gib, [], "refused before extraction: its files take more than 1.0 GiB once "
                                        "extracted (at member 'top/results/zeros.bin', 2.0 GiB)"),
    "files larger than declared": (understated, [], "its files exceed the sizes its ro-crate-metadata.json "
                                                    "declares by more than 1.0 MiB (at member "
                                                    "'attnrepro-results-hostile/results/ledger.csv': "
                                                    "1400034 bytes, 34 declared)"),
    "a symbolic link": (symlink_member, [], "member 'top/results/passwd' is a symbolic link"),
    "a fifo": (fifo_member, [], "member 'top/results/pipe' is a fifo"),
    "an absolute name": (absolute_member, [], "member '/tmp/x' has an absolute name"),
    "zeros after the end": (zeros_after_the_end, [], "refused: more than 1.0 MiB follow the end of its tar"),
    "too many members": (many_members, [], "refused before extraction: more than 50000 members"),
    "a Parquet bomb": (parquet_bomb, [], "results/bomb.parquet: its 200000000 rows"),
    "a Parquet footer bomb": (footer_bomb, [], "its footer declares 1.0 GiB of metadata"),
    "a PAX header of 2 GiB": (pax_of_2gib, [], "refused before extraction: a PAX extended header at byte 0 "
                                                 "of the tar declares 2.0 GiB, more than 64.0 KiB"),
    "3,000 chained PAX headers": (chained_pax, [], "refused before extraction: more than 4 extended headers "
                                                   "in a row (at byte 4096 of the tar)"),
    "1,500 nested folders": (nested_folders, [], "nests 1503 folders deep, more than 32"),
    "zeros after the gzip stream": (zeros_after_the_gzip_stream, [],
                                    "refused: more than 1.0 MiB of the compressed file follow the end"),
    "a crate of 128 MiB": (large_crate, [], "refused before extraction: member 'top/ro-crate-metadata.json' "
                                            "takes 128.0 MiB, more than the 64.0 MiB verify reads of it"),
    "a crate nested 100,000 deep": (deep_crate, [], "refused before extraction: ro-crate-metadata.json nests "
                                                    "lists or objects more than 64 deep"),
    "a contentSize of 1e999": (size_of_1e999, [], "(at member 'attnrepro-results-hostile/results/big.bin': "
                                                  "2097152 bytes, none declared)"),
    "no contentSize": (size_removed, [], "(at member 'attnrepro-results-hostile/results/big.bin': 2097152 "
                                         "bytes, none declared)"),
    "a config of 18 MiB": (large_config, [], "member 'attnrepro-results-hostile/config.resolved.yaml' takes "
                                              "18.0 MiB, more than the 1.0 MiB verify reads of it"),
    "a MANIFEST of 4 Mi lines": (manifest_of_many_lines, [], "refused: its MANIFEST.sha256 holds more than "
                                                             "50,000 lines"),
    "a lock of 2 Mi lines": (lock_of_many_lines, [], "refused: its requirements/runtime.lock holds more than "
                                                     "50,000 lines"),
    "environment.json nested 100,000 deep": (deep_environment, [], "refused: its environment.json nests "
                                                                   "lists or objects more than 64 deep"),
}


# ---- forgeries read as data: verify compares the archive and warns (exit 0 or 1) -------------

def nul_in_manifest(folder):
    archive = honest(folder)
    members, top = _members(archive)
    members[f"{top}/MANIFEST.sha256"] += f"{'0' * 64}  results/a\0b.csv\n".encode()
    return by_hand(archive, members)


def nul_in_crate_id(folder):
    entity = '{"@id": "results/a\\u0000b", "@type": "File", "contentSize": "1"}, '
    return recrated(folder, lambda text: text.replace('"@graph": [', '"@graph": [' + entity, 1))


def id_that_is_a_list(folder):
    return recrated(folder, lambda text: text.replace('"@graph": [', '"@graph": [{"@id": ["a", "b"]}, ', 1))


def small_size_of_1e999(folder):
    """The ledger's crate entity says ``"contentSize": 1e999``: undeclared, and small."""
    return recrated(folder, lambda text: text.replace('"contentSize": "34"', '"contentSize": 1e999'))


def manifest_naming_one_file_forty_times(folder):
    """Forty MANIFEST lines name one file of 16 MiB: it is hashed once."""
    archive = forged(folder, {"results/big.bin": bytes(16 << 20)})
    members, top = _members(archive)
    line = next(x for x in members[f"{top}/MANIFEST.sha256"].decode().splitlines() if x.endswith("big.bin"))
    members[f"{top}/MANIFEST.sha256"] += (line + "\n").encode() * 39
    return by_hand(archive, members)


def deep_parquet():
    """A Parquet file whose provenance nests 100,000 deep, its integrity record right."""
    from attnrepro.run import io as result_io

    table = pa.table({"x": [1, 2]})
    provenance = deep_json().encode()
    integrity = json.dumps({"content_sha256": result_io.content_hash(table.to_pandas()),
                            "provenance_sha256": hashlib.sha256(provenance).hexdigest()}).encode()
    meta = {**(table.schema.metadata or {}), b"attnrepro": provenance, b"attnrepro.integrity": integrity}
    out = io.BytesIO()
    pq.write_table(table.replace_schema_metadata(meta), out)
    return out.getvalue()


def deep_provenance(folder):
    """The deep Parquet file under results/data, in the archive and in the results it is compared with."""
    name, data = "results/data/001/x/deep.parquet", deep_parquet()
    archive = forged(folder, {name: data})
    (Path(folder) / "run" / name).parent.mkdir(parents=True)
    (Path(folder) / "run" / name).write_bytes(data)
    return archive


# name: (build(folder) -> archive, what a line of its output holds)
READ_AS_DATA = {
    "a NUL in a MANIFEST name": (nul_in_manifest, "1 file(s) of the archive do not match its MANIFEST"),
    "a NUL in a crate @id": (nul_in_crate_id, "1 file(s) described in ro-crate-metadata.json are missing"),
    "an @id that is a list": (id_that_is_a_list, "the archive's ro-crate-metadata.json cannot be read (no "
                                                 "@graph of entities, each with an @id that is a string)"),
    "a small file's contentSize of 1e999": (small_size_of_1e999, "verdict: REPRODUCED"),
    "a Parquet provenance nested 100,000 deep": (deep_provenance, "results/data/001/x/deep.parquet: corrupt "
                                                 "in archive: unreadable provenance: its provenance nests "
                                                 "lists or objects more than 64 deep"),
    "forty MANIFEST lines naming one file": (manifest_naming_one_file_forty_times,
                                             "39 line(s) of its MANIFEST.sha256 name a file that an earlier "
                                             "line names"),
}
