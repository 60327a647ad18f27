"""Parquet files with provenance: written atomically with an integrity record, verified when read.

Writing (:func:`write_parquet`). A result is written to a temporary file beside its destination
(``.<name>.<random>.tmp``), flushed to disk, then renamed over it: a job killed mid-write leaves
at most a ``.tmp`` file, never a complete-looking Parquet file. Every data page carries a CRC-32
(pyarrow's ``write_page_checksum``), and the schema metadata holds, beside the provenance (key
``attnrepro``, JSON), an integrity record (key ``attnrepro.integrity``, JSON): the
:func:`content_hash` of the table as a reader gets it back, and the SHA-256 of the provenance
bytes. Before a rename, :func:`attnrepro.run.ownership.publishing` checks that the Snakemake run that
started the job still lives.

A job's tables as one set (:class:`OutputSet`, ``python -m attnrepro.jobs.experiment``): every table is
written to its temporary first; then the old main table is removed, the other tables are renamed
into place and the main table last. A kill at any point leaves no main table, so no
complete-looking set (Snakemake reruns the job: its main output is missing). At start the set
removes the ``.<name>.*.tmp`` files of its own outputs that a killed earlier attempt left
(:func:`remove_leftovers`; report jobs do the same for theirs).

Reading (:func:`read_parquet`, :func:`read_provenance`; every reader of the project goes through
them). ``read_parquet`` verifies the page checksums, the provenance digest and the content hash;
``read_provenance`` (the footer only) the provenance digest. A file that cannot be read
(truncated, empty, not Parquet, a flipped bit), has no integrity record, or fails a check raises
:class:`CorruptResult`. Page checksums catch a flipped bit in the data pages; the content hash
what they do not cover (the footer: schema, pandas metadata, offsets); cells of object columns
enter the hash by their ``repr``, their bytes are under the page checksums. A flip that no
reader sees (a page's statistics, the Parquet copy of the key-value metadata) reads back the
data as written. (Over every byte of a small table, 2 bits each: every flip either raised
CorruptResult or read back the table and provenance exactly as written.)

Stale results (:func:`check_params`): a reader given the parameters that this run's config
plans for a file (``--expected-params``) compares them with the file's ``provenance["params"]``
and raises :class:`StaleResult` naming the first differing key with both values.

Both errors derive from :class:`ResultError`, an ``Exception`` that is not a ValueError, OSError
or KeyError: code that turns an unreadable value into a "missing" verdict (the ledger) lets
them through, and the job stops. Their message names the file and the command that rebuilds it
(:func:`rebuild_command`: ``snakemake --cores N --forcerun <file>``, which reruns its producing
rule's job and everything downstream).
"""

import contextlib
import glob
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from attnrepro.run import bounded, ownership, reads

KEY = b"attnrepro"
INTEGRITY = b"attnrepro.integrity"
JSON_DEPTH = 64  # lists and objects inside one another in a provenance (a job's: a few levels)


class ResultError(Exception):
    """A result file that must not be read as data; the message names it and how to rebuild it."""


class CorruptResult(ResultError):
    """A result file that cannot be read, or whose checksums or content hash do not hold."""

    def __init__(self, path, problem):
        super().__init__(f"{path}: corrupt result file ({problem}); "
                         f"rebuild it with `{rebuild_command(path)}`")
        self.path, self.problem = str(path), problem


class StaleResult(ResultError):
    """A result file written with other parameters than this run's config plans for it."""

    def __init__(self, path, key, found, expected):
        super().__init__(
            f"{path}: written with {key} = {_show(found)}, but this run's config plans {key} = "
            f"{_show(expected)} (an earlier or overlapping run wrote it); rebuild it with "
            f"`{rebuild_command(path)}`")
        self.path, self.key = str(path), key


class InconsistentInputs(ResultError):
    """Files combined into one product that were computed with other parameters than each other
    (a seed distribution of 100-step trainings beside the run's 60-step ones)."""

    def __init__(self, path, key, found, other, expected):
        super().__init__(
            f"{path}: computed with {key} = {_show(found)}, but {other} with {key} = {_show(expected)}: "
            f"they cannot be combined; rebuild it with `{rebuild_command(path)}`")
        self.path, self.key = str(path), key


_ABSENT = object()


def differing_key(found, expected):
    """The first key (sorted) whose value differs between two parameter dicts, with both values
    (``_ABSENT`` where a dict lacks it); None when they are equal."""
    for key in sorted(set(found) | set(expected)):
        if found.get(key, _ABSENT) != expected.get(key, _ABSENT):
            return key, found.get(key, _ABSENT), expected.get(key, _ABSENT)
    return None


def _show(value):
    return "(absent)" if value is _ABSENT else json.dumps(value, sort_keys=True)


def rebuild_command(path):
    """The command that reruns the job writing ``path`` (and what reads it): ``--forcerun <file>``."""
    shown = Path(path)
    with contextlib.suppress(ValueError):
        shown = shown.resolve().relative_to(Path.cwd().resolve())
    return f"snakemake --cores N --forcerun {shown.as_posix()}"


def content_hash(frame):
    """SHA-256 of a table's content: column names, dtypes, then every value (row order kept)."""
    digest = hashlib.sha256()
    digest.update(repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode())
    values = frame.apply(lambda col: col.map(repr) if col.dtype == object else col)
    by_value = {"index": False}  # a row's hash is of its values alone: the index is not content
    digest.update(pd.util.hash_pandas_object(values, **by_value).to_numpy().tobytes())
    return digest.hexdigest()


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def write_parquet(df, path, provenance):
    """Write ``df`` to ``path`` with ``provenance`` (a JSON-able dict) in the schema metadata."""
    path = Path(path)
    with atomic_path(path) as tmp:
        write_table_file(df, tmp, provenance)
    return path


def write_table_file(df, path, provenance):
    """Write ``df`` to exactly ``path`` (no rename): page checksums, provenance, integrity record."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[KEY] = json.dumps(provenance, default=str, sort_keys=True).encode()
    meta[INTEGRITY] = json.dumps({"content_sha256": content_hash(table.to_pandas()),  # keys in order
                                  "provenance_sha256": _sha256(meta[KEY])}).encode()
    table = table.replace_schema_metadata(meta)
    with open(path, "wb") as fh:
        pq.write_table(table, fh, write_page_checksum=True)
        fh.flush()
        os.fsync(fh.fileno())
    return Path(path)


def _file_mode():
    """The mode a plain ``open(path, "w")`` gives under this process's umask."""
    mask = os.umask(
        0,  # pragma: no mutate (equivalent: any mask set for this instant returns the same old one)
    )
    os.umask(mask)
    return 0o666 & ~mask


def temporary_beside(path):
    """A new empty temporary file ``.<name>.<random>.tmp`` beside ``path`` (registered with
    attnrepro.run.ownership: removed if the run ends under the job)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    ownership.register(tmp)
    return Path(tmp)


def _publish(tmp, target):
    """Rename a finished temporary over its destination (the caller holds jobs.publishing())."""
    os.chmod(tmp, _file_mode())  # mkstemp's 0600 would hide results from the group
    os.replace(tmp, target)
    ownership.unregister(tmp)


def _discard(tmp):
    Path(tmp).unlink(missing_ok=True)
    ownership.unregister(tmp)


@contextlib.contextmanager
def atomic_path(path):
    """A context manager yielding a temporary path beside ``path``, renamed over it on success
    (unless the Snakemake run that started this job has ended: attnrepro.run.ownership.RunEnded)."""
    tmp = temporary_beside(path)
    try:
        yield tmp
        with ownership.publishing():
            _publish(tmp, Path(path))
    except BaseException:
        _discard(tmp)
        raise


def remove_leftovers(paths):
    """Remove the temporaries ``.<name>.*.tmp`` of ``paths`` that a killed earlier job left; their names."""
    removed = []
    for path in map(Path, paths):
        pattern = f".{glob.escape(path.name)}.*.tmp"
        for leftover in sorted(path.parent.glob(pattern)):  # none in a folder that does not exist
            leftover.unlink(missing_ok=True)
            removed.append(str(leftover))
    return removed


class OutputSet:
    """The tables of one job, landing as one set: ``stage`` each, then ``commit`` (main last).

    ``paths``: {table: destination}. Until ``commit`` nothing is visible; ``discard`` (or an
    exception inside ``with OutputSet(...)``) removes the temporaries.
    """

    def __init__(self, paths):
        self.paths = {name: Path(p) for name, p in paths.items()}
        self.staged = {}

    def stage(self, name, df, provenance):
        tmp = temporary_beside(self.paths[name])
        self.staged[name] = tmp
        write_table_file(df, tmp, provenance)
        ownership.fault_point(name)
        return tmp

    def commit(self):
        """Rename every staged table into place, main last; first remove the old main table, so
        that a kill between two renames leaves no complete-looking set."""
        order = [n for n in self.staged if n != "main"] + [n for n in self.staged if n == "main"]
        with ownership.publishing():
            if "main" in self.staged:
                self.paths["main"].unlink(missing_ok=True)
            for name in order:
                _publish(self.staged[name], self.paths[name])
        self.staged = {}
        return order

    def discard(self):
        for tmp in self.staged.values():
            _discard(tmp)
        self.staged = {}

    def __enter__(self):
        return self

    def __exit__(self, kind, error, trace):
        self.discard()
        return False


def write_text(path, text):
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def _footer(path, require_integrity):
    """(integrity record, provenance bytes) of a result file, its provenance digest verified
    (without ``require_integrity``, a file that has no record gives ({}, provenance) unchecked)."""
    sys.audit(reads.READ_EVENT, os.fspath(path))  # pyarrow opens it in C++: no open event
    try:
        meta = pq.read_schema(path).metadata or {}
    except FileNotFoundError:
        raise
    except Exception as error:
        raise CorruptResult(path, f"unreadable: {type(error).__name__}: {error}") from error
    if INTEGRITY not in meta and not require_integrity:
        return {}, meta.get(KEY, b"{}")
    if INTEGRITY not in meta:
        raise CorruptResult(path, "no integrity record: not written by attnrepro.run.io, "
                                  "or before it recorded one")
    try:
        integrity = bounded.loads_json(meta[INTEGRITY], JSON_DEPTH, "its integrity record")
        provenance = meta[KEY]
        ok = _sha256(provenance) == integrity["provenance_sha256"]
    except (ValueError, KeyError, TypeError) as error:
        raise CorruptResult(path, f"unreadable integrity record: {error}") from error
    if not ok:
        raise CorruptResult(path, "its provenance does not match the digest recorded at write")
    return integrity, provenance


def read_parquet(path, require_integrity=True):
    """The table of a result file, as a pandas DataFrame, its checksums and content hash verified.

    ``require_integrity=False`` also reads a file written before integrity records (an old
    archive, for ``attnrepro verify``); a record that is there is verified all the same."""
    integrity, provenance = _footer(path, require_integrity)
    _decoded(path, provenance)  # a file whose provenance cannot be read is no result
    try:
        frame = pq.read_table(path, page_checksum_verification=True).to_pandas()
    except FileNotFoundError:
        raise
    except Exception as error:  # a flipped bit in the pandas metadata gives KeyError, TypeError, ...
        raise CorruptResult(path, f"unreadable: {type(error).__name__}: {error}") from error
    if integrity and content_hash(frame) != integrity.get("content_sha256"):
        raise CorruptResult(path, "its content does not match the hash recorded at write")
    return frame


def read_provenance(path, require_integrity=True):
    """The provenance dictionary stored in a result file (its digest verified)."""
    return _decoded(path, _footer(path, require_integrity)[1])


def _decoded(path, provenance):
    """The provenance bytes of ``path`` decoded; CorruptResult when they are not a JSON object, or
    nest deeper than :data:`JSON_DEPTH` (an archive's file is someone else's)."""
    try:
        found = bounded.loads_json(provenance, JSON_DEPTH, "its provenance")
    except ValueError as error:
        raise CorruptResult(path, f"unreadable provenance: {error}") from error
    if not isinstance(found, dict):
        raise CorruptResult(path, f"unreadable provenance: a JSON {type(found).__name__}, not an object")
    return found


def check_params(path, expected):
    """Raise StaleResult unless the file's ``provenance["params"]`` equal ``expected`` (as JSON)."""
    found = read_provenance(path).get("params")
    want = json.loads(json.dumps(expected, default=str))
    if found == want:
        return
    if not isinstance(found, dict):
        raise StaleResult(path, "params", _ABSENT if found is None else found, want)
    raise StaleResult(path, *differing_key(found, want))


def check_inputs(paths, expected):
    """check_params for each of ``paths`` that ``expected`` ({experiment: {case: params}}, what the
    run's config plans, attnrepro.dag.plan.expected_params) names. The path alone says which case a
    file is (attnrepro.paths): a job reads no plan."""
    from attnrepro.paths import parse_output

    for path in paths:
        experiment, _, case = parse_output(path)
        if case in expected.get(experiment, {}):
            check_params(path, expected[experiment][case])
