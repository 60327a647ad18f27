"""Verify someone else's archive: compare its results with a run of this machine.

    python -m attnrepro verify results/archive/attnrepro-results-<sha>.tar.gz --results results
    python -m attnrepro verify ARCHIVE.tar.gz [--cores N] [--workdir DIR] [--max-size 4G] [--budget 2h]

The archive is untrusted data. Before anything is extracted, its headers are checked: one folder
holding ``results/``, files and folders only, no name outside it, each file no larger than its
RO-Crate declares, all of them within the ceiling (``--max-size``, default 1 GiB) and
the local disk's room (:mod:`attnrepro.archive.verify_extract`). Every Parquet file's rows and
uncompressed size are checked from its footer before any is read, and every other file verify
reads (its crate, manifest, config, lock, environment) against its cap in bytes, lines and JSON
nesting (:mod:`attnrepro.archive.verify_limits`, :mod:`attnrepro.run.bounded`).

With ``--results DIR`` the archive is compared with a finished results folder. Without it,
the archive's config (``config.resolved.yaml``) is read as data, validated and refused if it
asks for templating or names a program of its own; the keys that govern the machine (memory
limit, numerics sweep, listings, runtime factor) take this checkout's values, a warning each; a
rerun estimated beyond ``--budget`` (core time, default a few times the default run's) is refused
(:mod:`attnrepro.archive.verify_budget`); this checkout's workflow (``Snakefile``,
``workflow/``, ``src/``, ``config/``, ``envs/``, ``requirements/``, as on disk) is copied into a
temporary folder (or ``--workdir``, new or empty) and ``snakemake --cores N --configfile
<that config, as JSON>`` reruns the archived run there, under a guard that ends it, and removes
the temporary folder, within seconds of verify's end, however verify ends
(:mod:`attnrepro.archive.rerun_guard`); its ``results/`` is then compared.

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
differ from this checkout's, or a file of the archive no longer matches its MANIFEST.sha256
(:mod:`attnrepro.archive.verify_warnings`).
Each side's canonical numerics (``numerics.canonical`` in the provenance of every file under
``results/data``; absent in files written before it was recorded) is reported as all / none /
mixed / unknown.
"""

import argparse
import gzip
import sys
import tarfile
import tempfile
import zlib
from pathlib import Path

from attnrepro.run import bounded, usage
from attnrepro.archive import terminal, verify_budget, verify_extract, verify_limits
from attnrepro.archive import verify_rerun, verify_warnings
from attnrepro.dag import config as cfg, cost
from attnrepro.archive.verify_compare import KINDS, compare
from attnrepro import paths

REPO = paths.REPO
LIMITS = verify_limits.Limits()  # the caps of the files verify reads after extraction
EXIT_CODES = """exit status:
  0  every file compared is equal
  1  a file differs, or is on one side only, or nothing was compared
  2  cannot verify: a usage error, an archive refused or unreadable, a config that cannot be
     rerun or whose rerun is beyond --budget, a local disk without room, a rerun that failed
     (one line on stderr says which)
  128+N  ended by signal N (130 SIGINT, 143 SIGTERM): the rerun ended, the temporary folder removed
"""


class CannotVerify(Exception):
    """The archive, the results folder or the rerun's folder cannot be used: one sentence naming
    it, printed on stderr; exit status 2."""


# ---- canonical numerics, the archive's record ---------------------------------------------

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


def extract(archive, dest, limits=LIMITS, rerun_folder=None):
    """Extract the archive into ``dest`` once its headers passed every check of
    :mod:`attnrepro.archive.verify_extract`; its one top folder. :class:`CannotVerify` (one sentence
    naming the archive, its member, or the local disk) unless the file is a complete, intact
    gzip-compressed tar of one folder holding ``results/``, within the limits: tarfile itself checks
    neither the gzip checksum nor what follows a corrupt member header (it takes that header for
    the end of the archive). ``rerun_folder``: where a rerun will write as much as the archive's
    results, whose room is checked too."""
    if not Path(archive).exists():
        raise CannotVerify(f"{archive}: no such file")
    if Path(archive).is_dir():
        raise CannotVerify(f"{archive}: a folder, not an archive (a .tar.gz file)")
    try:
        if Path(archive).stat().st_size == 0:
            raise CannotVerify(f"{archive}: unreadable archive: an empty file")
        top, after, end = verify_extract.open_checked(archive, dest, limits, rerun_folder)
    except verify_extract.Refused as error:
        raise CannotVerify(f"{archive}: refused before extraction: {error}") from None
    except verify_extract.NoRoom as error:
        raise CannotVerify(str(error)) from None
    except OSError as error:
        local = verify_extract.local_problem(error, dest)
        raise CannotVerify(local or f"{archive}: unreadable archive: {_reason(error)}") from None
    except (EOFError, zlib.error, tarfile.TarError) as error:
        raise CannotVerify(f"{archive}: unreadable archive: {_reason(error)}") from None
    if after == "data":
        raise CannotVerify(f"{archive}: unreadable archive: a corrupt member header at byte {end} of the "
                           "tar (the members after it cannot be read)")
    if after in ("long", "trailing"):
        where = "of the compressed file " if after == "trailing" else ""
        raise CannotVerify(f"{archive}: refused: more than {verify_extract.shown(limits.tail_bytes)} "
                           f"{where}follow the end of its tar at byte {end}")
    return top


# ---- the rerun ---------------------------------------------------------------------------

def rerun(top, workdir, cores, budget=None, remove=None):
    """Check the archive's config (:func:`attnrepro.archive.verify_rerun.config_for_rerun`: its keys
    of the machine this checkout's, a warning each) and its estimate against ``budget`` (core
    seconds; None: :func:`attnrepro.archive.verify_budget.default_seconds`), copy this checkout's
    workflow to ``workdir`` and run Snakemake there on that config, as JSON, under a guard that
    removes ``remove`` (the temporary folder) if verify dies; the results folder, or
    None (after printing the log's tail) when Snakemake fails."""
    try:
        checked = verify_rerun.config_for_rerun(top)
    except verify_rerun.ConfigRefused as error:
        for sentence in error.warnings:  # the memory pre-flight's limit is this machine's: say so
            print(f"warning: {sentence}")
        raise CannotVerify(str(error)) from None
    for sentence in checked.warnings:
        print(f"warning: {sentence}")
    budget = verify_budget.default_seconds() if budget is None else budget
    try:
        print(verify_budget.check(checked.merged, budget, cfg.load(cfg.DEFAULT)))
    except verify_budget.OverBudget as error:
        raise CannotVerify(str(error)) from None
    workdir = Path(workdir)
    try:
        verify_rerun.copy_workflow(workdir, REPO)
        config_path = verify_rerun.write_config(verify_rerun.texts_here(checked.config), workdir)
    except OSError as error:
        local = verify_extract.local_problem(error, workdir)
        raise CannotVerify(local or f"cannot copy this checkout's workflow into {workdir}: {error}") from None
    cmd = verify_rerun.snakemake_command(cores, config_path)
    log = workdir / verify_rerun.LOG
    print(f"rerunning in {workdir}: {' '.join(cmd[1:])} (log: {log})", flush=True)
    if verify_rerun.run(cmd, workdir, remove):
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


def _size(text):
    try:
        return verify_limits.parse_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _budget(text):
    try:
        return verify_budget.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _parser():
    parser = usage.Parser(prog="attnrepro verify", description=__doc__.split("\n")[0], epilog=EXIT_CODES,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("archive", help="attnrepro-results-<sha>.tar.gz")
    parser.add_argument("--results", help="a finished results folder (default: rerun the archive's config)")
    parser.add_argument("--cores", default="all", help="Snakemake's --cores for the rerun (default all)")
    parser.add_argument("--workdir", help="where to rerun, a new or empty folder (default: a temporary "
                                          "folder, removed after)")
    parser.add_argument("--max-size", type=_size, default=LIMITS.total_bytes,
                        metavar="SIZE", help="the ceiling of the archive's files once extracted (default "
                                             "1G; 4G, 512M); an eighth of it bounds a Parquet file's "
                                             "uncompressed data")
    parser.add_argument("--budget", type=_budget, metavar="TIME",
                        help="the most core time a rerun may take, by the project's estimates: a number "
                             "and s, m, h, d or y (90m, 2h, 3d); the sum of its jobs' seconds, a run on N "
                             f"cores takes about 1/N of it (default: {verify_budget.FACTOR} times the "
                             "default run's estimate, config/config.yaml's: "
                             f"{cost.shown(verify_budget.default_seconds())}). A config beyond it is "
                             "refused before any job")
    return parser


def main(argv=None):
    """Extract, warn, rerun or take ``--results``, compare and report; the exit status
    (:data:`EXIT_CODES`). A signal ends the rerun and removes the temporary folder first. All it
    prints is escaped (:mod:`attnrepro.archive.terminal`): any of it may be the archive's text."""
    with terminal.escaping():
        return _main(argv)


def _main(argv):
    args = _parser().parse_args(argv)
    try:
        with verify_rerun.handling_signals():
            prefix = "attnrepro-verify-"  # pragma: no mutate (equivalent: the temporary folder's name)
            with tempfile.TemporaryDirectory(prefix=prefix) as tmp, verify_rerun.removed(tmp):
                return _verify(args, Path(tmp))
    except CannotVerify as error:
        print(f"verify: {error}", file=sys.stderr)
        return 2
    except verify_rerun.Interrupted as stop:
        ended = "the rerun was ended and " if stop.during_rerun else ""
        print(f"verify: stopped by {stop}: {ended}the temporary folder removed", file=sys.stderr)
        return 128 + stop.signum


def _verify(args, tmp):
    if args.results and not _results_dir(args.results).is_dir():
        raise CannotVerify(f"--results {args.results}: no such folder")
    if not args.results and args.workdir and (problem := verify_rerun.check_workdir(args.workdir)):
        raise CannotVerify(problem)
    limits = verify_limits.Limits(total_bytes=args.max_size)
    unpacked = "archive"  # pragma: no mutate (equivalent: a folder's name inside the temporary one)
    folder = "rerun"  # pragma: no mutate (equivalent: a folder's name inside the temporary one)
    workdir = None if args.results else Path(args.workdir or tmp / folder)
    top = extract(args.archive, tmp / unpacked, limits, workdir)
    try:
        said = verify_warnings.warnings(top)
    except bounded.Exceeded as error:
        raise CannotVerify(f"{args.archive}: refused: its {error}") from None
    print(f"archive: {args.archive}")
    for sentence in said:
        print(f"warning: {sentence}")
    too_large = verify_extract.parquet_errors(top / paths.RESULTS, limits)
    if too_large:
        raise CannotVerify(f"{args.archive}: refused: {len(too_large)} Parquet file(s) too large to read: "
                           + "; ".join(too_large[:3]))
    if args.results:
        here = _results_dir(args.results)
    else:
        here = rerun(top, workdir, args.cores, args.budget, remove=tmp)
        if here is None:
            print("verdict: RERUN FAILED (see above)")
            return 2
    print(f"here: {here}")
    verdict, status = report(compare(top / paths.RESULTS, here, limits))
    print(f"canonical numerics: archive {canonical_status(top / 'results')}")
    print(f"canonical numerics: here    {canonical_status(here)}")
    print(verdict)
    return status
