"""The numerics sweep's run side: the settings a config names, the probe, what a sweep job records.

Round-off digits (a 1e-16 deviation, a finite-difference check, the 1500 steps of a training)
depend on the BLAS kernel (``OPENBLAS_CORETYPE``) and on NumPy's SIMD code paths for exp, log, ...
(``NPY_DISABLE_CPU_FEATURES``); both are read once, when NumPy is imported. A *setting* names one
pair (:mod:`attnrepro.numerics.canonical`, which applies one in every job: the pin). The sweep reruns the
cases of config ``numerics.cases`` under every setting of :func:`candidates` that this machine
accepts, and the settings of each *side environment* (config ``numerics.environments``: another
interpreter, such as ``.venv-article`` with the NumPy and torch versions the articles state), named
``<environment>.<setting>`` (``article.haswell-noavx512``): the environment is the third axis.

:func:`probe` starts one short interpreter per candidate setting and reads back the kernel
OpenBLAS really runs (threadpoolctl's ``architecture``: a kernel absent from the library, or
unusable on this CPU, falls back to another) and the NumPy features really enabled; :func:`keep`
drops the settings whose effective pair duplicates an earlier one of the same environment. A sweep job
(``python -m attnrepro.jobs.sweep_case EXPERIMENT --numerics SETTING ...``) adds :func:`columns` to each
of its tables and :func:`recorded`'s record to its provenance.

    python -m attnrepro.jobs.sweep_probe --kernels SkylakeX Haswell Sandybridge \
        --masks default noavx512 --environments '{}' --out results/numerics/settings.json

No import of the plan (:mod:`attnrepro.dag.sweep_plan` holds the sweep's jobs and files).
"""

import json
import logging
import os
import shutil
import subprocess
import sys

from attnrepro.numerics import canonical
from attnrepro.paths import SETTINGS_FILE
from attnrepro import paths

log = logging.getLogger("attnrepro")


ENVIRONMENT = "."  # <environment>.<setting>: a setting of a side environment


def environments(section):
    """{name: {python, packages, settings[, make]}} of a config ``numerics`` section's side environments."""
    return dict(section.get("environments") or {})


def candidates(section):
    """Every setting named by a config ``numerics`` section, in order: mask by mask, the
    default kernel first, then ``kernels`` in the order given (the first of duplicates is kept);
    then each side environment's settings, ``<environment>.<setting>``."""
    masks = section.get("numpy_masks", [canonical.DEFAULT])
    kernels = [canonical.DEFAULT, *section.get("kernels", [])]
    own = [canonical.setting_name(k, m) for m in masks for k in kernels]
    sides = environments(section).items()
    return own + [f"{name}{ENVIRONMENT}{setting}" for name, env in sides for setting in env["settings"]]


def split(setting):
    """(side environment or None, the numerics setting) of a sweep setting's name."""
    name, sep, bare = setting.rpartition(ENVIRONMENT)
    return (name, bare) if sep else (None, setting)


def interpreter(setting, section, default=sys.executable):
    """The interpreter a setting's jobs run with: its side environment's, else ``default``."""
    name, _ = split(setting)
    return default if name is None else environments(section)[name]["python"]


def installed(env):
    """The file that says a side environment is built (the make target's ``.installed``)."""
    return os.path.join(os.path.dirname(os.path.dirname(env["python"])), ".installed")


def columns(setting, info):
    """The columns a sweep job adds to each of its tables (``info``: canonical.effective())."""
    return {
        "numerics": setting,
        "numerics_openblas_coretype": info["openblas_coretype"],
        "numerics_openblas_kernel": info["openblas_kernel"],
        "numerics_numpy_disabled": info["numpy_disabled"],
        "numerics_numpy_features": info["numpy_features"],
        "numerics_numpy_version": _version("numpy"),
        "numerics_torch_version": _version("torch"),
    }


def _version(package):
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return ""


def recorded(setting, tables, meta):
    """A sweep job's tables and provenance with what really ran (kernel, NumPy features)."""
    info = canonical.effective()
    added = columns(setting, info)
    log.info("numerics %s: OpenBLAS %s, NumPy features %s", setting, info["openblas_kernel"],
             info["numpy_features"])
    return ({name: df.assign(**added) for name, df in tables.items()},
            {**meta, "numerics": {"setting": setting, "canonical": False,
                                  "reason": f"numerics-sweep setting {setting}", **info}})


# one product through the kernel first: a kernel the CPU cannot execute (SkylakeX's AVX-512 on an
# AVX2 CPU, which OpenBLAS accepts by name) dies here, with SIGILL, and the setting is refused
_PROBE = ("import json; import numpy as np; a = np.ones((256, 256)); a @ a; "
          "from attnrepro.numerics import canonical; from attnrepro.evidence import sweep; "
          "print(json.dumps({**canonical.effective(), 'numpy_version': sweep._version('numpy'), "
          "'torch_version': sweep._version('torch')}))")


def probe_one(setting, python=sys.executable, timeout=120):
    """What one setting really runs here, from a fresh interpreter (``python``: its side
    environment's): canonical.effective() and the NumPy and torch versions, plus ``accepted``
    (False when OpenBLAS did not know the core name, NumPy refused the mask, or the side
    environment's interpreter is not there)."""
    environment, bare = split(setting)
    env = canonical.apply_setting(bare, dict(os.environ))
    env.update(
        OPENBLAS_VERBOSE="2",
        OPENBLAS_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
        PYTHONPATH=os.pathsep.join(filter(None, [_src(), os.environ.get("PYTHONPATH")])),
    )
    kernel, mask = canonical.parse_setting(bare)
    row = {
        "setting": setting,
        "environment": environment or "",
        "kernel": kernel,
        "mask": mask,
        "openblas_coretype": env.get("OPENBLAS_CORETYPE", ""),
        "numpy_disabled": env.get("NPY_DISABLE_CPU_FEATURES", ""),
    }
    if not shutil.which(python):
        return {**row, "accepted": False, "openblas_kernel": "", "numpy_features": "",
                "error": f"no interpreter {python} (its make target builds it)"}
    proc = subprocess.run([python, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=timeout)
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

    return str(paths.SRC)


def keep(rows):
    """``rows`` (probe_one results, in order) with ``kept`` and ``duplicate_of``: a setting is
    dropped when NumPy refused it, or when its (effective kernel, NumPy features) pair
    is the one of an earlier setting of the same environment (an unknown core name falls back to
    another kernel)."""
    seen, out = {}, []
    for row in rows:
        pair = (row.get("environment", ""), row["openblas_kernel"], row["numpy_features"])
        if not row["openblas_kernel"]:
            out.append({**row, "kept": False, "duplicate_of": ""})
        elif pair in seen:
            out.append({**row, "kept": False, "duplicate_of": seen[pair]})
        else:
            seen[pair] = row["setting"]
            out.append({**row, "kept": True, "duplicate_of": ""})
    return out


def probe(settings, section=None, python=sys.executable):
    """keep(probe_one(s) for s in settings): every candidate, with what it runs and whether it is
    kept (``section``: the config's numerics section, whose side environments name interpreters)."""
    return keep([probe_one(s, interpreter(s, section or {}, python)) for s in settings])


def kept(path=SETTINGS_FILE):
    """The kept setting names of a probe file, in order."""
    with open(path) as fh:
        return [r["setting"] for r in json.load(fh)["settings"] if r["kept"]]


def write_probe(out, kernels=(), masks=(canonical.DEFAULT,), environments=None):
    """Probe the settings of ``kernels`` x ``masks`` and of the side ``environments`` ({name:
    {python, packages, settings}}), write the record to ``out`` (JSON: the machine, the versions,
    each setting with what it runs and whether it is kept) and say each on stderr; a kernel or a
    mask not known is a UsageError (attnrepro.run.usage)."""
    from attnrepro.run import io, provenance, usage

    unknown = [k for k in kernels if k not in canonical.KERNELS]
    unknown += [m for m in masks if m not in canonical.MASKS]
    if unknown:
        raise usage.UsageError(f"unknown kernel or mask: {', '.join(unknown)}")
    section = {"kernels": list(kernels), "numpy_masks": list(masks), "environments": environments or {}}
    rows = probe(candidates(section), section)
    record = {
        "cpu": provenance.cpu_model(),
        "machine": provenance.machine(),
        "versions": provenance.package_versions(),
        "probed": provenance.now(),
        "settings": rows,
    }
    io.write_text(out, json.dumps(record, indent=1, sort_keys=True) + "\n")
    for r in rows:
        status = "kept" if r["kept"] else (f"= {r['duplicate_of']}" if r["duplicate_of"] else "refused")
        print(
            f"{r['setting']:<24} OpenBLAS {r['openblas_kernel'] or '-':<12} "
            f"NumPy {r['numpy_features'] or '-':<28} {status} {r['error']}".rstrip(),
            file=sys.stderr,
        )
    return 0
