"""Every experiment's estimated peak memory (attnrepro.resources.memory) against its measured peak.

Method: the resident memory that ``run(params)`` adds at its peak (VmHWM - VmRSS), each case
in a child process forked after the imports and a warm-up run (tests/memory_probe.py, one
subprocess for all the selected cases). Resident memory, not tracemalloc: it sees torch's
and Arrow's buffers (tracemalloc sees neither) and the freed blocks that glibc's heap keeps,
and it is what a job's memory limit meets. The parameters make the estimated arrays
dominate (20 to 150 MiB, far above the allowance and the measurement's few MiB of noise)
while each run stays well under a second.

Each case states [low, high] on estimate / measured: never below 1 (an estimate must not
undercount), and not far above; the comment gives the ratio measured here (its range over
ten runs where the heap's layout, which moves with the address space's randomisation, moves it).
"""

import copy
import hashlib
import inspect
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attnrepro.experiments import declared
from attnrepro.resources import memory
from attnrepro.run import io
from attnrepro.dag import plan, preflight
from attnrepro.experiments._memory import parameter_count
from attnrepro.experiments.train import _long_parameters
from attnrepro.model.params import count, init_params

from conftest import MUTATION, REPO, missing, small_config

MIB = 2**20
REVERSED = list(range(799, -1, -1))


@dataclass(frozen=True)
class Case:
    experiment: str
    overrides: dict = field(default_factory=dict)
    case: str = None  # the config's first case by default
    low: float = 1.0
    high: float = 2.5

    def __str__(self):
        shown = "-".join(f"{k}={v}" for k, v in self.overrides.items() if k not in ("tokens", "order"))
        return f"{self.experiment}-{self.case or ''}-{shown}"[:80]


# (experiment, overrides of its first case in config/config.yaml, high): estimate / measured
CASES = [
    Case("attention_vs_sdpa", {"n": 330}, high=1.7),  # 1.41: the n x n rows of the weights table
    Case("scale_sweep", {"trials": 200, "d_k": [64, 1024]}, high=1.4),  # 1.14
    Case("multihead_vs_torch", {"n": 800, "d": 64}, high=2.1),  # 1.72
    # the encoding's rows; MultiheadAttention without weights keeps no (n, n) scores (est. was 27x)
    Case("permutation_position", {"table_length": 2000, "d": 64}, high=1.9),  # 1.53
    Case("causal_change", {"n": 1300}, high=1.8),  # 1.29-1.46: the mask and torch's float64 copy
    Case("quadratic_cost", {"n": [1024, 2500], "runs": 1}, high=1.45),  # 1.19
    Case("score_memory", {"n": [1600]}, high=1.35),  # 1.10
    Case("batched_attention", {"T": 800}, high=1.5),  # 1.21
    Case("sdpa_causal", {"T": 800}, high=2.1),  # 1.47-1.71
    Case("scale_table", {"T": 256, "repetitions": 30}, case="d_k-8_scaled-false", high=1.4),  # 1.13
    Case("scale_table", {"T": 256, "repetitions": 30}, case="d_k-8_scaled-true", high=1.4),  # 1.10
    Case("mask_before_after", {"T": 180, "lengths": [180, 60]}, high=2.2),  # 1.75: small rows
    Case("multihead_shapes", {"B": 2, "T": 320}, high=1.6),  # 1.26
    Case("block_params", {"widths": [64, 768], "breakdown_width": 768}, high=1.8),  # 1.45
    # the tensors and the comparison of the largest, (vocab, d); then a pass of long sequences
    Case("grad_check", {"vocab": 12000, "d": 64, "d_ff": 64, "layers": 1, "coordinates": 1, "sequences": 2,
                        "length": 16, "t_max": 16, "weight_from": 8}, high=1.6),  # 1.27
    Case("grad_check", {"vocab": 50, "layers": 1, "coordinates": 1, "threshold": 0.1, "sequences": 24,
                        "length": 96, "t_max": 96, "weight_from": 8}, high=1.75),  # 1.40
    Case("autograd_check", {"vocab": 12000, "d": 64, "d_ff": 64, "layers": 1, "sequences": 2, "length": 16,
                            "t_max": 16, "weight_from": 8}, high=1.9),  # 1.30-1.52
    Case("autograd_check", {"vocab": 50, "layers": 1, "sequences": 40, "length": 128, "t_max": 128,
                            "weight_from": 8}, high=2.2),  # 1.56-1.87
    # the long parameters table of a wide model (est. was 0.52); a step on a large batch; evaluation
    Case("train", {"steps": 1, "d": 160, "d_ff": 640, "batch": 4, "eval_sequences": 4}, high=1.7),  # 1.34
    Case("train", {"steps": 2, "batch": 600, "eval_sequences": 5}, high=1.8),  # 1.42
    Case("attention_map", high=1.5),  # 1.21: a wide model's parameters table read back (WIDE)
    Case("causal_timing", {"T": [128, 900], "trials": [2, 2]}, high=1.6),  # 1.27
    Case("timing_exponent", {"n": [256, 900], "repeats": 2, "bootstrap": 50}, high=1.65),  # 1.32
    Case("kv_cache", {"prompt": 350, "generated": 1, "heads": 8, "layers": 1}, high=1.6),  # 1.27
    Case("kv_speedup", {"prompt": 220, "generated": [1, 2], "heads": 16, "layers": 2, "repeats": 1},
         high=1.75),  # 1.39
    Case("self_attention_tokens", {"tokens": [f"w{i}" for i in range(320)]}, high=1.5),  # 1.19
    Case("causal_weights", {"tokens": [f"w{i}" for i in range(320)]}, high=1.5),  # 1.20
    Case("saturation", {"keys": 10000, "d": [512]}, high=1.5),  # 1.20 (est. was 1.98)
    Case("order_blindness", {"n": 800, "d": 64, "d_k": 16, "order": REVERSED}, high=2.4),  # 1.76-2.09:
    # the attentions' freed arrays stay in the heap beside the table's rows, or not
    # the formula's and SDPA's (n, n) scores (SDPA's math path on 2-D inputs); MultiheadAttention
    Case("torch_modules", {"n": 1600, "d_k": 64}, high=2.5),  # 1.78-2.22
    Case("torch_modules", {"batch": 8, "tokens": 320}, high=2.3),  # 1.56-1.85
    Case("two_heads", {"n": 250}, high=1.75),  # 1.45
]

# the warm-up run: config/small.yaml's first case, made smaller where that is slow
WARM_UP = {"train": {"steps": 1, "eval_sequences": 5}, "scale_sweep": {"trials": 10},
           "grad_check": {"coordinates": 1}, "block_params": {"widths": [64], "breakdown_width": 64}}
# attention_map's trained model: train's first case, wider
WIDE = {"d": 160, "d_ff": 640}


def trained_model(dest, params):
    """The main and parameters tables of a train job of ``params`` (initial tensors), as
    attention_map reads them: {table: path}."""
    vocab, t_max = params["alphabet"] + 1, 2 * params["L"] + 1
    p = init_params(vocab, params["d"], params["layers"], params["d_ff"], t_max, np.random.default_rng(0))
    main = pd.DataFrame([{k: params[k] for k in ("task", "L", "seed", "alphabet", "d", "heads", "layers",
                                                  "d_ff", "scale", "post_ln")}])
    paths = {"main": dest / "main.parquet", "parameters": dest / "parameters.parquet"}
    io.write_parquet(main, paths["main"], {})
    io.write_parquet(_long_parameters(p), paths["parameters"], {})
    return {k: str(v) for k, v in paths.items()}


def first_case(experiment, config, name=None):
    cases = preflight.estimated_cases(experiment, config)
    return copy.deepcopy(cases[name or next(iter(cases))])


def probe_input(case, config, small):
    """What tests/memory_probe.py reads for one case, attention_map's trained models aside
    (:func:`with_models`)."""
    out = {"experiment": case.experiment, "params": {**first_case(case.experiment, config, case.case),
                                                     **case.overrides}}
    out["warm_up"] = {**first_case(case.experiment, small), **WARM_UP.get(case.experiment, {})}
    if case.experiment == "attention_map":
        out["params"]["trained"].update(WIDE)
    return out


def with_models(probe, tmp_path):
    """``probe`` and, for attention_map, the models it reads (written under ``tmp_path``)."""
    if probe["experiment"] != "attention_map":
        return probe
    for sub in ("wide", "small"):
        (tmp_path / sub).mkdir(exist_ok=True)
    return {**probe, "inputs": trained_model(tmp_path / "wide", probe["params"]["trained"]),
            "warm_up_inputs": trained_model(tmp_path / "small", probe["warm_up"]["trained"])}


def probe(cases, tmp_path):
    """The peak bytes of each of ``cases`` (probe inputs), measured in one subprocess."""
    if not os.access("/proc/self/clear_refs", os.W_OK):
        missing("/proc/self/clear_refs (Linux) to reset the peak resident memory")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "memory_probe.py")],
                          input=json.dumps([with_models(c, tmp_path) for c in cases]),
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


# --- under mutation testing: the peaks measured once, reused by every mutant ----------------

# the modules mutation testing changes here; tests/memory_probe.py measures the experiments' run()
# alone, which never calls them
GUARDS = ("dag/preflight.py", "resources/memory.py", "experiments/_memory.py", "experiments/declared.py")


def code_digest():
    """sha256 of what a measured peak depends on besides its case: the package's code but the
    guards, the probe, the trained models' writer, Python's and the libraries' versions."""
    digest = hashlib.sha256()
    for path in sorted((REPO / "src").rglob("*.py")):
        if path.relative_to(REPO / "src" / "attnrepro").as_posix() not in GUARDS:
            digest.update(path.relative_to(REPO).as_posix().encode() + path.read_bytes())
    digest.update((REPO / "tests" / "memory_probe.py").read_bytes())
    digest.update(inspect.getsource(trained_model).encode())
    for library in ("numpy", "pandas", "pyarrow", "torch"):
        digest.update(f"{library} {metadata.version(library)}".encode())
    digest.update(sys.version.encode())
    return digest.hexdigest()


def peaks_file():
    """The measured peaks kept under mutation testing: one file per checkout (mutmut's mutants/
    copy of it), in the temporary directory."""
    checkout = hashlib.sha256(str(REPO).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"attnrepro-memory-peaks-{checkout}.json"


def peaks(cases, tmp_path):
    """:func:`probe` of ``cases``; under mutation testing (conftest.MUTATION set), through
    :func:`peaks_file`: a mutant changes only the guards, never what the experiments allocate,
    so each case is measured once, keyed by its probe input and :func:`code_digest`, and every
    mutant compares its estimates with the same peaks (and in milliseconds, not a minute)."""
    if not os.environ.get(MUTATION):
        return probe(cases, tmp_path)
    path, code = peaks_file(), code_digest()
    keys = [json.dumps([code, case], sort_keys=True) for case in cases]
    kept = json.loads(path.read_text()) if path.is_file() else {}
    new = [(key, case) for key, case in zip(keys, cases) if key not in kept]
    if new:
        kept.update(zip([key for key, _ in new], probe([case for _, case in new], tmp_path)))
        part = path.with_name(f"{path.name}.{os.getpid()}")
        part.write_text(json.dumps(kept))
        os.replace(part, path)  # whole: mutants tested in parallel read it
    return [kept[key] for key in keys]


@pytest.fixture(scope="module")
def measured(request, default_config, tmp_path_factory):
    """{id(case): (params, bytes measured)} for the cases of this module's selected tests."""
    params = [getattr(getattr(item, "callspec", None), "params", {}) for item in request.session.items
              if item.module is request.module]
    selected = [p["case"] for p in params if "case" in p]
    small = small_config()
    cases = [probe_input(c, default_config, small) for c in selected]
    measured = peaks(cases, tmp_path_factory.mktemp("models"))
    return {id(c): (case["params"], peak) for c, case, peak in zip(selected, cases, measured)}


@pytest.mark.full
@pytest.mark.parametrize("case", CASES, ids=str)
def test_the_estimate_is_within_its_stated_bounds_of_the_measured_peak(measured, case):
    params, peak = measured[id(case)]
    estimate = memory.estimate(case.experiment, params)
    ratio = estimate / peak
    assert case.low <= ratio <= case.high, (
        f"estimate {estimate / MIB:.1f} MiB, measured {peak / MIB:.1f} MiB: ratio {ratio:.2f}")


@pytest.mark.parametrize("case", [Case("exercises", {"T": 10**8, "d": 10**5, "batch": 1000})], ids=str)
def test_formula_inputs_allocate_nothing(measured, case):
    """exercises computes with its sizes and never allocates them: its estimate is the
    allowance alone, and it uses a small part of it at sizes that would need terabytes."""
    params, peak = measured[id(case)]
    assert memory.estimate("exercises", params) == memory.ALLOWANCE
    assert peak < memory.ALLOWANCE / 8, peak


# --- each term's keys and description, as the pre-flight reports them (in-process) -----------

HUGE = 10**6  # sizes this many times larger, so that each term's leading power shows
LONGER = 1000  # lists of tokens this many times longer


def scaled(value, factor):
    """A size ``factor`` times larger: an int, each value of a sweep (a list of ints), a list of
    tokens (``factor / HUGE * LONGER`` times longer); None for what is no size."""
    if isinstance(value, bool) or not isinstance(value, (int, list)) or value == []:
        return None
    if isinstance(value, int):
        return value * factor
    if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return [v * factor for v in value]
    return value * (factor * LONGER // HUGE) if any(isinstance(v, str) for v in value) else None


def growths(experiment, config):
    """(key, terms with the key HUGE times larger, terms with it twice that) for each size key of
    the experiment's first case (attention_map's trained model aside: its ``run`` names it)."""
    params = first_case(experiment, config)
    for key, value in params.items():
        if scaled(value, HUGE) is not None:
            yield key, *(memory.terms(experiment, {**params, key: scaled(value, factor)})
                         for factor in (HUGE, 2 * HUGE))


def assert_drivers(experiment, config):
    """Each term's drivers are the keys it grows with, each to the power it grows with."""
    for key, terms, more in growths(experiment, config):
        assert [t[1] for t in terms] == [t[1] for t in more], key  # the same phase, both times
        for (nbytes, what, drivers), (more_bytes, _, _) in zip(terms, more):
            power = math.log2(more_bytes / nbytes)
            assert power == pytest.approx(drivers.get(key, 0), abs=0.05), (key, what, drivers)


@pytest.mark.parametrize("experiment", sorted(memory.ESTIMATES))
def test_each_term_declares_the_keys_it_grows_with_to_their_power(default_config, experiment):
    """The pre-flight names the key whose value, to its power in the largest term, is the largest
    factor (the key a user must change). So a term's drivers must be every key it grows with, each
    to the power it grows with: log2 of its growth when the key doubles, at a huge value."""
    assert_drivers(experiment, default_config)


def every_phase(*phases):
    """``largest`` replaced: the terms of every phase, in order, not only the largest phase's."""
    return [t for phase in phases for t in phase]


def every_phase_everywhere(monkeypatch):
    """``largest`` replaced by :func:`every_phase` in every estimate (each runs in its module's
    declared namespace: attnrepro.experiments.declared)."""
    for function in memory.ESTIMATES.values():
        if "largest" in function.__globals__:
            monkeypatch.setitem(function.__globals__, "largest", every_phase)


@pytest.mark.parametrize("experiment", sorted(memory.ESTIMATES))
def test_every_phase_not_only_the_largest_declares_its_keys_to_their_power(default_config, experiment,
                                                                          monkeypatch):
    """As above, with every phase's terms: a phase that is not the largest at the default values
    can be at others (the training of a long sequence against its parameters table)."""
    every_phase_everywhere(monkeypatch)
    assert_drivers(experiment, default_config)


def test_each_phase_of_a_tiny_training_counts_the_bytes_its_descriptions_say(monkeypatch):
    """Every phase of train's estimate, in bytes worked out by hand from the descriptions, for
    a decoder of width 1: alphabet 1 (vocabulary 2), L = 1 (T = 2, positions 3), batch 2,
    eval_sequences 3. Its tensors: (2 + 3) x 1 embeddings and positions, 4 + 2 + 9 + 1 per layer,
    (1 + 1) x 2 output, 2 final norm: 27."""
    train = memory.ESTIMATES["train"]
    monkeypatch.setitem(train.__globals__, "largest", lambda *phases: list(phases))
    p = {"L": 1, "d": 1, "heads": 1, "layers": 1, "d_ff": 1, "alphabet": 1, "batch": 2, "eval_sequences": 3}
    training, evaluation, table = train(p)
    tensors = 27
    assert [t[0] for t in training] == [
        12 * tensors * 8,  # 12 copies float64
        (1 + 5) * 2 * 1 * 2 * 2 * 8,  # attention weights: (layers + 5 transients) x (B, h, T, T)
        1 * (12 * 2 * 2 * 1 + 4 * 2 * 2 * 1) * 8,  # each layer's cache: 12 x (B, T, d), 4 x (B, T, d_ff)
        5 * 2 * 2 * 2 * 8]  # logits, softmax and gradient: 5 x (B, T, vocab)
    assert [t[0] for t in evaluation] == [
        2 * tensors * 8,  # the trained tensors and their packed copy
        (1 + 4) * 3 * 1 * 2 * 2 * 8,  # no backward: 4 transients
        1 * (12 * 3 * 2 * 1 + 4 * 3 * 2 * 1) * 8,
        5 * 3 * 2 * 2 * 8]
    assert [t[0] for t in table] == [tensors * (8 + train.__globals__["TABLE_BUILT"])]


def test_the_largest_tensor_may_be_the_positions():
    _largest_tensor = declared.namespace("grad_check", ("_largest_tensor",))["_largest_tensor"]
    assert _largest_tensor(vocab=2, d=2, d_ff=2, t_max=10) == 20  # P: (t_max, d)
    assert _largest_tensor(vocab=30, d=2, d_ff=2, t_max=10) == 60  # E: (vocab, d)


def test_a_tiny_attention_map_counts_the_bytes_its_descriptions_say():
    """The trained decoder of L = 2 (positions 2 x 2 + 1 = 5), width 1, alphabet 1: (2 + 5) + 16 + 4 + 2
    = 29 tensors, read back at TABLE_READ bytes each; the weights table of one layer, two heads and
    a sequence of 3: 1 x 2 x 3 x 3 rows, 8 float64 each."""
    trained = {"L": 2, "d": 1, "heads": 2, "layers": 1, "d_ff": 1, "alphabet": 1}
    case = {"sequence": [1, 2, 3], "run": "sort-L2-seed0", "trained": trained}
    attention_map = memory.ESTIMATES["attention_map"]
    terms = attention_map(case)
    assert [(t[0], t[2]) for t in terms] == [(29 * attention_map.__globals__["TABLE_READ"], {"run": 1}),
                                             (1 * 2 * 3 * 3 * 8 * 8, {"sequence": 2})]


# Tiny cases whose every term is worked out by hand from its description (F64 8, F32 4, BOOL 1 and
# ROW 400 bytes): {experiment: (params, [bytes of each term, every phase, in order])}.
BY_HAND = {
    # MultiheadAttention (d = 2) and a copy: 2 x 4 x 2 x 2 float64; 24 x (n, d); mask, inverse, copy
    "causal_change": ({"n": 3, "d": 2}, [256, 24 * 3 * 2 * 8, 3 * 3 * (8 + 2)]),
    # the largest T (3): 4 x (3, 3) float64 and a mask from 3 x (3, 3) bool; Q, K, V, output; 2 passes
    # of 1 + 2 rows
    "causal_timing": ({"T": [2, 3], "d_k": 2, "trials": [1, 2], "passes": 2},
                      [4 * 9 * 8 + 3 * 9, 4 * 3 * 2 * 8, 2 * 3 * 400]),
    # T = 2 + 3: 4 x 2 layers x (3, 3) float64; 7 x (2 heads, 5, 5) float64 and 3 x (5, 5) bool;
    # (4 x 2 + 8) x (5, 3) float64
    "kv_cache": ({"layers": 2, "heads": 2, "d": 3, "prompt": 2, "generated": [1, 3]},
                 [4 * 2 * 9 * 8, 7 * 2 * 25 * 8 + 3 * 25, 16 * 5 * 3 * 8]),
    # one layer keeps 4 (heads, T, T): T = 1 + 2
    "kv_speedup": ({"layers": 1, "heads": 1, "d": 2, "prompt": 1, "generated": 2},
                   [4 * 1 * 4 * 8, 4 * 1 * 9 * 8 + 3 * 9, 12 * 3 * 2 * 8]),
    # 2 lengths x (3, 3) rows; scores, before, after (3, 3) float64, the mask and 5 float64 columns
    "mask_before_after": ({"T": 3, "lengths": [1, 2]}, [2 * 9 * 400, 9 * (3 * 8 + 1 + 5 * 8)]),
    # 2 x (4d, d) float64; 8 x (h, n, n) float64; 8 x (n, d) float64; 2 x (4d, d + 1) float32
    "multihead_vs_torch": ({"d": 2, "n": 3, "h": 2}, [2 * 4 * 2 * 2 * 8, 8 * 2 * 9 * 8, 8 * 3 * 2 * 8,
                                                      2 * 4 * 2 * 3 * 4]),
    # queries (2, 1, 4) and 2 x (2, 3, 4) float64 at the largest d_k; then 3 x (2, 3, 3) float64
    "scale_sweep": ({"trials": 2, "n_keys": 3, "d_k": [2, 4]}, [(2 * 3 + 1) * 2 * 4 * 8, 3 * 2 * 9 * 8]),
    # 8 x (2, 3, 3) float64 and 3 x (3, 3) bool; 6 x (2, 3, 2) float64
    "sdpa_causal": ({"B": 2, "T": 3, "d_k": 2}, [8 * 2 * 9 * 8 + 3 * 9, 6 * 2 * 3 * 2 * 8]),
    # Q, K, V of n = 2 and 3; the timing at n = 3; the bootstrap: 3 x (3, 2, 2) float64, 2 x 2 rows
    "timing_exponent": ({"n": [2, 3], "d_k": 2, "repeats": 2, "bootstrap": 3},
                        [3 * 5 * 2 * 8, 4 * 9 * 8 + 3 * 9, 4 * 3 * 2 * 8, 3 * 3 * 2 * 2 * 8, 2 * 2 * 400]),
    # 3 tokens: 4 x (3, 3) float64 and 9 rows; X (3, 2), W 3 x (2, 2), Q, K, V and output (3, 2)
    "self_attention_tokens": ({"tokens": ["a", "b", "c"], "d_model": 2, "d_k": 2},
                              [9 * (4 * 8 + 400), (6 + 12 + 24) * 8]),
    # 8 x (3, 3) float32 and 2 x (3, 3) bool; 8 x (2, 2, 3, 3) float32; 2 x (4 x 2 x 2 + 2 x 2 x 4)
    # float32; 8 x (2, 3, 2 + 4) float32
    "torch_modules": ({"n": 3, "d_k": 2, "batch": 2, "tokens": 3, "d_model": 2, "heads": 2, "d_ff": 4},
                      [8 * 9 * 4 + 2 * 9, 8 * 2 * 2 * 9 * 4, 2 * (16 + 16) * 4, 8 * 2 * 3 * 6 * 4]),
}


@pytest.mark.parametrize("experiment", sorted(BY_HAND))
def test_each_term_of_a_tiny_case_counts_the_bytes_its_description_says(experiment, monkeypatch):
    """Every term of every phase, in whole bytes (a count of bytes is an int: a term that divides
    by a size or a dtype is wrong even where the value happens to agree)."""
    every_phase_everywhere(monkeypatch)
    params, expected = BY_HAND[experiment]
    found = [t[0] for t in memory.ESTIMATES[experiment](params)]
    assert found == expected
    assert all(type(nbytes) is int for nbytes in found), found


# the arrays', modules' and sizes' names as the code spells them (the decoder's B, h, T and d, the
# tokens' n); a description's other words are the case's keys and lower-case ones ("a", "x": 4 x (n, n))
NAMES = {"Q", "K", "V", "X", "W", "W_Q", "W_K", "W_V", "W_O", "PE", "B", "T", "h", "d", "n",
         "MultiheadAttention", "SDPA", "Adam", "Jacobians"}
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MADE_OF = re.compile(r"\b(float64|float32|bool|rows?)\b")


def misspelled(what, params, arrays=True):
    """The words of a term's description ``what`` that are neither lower-case, nor a key of the
    case's ``params`` (or a word of its text values: a train case's name) or one of NAMES,
    spelled as they are; and, for ``arrays``, "no dtype" when it names no dtype (nor rows)."""
    known = NAMES | set(params) | {w for v in params.values() if isinstance(v, str) for w in WORD.findall(v)}
    spelled = {name.lower(): name for name in known}
    wrong = [word for word in WORD.findall(what.replace("'s", "")) if word not in known and word not in "ax"
             and (word.lower() in spelled or not word.islower() or len(word) == 1)]
    return wrong + ([] if MADE_OF.search(what) or not arrays else ["no dtype"])


@pytest.mark.parametrize("experiment", sorted(memory.ESTIMATES))
def test_each_description_names_its_arrays_in_the_codes_spelling_and_their_dtype(default_config, experiment):
    """The refusal shows the largest term's description ("scores, shifted scores, exponentials,
    weights: 4 x (B, T, T) float64"): a user reads its shapes in the config's keys, its arrays
    named as the code names them, and their dtype. Every term of every phase the sizes reach."""
    params = first_case(experiment, default_config)
    seen = {what: bool(drivers) for _, what, drivers in memory.terms(experiment, params)}
    for _, terms, _ in growths(experiment, default_config):
        seen.update({what: bool(drivers) for _, what, drivers in terms})
    for what, arrays in seen.items():  # the allowance aside, which no key drives: arrays
        assert isinstance(what, str) and what == what.strip() and not misspelled(what, params, arrays), what


def test_every_experiment_is_measured():
    assert {c.experiment for c in CASES} | {"exercises"} == set(plan.EXPERIMENTS)


@pytest.mark.parametrize("sizes", [(21, 32, 2, 128, 13), (12000, 64, 1, 64, 16), (50, 256, 3, 1024, 97)])
def test_the_decoder_parameter_count_is_that_of_its_tensors(sizes):
    """(vocab, d, layers, d_ff, t_max): the estimates' count against init_params' tensors."""
    assert parameter_count(*sizes) == count(init_params(*sizes, np.random.default_rng(0)))
