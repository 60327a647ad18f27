"""Golden values: what the canonical default run computes, committed, and guarded by the CI gate.

Two files under ``tests/golden/``, one line per item so that a reviewer reads their diff:

- ``ledger.csv``: ``id, class, reproduced`` of every claim that is not machine-bound (a
  timing is the machine's, not the code's);
- ``tables.csv``: ``path, rows, sha256`` of every Parquet table of a non-timing experiment
  under ``results/data``: a hash of its content (column names, dtypes and values, measured
  columns aside), not of its bytes, which hold the provenance and its times;
- ``numerics.json``: the C library and the fingerprint of the transcendental functions
  (:mod:`attnrepro.numerics.fingerprint`) that the run's files record in their provenance, one line per
  function. Jobs read it (a job with another fingerprint is not canonical), so it is an input of
  every rule, and the update rewrites it only when its content changes.

The gate (``python -m attnrepro.report gate``, run by ``.ci/run`` after the default run) fails
when the ledger is empty, when a claim is missing, when an exact claim is not reproduced, when a
file ran non-canonical numerics, when a row's verdict contradicts its own printed value and bounds
(:mod:`attnrepro.report.ledger.contradictions`), and, given ``--golden``, when any golden value,
hash or function fingerprint changed, appeared or disappeared (or the run's files disagree on a fingerprint).
Updating the golden files is one deliberate command whose diff is read in review; it refuses a
run whose files lack a fingerprint, ran without the pin or disagree among themselves:

    python -m attnrepro.report golden --ledger results/ledger.csv --data results/data --out tests/golden
"""

from pathlib import Path
from typing import NamedTuple

import pandas as pd

from attnrepro import paths
from attnrepro.numerics import fingerprint
from attnrepro.run import io
from attnrepro.dag import plan
from attnrepro.report.ledger import contradictions, verdicts

LEDGER_FILE = "ledger.csv"
TABLES_FILE = "tables.csv"
NUMERICS_FILE = Path(fingerprint.GOLDEN).name  # numerics.json
FILES = (LEDGER_FILE, TABLES_FILE, NUMERICS_FILE)
SHOWN = 3  # files named in a message about many
KEPT = ["id", "class", "reproduced"]
CSV = {"index": False}  # how the golden CSV files are written: their columns, no row index
# a ledger's columns (report.ledger.files.write): those of a ledger file that holds no claim
COLUMNS = ["id", "article", "section", "claim", "published", "reproduced", "class", "verdict", "reason",
           "numerics"]


def table_hash(path):
    """(rows, content hash) of one result file, its measured columns dropped."""
    experiment, _ = plan.output_case(path)
    frame = io.read_parquet(path)
    frame = frame.drop(columns=plan.measured_columns(experiment, frame.columns))
    return len(frame), io.content_hash(frame)  # the hash io records at write, over fewer columns


def hashed_files(data_root):
    """The Parquet files of non-timing experiments under ``data_root`` (results/data) and beside it
    under seeds/data (the seed distribution's trainings beyond the run's own), sorted."""
    root = Path(data_root)
    files = sorted(root.rglob("*.parquet")) + sorted((root.parent / "seeds" / "data").rglob("*.parquet"))
    return [p for p in files if not plan.EXPERIMENTS[plan.output_case(p)[0]].timing]


def _relative(path, data_root):
    """A file's path as the repository names it: results/data/... or results/seeds/data/..."""
    return f"{paths.RESULTS}/{Path(path).relative_to(Path(data_root).parent).as_posix()}"


def snapshot_tables(data_root):
    """``path, rows, sha256`` of every hashed file (paths as the repository names them)."""
    rows = [(_relative(p, data_root), *table_hash(p)) for p in hashed_files(data_root)]
    return pd.DataFrame(rows, columns=["path", "rows", "sha256"])


def snapshot_ledger(table):
    """``id, class, reproduced`` of every claim that is not machine-bound, by id."""
    kept = table[table["class"] != "machine-bound"][KEPT]
    return kept.sort_values("id").reset_index(drop=True)


def read_ledger(path):
    """A ledger CSV as text cells (the reproduced digits as written); an empty file is an empty
    ledger, a missing one an error that names it."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"no ledger at {path}: build it with `snakemake --cores N ledger`")
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        return pd.DataFrame(columns=COLUMNS)


class Refused(Exception):
    """The run cannot give golden files (its message says which files and why)."""


def _records(data_root):
    """(repository path, numerics record or {}) of every Parquet file under ``data_root``."""
    return [(_relative(p, data_root), io.read_provenance(p).get("numerics") or {})
            for p in sorted(Path(data_root).rglob("*.parquet"))]


def _some(paths):
    more = f" and {len(paths) - SHOWN} more" if len(paths) > SHOWN else ""
    return ", ".join(paths[:SHOWN]) + more


class RunFingerprint(NamedTuple):
    """A run's fingerprint, from its files' numerics records."""

    libc: str  # the C libraries the files name, joined
    prints: dict  # {function: hash} where every file that has it agrees
    disputed: dict  # {function: {hash: [files]}} where they do not
    bare: list  # the files without a fingerprint

    def problems(self):
        """A line for the files without a fingerprint and one per disputed function."""
        lines = [f"numerics fingerprint: none recorded in {_some(self.bare)} (files from before the "
                 "fingerprint: rebuild them)"] if self.bare else []
        for name, by_value in self.disputed.items():
            seen = "; ".join(f"{value} in {_some(paths)}" for value, paths in sorted(by_value.items()))
            lines.append(f"numerics fingerprint {name}: the run's files disagree ({seen})")
        return lines


def run_fingerprint(records):
    """The :class:`RunFingerprint` of a run's ``records`` ((path, numerics record) pairs): the
    union of its files' fingerprints."""
    hashes, libcs, bare = {}, set(), []
    for path, record in records:
        if not isinstance(record.get("fingerprint"), dict):
            bare.append(path)
            continue
        libcs.add(record.get("libc", "unknown"))
        for name, value in record["fingerprint"].items():
            hashes.setdefault(name, {}).setdefault(value, []).append(path)
    prints = {name: next(iter(v)) for name, v in sorted(hashes.items()) if len(v) == 1}
    disputed = {name: v for name, v in sorted(hashes.items()) if len(v) > 1}
    return RunFingerprint(", ".join(sorted(libcs)) or "unknown", prints, disputed, bare)


def golden_fingerprint(data_root):
    """(C library, {function: hash}) for the golden file, from the run's provenance; Refused when
    a file has none, ran without the pin, or the files disagree."""
    records = _records(data_root)
    run = run_fingerprint(records)
    problems = run.problems()
    unpinned = [path for path, record in records if "fingerprint" in record and not record.get("pinned")]
    if unpinned:
        problems.append(f"numerics: {_some(unpinned)} ran without the pin: not the canonical numerics")
    if not records:
        problems.append(f"no result file under {data_root}")
    if problems:
        raise Refused("\n".join(problems))
    return run.libc, run.prints


def write(out_dir, table, data_root):
    """Write the golden files from a finished run (the deliberate update); Refused, writing
    nothing, when the run's fingerprint is not one (:func:`golden_fingerprint`)."""
    out = Path(out_dir)
    numerics = fingerprint.text(*golden_fingerprint(data_root))
    for name, frame in ((LEDGER_FILE, snapshot_ledger(table)), (TABLES_FILE, snapshot_tables(data_root))):
        with io.atomic_path(out / name) as tmp:
            frame.to_csv(tmp, **CSV)
    path = out / NUMERICS_FILE
    if not path.is_file() or path.read_text() != numerics:  # an input of every rule: kept when unchanged
        io.write_text(path, numerics)
    return out


def _differences(golden, now, key, columns, what):
    """Messages for every key whose columns differ, or that only one side has."""
    golden, now = golden.set_index(key), now.set_index(key)
    problems = [f"{what} {k}: in the golden file, not in this run"
                for k in golden.index.difference(now.index)]
    problems += [f"{what} {k}: new in this run, not in the golden file"
                 for k in now.index.difference(golden.index)]
    for k in sorted(golden.index.intersection(now.index)):
        for col in columns:
            was, is_ = str(golden.at[k, col]), str(now.at[k, col])
            if was != is_:
                problems.append(f"{what} {k}: {col} was {was!r} in the golden file, is {is_!r} now")
    return problems


def fingerprint_problems(path, data_root):
    """Every function whose fingerprint in the run differs from the golden file ``path``, or that
    only one side has, naming the C libraries; and the run's own disagreements."""
    try:
        golden_libc, golden = fingerprint.load(path)
    except ValueError as error:
        return [f"numerics fingerprint: {error}"]
    run = run_fingerprint(_records(data_root))
    problems, prints = run.problems(), run.prints
    for name in sorted((set(golden) | set(prints)) - set(run.disputed)):
        if name not in prints:
            problems.append(f"numerics fingerprint {name}: in the golden file, not in this run")
        elif name not in golden:
            problems.append(f"numerics fingerprint {name}: new in this run, not in the golden file")
        elif prints[name] != golden[name]:
            problems.append(f"numerics fingerprint {name}: was {golden[name]!r} in the golden file "
                            f"({golden_libc}), is {prints[name]!r} now ({run.libc}): the math library "
                            "computes other bits")
    return problems


def golden_problems(golden_dir, table, data_root):
    """Every difference between a run and the golden files (empty: the run is golden)."""
    golden_dir = Path(golden_dir)
    missing = [n for n in FILES if not (golden_dir / n).is_file()]
    if missing:
        return [f"golden file missing: {golden_dir / n}" for n in missing]
    problems = _differences(read_ledger(golden_dir / LEDGER_FILE), snapshot_ledger(table), "id",
                            ["class", "reproduced"], "claim")
    tables = pd.read_csv(golden_dir / TABLES_FILE, dtype=str, keep_default_na=False)
    now = snapshot_tables(data_root).astype(str)
    problems += _differences(tables, now, "path", ["rows", "sha256"], "table")
    return problems + fingerprint_problems(golden_dir / NUMERICS_FILE, data_root)


def ledger_problems(table):
    """What no run may show: an empty ledger, a missing claim, a claim not comparable with the
    article (computed with other parameters: the gate runs on the article's config), an exact
    claim not reproduced, a claim computed with non-canonical numerics, a verdict that its own
    printed value and bounds contradict (ledger.contradictions)."""
    if table.empty:
        return ["the ledger is empty"]
    problems = [f"claim {r.id}: missing ({r.reason})" for r in table.itertuples() if r.verdict == "missing"]
    problems += [f"claim {r.id}: not comparable with the article ({r.reason})" for r in table.itertuples()
                 if r.verdict == "other parameters"]
    problems += [f"claim {r.id}: exact claim not reproduced (published {r.published}, reproduced "
                 f"{r.reproduced})" for r in verdicts.exact_failures(table).itertuples()
                 if r.verdict not in ("missing", "other parameters")]
    if "numerics" in table.columns:
        problems += [f"claim {r.id}: {r.numerics}" for r in table.itertuples() if r.numerics != "canonical"]
    return problems + contradictions.problems(table.to_dict(
        "records",  # pragma: no mutate (equivalent: pandas reads the orient in any case)
    ))
