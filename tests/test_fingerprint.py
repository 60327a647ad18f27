"""The fingerprint of the transcendental functions (attnrepro.numerics.fingerprint): what it covers,
what it says."""

import os
import platform
import re

import pytest

from attnrepro.numerics import fingerprint

from conftest import REPO

# Elementwise functions that a math library (or NumPy's or torch's own code) rounds its own way;
# sqrt, abs, max, matmul... are exact or correctly rounded (IEEE 754) and need no fingerprint.
# The operator ** (libm's pow, NumPy's power) is no call: the fingerprint has both by hand.
TRANSCENDENTAL = {"exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "logaddexp", "logsumexp",
                  "power", "pow", "sin", "cos", "tan", "arctan", "arcsin", "arccos", "sinh", "cosh", "tanh",
                  "erf", "gelu", "sigmoid", "softmax", "log_softmax", "cross_entropy",
                  "scaled_dot_product_attention"}
LIBRARY = {"np": "numpy", "math": "libm", "torch": "torch", "F": "torch", "functional": "torch"}
NAMED = {"cross_entropy": "log_softmax", "scaled_dot_product_attention": "sdpa"}  # what torch computes
CALL = re.compile(r"\b(np|math|torch|F|functional)\.(\w+)\(|\.(softmax)\(|activation=\"(\w+)\"")


def _calls():
    """{(library, function)} of the transcendental calls in core, model and experiments."""
    found = set()
    for folder in ("core", "model", "experiments"):
        for path in (REPO / "src/attnrepro" / folder).glob("*.py"):
            for lib, name, method, activation in CALL.findall(path.read_text()):
                lib, name = (LIBRARY[lib], name) if lib else ("torch", method or activation)
                if name in TRANSCENDENTAL:
                    found.add((lib, NAMED.get(name, name)))
    return found


def test_every_transcendental_function_the_computations_call_is_fingerprinted_and_golden():
    """A new np.log1p in the model, or a torch activation, must join the fingerprint (and the golden
    file, through `python -m attnrepro.report golden`)."""
    import torch  # noqa: F401  (measure() fingerprints torch where it is loaded)

    calls = _calls()
    assert {("numpy", "exp"), ("numpy", "sin"), ("libm", "exp"), ("torch", "softmax"), ("torch", "gelu"),
            ("torch", "log_softmax"), ("torch", "sdpa")} <= calls
    measured = fingerprint.measure()
    names = {f"{lib}.{name}" for lib, name in calls}
    assert {n for n in names if not any(k.startswith(f"{n}.") or k == n for k in measured)} == set()
    _, golden = fingerprint.load(REPO / fingerprint.GOLDEN)
    assert set(golden) == set(measured) and len(golden) == 21


def test_a_fingerprint_that_differs_from_the_golden_file_names_each_function_and_the_library(tmp_path):
    golden = tmp_path / "numerics.json"
    golden.write_text(fingerprint.text("glibc 2.36", {"libm.exp": "aaa", "numpy.tanh.float64": "bbb"}))
    assert fingerprint.load(golden) == ("glibc 2.36", {"libm.exp": "aaa", "numpy.tanh.float64": "bbb"})
    assert fingerprint.problem({"libm.exp": "aaa", "numpy.tanh.float64": "bbb"}, "musl 1.2.5", golden) == ""
    moved = {"libm.exp": "ccc", "numpy.tanh.float64": "bbb", "torch.exp.float32": "ddd"}  # torch: not golden
    assert fingerprint.problem(moved, "musl 1.2.5", golden) == (
        "the math library computes other bits: libm.exp, torch.exp.float32 differ from the golden "
        f"fingerprint ({golden}, made with glibc 2.36; here musl 1.2.5)")


@pytest.mark.parametrize("text, says", [
    (None, "no golden fingerprint at {}"),
    ("{", "unreadable golden fingerprint {}: Expecting property name"),
    ('{"fingerprint": ["libm.exp"]}', 'golden fingerprint {} holds no {{"fingerprint": {{function: hash}}}}'),
])
def test_a_missing_or_broken_golden_file_makes_the_job_non_canonical_with_its_name(tmp_path, text, says):
    golden = tmp_path / "numerics.json"
    if text is not None:
        golden.write_text(text)
    reason = fingerprint.problem({"libm.exp": "aaa"}, "glibc 2.36", golden)
    assert reason.startswith(says.format(golden))
    assert reason.endswith(": the math library (glibc 2.36) cannot be checked")


def test_the_c_library_is_named_or_unknown(monkeypatch):
    assert re.fullmatch(r"glibc 2\.\d+", fingerprint.libc())  # this machine kind

    def no_confstr(name):
        raise ValueError("unrecognized configuration name")

    monkeypatch.setattr(os, "confstr", no_confstr)
    monkeypatch.setattr(platform, "libc_ver", lambda: ("musl", "1.2.5"))
    assert fingerprint.libc() == "musl 1.2.5"
    monkeypatch.setattr(platform, "libc_ver", lambda: ("", ""))
    assert fingerprint.libc() == "unknown"
