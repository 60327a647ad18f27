"""Golden values: what the canonical default run computes, committed, and guarded by the CI gate.

Two files under ``tests/golden/``, one line per item so that a reviewer reads their diff:

- ``ledger.csv``: ``id, class, reproduced`` of every claim that is not machine-bound (a
  timing is the machine's, not the code's);
- ``tables.csv``: ``path, rows, sha256`` of every Parquet table of a non-timing experiment
  under ``results/data``: a hash of its content (column names, dtypes and values, measured
  columns aside), not of its bytes, which hold the provenance and its times.

The gate (``python -m attnrepro.report gate``, run by ``.ci/run`` after the default run) fails
when the ledger is empty, when a claim is missing, when an exact claim is not reproduced, when a
file ran non-canonical numerics, and, given ``--golden``, when any golden value or hash changed,
appeared or disappeared. Updating the golden files is one deliberate command whose diff is read
in review:

    python -m attnrepro.report golden --ledger results/ledger.csv --data results/data --out tests/golden
"""

from pathlib import Path

import pandas as pd

from attnrepro import io, plan
from attnrepro.report import ledger

LEDGER_FILE = "ledger.csv"
TABLES_FILE = "tables.csv"
KEPT = ["id", "class", "reproduced"]


def table_hash(path):
    """(rows, content hash) of one result file, its measured columns dropped."""
    experiment, _, _ = plan.parse_output(path)
    frame = io.read_parquet(path)
    frame = frame.drop(columns=plan.measured_columns(experiment, frame.columns))
    return len(frame), io.content_hash(frame)  # the hash io records at write, over fewer columns


def hashed_files(data_root):
    """The Parquet files under ``data_root`` (results/data) of non-timing experiments, sorted."""
    root = Path(data_root)
    files = sorted(root.rglob("*.parquet"))
    return [p for p in files if not plan.EXPERIMENTS[plan.parse_output(p)[0]].timing]


def _relative(path, data_root):
    return f"{plan.RESULTS}/data/{Path(path).relative_to(data_root).as_posix()}"


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
        return pd.DataFrame(columns=["id", "class", "verdict", "reproduced", "published", "reason"])


def write(out_dir, table, data_root):
    """Write both golden files from a finished run (the deliberate update)."""
    out = Path(out_dir)
    for name, frame in ((LEDGER_FILE, snapshot_ledger(table)), (TABLES_FILE, snapshot_tables(data_root))):
        with io.atomic_path(out / name) as tmp:
            frame.to_csv(tmp, index=False)
    return out


def _differences(golden, now, key, columns, what):
    """Messages for every key whose columns differ, or that only one side has."""
    golden, now = golden.set_index(key), now.set_index(key)
    problems = [f"{what} {k}: in the golden file, not in this run"
                for k in golden.index.difference(now.index)]
    problems += [f"{what} {k}: new in this run, not in the golden file"
                 for k in now.index.difference(golden.index)]
    for k in golden.index.intersection(now.index, sort=True):
        for col in columns:
            was, is_ = str(golden.at[k, col]), str(now.at[k, col])
            if was != is_:
                problems.append(f"{what} {k}: {col} was {was!r} in the golden file, is {is_!r} now")
    return problems


def golden_problems(golden_dir, table, data_root):
    """Every difference between a run and the golden files (empty: the run is golden)."""
    golden_dir = Path(golden_dir)
    missing = [n for n in (LEDGER_FILE, TABLES_FILE) if not (golden_dir / n).is_file()]
    if missing:
        return [f"golden file missing: {golden_dir / n}" for n in missing]
    problems = _differences(read_ledger(golden_dir / LEDGER_FILE), snapshot_ledger(table), "id",
                            ["class", "reproduced"], "claim")
    tables = pd.read_csv(golden_dir / TABLES_FILE, dtype=str, keep_default_na=False)
    now = snapshot_tables(data_root).astype(str)
    return problems + _differences(tables, now, "path", ["rows", "sha256"], "table")


def ledger_problems(table):
    """What no run may show: an empty ledger, a missing claim, an exact claim not reproduced,
    a claim computed with non-canonical numerics."""
    if table.empty:
        return ["the ledger is empty"]
    problems = [f"claim {r.id}: missing ({r.reason})" for r in table.itertuples() if r.verdict == "missing"]
    problems += [f"claim {r.id}: exact claim not reproduced (published {r.published}, reproduced "
                 f"{r.reproduced})" for r in ledger.exact_failures(table).itertuples()
                 if r.verdict != "missing"]
    if "numerics" in table.columns:
        problems += [f"claim {r.id}: {r.numerics}" for r in table.itertuples() if r.numerics != "canonical"]
    return problems
