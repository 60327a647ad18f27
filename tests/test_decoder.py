"""The NumPy decoder of article 001: gradients, parameter counts, tasks, generation."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from attnrepro.numerics import canonical
from attnrepro.model import params as model_params
from attnrepro.model import tasks
from attnrepro.model.decoder import Arch, forward, loss_and_grads
from attnrepro.report.products import formats

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


AUTOGRAD_CASES = [f"post_ln-{a}_scale-{b}_position-{c}"
                  for a in ("false", "true") for b in ("true", "false") for c in ("true", "false")]


# --- backward pass ---------------------------------------------------------------------------

@pytest.mark.parametrize("case", AUTOGRAD_CASES)
def test_backward_pass_agrees_with_torch_autograd(run_case, case):
    tables = run_case("autograd_check", case)
    main, per_tensor = tables["main"].iloc[0], tables["tensors"]
    assert len(per_tensor) == 38  # E, P, 2 x 16 block tensors, gf, bef, Wout, bout
    assert 0 < main.loss_relative_difference <= 1e-10
    # round-off, and it shows: 0 everywhere would be NumPy's gradients compared with themselves
    assert 0 < per_tensor["relative_difference"].max() <= 1e-10
    assert (per_tensor["max_abs_grad"] > 0).sum() >= 35  # real gradients were compared, not zeros
    # the key biases: zero in exact arithmetic, round-off on both sides
    bk = per_tensor[per_tensor.tensor.str.endswith(".bk")]
    assert (bk["max_abs_grad_numpy"] < 1e-14).all()


def test_autograd_check_detects_a_wrong_gradient(default_config):
    """The comparison is not vacuous: a backward pass off by a factor on one tensor fails it."""
    from attnrepro.experiments import autograd_check, grad_check

    params = {**default_config["autograd_check"], "post_ln": False, "scale": True, "position": True}
    p, tokens, targets, weights = grad_check.setup(params)
    arch = Arch(params["layers"], params["heads"])
    _, g = loss_and_grads(p, tokens, targets, weights, arch)
    torch = autograd_check._torch.load()
    t = {k: torch.tensor(v, requires_grad=True) for k, v in p.items()}
    autograd_check.torch_loss(torch, t, torch.from_numpy(tokens), torch.from_numpy(targets),
                              torch.from_numpy(weights), arch, True).backward()
    ref = t["b1.W1"].grad.numpy()
    assert np.abs(g["b1.W1"] - ref).max() / np.abs(ref).max() < 1e-12
    assert np.abs(1.001 * g["b1.W1"] - ref).max() / np.abs(ref).max() > 1e-4


@pytest.mark.parametrize("case, printed", [
    ("post_ln-false_eps-0.0001", "9.94e-02"),
    ("post_ln-true_eps-0.0001", "6.60e-03"),
])
def test_finite_difference_check_published_digits(run_case, case, printed):
    main = run_case("grad_check", case)["main"].iloc[0]
    assert f"{main.worst_relative_deviation:.2e}" == printed
    assert main.coordinates == 216  # 36 tensors with 6 measurable coordinates (E, P, ...)


@pytest.mark.parametrize("case", ["post_ln-false_eps-1e-06", "post_ln-true_eps-1e-06"])
def test_finite_difference_check_at_small_eps_is_roundoff(run_case, case):
    # |L| ~ 3.5: the centred difference carries ~3.5e-16 / 1e-6 of round-off, up to ~1e-3
    # relative on the smallest gradients checked (1e-6): the published 2.56e-06 / 4.90e-05
    # are this round-off, whose digits depend on the machine's exp/log (see the next test).
    main = run_case("grad_check", case)["main"].iloc[0]
    assert 0 < main.worst_relative_deviation < 1e-3


def _run_in_readme_numerics(experiment, case):
    """One case in the canonical numerics (attnrepro.numerics.canonical), which are those of the machine kind
    of shared/seeds/README.md: an AVX2 host (OpenBLAS's Haswell kernel, numpy without AVX-512)."""
    env = {**os.environ, "PYTHONPATH": os.path.join(REPO, "src"), "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1"}
    canonical.apply(canonical.SETTING, env)
    code = (
        "import json, sys\n"
        "from attnrepro.dag import config, plan\n"
        "from attnrepro.experiments import " + experiment + " as m\n"
        "c = config.load('config/config.yaml')\n"
        f"r = m.run(plan.cases({experiment!r}, c)[{case!r}])['main'].iloc[0]\n"
        "print(json.dumps(float(r.worst_relative_deviation)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_finite_difference_digits_on_the_readme_machine_kind():
    """With the numerics of the README's machine kind, the digits published / measured there."""
    assert f"{_run_in_readme_numerics('grad_check', 'post_ln-false_eps-1e-06'):.2e}" == "2.56e-06"
    assert f"{_run_in_readme_numerics('grad_check', 'post_ln-true_eps-1e-06'):.2e}" == "6.78e-05"


# --- parameters ------------------------------------------------------------------------------

def test_parameter_count_of_the_experiment_model():
    p = model_params.init_params(21, 32, 2, 128, 13, np.random.default_rng(0))
    assert model_params.count(p) == 27253
    assert list(p)[:4] == ["E", "P", "b0.Wq", "b0.bq"] and list(p)[-2:] == ["Wout", "bout"]


def test_block_counts_and_breakdown(run_case):
    tables = run_case("block_params")
    main, breakdown = tables["main"], tables["breakdown"]
    assert main["actual_count"].tolist() == [49984, 789760, 3152384]
    assert (main["actual_count"] == main["formula_12d2_13d"]).all()
    rows = breakdown.set_index("entry")
    assert (rows["actual_count"] == rows["formula_count"]).all()
    assert rows.loc["TOTAL", "actual_count"] == 3152384
    assert rows.loc["W_Q, W_K, W_V, W_O", "actual_count"] == 1048576


def test_initialisation_follows_the_draw_order():
    """E, P, then per block Wq, Wk, Wv, Wo, W1, W2, then Wout, from one generator."""
    p = model_params.init_params(21, 8, 1, 16, 5, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    np.testing.assert_array_equal(p["E"], 0.1 * rng.normal(size=(21, 8)))
    np.testing.assert_array_equal(p["P"], 0.1 * rng.normal(size=(5, 8)))
    for name in ("Wq", "Wk", "Wv", "Wo"):
        np.testing.assert_array_equal(p["b0." + name], rng.normal(size=(8, 8)) / np.sqrt(8))
    np.testing.assert_array_equal(p["b0.W1"], rng.normal(size=(8, 16)) / np.sqrt(8))
    np.testing.assert_array_equal(p["b0.W2"], rng.normal(size=(16, 8)) / np.sqrt(16))
    np.testing.assert_array_equal(p["Wout"], rng.normal(size=(8, 21)) / np.sqrt(8))
    assert not p["b0.bq"].any() and (p["b0.g1"] == 1).all() and not p["bout"].any()


# --- tasks -----------------------------------------------------------------------------------

@pytest.mark.parametrize("task", ["copy", "sort"])
def test_batches(task):
    L, B = 5, 7
    tokens, targets, weights = tasks.make_batch(np.random.default_rng(4), B, L, task)
    s = np.random.default_rng(4).integers(0, 20, size=(B, L))  # the only draw of a batch
    assert tokens.shape == targets.shape == weights.shape == (B, 2 * L)
    np.testing.assert_array_equal(tokens[:, :L], s)
    assert (tokens[:, L] == 20).all()  # the separator
    np.testing.assert_array_equal(targets[:, :-1], tokens[:, 1:])  # next-token targets
    answer = targets[:, L:]
    np.testing.assert_array_equal(answer, np.sort(s, axis=1) if task == "sort" else s)
    assert (weights[:, :L] == 0).all() and (weights[:, L:] == 1).all()


def test_distinct_split_and_expected_share():
    assert f"{tasks.expected_distinct_share(20, 6):.3f}" == "0.436"
    assert tasks.expected_distinct_share(3, 4) == 0.0
    s = np.array([[1, 2, 3], [1, 1, 2], [4, 5, 6], [7, 7, 7]])
    np.testing.assert_array_equal(tasks.all_distinct(s), [True, False, True, False])
    split = formats.distinct_split([True, True, False, False], tasks.all_distinct(s))
    assert split == {"n_distinct": 2, "n_repeated": 2, "accuracy_distinct": 0.5,
                     "accuracy_repeated": 0.5, "share_distinct": 0.5}


def _successor_model(post_ln):
    """A hand-built decoder that emits f(last token): f(k) = k + 1 mod 20, f(SEP) = 5.

    Attention and feed-forward are zero, so the stream is the embedding of the current
    token (one-hot); the final layer norm keeps its argmax, and Wout maps k to f(k).
    """
    p = model_params.init_params(21, 32, 2, 128, 13, np.random.default_rng(0))
    for name in p:
        if name.startswith("b") or name == "P":
            p[name][...] = 1.0 if name.split(".")[-1] in ("g1", "g2") else 0.0
    p["E"][...] = np.eye(21, 32)
    p["Wout"][...] = 0.0
    for k in range(21):
        p["Wout"][k, 5 if k == 20 else (k + 1) % 20] = 1.0
    return p, Arch(2, 4, post_ln=post_ln)


@pytest.mark.parametrize("post_ln", [False, True])
@pytest.mark.parametrize("task", ["copy", "sort"])
def test_evaluation_generates_from_its_own_outputs(task, post_ln):
    p, arch = _successor_model(post_ln)
    L = 4
    ev = tasks.evaluate(p, task, L, arch, n=200, seed=999)
    np.testing.assert_array_equal(ev["produced"], np.tile([5, 6, 7, 8], (200, 1)))  # f(SEP), f(f(SEP)), ...
    s = np.random.default_rng(999).integers(0, 20, size=(200, L))
    np.testing.assert_array_equal(ev["questions"], s)
    hits = (np.sort(s, axis=1) if task == "sort" else s) == [5, 6, 7, 8]
    assert ev["token_accuracy"] == hits.mean()
    assert ev["sequence_accuracy"] == hits.all(axis=1).mean()
    np.testing.assert_array_equal(ev["n_correct_tokens"], hits.sum(axis=1))


def test_causal_forward_ignores_the_future():
    p = model_params.init_params(21, 16, 2, 64, 13, np.random.default_rng(1))
    tok = np.random.default_rng(2).integers(0, 21, size=(2, 10))
    changed = tok.copy()
    changed[:, 6:] = (changed[:, 6:] + 1) % 21
    for post_ln in (False, True):
        a, _ = forward(p, tok, Arch(2, 4, post_ln=post_ln))
        b, _ = forward(p, changed, Arch(2, 4, post_ln=post_ln))
        np.testing.assert_array_equal(a[:, :6], b[:, :6])
        assert not np.allclose(a[:, 6:], b[:, 6:])
