"""A verifiable archive of a run: every output, a SHA-256 manifest, the config and the environment,
described by an RO-Crate.

The tarball holds one folder ``attnrepro-results-<sha>/`` with ``results/...``, the workflow that
made them (``Snakefile``, ``workflow/rules/*.smk``, ``workflow/schemas/config.schema.yaml``,
``envs/attnrepro.yaml``), ``config.resolved.yaml``, ``requirements/runtime.lock`` (when the run had one),
``environment.json``, ``ro-crate-metadata.json`` (a Provenance Run Crate: :mod:`attnrepro.archive.crate`)
and ``MANIFEST.sha256`` (the ``sha256sum`` format: after extraction, ``sha256sum -c
MANIFEST.sha256`` inside that folder checks every file). ``python -m attnrepro verify``
compares such an archive with a run of this machine (see :mod:`attnrepro.archive.verify`).
"""

import hashlib
import io as _io
import json
import tarfile
from importlib import metadata
from pathlib import Path

import yaml

from attnrepro.archive import crate, crate_jobs
from attnrepro.run import digests, io, provenance
from attnrepro.dag import yamlfile
from attnrepro import paths

CRATE = "ro-crate-metadata.json"
SCHEMA = "workflow/schemas/config.schema.yaml"




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


def write(out, files, config_text, root=".", lock_text=None, rules=None):
    """Write the archive ``out`` holding ``files`` (paths relative to ``root``, the run's folder:
    Snakemake's records of its jobs are read there), the resolved config, when given the lock
    (``requirements/runtime.lock``) the run was installed from, and the RO-Crate that describes them
    (``rules``: {rule: the file defining it}, for the crate's tools)."""
    out, root = Path(out), Path(root)
    top = out.name.removesuffix(".tar.gz")
    files = sorted(set(map(str, files)) | reads_records(files, root))
    env = environment()
    extras = {"README.md": readme(top).encode(), "config.resolved.yaml": config_text.encode()}
    if lock_text is not None:
        extras[paths.RUNTIME_LOCK] = lock_text.encode()
    extras["environment.json"] = json.dumps(env, indent=2, default=str).encode()
    sums = {f: (digests.file_sha256(root / f), (root / f).stat().st_size) for f in files}
    sums.update({name: (hashlib.sha256(data).hexdigest(), len(data)) for name, data in extras.items()})
    extras[CRATE] = json.dumps(crate_metadata(files, sums, root, config_text, env, rules, top),
                               indent=1, sort_keys=True, ensure_ascii=False).encode()
    lines = [f"{sums[f][0]}  {f}" for f in files]
    lines += [f"{hashlib.sha256(data).hexdigest()}  {name}" for name, data in extras.items()]
    with io.atomic_path(out) as tmp, tarfile.open(tmp, mode="w:gz") as tar:
        for f in files:
            tar.add(root / f, arcname=f"{top}/{f}", recursive=False)
        for name, data in extras.items():
            _add_bytes(tar, f"{top}/{name}", data)
        _add_bytes(tar, f"{top}/MANIFEST.sha256", ("\n".join(lines) + "\n").encode())
    return out


def reads_records(files, root="."):
    """The reads record beside each job's log among ``files`` (attnrepro.paths.reads_of_log) that
    the run's folder ``root`` holds: what the job read, which the crate's actions list."""
    logs = (str(f) for f in files if paths.under(f, paths.LOGS) and str(f).endswith(".log"))
    return {reads for reads in map(paths.reads_of_log, logs) if (Path(root) / reads).is_file()}


def readme(name):
    """The archive's README.md: what it holds and how to check it."""
    return f"""# {name}

The results of one run of attnrepro, a Snakemake workflow that reproduces every number, table and
figure of three articles on attention, with the workflow that made them.

- `results/`: every output of the run (`results/README.md` indexes them; `results/LEDGER.md` sets
  each published number beside the reproduced one), with each job's log, benchmark and record of
  what it read.
- `Snakefile`, `workflow/`, `envs/attnrepro.yaml`, `requirements/runtime.lock`: the workflow and its
  environment; `config.resolved.yaml`: every parameter of the run.
- `ro-crate-metadata.json`: an RO-Crate (Workflow Run Crate, Provenance Run Crate profile 0.5) that
  describes the run, each job (its rule, inputs, outputs, parameters, times and numerics), the
  software it ran and every file with its size and SHA-256.
- `MANIFEST.sha256`: `sha256sum -c MANIFEST.sha256` checks every file.

In a checkout of attnrepro, `python -m attnrepro verify {name}.tar.gz` reruns this run's config
and compares the results, and `rocrate-validator validate --profile-identifier
provenance-run-crate .` (roc-validator) checks the crate.
"""


def crate_metadata(files, sums, root, config_text, env, rules, name):
    """The RO-Crate's JSON-LD for the archive's files (``sums``: {path: (sha256, size)}), the
    jobs that wrote ``files`` (read in the run's folder ``root``), and the manifest (listed
    without its checksum: it holds the crate's)."""
    schema_path = root / SCHEMA
    schema = yamlfile.load(schema_path, fast=True) if SCHEMA in sums and schema_path.is_file() else {}
    config = yaml.load(config_text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    try:
        snakemake_version = metadata.version("snakemake")
    except metadata.PackageNotFoundError:
        snakemake_version = None
    jobs = crate_jobs.jobs(files, root)
    return crate.build({**sums, "MANIFEST.sha256": (None, None)}, jobs, config,
                       schema=schema, environment=env, rules=rules, name=name, created=env["created"],
                       snakemake_version=snakemake_version)
