"""Copy and sort: the synthetic tasks, their batches, and evaluation by true generation.

Symbols are 0 .. alphabet-1, the separator is ``alphabet`` (vocabulary alphabet + 1).
A sequence is [s_1 .. s_L, SEP, answer_1 .. answer_L] (length 2L + 1), where the
answer is s (copy) or s sorted (sort). The model reads positions 0 .. 2L-1 and
predicts the next token at each; the loss counts only the L answer positions.
"""

import numpy as np

from attnrepro.model.decoder import forward

TASKS = ("copy", "sort")


def answer(s, task):
    """The expected answer of each row of s (n, L)."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; known: {', '.join(TASKS)}")
    return np.sort(s, axis=1) if task == "sort" else s


def make_batch(rng, batch, L, task, alphabet=20):
    """Inputs, targets (both (batch, 2L)) and loss weights (1.0 on the answer positions)."""
    s = rng.integers(0, alphabet, size=(batch, L))
    sep = np.full((batch, 1), alphabet)
    seq = np.concatenate([s, sep, answer(s, task)], axis=1)  # (batch, 2L+1)
    tokens, targets = seq[:, :-1], seq[:, 1:]  # positions 0..2L-1 predict 1..2L
    weights = np.zeros_like(tokens, dtype=float)
    weights[:, L:] = 1.0  # the L answer positions
    return tokens, targets, weights


def generate(p, prompt, n_new, arch):
    """Greedy true generation: append n_new tokens, each read back as input of the next."""
    current = prompt
    for _ in range(n_new):
        logits, _ = forward(p, current, arch)  # the whole prefix again (no cache)
        current = np.concatenate([current, logits[:, -1, :].argmax(-1)[:, None]], axis=1)
    return current[:, prompt.shape[1]:]


def evaluate(p, task, L, arch, n=500, seed=999, alphabet=20):
    """Generate the answers of n fresh questions (drawn from default_rng(seed)) and score them.

    Returns a dict: token_accuracy, sequence_accuracy, and per question ``questions``
    (n, L), ``produced`` (n, L), ``correct`` (n,) bool, ``n_correct_tokens`` (n,).
    """
    rng = np.random.default_rng(seed)
    s = rng.integers(0, alphabet, size=(n, L))
    expected = answer(s, task)
    prompt = np.concatenate([s, np.full((n, 1), alphabet)], axis=1)  # (n, L+1)
    produced = generate(p, prompt, L, arch)  # (n, L)
    hits = produced == expected  # (n, L)
    return {
        "token_accuracy": float(hits.mean()),
        "sequence_accuracy": float(hits.all(axis=1).mean()),
        "questions": s,
        "produced": produced,
        "correct": hits.all(axis=1),
        "n_correct_tokens": hits.sum(axis=1),
    }


def all_distinct(s):
    """(n,) bool: the symbols of each row of s (n, L) are all different."""
    s = np.sort(s, axis=1)
    return (s[:, 1:] != s[:, :-1]).all(axis=1)


def expected_distinct_share(alphabet, L):
    """Probability that L uniform symbols are all distinct: alphabet (alphabet-1) ... / alphabet^L."""
    falling = 1
    for i in range(L):
        falling *= alphabet - i
    return falling / alphabet**L
