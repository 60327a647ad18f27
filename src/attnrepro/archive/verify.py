"""Verify someone else's archive: compare its results with a run of this machine.

    python -m attnrepro verify results/archive/attnrepro-results-<sha>.tar.gz --results results
    python -m attnrepro verify ARCHIVE.tar.gz [--cores N] [--workdir DIR]

With ``--results DIR`` the archive is compared with a finished results folder. Without it,
this checkout's workflow (``Snakefile``, ``workflow/``, ``src/``, ``config/``, ``envs/``,
``requirements/``, as on disk) is copied into a temporary folder (or ``--workdir``) and
``snakemake --cores N --configfile <the archive's config.resolved.yaml>`` reruns the archived
run there; its ``results/`` is then compared.

Compared, file by file, exactly (NaN equal to NaN; :mod:`attnrepro.archive.verify_compare`):

- every Parquet file on either side, without the values of its measured columns
  (:func:`attnrepro.dag.plan.measured_columns`); the ``machine`` table of a timing experiment
  describes the machine and is skipped;
- every ``results/tables/*.csv`` as text, except the tables built from a timing experiment
  (skipped: every number of theirs is a Parquet column, compared above without its times);
- ``results/ledger.csv`` claim by claim (by id), every column except ``reproduced``,
  ``verdict`` and ``reason`` of a machine-bound claim (a timing).

A file or a column present on one side only differs, and so does a file that cannot be read or
a ledger whose claim ids are not unique. Figures, logs and benchmarks are not compared.
Warnings, which do not change the verdict: the archive's commit, lock or package versions
differ from this checkout's, or a file of the archive no longer matches its MANIFEST.sha256.
Each side's canonical numerics (``numerics.canonical`` in the provenance of every file under
``results/data``; absent in files written before it was recorded) is reported as all / none /
mixed / unknown. Exit status: 0 when everything compared is equal, 1 on any difference, 2 with
one line on stderr when the archive cannot be read (empty, not gzip, not a tar, truncated,
corrupt: its gzip checksum is verified to the end), the results folder is not a folder, or the
rerun fails.
"""

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zlib
from pathlib import Path

from attnrepro.run import digests
from attnrepro.numerics import fingerprint
from attnrepro.archive import verify_crate
from attnrepro.archive.verify_compare import KINDS, compare
from attnrepro import paths

REPO = paths.REPO
# what a rerun needs: the workflow, its code and config, the lock, and the repository files that
# the code reads (the modules' READS, such as the golden fingerprint every job checks)
COPIED = ("Snakefile", "workflow", "src", "config", "envs", paths.REQUIREMENTS,
          *fingerprint.READS)
LOCK = paths.RUNTIME_LOCK
CHUNK = 1 << 20  # bytes read at a time when checking the end of an archive: never all of it at once


class CannotVerify(Exception):
    """The archive, the results folder or the rerun's folder cannot be used: one sentence naming
    it, printed on stderr; exit status 2."""


# ---- canonical numerics, the archive's record, warnings ----------------------------------

def canonical_status(results):
    """'all', 'none', 'mixed' or 'unknown' (with counts): did every data file run canonical numerics?"""
    from attnrepro.run import io

    counts = {True: 0, False: 0, None: 0}
    for path in Path(results).glob(f"{paths.relative(paths.DATA)}/**/*.parquet"):
        try:  # unknown when unreadable; an archive's file may predate integrity records
            provenance = io.read_provenance(
                path, require_integrity=False)  # pragma: no mutate (equivalent: None is False)
            numerics = provenance.get("numerics") or {}
        except (io.ResultError, OSError):
            numerics = {}
        counts[numerics.get("canonical") if isinstance(numerics.get("canonical"), bool) else None] += 1
    total = sum(counts.values())
    label = ("unknown" if counts[None] == total else "all" if counts[True] == total
             else "none" if counts[False] == total else "mixed")
    return (f"{label} ({counts[True]} canonical, {counts[False]} not, {counts[None]} unknown, "
            f"of {total} data files)")


def _reason(error):
    """Why a .tar.gz cannot be read, in a few words, from what tarfile, gzip or zlib raised."""
    text = " ".join(str(error).split())
    if isinstance(error, EOFError):
        return "truncated: the compressed data ends before its end marker"
    if isinstance(error, (gzip.BadGzipFile, zlib.error)) or "zlib" in text:
        return f"corrupt compressed data ({text})"
    if isinstance(error, tarfile.ReadError) and "not a gzip file" in text:
        return "not gzip-compressed (an archive of a run is a .tar.gz)"
    if isinstance(error, tarfile.ReadError) and "unexpected end of data" in text:
        return "truncated: a member ends before its recorded size"
    if isinstance(error, tarfile.ReadError):
        return f"not a tar archive inside its gzip compression ({text})"
    if isinstance(error, tarfile.TarError):
        return f"a member cannot be extracted safely ({text})"
    return f"cannot be read ({type(error).__name__}: {text})"


def _only_zeros_after(stream, offset):
    """Read ``stream`` from ``offset`` to its end (a gzip stream verifies its CRC and length there):
    whether it holds only zero bytes, the tar's end-of-archive blocks."""
    stream.seek(offset)
    while chunk := stream.read(CHUNK):
        if chunk.strip(b"\0"):
            return False
    return True


def extract(archive, dest):
    """Extract the archive into ``dest``; its one top folder. :class:`CannotVerify` (one sentence
    naming the archive) unless the file is a complete, intact gzip-compressed tar holding one
    folder with ``results/``: tarfile itself checks neither the gzip checksum nor what follows a
    corrupt member header (it takes that header for the end of the archive)."""
    try:
        if Path(archive).stat().st_size == 0:
            raise CannotVerify(f"{archive}: unreadable archive: an empty file")
        with tarfile.open(archive, "r:gz") as tar:
            tar.getmembers()  # every header, up to the first that cannot be read
            tar.extractall(dest, filter="data")
            if not _only_zeros_after(tar.fileobj, tar.offset):
                raise CannotVerify(f"{archive}: unreadable archive: a corrupt member header at byte "
                                 f"{tar.offset} of the tar (the members after it cannot be read)")
    except (OSError, EOFError, zlib.error, tarfile.TarError) as error:
        raise CannotVerify(f"{archive}: unreadable archive: {_reason(error)}") from None
    tops = [p for p in Path(dest).iterdir() if p.is_dir()]
    if len(tops) != 1 or not (tops[0] / paths.RESULTS).is_dir():
        raise CannotVerify(f"{archive}: not an attnrepro archive (one folder holding results/)")
    return tops[0]


def manifest_mismatches(top):
    """Files of the archive that are missing or differ from their MANIFEST.sha256 line."""
    manifest = top / "MANIFEST.sha256"
    if not manifest.is_file():
        return ["MANIFEST.sha256 (absent)"]
    try:
        lines = manifest.read_text().splitlines()
    except (OSError, ValueError):
        return ["MANIFEST.sha256 (unreadable)"]
    bad = []
    for line in lines:
        digest, _, name = line.partition("  ")
        path = top / name
        inside = path.resolve().is_relative_to(top.resolve())  # no ../ out of the archive
        if not inside or not path.is_file() or digests.file_sha256(path) != digest:
            bad.append(name)
    return bad


def _environment(top):
    """The archive's environment.json as a dict, and a warning when it cannot be read (from its
    RO-Crate instead, when it has one: attnrepro.archive.verify_crate)."""
    if (from_crate := verify_crate.environment(top)) is not None:
        return from_crate
    path = top / "environment.json"
    if not path.is_file():
        return {}, []
    try:
        env = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        env = error  # pragma: no mutate (equivalent: any value but a dict gives the same warning)
    if isinstance(env, dict) and all(isinstance(env.get(k) or {}, dict) for k in ("git", "versions")):
        return env, []
    return {}, ["the archive's environment.json cannot be read: its commit and package versions "
                "are not compared"]


def warnings(top):
    """Sentences on what differs between the archive's run and this checkout, besides results."""
    from attnrepro.run import provenance

    out = []
    bad = manifest_mismatches(top)
    if bad:
        out.append(f"{len(bad)} file(s) of the archive do not match its MANIFEST.sha256 "
                   f"(changed after it was written): {', '.join(bad[:3])}")
    out += verify_crate.warnings(top)
    env, unreadable = _environment(top)
    out += unreadable
    theirs, ours = (env.get("git") or {}), provenance.git_state(REPO)
    if theirs.get("commit") != ours["commit"]:
        out.append(f"the archive's commit ({theirs.get('commit') or 'not recorded'}) is not this checkout's "
                   f"HEAD ({ours['commit'] or 'not a git checkout'})")
    for side, state in (("the archive's run", theirs), ("this checkout", ours)):
        if state.get("dirty"):
            out.append(f"{side} had uncommitted changes to tracked files")
    out += _lock_warnings(top)
    versions = provenance.package_versions()
    changed = [f"{k} {v} here {versions.get(k)}" for k, v in (env.get("versions") or {}).items()
               if k in versions and versions[k] != v]
    if changed:
        out.append("package versions differ: archive " + "; ".join(changed))
    return out


def _lock_warnings(top):
    theirs, ours = verify_crate.path(top, "lock") or top / LOCK, REPO / LOCK
    if not theirs.is_file():
        return [f"the archive holds no {LOCK}: the locks are not compared"]
    if not ours.is_file():
        return [f"this checkout has no {LOCK}: the locks are not compared"]
    try:
        a, b = theirs.read_text().splitlines(), ours.read_text().splitlines()
    except (OSError, ValueError) as error:
        return [f"a {LOCK} cannot be read ({type(error).__name__}): the locks are not compared"]
    if a == b:
        return []
    only_a, only_b = [x for x in a if x not in b], [x for x in b if x not in a]
    return [f"{LOCK} differs: archive {only_a[:3]}, here {only_b[:3]}"]


# ---- the rerun ---------------------------------------------------------------------------

def workflow_files(repo=REPO):
    """The files a run of this checkout reads: the workflow, its code and config, the lock
    (as they are on disk, committed or not; no results, no caches)."""
    paths = [p for name in COPIED for p in ([repo / name] if (repo / name).is_file() else
                                             sorted((repo / name).rglob("*")))]
    return [p.relative_to(repo).as_posix() for p in paths
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]


def rerun(top, workdir, cores):
    """Copy this checkout's workflow to ``workdir``, run Snakemake there on the archive's config;
    the results folder, or None (after printing the log's tail) when Snakemake fails."""
    config = (verify_crate.path(top, "config") or top / "config.resolved.yaml").resolve()
    if not config.is_file():
        raise CannotVerify("the archive holds no config.resolved.yaml: nothing to rerun")
    workdir = Path(workdir)
    try:
        for name in workflow_files(REPO):
            (workdir / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, workdir / name,
                         follow_symlinks=False)  # pragma: no mutate (equivalent: None is False)
    except OSError as error:
        raise CannotVerify(f"cannot copy this checkout's workflow into {workdir}: {error}") from None
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    cmd = [sys.executable, "-m", "snakemake", "--cores", str(cores), "--configfile", str(config)]
    log = workdir / "verify-snakemake.log"
    print(f"rerunning in {workdir}: {' '.join(cmd[1:])} (log: {log})", flush=True)
    with open(log, "w") as fh:
        proc = subprocess.run(cmd, cwd=workdir, env=env, stdout=fh, stderr=subprocess.STDOUT)
    if proc.returncode:
        print("".join(log.read_text().splitlines(True)[-40:]), file=sys.stderr)
        return None
    return workdir / paths.RESULTS


# ---- command line ------------------------------------------------------------------------

def report(entries):
    """Print one line per file and the counts per kind; the verdict line and the exit status."""
    for e in entries:
        print(f"{e.status:<16} {e.path}" + (f": {e.detail}" if e.detail else ""))
    for kind in KINDS:
        of_kind = [e.status for e in entries if e.kind == kind]
        counts = ", ".join(f"{of_kind.count(s)} {s}" for s in
                           ("equal", "differs", "only in archive", "only here", "skipped"))
        print(f"{kind}: {counts}")
    bad = [e for e in entries if e.status not in ("equal", "skipped")]
    compared = [e for e in entries if e.status != "skipped"]
    if bad:
        return f"verdict: DIFFERS: {len(bad)} of {len(compared)} files differ or are on one side only", 1
    if not compared:
        return "verdict: NOTHING COMPARED: neither side holds results", 1
    return f"verdict: REPRODUCED: all {len(compared)} compared files are equal", 0


def _results_dir(path):
    """A results folder, given as itself or as the checkout that holds it."""
    path = Path(path)
    results, data = path / paths.RESULTS, path / paths.relative(paths.DATA)
    return results if results.is_dir() and not data.is_dir() else path


def _parser():
    parser = argparse.ArgumentParser(prog="attnrepro verify", description=__doc__.split("\n")[0])
    parser.add_argument("archive", help="attnrepro-results-<sha>.tar.gz")
    parser.add_argument("--results", help="a finished results folder (default: rerun the archive's config)")
    parser.add_argument("--cores", default="all", help="Snakemake's --cores for the rerun (default all)")
    parser.add_argument("--workdir", help="where to rerun (default: a temporary folder, removed after)")
    return parser


def main(argv=None):
    """Extract, warn, rerun or take ``--results``, compare and report; the exit status (0 equal,
    1 any difference, 2 :class:`CannotVerify` or a failed rerun)."""
    args = _parser().parse_args(argv)
    try:
        prefix = "attnrepro-verify-"  # pragma: no mutate (equivalent: the temporary folder's name)
        with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
            return _verify(args, Path(tmp))
    except CannotVerify as error:
        print(f"verify: {error}", file=sys.stderr)
        return 2


def _verify(args, tmp):
    if args.results and not _results_dir(args.results).is_dir():
        raise CannotVerify(f"--results {args.results}: no such folder")
    unpacked = "archive"  # pragma: no mutate (equivalent: a folder's name inside the temporary one)
    top = extract(args.archive, tmp / unpacked)
    print(f"archive: {args.archive}")
    for sentence in warnings(top):
        print(f"warning: {sentence}")
    if args.results:
        here = _results_dir(args.results)
    else:
        folder = "rerun"  # pragma: no mutate (equivalent: a folder's name inside the temporary one)
        here = rerun(top, Path(args.workdir or tmp / folder), args.cores)
        if here is None:
            print("verdict: RERUN FAILED (see above)")
            return 2
    print(f"here: {here}")
    verdict, status = report(compare(top / paths.RESULTS, here))
    print(f"canonical numerics: archive {canonical_status(top / 'results')}")
    print(f"canonical numerics: here    {canonical_status(here)}")
    print(verdict)
    return status
