"""What ``attnrepro verify`` compares, file by file: two results folders, exactly.

- every Parquet file on either side, without its measured columns
  (:func:`attnrepro.dag.plan.measured_columns`: their values, not their presence); the ``machine``
  table of a timing experiment describes the machine and is skipped;
- every ``results/tables/*.csv`` as text, except the tables built from a timing experiment
  (skipped: every number of theirs is a Parquet column, compared without its times);
- ``results/ledger.csv`` claim by claim (by id), every column except what a machine-bound claim
  (a timing) takes from the clock (:data:`attnrepro.report.ledger.verdicts.FROM_THE_CLOCK`: its
  value, the article code's, the window that judged them, the verdict and its reason); how their
  verdicts differ is said as information.

A file or a column present on one side only differs; so does a file that cannot be read, and
a ledger whose ids are missing or not unique (its claims cannot be paired).
"""

from dataclasses import dataclass
from pathlib import Path

from attnrepro import paths
from attnrepro.archive import verify_extract

MACHINE_BOUND = "machine-bound"  # the class of a timing claim


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
    try:  # two arrays of the same length: a Boolean array, or an error
        return (x != y) & ~(pd.isna(x) & pd.isna(y))
    except (TypeError, ValueError):  # arrays in cells, pd.NA: cell by cell (never empty: [] != [] holds)
        return np.array([not _same(p, q) for p, q in zip(x, y)])


def column_difference(archive, here):
    """None when two frames have the same columns, else a sentence naming those on one side."""
    only_archive = [c for c in archive.columns if c not in here.columns]
    only_here = [c for c in here.columns if c not in archive.columns]
    if only_archive or only_here:
        return f"columns only in archive {only_archive}, only here {only_here}"
    return None


def first_difference(archive, here):
    """None when two frames are equal (same columns, rows, dtypes, values; NaN equals NaN),
    else a sentence naming the first difference: row, column, the archive's and this value."""
    columns = column_difference(archive, here)
    if columns:
        return columns
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
    from attnrepro.dag.plan import output_of

    try:
        experiment, table, _ = output_of(rel)
    except ValueError:
        return None, None
    return experiment, table


def _why(error):
    """What is wrong with a file, in a few words: a corrupt result's problem (not the advice to
    rebuild it, which names a path of verify's temporary folder), else the error's text."""
    return " ".join(str(getattr(error, "problem", None) or error).split())


def compare_parquet(rel, archive_path, here_path, limits=verify_extract.Limits()):
    from attnrepro.run import io
    from attnrepro.dag import plan

    experiment, table = _experiment(rel)
    if experiment and plan.EXPERIMENTS[experiment].timing and table == "machine":
        return Entry("parquet", rel, "skipped", "describes the machine that ran it")
    for side, path in (("in archive", archive_path), ("here", here_path)):
        if (problem := verify_extract.parquet_problem(path, limits)) is not None:
            return Entry("parquet", rel, "differs", f"not read {side}: {problem}")
    try:  # an archive from before integrity records is read; a corrupt file on either side differs
        archive = io.read_parquet(
            archive_path, require_integrity=False)  # pragma: no mutate (equivalent: None is False)
    except (io.ResultError, OSError) as error:
        return Entry("parquet", rel, "differs", f"corrupt in archive: {_why(error)}")
    try:
        here = io.read_parquet(here_path)
    except (io.ResultError, OSError) as error:
        return Entry("parquet", rel, "differs", f"corrupt here: {_why(error)}")
    difference = column_difference(archive, here)  # a measured column too: its values only are not compared
    if experiment and not difference:
        archive = archive.drop(columns=plan.measured_columns(experiment, archive.columns))
        here = here.drop(columns=plan.measured_columns(experiment, here.columns))
    difference = difference or first_difference(archive, here)
    return Entry("parquet", rel, "differs" if difference else "equal", difference or "")


def _timing_table(name):
    from attnrepro.dag import plan
    from attnrepro.report.products import catalog

    product = catalog.PRODUCTS.get(name)
    return product is not None and any(plan.EXPERIMENTS[e].timing for e in product.experiments)


def _read_csv(path):
    import pandas as pd

    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _read_both(archive_path, here_path):
    """(archive frame, frame here, None), or (None, None, a sentence naming the side that cannot
    be read as CSV: empty, not text, ragged rows)."""
    frames = []
    for side, path in (("in archive", archive_path), ("here", here_path)):
        try:
            frames.append(_read_csv(path))
        except (ValueError, OSError) as error:  # pandas' ParserError, EmptyDataError, UnicodeDecodeError
            return None, None, f"unreadable {side}: {type(error).__name__}: {' '.join(str(error).split())}"
    return (*frames, None)


def compare_table(rel, archive_path, here_path):
    if _timing_table(Path(rel).stem):
        return Entry("table", rel, "skipped", "built from a timing experiment (its Parquet is compared)")
    archive, here, unreadable = _read_both(archive_path, here_path)
    difference = unreadable or first_difference(archive, here)
    return Entry("table", rel, "differs" if difference else "equal", difference or "")


def _unpaired(ledger, side):
    """Sentences on what keeps a ledger's claims from being paired by id: no ``id`` column, an id
    on more than one row (``side``: "of the archive", "here")."""
    if "id" not in ledger.columns:
        return [f"no column 'id' in the ledger {side}: its claims cannot be compared"]
    counts = ledger["id"].value_counts(sort=False)  # pragma: no mutate (equivalent: sort=None is False)
    twice = [str(i) for i in counts.index[counts > 1]]
    if twice:
        return [f"claim id(s) {', '.join(twice[:5])}{' ...' if len(twice) > 5 else ''} on more than "
                f"one row of the ledger {side}: its claims cannot be compared"]
    return []


def ledger_differences(archive, here):
    """[sentence] for what cannot be paired, columns on one side, each claim only on one side and
    each differing value, in the archive's order (a machine-bound claim without what it takes from
    the clock)."""
    from attnrepro.report.ledger.verdicts import FROM_THE_CLOCK

    out = _unpaired(archive, "of the archive") + _unpaired(here, "here")
    if out:
        return out
    columns = column_difference(archive, here)
    out = [columns] if columns else []
    archive, here = archive.set_index("id"), here.set_index("id")  # paired by id: equal ids
    out += [f"claim {i} only in archive" for i in archive.index if i not in here.index]
    out += [f"claim {i} only here" for i in here.index if i not in archive.index]
    shared = [c for c in archive.columns if c in here.columns]
    for claim in (i for i in archive.index if i in here.index):
        a, b = archive.loc[claim], here.loc[claim]
        machine_bound = MACHINE_BOUND in (a.get("class"), b.get("class"))
        for column in shared:
            if machine_bound and column in FROM_THE_CLOCK:
                continue
            if a[column] != b[column]:
                out.append(f"claim {claim}, column {column!r}: archive {a[column]!r}, here {b[column]!r}")
    return out


def _verdicts(ledger):
    """"4 within tolerance, 1 disturbed": the verdicts of a ledger's machine-bound claims, by count."""
    verdicts = ledger.loc[ledger["class"] == MACHINE_BOUND, "verdict"].value_counts()
    return ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items(), key=lambda item: (-item[1], item[0])))


def machine_bound_note(archive, here):
    """How many claims are machine-bound and their verdicts on each side, when they differ: what
    moves with the machine is said, never compared ("" when no claim is machine-bound)."""
    if not all({"class", "verdict"} <= set(side.columns) for side in (archive, here)):
        return ""
    count = int((archive["class"] == MACHINE_BOUND).sum())
    if not count:
        return ""
    theirs, ours = _verdicts(archive), _verdicts(here)
    verdicts = (f"their verdicts differ, archive ({theirs}), here ({ours})" if theirs != ours
                else f"the same verdicts on both sides ({theirs})")
    return (f"; {count} machine-bound, compared without what comes from the clock (times, bounds, "
            f"verdicts): {verdicts}")


def compare_ledger(rel, archive_path, here_path):
    archive, here, unreadable = _read_both(archive_path, here_path)
    differences = [unreadable] if unreadable else ledger_differences(archive, here)
    if differences:
        more = f" (and {len(differences) - 1} more)" if len(differences) > 1 else ""
        return Entry("ledger", rel, "differs", differences[0] + more)
    return Entry("ledger", rel, "equal", f"{len(archive)} claims{machine_bound_note(archive, here)}")


KINDS = {  # kind: (files of a results folder, comparison)
    "parquet": (lambda root: root.rglob("*.parquet"), compare_parquet),
    "table": (lambda root: (root / paths.relative(paths.TABLES)).glob("*.csv"), compare_table),
    "ledger": (lambda root: (root / paths.relative(paths.LEDGER_CSV),), compare_ledger),
}


def compare(archive_results, here_results, limits=verify_extract.Limits()):
    """[Entry] for every file of the three kinds on either side, by kind then path; a Parquet
    file beyond ``limits`` differs unread."""
    archive_results, here_results = Path(archive_results), Path(here_results)
    entries = []
    for kind, (files, comparison) in KINDS.items():
        def listed(root):
            return {p.relative_to(root).as_posix() for p in files(root) if p.is_file()}

        archive_files, here_files = listed(archive_results), listed(here_results)
        for rel in sorted(archive_files | here_files):
            shown = f"{paths.RESULTS}/{rel}"
            if rel not in here_files:
                entries.append(Entry(kind, shown, "only in archive"))
            elif rel not in archive_files:
                entries.append(Entry(kind, shown, "only here"))
            else:
                extra = (limits,) if kind == "parquet" else ()
                entries.append(comparison(shown, archive_results / rel, here_results / rel, *extra))
    return entries
