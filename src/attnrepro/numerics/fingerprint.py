"""The fingerprint of the transcendental functions a job computes with: a short hash of what each
returns on fixed inputs, so that a host whose math library computes other bits is noticed.

The pin (:mod:`attnrepro.numerics.canonical`) fixes the code paths of OpenBLAS, NumPy and torch, but not
the C library's: under it NumPy's float64 ``exp``, ``log``, ``sin``, ``cos`` and ``power`` are the
C library's libm (measured: equal to ``math.exp`` ... bit for bit), and so are Python's ``math``
functions and ``float ** float``. Another C library (musl, an old or patched glibc) may round
them otherwise, and a softmax, a cross-entropy or a positional encoding then computes other bits.
``np.tanh`` and float32 ``np.exp`` are NumPy's own SIMD code; torch's are its own vectorised
kernels, which may call libm too.

Fingerprinted, on fixed inputs that span each function's range and the range the code uses
(:func:`inputs`), each as the first 12 hex digits of the SHA-256 of its output bytes:

- ``libm.exp``, ``libm.log``, ``libm.sin``, ``libm.cos``, ``libm.pow``: the C library itself,
  through Python's ``math`` (``math.exp`` in exercises, ``beta ** t`` in Adam);
- ``numpy.<f>.float64`` for exp, log, tanh, sin, cos, power (the softmax, the cross-entropy, the
  entropy, the positional encoding's frequencies and angles), and ``numpy.exp.float32`` (000's
  float32 attention);
- with torch loaded: ``torch.exp``, ``torch.softmax`` and ``torch.sdpa`` (scaled_dot_product_attention,
  causal and not) in float64 and float32, ``torch.log`` and ``torch.log_softmax`` (cross_entropy)
  in float64, ``torch.gelu`` (erf) in float32.

A libm change moves ``libm.*`` and the NumPy float64 functions with them; a NumPy or torch
change moves only its own names: a difference says which function moved. ``sqrt`` is correctly
rounded everywhere (IEEE 754) and needs none. The expected fingerprint is the golden one,
``tests/golden/numerics.json`` (written by ``python -m attnrepro.report golden`` from a run's
provenance); a job whose fingerprint differs from it is not canonical. Cost: about a millisecond
for NumPy and libm, a few for torch (README, "Same numbers on every machine").
"""

import hashlib
import json
import math
import os
import platform
import sys
from pathlib import Path
from attnrepro import paths

# the data files read here: attnrepro.dag.code_inputs makes them rule inputs
READS = ("tests/golden/numerics.json",)
GOLDEN = READS[0]  # repository-relative: the expected fingerprint
ROOT = paths.REPO  # the repository that holds src/
PHI = 0.6180339887498949  # (sqrt(5) - 1) / 2, the stride of the inputs' low-discrepancy sequence
DIGITS = 12  # hex digits kept of each SHA-256


def libc():
    """The C library's name and version ("glibc 2.36"), "unknown" where Python cannot tell."""
    try:
        found = os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):
        found = None
    if not found:
        name, version = platform.libc_ver()
        found = f"{name} {version}".strip()
    return found or "unknown"


def spread(lo, hi, n):
    """n values over [lo, hi): lo + (hi - lo) * frac(k * PHI), k = 1..n. Every step is exact or
    one correctly rounded IEEE operation: the same bits on every host."""
    import numpy as np

    return lo + (hi - lo) * np.modf(np.arange(1, n + 1) * PHI)[0]


def inputs():
    """{domain: float64 array}: the fixed inputs (each a few thousand values at most)."""
    import numpy as np

    binades = np.ldexp(spread(1.0, 2.0, 1023), np.arange(-1022, 1024, 2))  # every other binade, exact
    return {
        "exp": np.concatenate([spread(-745.2, 709.8, 1024), spread(-40.0, 0.0, 1024)]),  # all; z - max
        "log": np.concatenate([binades, spread(1e-12, 1.0, 1024)]),  # all; probabilities
        "tanh": np.concatenate([spread(-20.0, 20.0, 1024), spread(-1.0, 1.0, 512)]),
        "trig": np.concatenate([spread(0.0, 4096.0, 1024), spread(-1e6, 1e6, 512)]),  # angles pos * omega
        "base": np.concatenate([np.full(512, 10000.0), spread(0.1, 10.0, 512), spread(0.5, 1.0, 512)]),
        "power": np.concatenate([spread(0.0, 1.0, 512), spread(-30.0, 30.0, 512),
                                 np.arange(1.0, 513.0)]),  # 10000^(2i/d); any; beta^t
        "exp32": np.concatenate([spread(-87.0, 88.0, 1024), spread(-40.0, 0.0, 1024)]),
    }


def digest(array):
    """The first DIGITS hex digits of the SHA-256 of an array's bytes (C order)."""
    import numpy as np

    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:DIGITS]


def _libm(x):
    """{name: hash} of the C library's functions, called through Python's math (every 4th input)."""
    import numpy as np

    def each(f, *args):
        return np.array([f(*a) for a in zip(*(v[::4].tolist() for v in args))])

    return {
        "libm.exp": digest(each(math.exp, x["exp"])),
        "libm.log": digest(each(math.log, x["log"])),
        "libm.sin": digest(each(math.sin, x["trig"])),
        "libm.cos": digest(each(math.cos, x["trig"])),
        "libm.pow": digest(each(math.pow, x["base"], x["power"])),
    }


def _numpy(x):
    """{name: hash} of NumPy's elementwise functions the computations use."""
    import numpy as np

    return {
        "numpy.exp.float64": digest(np.exp(x["exp"])),
        "numpy.log.float64": digest(np.log(x["log"])),
        "numpy.tanh.float64": digest(np.tanh(x["tanh"])),
        "numpy.sin.float64": digest(np.sin(x["trig"])),
        "numpy.cos.float64": digest(np.cos(x["trig"])),
        "numpy.power.float64": digest(np.power(x["base"], x["power"])),
        "numpy.exp.float32": digest(np.exp(x["exp32"].astype(np.float32))),
    }


def _torch(torch, x):
    """{name: hash} of torch's functions the torch experiments use, in their dtypes."""
    F = torch.nn.functional
    scores = torch.from_numpy(x["exp"][:2048].reshape(64, 32) / 16)  # in (-47, 45)
    scores = scores.masked_fill(torch.ones(32, 32, dtype=torch.bool).triu(1).repeat(2, 1), float("-inf"))
    qkv = torch.from_numpy(x["trig"][:1536].reshape(3, 2, 2, 16, 8) / 1024 - 2)  # (3, B, h, T, d) in [-2, 2)
    out = {}
    for dtype, name in ((torch.float64, "float64"), (torch.float32, "float32")):
        s, (q, k, v) = scores.to(dtype), qkv.to(dtype)
        out[f"torch.exp.{name}"] = torch.exp(torch.from_numpy(x["exp32"]).to(dtype))
        out[f"torch.softmax.{name}"] = torch.softmax(s, dim=-1)
        out[f"torch.sdpa.{name}"] = torch.stack([F.scaled_dot_product_attention(q, k, v, is_causal=c)
                                                 for c in (False, True)])
    out["torch.log.float64"] = torch.log(torch.from_numpy(x["log"]))
    out["torch.log_softmax.float64"] = torch.log_softmax(scores, dim=-1)
    out["torch.gelu.float32"] = F.gelu(torch.from_numpy(x["tanh"]).float())
    return {name: digest(t.detach().numpy()) for name, t in sorted(out.items())}


def measure():
    """{function: hash} of this process: libm and NumPy, and torch where the job loaded it."""
    import numpy as np

    x = inputs()
    with np.errstate(all="ignore"):  # exp overflows to inf and underflows to 0 at the range's ends
        prints = {**_libm(x), **_numpy(x)}
    torch = sys.modules.get("torch")
    if torch is not None:
        with torch.no_grad():
            prints.update(_torch(torch, x))
    return dict(sorted(prints.items()))


# --- the golden fingerprint --------------------------------------------------------------------


def text(libc_name, prints):
    """The golden file's text: the C library and one line per function (a readable diff)."""
    return json.dumps({"libc": libc_name, "fingerprint": dict(sorted(prints.items()))}, indent=1) + "\n"


def load(path, shown=None):
    """(libc, {function: hash}) of a golden fingerprint file; ValueError naming the file (as
    ``shown``, default ``path``) when it is missing or not of that form."""
    path, shown = Path(path), shown or path
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"no golden fingerprint at {shown}") from None
    except (OSError, ValueError) as error:
        raise ValueError(f"unreadable golden fingerprint {shown}: {error}") from None
    prints = data.get("fingerprint") if isinstance(data, dict) else None
    if not isinstance(prints, dict) or not all(isinstance(v, str) for v in prints.values()):
        raise ValueError(f"golden fingerprint {shown} holds no {{\"fingerprint\": {{function: hash}}}}")
    return str(data.get("libc", "unknown")), prints


def moved(prints, golden):
    """The functions of ``prints`` whose hash is not the golden one (or that it lacks), sorted."""
    return sorted(name for name, value in prints.items() if golden.get(name) != value)


def problem(prints, libc_name, path=None):
    """Why ``prints`` (this job's fingerprint) is not the golden one, naming the functions and the
    C library; "" when it is."""
    shown = GOLDEN if path is None else str(path)
    try:
        golden_libc, golden = load(ROOT / GOLDEN if path is None else path, shown)
    except ValueError as error:
        return f"{error}: the math library ({libc_name}) cannot be checked"
    names = moved(prints, golden)
    if not names:
        return ""
    return (f"the math library computes other bits: {', '.join(names)} differ from the golden fingerprint "
            f"({shown}, made with {golden_libc}; here {libc_name})")
