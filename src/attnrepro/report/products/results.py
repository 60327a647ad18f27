"""Read the Parquet results of a run, one experiment table at a time.

A report job is given the exact list of files it may read (its Snakemake inputs),
so results left on disk by an earlier config never leak into a table.
"""

from collections import defaultdict
from pathlib import Path

import pandas as pd

from attnrepro.run import io
from attnrepro import paths


def parse(path):
    """(experiment, table, case) of a results path
    ``.../data/<article>/<experiment>/<case>[.<table>].parquet``
    (from the path alone, attnrepro.paths: a report job reads no plan)."""
    return paths.parse_output(path)


class Loader:
    """``loader(experiment, table)``: the concatenated cases, with a ``case`` column.

    Each table is read and verified once per loader, and each call returns a copy of it: the
    ledger asks for the same tables claim by claim (2,000 reads of 200 files in a small run,
    40 of its 45 s, before this cache)."""

    def __init__(self, paths):
        self._params = {}
        self._frames = {}
        self.files = defaultdict(list)
        for path in sorted(map(str, paths)):
            experiment, table, case = parse(path)
            self.files[(experiment, table)].append((case, path))

    def __call__(self, experiment, table="main"):
        key = (experiment, table)
        if key not in self._frames:
            files = self.files.get(key)
            if not files:
                raise FileNotFoundError(f"no results for {experiment} ({table}) among the inputs")
            frames = [io.read_parquet(path).assign(case=case) for case, path in files]
            self._frames[key] = pd.concat(frames, ignore_index=True)
        return self._frames[key].copy()

    def params(self, experiment, table="main"):
        """{case: (provenance parameters, path)} of the files behind ``self(experiment, table)``
        (read once per loader: the ledger asks for them claim by claim)."""
        key = (experiment, table)
        if key not in self._params:
            self._params[key] = {case: (io.read_provenance(path).get("params") or {}, path)
                                 for case, path in self.files.get(key, [])}
        return self._params[key]

    def numerics(self, experiment, table="main"):
        """'canonical' when every file behind ``self(experiment, table)`` ran the canonical
        numerics (attnrepro.numerics.canonical), else which files did not and why."""
        return numerics_status([path for _, path in self.files.get((experiment, table), [])])


def numerics_status(paths):
    """'canonical', or 'non-canonical: <file>: <reason>; ...' for the result files ``paths``
    (a file from before canonical numerics has no record: 'unknown numerics')."""
    off = []
    for path in paths:
        record = io.read_provenance(path).get("numerics")
        if record is None:
            off.append(f"{Path(path).name}: unknown numerics (no record)")
        elif not record.get("canonical"):
            off.append(f"{Path(path).name}: {record.get('reason') or record.get('setting')}")
    if not off:
        return "canonical"
    shown = "; ".join(off[:3]) + (f"; and {len(off) - 3} more" if len(off) > 3 else "")
    return f"non-canonical: {shown}"
