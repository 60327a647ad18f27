"""Verify someone else's archive: compare its results with a run of this machine.

    python -m attnrepro verify results/archive/attnrepro-results-<sha>.tar.gz --results results
    python -m attnrepro verify ARCHIVE.tar.gz [--cores N] [--workdir DIR]

With ``--results DIR`` the archive is compared with a finished results folder. Without it,
this checkout's workflow (``Snakefile``, ``workflow/``, ``src/``, ``config/``, ``envs/``,
``requirements.lock``, as on disk) is copied into a temporary folder (or ``--workdir``) and
``snakemake --cores N --configfile <the archive's config.resolved.yaml>`` reruns the archived
run there; its ``results/`` is then compared.

Compared, file by file, exactly (NaN equal to NaN):

- every Parquet file on either side, without its measured columns
  (:func:`attnrepro.plan.measured_columns`); the ``machine`` table of a timing experiment
  describes the machine and is skipped;
- every ``results/tables/*.csv`` as text, except the tables built from a timing experiment
  (skipped: every number of theirs is a Parquet column, compared above without its times);
- ``results/ledger.csv`` claim by claim (by id), every column present on both sides except
  ``reproduced``, ``verdict`` and ``reason`` of a machine-bound claim (a timing).

A file present on one side only differs. Figures, logs and benchmarks are not compared.
Warnings, which do not change the verdict: the archive's commit, lock or package versions
differ from this checkout's, or a file of the archive no longer matches its MANIFEST.sha256.
Each side's canonical numerics (``numerics.canonical`` in the provenance of every file under
``results/data``; absent in files written before it was recorded) is reported as all / none /
mixed / unknown. Exit status: 0 when everything compared is equal, 1 on any difference, 2 when
the archive cannot be read or the rerun fails.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COPIED = ("Snakefile", "workflow", "src", "config", "envs", "requirements.lock")  # what a rerun needs
LOCK = "requirements.lock"
MACHINE_BOUND_COLUMNS = ("reproduced", "verdict", "reason")


@dataclass
class Entry:
    kind: str  # "parquet", "table" or "ledger"
    path: str  # relative to the results folder
    status: str  # "equal", "differs", "only in archive", "only here", "skipped"
    detail: str = ""


# ---- values and frames -------------------------------------------------------------------

def _show(value):
    """A value as printed in a difference: floats to the last digit."""
    import numpy as np

    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, np.integer):
        return str(int(value))
    if isinstance(value, np.ndarray):
        return np.array2string(value, threshold=8)
    return repr(value)


def _same(x, y):
    """Exact equality of two cells, NaN (or None) equal to NaN; arrays element by element."""
    import numpy as np
    import pandas as pd

    if isinstance(x, (np.ndarray, list, tuple)) or isinstance(y, (np.ndarray, list, tuple)):
        x, y = np.asarray(x, dtype=object), np.asarray(y, dtype=object)
        return x.shape == y.shape and all(_same(p, q) for p, q in zip(x.ravel(), y.ravel()))
    x_na, y_na = bool(pd.isna(x)), bool(pd.isna(y))
    if x_na or y_na:
        return x_na and y_na
    return bool(x == y)


def _unequal(a, b):
    """Boolean array over the rows of two columns: True where they differ."""
    import numpy as np
    import pandas as pd

    x, y = a.to_numpy(), b.to_numpy()
    try:
        return np.asarray((x != y) & ~(pd.isna(x) & pd.isna(y)), dtype=bool)
    except (TypeError, ValueError):  # arrays in cells, pd.NA: cell by cell
        return np.array([not _same(p, q) for p, q in zip(x, y)], dtype=bool)


def first_difference(archive, here):
    """None when two frames are equal (same columns, rows, dtypes, values; NaN equals NaN),
    else a sentence naming the first difference: row, column, the archive's and this value."""
    only_archive = [c for c in archive.columns if c not in here.columns]
    only_here = [c for c in here.columns if c not in archive.columns]
    if only_archive or only_here:
        return f"columns only in archive {only_archive}, only here {only_here}"
    if len(archive) != len(here):
        return f"{len(archive)} rows in archive, {len(here)} here"
    first = None
    for column in archive.columns:
        a, b = archive[column].reset_index(drop=True), here[column].reset_index(drop=True)
        if a.dtype != b.dtype:
            return f"column {column!r}: type {a.dtype} in archive, {b.dtype} here"
        rows = _unequal(a, b).nonzero()[0]
        if len(rows) and (first is None or rows[0] < first[0]):
            first = (int(rows[0]), column, len(rows))
    if first is None:
        return None
    row, column, count = first
    return (f"row {row}, column {column!r}: archive {_show(archive[column].iloc[row])}, "
            f"here {_show(here[column].iloc[row])} ({count} value(s) differ in that column)")


# ---- the three kinds of file -------------------------------------------------------------

def _experiment(rel):
    """(experiment, table) of a Parquet path, or (None, None) outside the plan's experiments."""
    from attnrepro.plan import parse_output

    try:
        experiment, table, _ = parse_output(rel)
    except ValueError:
        return None, None
    return experiment, table


def compare_parquet(rel, archive_path, here_path):
    from attnrepro import io, plan

    experiment, table = _experiment(rel)
    if experiment and plan.EXPERIMENTS[experiment].timing and table == "machine":
        return Entry("parquet", rel, "skipped", "describes the machine that ran it")
    try:  # an archive from before integrity records is read; a corrupt file on either side differs
        archive, here = io.read_parquet(archive_path, require_integrity=False), io.read_parquet(here_path)
    except io.ResultError as error:
        return Entry("parquet", rel, "differs", str(error))
    if experiment:
        archive = archive.drop(columns=plan.measured_columns(experiment, archive.columns))
        here = here.drop(columns=plan.measured_columns(experiment, here.columns))
    difference = first_difference(archive, here)
    return Entry("parquet", rel, "differs" if difference else "equal", difference or "")


def _timing_table(name):
    from attnrepro import plan
    from attnrepro.report import catalog

    product = catalog.PRODUCTS.get(name)
    return product is not None and any(plan.EXPERIMENTS[e].timing for e in product.experiments)


def _read_csv(path):
    import pandas as pd

    return pd.read_csv(path, dtype=str, keep_default_na=False)


def compare_table(rel, archive_path, here_path):
    if _timing_table(Path(rel).stem):
        return Entry("table", rel, "skipped", "built from a timing experiment (its Parquet is compared)")
    difference = first_difference(_read_csv(archive_path), _read_csv(here_path))
    return Entry("table", rel, "differs" if difference else "equal", difference or "")


def ledger_differences(archive, here):
    """[sentence] for each claim only on one side and each differing value, in the archive's order."""
    archive, here = archive.set_index("id", drop=False), here.set_index("id", drop=False)
    out = [f"claim {i} only in archive" for i in archive.index if i not in here.index]
    out += [f"claim {i} only here" for i in here.index if i not in archive.index]
    columns = [c for c in archive.columns if c in here.columns]
    for claim in (i for i in archive.index if i in here.index):
        a, b = archive.loc[claim], here.loc[claim]
        machine_bound = "machine-bound" in (a.get("class"), b.get("class"))
        for column in columns:
            if machine_bound and column in MACHINE_BOUND_COLUMNS:
                continue
            if a[column] != b[column]:
                out.append(f"claim {claim}, column {column!r}: archive {a[column]!r}, here {b[column]!r}")
    return out


def compare_ledger(rel, archive_path, here_path):
    archive, here = _read_csv(archive_path), _read_csv(here_path)
    differences = ledger_differences(archive, here)
    if differences:
        more = f" (and {len(differences) - 1} more)" if len(differences) > 1 else ""
        return Entry("ledger", rel, "differs", differences[0] + more)
    extra = sorted(set(archive.columns) ^ set(here.columns))
    note = f"{len(archive)} claims" + (f"; column(s) {extra} on one side only, not compared" if extra else "")
    return Entry("ledger", rel, "equal", note)


KINDS = {  # kind: (files of a results folder, comparison)
    "parquet": (lambda root: root.rglob("*.parquet"), compare_parquet),
    "table": (lambda root: (root / "tables").glob("*.csv"), compare_table),
    "ledger": (lambda root: (root / "ledger.csv",), compare_ledger),
}


def compare(archive_results, here_results):
    """[Entry] for every file of the three kinds on either side, by kind then path."""
    archive_results, here_results = Path(archive_results), Path(here_results)
    entries = []
    for kind, (files, comparison) in KINDS.items():
        def listed(root):
            return {p.relative_to(root).as_posix() for p in files(root) if p.is_file()}

        archive_files, here_files = listed(archive_results), listed(here_results)
        for rel in sorted(archive_files | here_files):
            shown = f"results/{rel}"
            if rel not in here_files:
                entries.append(Entry(kind, shown, "only in archive"))
            elif rel not in archive_files:
                entries.append(Entry(kind, shown, "only here"))
            else:
                entries.append(comparison(shown, archive_results / rel, here_results / rel))
    return entries


# ---- canonical numerics, the archive's record, warnings ----------------------------------

def canonical_status(results):
    """'all', 'none', 'mixed' or 'unknown' (with counts): did every data file run canonical numerics?"""
    from attnrepro import io

    counts = {True: 0, False: 0, None: 0}
    for path in Path(results).glob("data/**/*.parquet"):
        try:  # unknown when unreadable; an archive's file may predate integrity records
            numerics = io.read_provenance(path, require_integrity=False).get("numerics") or {}
        except io.ResultError:
            numerics = {}
        counts[numerics.get("canonical") if isinstance(numerics.get("canonical"), bool) else None] += 1
    total = sum(counts.values())
    label = ("unknown" if counts[None] == total else "all" if counts[True] == total
             else "none" if counts[False] == total else "mixed")
    return (f"{label} ({counts[True]} canonical, {counts[False]} not, {counts[None]} unknown, "
            f"of {total} data files)")


def extract(archive, dest):
    """Extract the archive into ``dest``; its one top folder."""
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    tops = [p for p in Path(dest).iterdir() if p.is_dir()]
    if len(tops) != 1 or not (tops[0] / "results").is_dir():
        raise ValueError(f"{archive}: not an attnrepro archive (one folder holding results/)")
    return tops[0]


def manifest_mismatches(top):
    """Files of the archive that are missing or differ from their MANIFEST.sha256 line."""
    manifest = top / "MANIFEST.sha256"
    if not manifest.is_file():
        return ["MANIFEST.sha256 (absent)"]
    bad = []
    for line in manifest.read_text().splitlines():
        digest, _, name = line.partition("  ")
        path = top / name
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            bad.append(name)
    return bad


def warnings(top):
    """Sentences on what differs between the archive's run and this checkout, besides results."""
    from attnrepro import provenance

    out = []
    bad = manifest_mismatches(top)
    if bad:
        out.append(f"{len(bad)} file(s) of the archive do not match its MANIFEST.sha256 "
                   f"(changed after it was written): {', '.join(bad[:3])}")
    env_file = top / "environment.json"
    env = json.loads(env_file.read_text()) if env_file.is_file() else {}
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
    theirs, ours = top / LOCK, REPO / LOCK
    if not theirs.is_file():
        return [f"the archive holds no {LOCK}: the locks are not compared"]
    if not ours.is_file():
        return [f"this checkout has no {LOCK}: the locks are not compared"]
    a, b = theirs.read_text().splitlines(), ours.read_text().splitlines()
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
    workdir = Path(workdir)
    for name in workflow_files():
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, workdir / name, follow_symlinks=False)
    config = (top / "config.resolved.yaml").resolve()
    if not config.is_file():
        print("the archive holds no config.resolved.yaml: nothing to rerun", file=sys.stderr)
        return None
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    cmd = [sys.executable, "-m", "snakemake", "--cores", str(cores), "--configfile", str(config)]
    log = workdir / "verify-snakemake.log"
    print(f"rerunning in {workdir}: {' '.join(cmd[1:])} (log: {log})", flush=True)
    with open(log, "w") as fh:
        proc = subprocess.run(cmd, cwd=workdir, env=env, stdout=fh, stderr=subprocess.STDOUT)
    if proc.returncode:
        print("".join(log.read_text().splitlines(True)[-40:]), file=sys.stderr)
        return None
    return workdir / "results"


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
    return path / "results" if (path / "results").is_dir() and not (path / "data").is_dir() else path


def _parser():
    parser = argparse.ArgumentParser(prog="attnrepro verify", description=__doc__.split("\n")[0])
    parser.add_argument("archive", help="attnrepro-results-<sha>.tar.gz")
    parser.add_argument("--results", help="a finished results folder (default: rerun the archive's config)")
    parser.add_argument("--cores", default="all", help="Snakemake's --cores for the rerun (default all)")
    parser.add_argument("--workdir", help="where to rerun (default: a temporary folder, removed after)")
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="attnrepro-verify-") as tmp:
        try:
            top = extract(args.archive, Path(tmp) / "archive")
        except (OSError, tarfile.TarError, ValueError) as error:
            print(f"verify: {error}", file=sys.stderr)
            return 2
        print(f"archive: {args.archive}")
        for sentence in warnings(top):
            print(f"warning: {sentence}")
        if args.results:
            here = _results_dir(args.results)
        else:
            workdir = Path(args.workdir or Path(tmp) / "rerun")
            here = rerun(top, workdir, args.cores)
            if here is None:
                print("verdict: RERUN FAILED (see above)")
                return 2
        print(f"here: {here}")
        verdict, status = report(compare(top / "results", here))
        print(f"canonical numerics: archive {canonical_status(top / 'results')}")
        print(f"canonical numerics: here    {canonical_status(here)}")
        print(verdict)
    return status
