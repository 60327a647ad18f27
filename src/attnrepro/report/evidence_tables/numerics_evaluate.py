"""The numerics sweep against the published digits: which settings reproduce which claim (pandas).

The sweep (``snakemake numerics``, :mod:`attnrepro.evidence.sweep`) reruns the round-off-sensitive
cases under every numerics setting this machine accepts: an OpenBLAS kernel and a NumPy
CPU-feature mask, in the lock's environment and in each side environment (the NumPy and torch
versions the articles state). Here each setting's results are judged alone, with the ledger's own
rules (:func:`attnrepro.report.ledger.verdicts.evaluate`) on the claims of ``config/published.yaml``
whose source rows are all among the swept cases (timings left out). A claim is listed when its
class is one the ledger cites the sweep for (round-off, finite-difference, stochastic), or when
some setting does not give its digits.

For each claim and setting: the reproduced text, whether it is the published digits and, when
the listings ran (``snakemake --cores 2 listings``: what the article's own code prints here,
``article_code``), whether it is those: :func:`evaluate`, the long table (one row per claim and
setting), and :func:`reason_for`, the sentence the ledger appends to a deviation of those
classes, naming only what the sweep varied, and, when no setting gives the published value, what
it could not try (:data:`UNTESTED`); given the pin the run computed the claim under, whether the
host's native numerics (the setting ``default``) give the published digits and whether the pin is
what moved the run's value (:func:`native`). :func:`read` and :func:`reasons` work from its CSV;
the file a reason cites is :mod:`attnrepro.report.evidence_tables.citations`'s to name. The CSV, Markdown
table and SVG grid are written by :mod:`attnrepro.report.evidence_tables.numerics_render`.
"""

import dataclasses
from collections import defaultdict

import numpy as np
import pandas as pd

from attnrepro import paths as layout  # "paths" is the argument of loaders(): the sweep's files
from attnrepro.run import io
from attnrepro.evidence import NUMERICS
from attnrepro.report.ledger import consistency, verdicts
from attnrepro.report.products import results

DEFAULT = "default"  # the host's native numerics: OpenBLAS's own kernel, all of NumPy's features
UNTESTED = "the article's Python 3.14 and its CPU"  # what no setting of this machine can vary
COLUMNS = [
    "id",
    "article",
    "section",
    "claim",
    "class",
    "published",
    "article_code",
    "setting",
    "openblas_kernel",
    "numpy_features",
    "numpy_version",
    "torch_version",
    "reproduced",
    "published_digits",
    "article_code_digits",
    "params",
]


def setting_of(path):
    """The setting of a sweep file ``results/numerics/<setting>/data/<article>/<experiment>/<file>``
    (:func:`attnrepro.paths.parse_result`); ValueError for any other path."""
    try:
        setting = layout.parse_result(path).setting
    except ValueError:
        setting = None
    if setting is None:
        raise ValueError(f"not a numerics sweep file: {path}")
    return setting


def loaders(paths):
    """{setting: results.Loader over that setting's files}."""
    by_setting = defaultdict(list)
    for path in paths:
        by_setting[setting_of(path)].append(path)
    return {s: results.Loader(files) for s, files in by_setting.items()}


def _covered(claim, load):
    try:
        verdicts.reproduced(claim.source, load)
    except (FileNotFoundError, KeyError, ValueError):
        return False
    return True


def swept_claims(claims, by_setting):
    """The claims (timings left out) whose value every setting's results give."""
    return [
        c
        for c in claims
        if c.cls != "machine-bound" and all(_covered(c, load) for load in by_setting.values())
    ]


def _numerics_of(load):
    """(effective OpenBLAS kernel, NumPy features, NumPy version, torch version) recorded in a
    setting's results."""
    for experiment, table in load.files:
        frame = load(experiment, table)
        if "numerics_openblas_kernel" in frame.columns:
            first = frame.iloc[0]
            return (first["numerics_openblas_kernel"], first["numerics_numpy_features"],
                    first.get("numerics_numpy_version", ""), first.get("numerics_torch_version", ""))
    return "", "", "", ""


def evaluate(claims, by_setting, order=None, article_code=None):
    """The long table: one row per (claim, setting) with the reproduced text and whether it
    is the published digits (and the article code's, given ``article_code``: {claim id: what the
    article's own code printed in the listings' run})."""
    settings = [s for s in (order or []) if s in by_setting] + sorted(set(by_setting) - set(order or []))
    code = {c.id: article_code[c.id] for c in claims if (article_code or {}).get(c.id)}
    rows = []
    for setting in settings:
        load = by_setting[setting]
        kernel, features, numpy_version, torch_version = _numerics_of(load)
        judged = verdicts.evaluate(claims, load).set_index("id")
        code_claims = [dataclasses.replace(c, published=code[c.id]) for c in claims if c.id in code]
        here = verdicts.evaluate(code_claims, load).set_index("id") if code_claims else None
        for c in claims:
            row = judged.loc[c.id]
            rows.append(
                {
                    "id": c.id,
                    "article": c.article,
                    "section": c.section,
                    "claim": c.claim,
                    "class": c.cls,
                    "published": c.published,
                    "article_code": code.get(c.id, ""),
                    "setting": setting,
                    "openblas_kernel": kernel,
                    "numpy_features": features,
                    "numpy_version": numpy_version,
                    "torch_version": torch_version,
                    "reproduced": row["reproduced"],
                    "published_digits": _gives(c, row, load),
                    "article_code_digits": (
                        (here.loc[c.id, "verdict"] == "reproduced") if c.id in code else pd.NA),
                    "params": consistency.encode(_params_read(c, load)),
                }
            )
    long = pd.DataFrame(rows, columns=COLUMNS)
    return long[long["id"].isin(_listed(long))].reset_index(drop=True)


def _params_read(claim, load):
    """{"<experiment>/<case>": params} of the files whose rows the claim reads in one setting."""
    out = {}
    for experiment, table, case in verdicts.cases_read(claim.source, load):
        out[f"{experiment}/{case}"] = load.params(experiment, table)[case][0]
    return out


def check_params(long, claims, load, path):
    """Refuse a sweep (``long``, read from ``path``) whose cases were computed with other parameters
    than the run's files of the same cases (``load``: the ledger's inputs); io.InconsistentInputs
    naming the file, the run's file and the first differing key."""
    if consistency.PARAMS not in long.columns:
        raise io.ResultError(f"{path}: records no parameters of its cases (written by an older "
                             f"version); rebuild it with `{io.rebuild_command(path)}`")
    for text in dict.fromkeys(long[consistency.PARAMS]):
        for name, recorded in consistency.decode(text).items():
            experiment, _, case = name.partition("/")
            mine = load.params(experiment).get(case) if (experiment, "main") in load.files else None
            if mine is not None:
                consistency.check(path, recorded, *mine)


def _gives(claim, row, load):
    """Whether a setting gives the published figure: its digits, or, for a published interval
    ("0.987-0.995", "95-98%"), a value inside it, or every row's with ``per`` (the ledger never
    calls an interval reproduced)."""
    if row["verdict"] == "reproduced":
        return True
    low, high = verdicts.published_range(claim.published) if _is_interval(claim.published) else (None, None)
    if low is None or row["verdict"] == "missing":
        return False
    if claim.source.get("per"):  # checked row by row: the ledger's verdict is that check
        return row["verdict"] == "within tolerance"
    return bool(low <= float(verdicts.reproduced(claim.source, load)[0]) <= high)


def _is_interval(published):
    try:
        low, high = verdicts.published_range(published)
    except ValueError:
        return False
    return low != high


def _listed(long):
    """Claim ids worth a row: of a class the sweep is cited for (round-off, finite-difference,
    stochastic), or not reproduced under every setting."""
    keep = long.groupby("id").apply(
        lambda g: g["class"].iloc[0] in NUMERICS.appended_to
        or not g["published_digits"].map(is_true).all(),
        include_groups=False,
    )
    return keep[keep].index


def settings_in(long):
    return list(dict.fromkeys(long["setting"]))


def describe(long, setting):
    """'OpenBLAS Sandybridge, NumPy 2.4.6 X86_V3, torch 2.13.0+cpu' for a setting of the table."""
    row = long[long["setting"] == setting].iloc[0]
    version = f"{row['numpy_version']} " if row.get("numpy_version") else ""
    torch = f", torch {row['torch_version']}" if row.get("torch_version") else ""
    return f"OpenBLAS {row['openblas_kernel']}, NumPy {version}{row['numpy_features'] or 'baseline'}{torch}"


def giving(long, claim_id, column="published_digits"):
    """The settings whose results give a claim's published (or ``here``) digits."""
    rows = long[(long["id"] == claim_id) & long[column].map(is_true)]
    return rows["setting"].tolist()


def is_true(value):
    """True for a true bool (NumPy's too); False for False, NA and NaN (a CSV's empty cell)."""
    return isinstance(value, (bool, np.bool_)) and bool(value)


def reason_for(claim_id, long, run=None):
    """The ledger's evidence for a claim, or None when the sweep does not hold it: which settings
    give the published digits (or that none measured here does, and what was not tried), which
    give the article code's, and what the host's native numerics give (:func:`native`; ``run``:
    its argument)."""
    rows = long[long["id"] == claim_id]
    if rows.empty:
        return None
    published, code = rows["published"].iloc[0], rows["article_code"].iloc[0]
    pub = giving(long, claim_id)
    if len(pub) == len(settings_in(long)):
        text = f"published digits {published} given by every numerics setting of the sweep"
    elif pub:
        text = f"published digits {published} given by {_list(long, pub)}"
    else:
        text = (f"no setting measured here gives {published} (settings: {varied(long)}); "
                f"untested: {UNTESTED}")
    if code:
        cs = giving(long, claim_id, "article_code_digits")
        text += (f"; the article's own code prints {code} here, as {_list(long, cs)} give" if cs
                 else f"; the article's own code prints {code} here, which no setting gives")
    found = native(long, claim_id, run)
    return f"{text}; {found}" if found else text


def native(long, claim_id, run=None):
    """What the host's native numerics (setting ``default``) give for a claim, "" when the sweep
    did not run them. ``run``: (the pin the run computed the claim under, or None; the run's
    value as the ledger writes it): with a pin, whether the pin is what moves the run's value
    from the native one, and so from the published digits when the native numerics give them."""
    rows = long[(long["id"] == claim_id) & (long["setting"] == DEFAULT)]
    if rows.empty:
        return ""
    short = short_numerics(long, DEFAULT).replace("\n", ", ")
    where, here = f"this host's native numerics ({short})", rows["reproduced"].iloc[0]
    pin, value = run or (None, None)
    if pin is None:
        return f"{where} give {here}"
    if value == here:
        return f"{where} give {here} too: the pin {pin} does not move it"
    if is_true(rows["published_digits"].iloc[0]):
        return (f"{where} give the published {rows['published'].iloc[0]}, this run under the pin {pin} "
                f"gives {value}: the difference is the pin's")
    return f"{where} give {here}, this run under the pin {pin} gives {value}"


def read(path):
    """The long table back from its CSV: texts as printed, flags as booleans (NA: no article code value)."""
    long = pd.read_csv(path, dtype=str, keep_default_na=False)
    flags = {"True": True, "False": False, "": pd.NA}
    for column in ("published_digits", "article_code_digits"):
        long[column] = long[column].map(flags).astype(object)
    return long


def reasons(long, runs=None):
    """{claim id: reason_for(claim id)} for every claim of the table; ``runs``: {claim id: (pin or
    None, the run's value)}, :func:`native`'s argument (a claim left out: nothing said of the run)."""
    runs = runs or {}
    return {i: reason_for(i, long, runs.get(i)) for i in dict.fromkeys(long["id"])}


def _list(long, settings):
    """'sandybridge-noavx512, prescott-noavx512 (OpenBLAS Katmai)': a setting whose kernel name is
    not the kernel OpenBLAS really ran is followed by the real one."""
    out = []
    for s in settings:
        kernel = long[long["setting"] == s]["openblas_kernel"].iloc[0]
        named = s.rpartition(".")[2].partition("-")[0]
        out.append(s if named == kernel.lower() else f"{s} (OpenBLAS {kernel})")
    return ", ".join(out)


def varied(long):
    """What the sweep varied: its OpenBLAS kernels, NumPy code paths and versions, torch versions."""
    first = long.drop_duplicates("setting")
    simd = sorted({short_numerics(long, s).split("NumPy ")[1] for s in first["setting"]})
    parts = [f"OpenBLAS {', '.join(sorted(set(first['openblas_kernel'])))}", f"NumPy paths {', '.join(simd)}"]
    for name in ("numpy", "torch"):
        found = sorted({v for v in first.get(f"{name}_version", []) if v})
        if found:
            parts.append(f"{'NumPy' if name == 'numpy' else 'torch'} {', '.join(found)}")
    return "; ".join(parts)


def short_numerics(long, setting):
    """'OpenBLAS Haswell / NumPy AVX2' (the widest NumPy code path enabled) for a tick label."""
    row = long[long["setting"] == setting].iloc[0]
    features = str(row["numpy_features"]).split()
    # NumPy 2.4 names its groups (X86_V3, X86_V4), NumPy 2.3 the features (AVX2, AVX512F)
    simd = (
        "AVX-512"
        if {"X86_V4", "AVX512_ICL", "AVX512_SPR", "AVX512F", "AVX512_SKX"} & set(features)
        else ("AVX2" if {"X86_V3", "AVX2"} & set(features) else "baseline")
    )
    return f"OpenBLAS {row['openblas_kernel']}\nNumPy {simd}"
