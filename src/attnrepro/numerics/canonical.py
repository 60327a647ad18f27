"""Canonical numerics: one pinned setting that every job computes with, so that every
x86-64 host with AVX2 gives the same bits, whatever its CPU or its environment says.

A job's round-off digits, and over 1500 training steps its sort accuracies, depend on the
code paths its libraries pick for the host. Measured on this machine kind (AMD EPYC with
AVX2, no AVX-512; numpy 2.4.6 with OpenBLAS 0.3.31, torch 2.13.0 with MKL 2024.2), each
variable that can change the bits, and what the pin does with it:

=========================== ================================================ ==========================
variable                    measured effect                                  pinned to
=========================== ================================================ ==========================
``OPENBLAS_CORETYPE``       the BLAS kernel: Sandybridge changes the tables  ``Haswell`` (the AVX2
                            of a 300-step sort training                      kernel)
``NPY_DISABLE_CPU_FEATURES`` NumPy's SIMD exp/log/...: AVX-512 paths move the ``X86_V4 AVX512_ICL
``NPY_ENABLE_CPU_FEATURES`` sort rows (seeds README); AVX2 paths are common  AVX512_SPR`` disabled
                            to every AVX2 host                               (AVX2, ``X86_V3``);
                                                                             the other removed
``ATEN_CPU_CAPABILITY``     torch's kernels: ``default`` changes             ``avx2``
                            torch_modules' table
``MKL_CBWR``                torch's BLAS (MKL) picks a code path by CPU      ``COMPATIBLE``
                            vendor and ISA; ``AVX2`` is honoured on Intel
                            only (elsewhere MKL falls back to AUTO);
                            COMPATIBLE is the branch MKL gives on every x86
``ONEDNN_MAX_CPU_ISA``      oneDNN's code paths (torch)                      ``AVX2``
the C library's libm        NumPy's float64 exp, log, sin, cos, power are    not pinnable: recorded
                            libm's under the pin (bit for bit): another      (name, version, a
                            libm (musl, an old glibc) may round otherwise    fingerprint of every
                                                                             transcendental function
                                                                             used), checked against
                                                                             the golden fingerprint
``OPENBLAS_L2_SIZE``        none: 256 and 2048 KiB give the bits of unset    left as is, recorded
thread counts               a training: none (1 or 2 BLAS threads); the      every job has a fixed
                            key-value cache deviation: 1.554e-14 on one      count (its rule's
                            thread, 1.599e-14 on two                         threads); kv_cache
                                                                             computes its deviation
                                                                             on one thread
=========================== ================================================ ==========================

:func:`apply` runs before NumPy (or torch) is imported; :func:`check` reads back what the
libraries really run (the kernel OpenBLAS picked, the features NumPy enabled, torch's CPU
capability, the C library and the fingerprint of the transcendental functions:
:mod:`attnrepro.numerics.fingerprint`) and returns the record that goes into every file's provenance; a
fingerprint other than the golden one (``tests/golden/numerics.json``) makes the job
non-canonical, naming the functions and the C library. A host that cannot honour the pin (not
x86-64, no AVX2/FMA, or CPU flags that cannot be read before NumPy loads) runs native: the job
says so in its log and its record says ``canonical: false`` with the reason, as does every
ledger claim computed from it. Config key ``numerics.pin``:
``haswell-noavx512`` (the default) or ``native`` (opt out).

The pin is one *numerics setting*: an OpenBLAS kernel and a NumPy CPU-feature mask, named
``<kernel>`` or ``<kernel>-<mask>`` (``default``, ``sandybridge``, ``haswell-noavx512``; kernel
``default`` leaves OpenBLAS its own choice for this CPU, mask ``default`` leaves NumPy all of its
features). The settings are defined here (:func:`environment`, :func:`apply_setting`,
:func:`effective`), because every job applies one; the numerics sweep (:mod:`attnrepro.evidence.sweep`)
runs the cases of the ledger's evidence under many of them.
"""

import logging
import os
import platform
import sys
from pathlib import Path

from attnrepro.numerics import fingerprint

log = logging.getLogger("attnrepro")

# OpenBLAS core names on x86-64 (driver/others/dynamic.c), spelled as OPENBLAS_CORETYPE takes them
KERNELS = (
    "Katmai", "Coppermine", "Northwood", "Prescott", "Banias", "Atom", "Core2", "Penryn",
    "Dunnington", "Nehalem", "Athlon", "Opteron", "Opteron_SSE3", "Barcelona", "Nano",
    "Sandybridge", "Bobcat", "Bulldozer", "Piledriver", "Haswell", "Steamroller", "Excavator",
    "Zen", "SkylakeX", "Cooperlake", "SapphireRapids",
)
# NumPy CPU-feature masks: name -> the NPY_DISABLE_CPU_FEATURES value (NumPy 2.x feature groups)
MASKS = {
    "default": "",
    "noavx512": "X86_V4 AVX512_ICL AVX512_SPR",  # no AVX-512 exp/log/...: AVX2 code paths (X86_V3)
    "noavx2": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",  # the baseline only (SSE4.2, X86_V2)
}
DEFAULT = "default"
_BY_LOWER = {k.lower(): k for k in KERNELS}

SETTING = "haswell-noavx512"  # OpenBLAS Haswell kernel, NumPy without AVX-512: MASKS
NATIVE = "native"
PINS = (SETTING, NATIVE)
TORCH = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "AVX2"}
REMOVED = ("NPY_ENABLE_CPU_FEATURES",)  # would narrow NumPy's features below the pin's
EXPECTED = {"openblas_kernel": "Haswell", "numpy_features": "X86_V3", "torch_capability": "AVX2"}
REQUIRED_FLAGS = ("avx2", "fma")  # what the Haswell kernel and NumPy's X86_V3 paths execute
RECORDED = ("OPENBLAS_L2_SIZE", "MKL_CBWR", "ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA")


def setting_name(kernel, mask=DEFAULT):
    """The setting name of an OpenBLAS kernel ("default" or a core name) and a mask name."""
    base = kernel.lower()  # DEFAULT is lower case already
    return base if mask == DEFAULT else f"{base}-{mask}"


def parse_setting(setting):
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
    kernel, mask = parse_setting(setting)
    return {
        "OPENBLAS_CORETYPE": None if kernel == DEFAULT else kernel,
        "NPY_DISABLE_CPU_FEATURES": MASKS[mask] or None,
    }


def apply_setting(setting, environ=os.environ):
    """Set (or remove) the variables of ``setting`` in ``environ``: call before NumPy is imported."""
    if "numpy" in sys.modules and environ is os.environ:
        raise RuntimeError("a numerics setting must be applied before numpy is imported")
    for key, value in environment(setting).items():
        if value is None:
            environ.pop(key, None)
        else:
            environ[key] = value
    return environ


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


def cpu_flags(cpuinfo=Path("/proc/cpuinfo")):
    """The CPU's feature flags from /proc/cpuinfo (None where there is no such file): its first
    line ``flags<tabs>: fpu vme ...``, as the kernel writes it."""
    try:
        for line in cpuinfo.read_text().splitlines():
            words = line.split()
            if words[:2] == ["flags", ":"]:
                return set(words[2:])
    except OSError:
        return None
    return None


def host_problem(machine=None, flags=None):
    """Why this host cannot honour the pin, or None when it can."""
    machine = (machine or platform.machine()).lower()
    if machine not in ("x86_64", "amd64"):
        return f"the CPU is {machine}, not x86-64: the pinned kernels do not exist there"
    flags = cpu_flags() if flags is None else flags
    if flags is None:
        return "the CPU flags cannot be read before NumPy loads (no /proc/cpuinfo)"
    missing = [f for f in REQUIRED_FLAGS if f not in flags]
    if missing:
        return f"the CPU lacks {' and '.join(missing)}: the pinned kernels would not run"
    return None


def apply(pin, environ=os.environ, machine=None, flags=None):
    """Set the pinned variables in ``environ`` (before NumPy is imported) unless the pin is
    ``native`` or the host cannot honour it; returns the state that :func:`check` completes."""
    if pin not in PINS:
        raise ValueError(f"numerics.pin must be one of {', '.join(PINS)}, got {pin!r}")
    if pin == NATIVE:
        return {"pin": pin, "applied": False, "reason": "numerics.pin is native: the host's own numerics"}
    problem = host_problem(machine, flags)
    if problem:
        log.warning("numerics: cannot pin %s on this host (%s); running native, outputs marked "
                    "non-canonical", pin, problem)
        return {"pin": pin, "applied": False, "reason": f"pin {pin} not honoured: {problem}"}
    apply_setting(pin, environ)
    for key in REMOVED:
        environ.pop(key, None)
    environ.update(TORCH)
    return {"pin": pin, "applied": True, "reason": ""}


def torch_capability():
    """torch's CPU capability where the job imported torch, else None."""
    torch = sys.modules.get("torch")
    return torch.backends.cpu.get_cpu_capability() if torch is not None else None


def mismatches(effective):
    """The effective values (kernel, NumPy features, torch capability) that differ from the pin's."""
    return [
        f"{key} is {effective[key]!r}, not {wanted!r}"
        for key, wanted in EXPECTED.items()
        if effective.get(key) is not None and effective[key] != wanted
    ]


def check(state, golden=None):
    """The numerics record of this job, read back from the libraries (call once NumPy, and
    torch where the job uses it, are loaded): what was asked, what runs, the C library and the
    fingerprint of the transcendental functions, ``pinned`` (the pin took effect) and
    ``canonical`` (pinned, with the golden fingerprint: ``golden``, default
    tests/golden/numerics.json)."""
    running = {**effective(), "torch_capability": torch_capability()}
    recorded = {key.lower(): os.environ.get(key, "") for key in RECORDED}
    libc, prints = fingerprint.libc(), fingerprint.measure()
    reason = state["reason"]
    if state["applied"] and (wrong := mismatches(running)):
        reason = f"pin {state['pin']} did not take effect: {'; '.join(wrong)}"
    pinned = state["applied"] and not reason
    if pinned:
        reason = fingerprint.problem(prints, libc, golden)
    if state["applied"] and reason:
        log.warning("numerics: %s; outputs marked non-canonical", reason)
    canonical = pinned and not reason
    return {"setting": state["pin"] if canonical else NATIVE, "pin": state["pin"], "pinned": pinned,
            "canonical": canonical, "reason": reason, **running, **recorded, "libc": libc,
            "fingerprint": prints}
