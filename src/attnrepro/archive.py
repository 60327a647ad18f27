"""A verifiable archive of a run: every output, a SHA-256 manifest, the config and the environment.

The tarball holds one folder ``attnrepro-results-<sha>/`` with ``results/...``,
``config.resolved.yaml``, ``requirements.lock`` (when the run had one), ``environment.json``
and ``MANIFEST.sha256`` (the ``sha256sum`` format: after extraction, ``sha256sum -c
MANIFEST.sha256`` inside that folder checks every file). ``python -m attnrepro verify``
compares such an archive with a run of this machine (see :mod:`attnrepro.verify`).
"""

import hashlib
import io as _io
import json
import tarfile
from pathlib import Path

from attnrepro import io, provenance


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def environment():
    """Package versions, BLAS libraries, machine and code version of this process."""
    import numpy  # noqa: F401  (loads the BLAS library that provenance.blas() describes)

    return {
        "versions": provenance.package_versions(),
        "blas": provenance.blas(),
        "machine": provenance.machine(),
        "git": provenance.git_state(),
        "created": provenance.now(),
    }


def _add_bytes(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 0
    info.mode = 0o644
    tar.addfile(info, _io.BytesIO(data))


def write(out, files, config_text, root=".", lock_text=None):
    """Write the archive ``out`` holding ``files`` (paths relative to ``root``), the resolved
    config and, when given, the lock (``requirements.lock``) the run was installed from."""
    out, root = Path(out), Path(root)
    top = out.name.removesuffix(".tar.gz")
    extras = {"config.resolved.yaml": config_text.encode()}
    if lock_text is not None:
        extras["requirements.lock"] = lock_text.encode()
    extras["environment.json"] = json.dumps(environment(), indent=2, default=str).encode()
    lines = [f"{sha256(root / f)}  {f}" for f in sorted(map(str, files))]
    lines += [f"{hashlib.sha256(data).hexdigest()}  {name}" for name, data in extras.items()]
    with io.atomic_path(out) as tmp, tarfile.open(tmp, mode="w:gz") as tar:
        for f in sorted(map(str, files)):
            tar.add(root / f, arcname=f"{top}/{f}", recursive=False)
        for name, data in extras.items():
            _add_bytes(tar, f"{top}/{name}", data)
        _add_bytes(tar, f"{top}/MANIFEST.sha256", ("\n".join(lines) + "\n").encode())
    return out
