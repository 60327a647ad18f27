"""Parquet files with provenance, written atomically.

A result is written to a temporary file in the destination folder, flushed to
disk, then renamed over the destination: a job killed mid-write leaves at most a
``.tmp`` file, never a complete-looking Parquet file.
"""

import json
import os
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

KEY = b"attnrepro"


def write_parquet(df, path, provenance):
    """Write ``df`` to ``path`` with ``provenance`` (a JSON-able dict) in the schema metadata."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(df, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[KEY] = json.dumps(provenance, default=str, sort_keys=True).encode()
    table = table.replace_schema_metadata(meta)
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        pq.write_table(table, fh)
        fh.flush()
        os.fsync(fh.fileno())
    return path


def _file_mode():
    """The mode a plain ``open(path, "w")`` gives under this process's umask."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_path(path):
    """A context manager yielding a temporary path beside ``path``, renamed over it on success."""
    import contextlib

    @contextlib.contextmanager
    def manager():
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        try:
            yield Path(tmp)
            os.chmod(tmp, _file_mode())  # mkstemp's 0600 would hide results from the group
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    return manager()


def write_text(path, text):
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def read_parquet(path):
    """The table of a result file, as a pandas DataFrame."""
    return pq.read_table(path).to_pandas()


def read_provenance(path):
    """The provenance dictionary stored in a result file."""
    meta = pq.read_schema(path).metadata or {}
    return json.loads(meta[KEY]) if KEY in meta else {}
