"""Numerics settings: which OpenBLAS kernel and which NumPy CPU features a job computes with.

Round-off digits (a 1e-16 deviation, a finite-difference check, the 1500 steps of a
training) depend on the BLAS kernel (``OPENBLAS_CORETYPE``) and on NumPy's SIMD code
paths for exp, log, ... (``NPY_DISABLE_CPU_FEATURES``); both are read once, when NumPy is
imported. A *setting* names one pair: ``<kernel>`` or ``<kernel>-<mask>``, such as
``default``, ``sandybridge``, ``haswell-noavx512``. Kernel ``default`` leaves OpenBLAS its
own choice for this CPU, mask ``default`` leaves NumPy all of its features.

Pure Python, no numerical import: :func:`apply` runs before NumPy is imported (the command
line calls it right after ``threads.limit``); :func:`probe` starts one short interpreter per
candidate setting and reads back the kernel OpenBLAS really runs (threadpoolctl's
``architecture``: a kernel absent from the library, or unusable on this CPU, falls back to
another) and the NumPy features really enabled; :func:`keep` drops the settings whose
effective pair duplicates an earlier one.

    python -m attnrepro.numerics probe --kernels SkylakeX Haswell Sandybridge \
        --masks default noavx512 --out results/numerics/settings.json
"""

import argparse
import json
import os
import subprocess
import sys

from attnrepro import plan

# OpenBLAS core names on x86-64 (driver/others/dynamic.c), spelled as OPENBLAS_CORETYPE takes them
KERNELS = (
    "Katmai",
    "Coppermine",
    "Northwood",
    "Prescott",
    "Banias",
    "Atom",
    "Core2",
    "Penryn",
    "Dunnington",
    "Nehalem",
    "Athlon",
    "Opteron",
    "Opteron_SSE3",
    "Barcelona",
    "Nano",
    "Sandybridge",
    "Bobcat",
    "Bulldozer",
    "Piledriver",
    "Haswell",
    "Steamroller",
    "Excavator",
    "Zen",
    "SkylakeX",
    "Cooperlake",
    "SapphireRapids",
)
# NumPy CPU-feature masks: name -> the NPY_DISABLE_CPU_FEATURES value (NumPy 2.x feature groups)
MASKS = {
    "default": "",
    "noavx512": "X86_V4 AVX512_ICL AVX512_SPR",  # no AVX-512 exp/log/...: AVX2 code paths (X86_V3)
    "noavx2": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",  # the baseline only (SSE4.2, X86_V2)
}
ENV = ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES")
DEFAULT = "default"
ROOT = f"{plan.RESULTS}/numerics"  # the sweep: results/numerics/<setting>/data/...
SETTINGS_FILE = f"{ROOT}/settings.json"
_BY_LOWER = {k.lower(): k for k in KERNELS}


def name(kernel, mask=DEFAULT):
    """The setting name of an OpenBLAS kernel ("default" or a core name) and a mask name."""
    base = DEFAULT if kernel == DEFAULT else kernel.lower()
    return base if mask == DEFAULT else f"{base}-{mask}"


def parse(setting):
    """(kernel, mask) of a setting name; ValueError when either part is unknown."""
    base, _, mask = setting.partition("-")
    mask = mask or DEFAULT
    if base != DEFAULT and base not in _BY_LOWER:
        raise ValueError(
            f"unknown OpenBLAS kernel {base!r} in numerics setting {setting!r}; "
            f"known: default, {', '.join(sorted(_BY_LOWER))}"
        )
    if mask not in MASKS or (mask == DEFAULT and "-" in setting):
        raise ValueError(
            f"unknown NumPy mask {mask!r} in numerics setting {setting!r}; "
            f"known: {', '.join(m for m in MASKS if m != DEFAULT)}"
        )
    return (DEFAULT if base == DEFAULT else _BY_LOWER[base]), mask


def environment(setting):
    """{variable: value or None}: what the setting sets (None: removed from the environment)."""
    kernel, mask = parse(setting)
    return {
        "OPENBLAS_CORETYPE": None if kernel == DEFAULT else kernel,
        "NPY_DISABLE_CPU_FEATURES": MASKS[mask] or None,
    }


def apply(setting, environ=os.environ):
    """Set (or remove) the variables of ``setting`` in ``environ``: call before NumPy is imported."""
    if "numpy" in sys.modules and environ is os.environ:
        raise RuntimeError("numerics.apply must run before numpy is imported")
    for key, value in environment(setting).items():
        if value is None:
            environ.pop(key, None)
        else:
            environ[key] = value
    return environ


def candidates(section):
    """Every setting named by a config ``numerics`` section, in order: mask by mask, the
    default kernel first, then ``kernels`` in the order given (the first of duplicates is kept)."""
    masks = section.get("numpy_masks", [DEFAULT])
    return [name(k, m) for m in masks for k in [DEFAULT, *section.get("kernels", [])]]


def output_path(setting, experiment_id, case, table="main"):
    """Where one sweep job writes one table: the layout of results/data under the setting."""
    inner = plan.output_path(experiment_id, case, table).removeprefix(f"{plan.RESULTS}/")
    return f"{ROOT}/{setting}/{inner}"


def sweep_cases(config):
    """{experiment id: [case, ...]} of the config's ``numerics.cases`` ("all": every case)."""
    out = {}
    for exp_id, names in ((config.get("numerics") or {}).get("cases") or {}).items():
        out[exp_id] = list(plan.cases(exp_id, config)) if names == "all" else list(names)
    return out


def outputs(config, settings):
    """Every Parquet file of the sweep over ``settings``."""
    return [
        output_path(s, exp_id, case, table)
        for s in settings
        for exp_id, cases in sweep_cases(config).items()
        for case in cases
        for table in plan.EXPERIMENTS[exp_id].tables
    ]


def config_errors(config):
    """Rules of the ``numerics`` section that the schema cannot state (names are known cases)."""
    section = config.get("numerics") or {}
    errors = []
    for key in ("kernels", "numpy_masks"):
        values = section.get(key) or []
        errors += [
            f"numerics.{key}: {v!r} is listed twice" for v in sorted(set(values)) if values.count(v) > 1
        ]
    for exp_id, names in (section.get("cases") or {}).items():
        exp = plan.EXPERIMENTS.get(exp_id)
        if exp is None:
            errors.append(f"numerics.cases.{exp_id}: unknown experiment")
            continue
        if exp.inputs is not None:
            errors.append(
                f"numerics.cases.{exp_id}: reads another experiment's results; " "not supported in the sweep"
            )
            continue
        if names == "all":
            continue
        known = plan.cases(exp_id, config)
        errors += [
            f"numerics.cases.{exp_id}[{i}]: {n!r} is not a case of {exp_id} "
            f"(e.g. {', '.join(list(known)[:3])})"
            for i, n in enumerate(names)
            if n not in known
        ]
    return errors


# --- what a process really runs ------------------------------------------------------------


def effective():
    """The numerics of this process, once NumPy is imported: requested and effective kernel,
    the NumPy mask and the NumPy dispatch features enabled."""
    import numpy  # noqa: F401  (loads OpenBLAS, so that threadpoolctl sees it)
    from numpy._core import _multiarray_umath as umath
    from threadpoolctl import threadpool_info

    kernels = [i.get("architecture") for i in threadpool_info() if i.get("internal_api") == "openblas"]
    features = [f for f in umath.__cpu_dispatch__ if umath.__cpu_features__.get(f)]
    return {
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", ""),
        "openblas_kernel": ",".join(k or "?" for k in kernels),
        "numpy_disabled": os.environ.get("NPY_DISABLE_CPU_FEATURES", ""),
        "numpy_features": " ".join(features),
    }


def columns(setting, info):
    """The columns a sweep job adds to each of its tables."""
    return {
        "numerics": setting,
        "numerics_openblas_coretype": info["openblas_coretype"],
        "numerics_openblas_kernel": info["openblas_kernel"],
        "numerics_numpy_disabled": info["numpy_disabled"],
        "numerics_numpy_features": info["numpy_features"],
    }


# one product through the kernel first: a kernel the CPU cannot execute (SkylakeX's AVX-512 on an
# AVX2 CPU, which OpenBLAS accepts by name) dies here, with SIGILL, and the setting is refused
_PROBE = ("import json; import numpy as np; a = np.ones((256, 256)); a @ a; "
          "from attnrepro import numerics; print(json.dumps(numerics.effective()))")


def probe_one(setting, python=sys.executable, timeout=120):
    """What one setting really runs here, from a fresh interpreter: effective() plus
    ``accepted`` (False when OpenBLAS did not know the core name, or NumPy refused the mask)."""
    env = apply(setting, dict(os.environ))
    env.update(
        OPENBLAS_VERBOSE="2",
        OPENBLAS_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
        PYTHONPATH=os.pathsep.join(filter(None, [_src(), os.environ.get("PYTHONPATH")])),
    )
    proc = subprocess.run([python, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=timeout)
    kernel, mask = parse(setting)
    row = {
        "setting": setting,
        "kernel": kernel,
        "mask": mask,
        "openblas_coretype": env.get("OPENBLAS_CORETYPE", ""),
        "numpy_disabled": env.get("NPY_DISABLE_CPU_FEATURES", ""),
    }
    if proc.returncode != 0:
        error = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        if proc.returncode in (-4, 132):  # SIGILL, as a signal or through a shell
            error = "illegal instruction: this CPU cannot execute the kernel's code"
        return {**row, "accepted": False, "openblas_kernel": "", "numpy_features": "", "error": error}
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    not_found = "Core not found" in proc.stderr
    return {
        **row,
        **info,
        "accepted": not not_found,
        "error": "OpenBLAS: core not found, fell back to its own choice" if not_found else "",
    }


def _src():
    from pathlib import Path

    return str(Path(__file__).resolve().parents[1])


def keep(rows):
    """``rows`` (probe_one results, in order) with ``kept`` and ``duplicate_of``: a setting is
    dropped when NumPy refused it, or when its (effective kernel, NumPy features) pair
    is the one of an earlier setting (an unknown core name falls back to another kernel)."""
    seen, out = {}, []
    for row in rows:
        pair = (row["openblas_kernel"], row["numpy_features"])
        if not row["openblas_kernel"]:
            out.append({**row, "kept": False, "duplicate_of": ""})
        elif pair in seen:
            out.append({**row, "kept": False, "duplicate_of": seen[pair]})
        else:
            seen[pair] = row["setting"]
            out.append({**row, "kept": True, "duplicate_of": ""})
    return out


def probe(settings, python=sys.executable):
    """keep(probe_one(s) for s in settings): every candidate, with what it runs and whether it is kept."""
    return keep([probe_one(s, python) for s in settings])


def kept(path=SETTINGS_FILE):
    """The kept setting names of a probe file, in order."""
    with open(path) as fh:
        return [r["setting"] for r in json.load(fh)["settings"] if r["kept"]]


def _main(argv=None):
    parser = argparse.ArgumentParser(prog="attnrepro.numerics", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("probe", help="which settings this machine runs, and which are distinct")
    p.add_argument("--kernels", nargs="*", default=[], help="OPENBLAS_CORETYPE names to try")
    p.add_argument("--masks", nargs="*", default=[DEFAULT], help=f"NumPy masks: {', '.join(MASKS)}")
    p.add_argument("--out", required=True, help="JSON file")
    args = parser.parse_args(argv)
    unknown = [k for k in args.kernels if k not in KERNELS] + [m for m in args.masks if m not in MASKS]
    if unknown:
        raise SystemExit(f"unknown kernel or mask: {', '.join(unknown)}")
    from attnrepro import io, provenance

    rows = probe(candidates({"kernels": args.kernels, "numpy_masks": args.masks}))
    record = {
        "cpu": provenance.cpu_model(),
        "machine": provenance.machine(),
        "versions": provenance.package_versions(),
        "probed": provenance.now(),
        "settings": rows,
    }
    io.write_text(args.out, json.dumps(record, indent=1, sort_keys=True) + "\n")
    for r in rows:
        status = "kept" if r["kept"] else (f"= {r['duplicate_of']}" if r["duplicate_of"] else "refused")
        print(
            f"{r['setting']:<24} OpenBLAS {r['openblas_kernel'] or '-':<12} "
            f"NumPy {r['numpy_features'] or '-':<28} {status} {r['error']}".rstrip(),
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(_main())
