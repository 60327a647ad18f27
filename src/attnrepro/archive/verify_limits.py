"""What verify lets one archive cost (:class:`Limits`), and ``--max-size`` as people write it.

Every cap but the ceiling follows from what an archive of the default run holds, with a wide
margin; docs/archive.md ("Bounds") lists them. :mod:`attnrepro.archive.verify_extract` checks
them before extraction, and verify's reads of the archive's files after it
(:mod:`attnrepro.run.bounded`).
"""

import math
from dataclasses import dataclass

from attnrepro import paths
from attnrepro.run.bounded import GiB, KiB, MiB

CRATE = "ro-crate-metadata.json"
MANIFEST = "MANIFEST.sha256"
UNITS = {"": 1, "K": KiB, "M": MiB, "G": GiB, "T": 1 << 40}


@dataclass(frozen=True)
class Limits:
    """What one archive may cost. ``total_bytes``: its files once extracted (the ceiling); the
    rest follow from what an archive of the default run holds (docs/archive.md, "Bounds"), with
    a wide margin."""

    total_bytes: int = 1 * GiB  # 30 times the default run's archive (33 MiB in 792 members)
    members: int = 50_000  # files and folders (the default run's: 792)
    tail_bytes: int = 1 * MiB  # after the tar's end marker (tarfile pads to 10 KiB)
    footer_bytes: int = 16 * MiB  # a Parquet file's footer (its metadata)
    excess_bytes: int = 1 * MiB  # beyond the sizes its crate declares (files edited after archiving)
    # the tar's headers, checked before tarfile reads them (the default run's: one PAX header of at
    # most 157 bytes before each member, 31,900 bytes in all; names of 7 parts, 119 characters)
    extended_bytes: int = 64 * KiB  # one extended header (PAX, GNU long name or link)
    extended_chain: int = 4  # extended headers before one member (GNU tar writes up to 3)
    extended_total: int = 16 * MiB  # all of them
    name_parts: int = 32  # a member's folders and its name
    name_chars: int = 1024  # a member's whole name
    # the files verify reads, before extraction and when it reads them (the default run's: crate
    # 2.4 MB nesting 5 deep, MANIFEST.sha256 114 kB of 980 lines, config 5.7 kB, lock 147 kB of
    # 1,900 lines, environment.json 864 bytes nesting 3 deep)
    crate_bytes: int = 64 * MiB  # its ro-crate-metadata.json
    manifest_bytes: int = 8 * MiB
    config_bytes: int = 1 * MiB  # config.resolved.yaml
    lock_bytes: int = 4 * MiB  # requirements/runtime.lock
    environment_bytes: int = 1 * MiB  # environment.json
    text_lines: int = 50_000  # lines of the manifest or the lock (a line per member, at most)
    json_depth: int = 64  # lists and objects inside one another in the crate or environment.json

    @property
    def read_caps(self):
        """{name in the archive's folder: its cap in bytes} of the files verify reads."""
        return {CRATE: self.crate_bytes, MANIFEST: self.manifest_bytes,
                "config.resolved.yaml": self.config_bytes, paths.RUNTIME_LOCK: self.lock_bytes,
                "environment.json": self.environment_bytes}

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
