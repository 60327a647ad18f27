"""The SHA-256 of a file, read in blocks: one function for every reader that checks a file against
a recorded digest (the archive's manifest and RO-Crate, ``verify``, the articles' texts)."""

import hashlib

BLOCK = 1 << 20  # bytes read at a time: a large file is never held in memory whole


def file_sha256(path):
    """The hex SHA-256 of the file ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()
