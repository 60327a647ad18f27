"""001, the experiment: one training of the NumPy decoder on copy or sort, then evaluation.

One job per training (a grid run or a named ablation, see ``plan._train_cases``).
The model is initialised from default_rng(seed), which then draws every batch;
evaluation is true generation on ``eval_sequences`` fresh questions from
default_rng(eval_seed), with the same scale / post-LN flags as the training.

Tables: ``main`` (one row: the run, its hyperparameters, final loss, per-token and
per-sequence accuracy, parameter count, wall seconds of the training loop: machine-bound, and
the sizes that follow from the configuration: questions seen, possible questions, chance accuracy),
``curve`` (the loss at step 1 and every ``curve_every`` steps), ``sequences`` (per test
question: correct, all symbols distinct, correct tokens; the copy-without-position split
is derived from it), ``parameters`` (the trained tensors in long form; the attention map reads it).
"""

import time

import numpy as np
import pandas as pd

from attnrepro.model import params as model_params
from attnrepro.model.tasks import all_distinct, evaluate, expected_distinct_share
from attnrepro.model.train import TrainConfig, train
from attnrepro.experiments._memory import F64, decoder_pass, largest, parameter_count, sizes, term
from attnrepro.experiments._prices import decoder_step

EXPERIMENT = {
    "article": "001",
    "order": 9,
    "section": "The experiment: copying and sorting sequences",
    "tables": ("main", "curve", "sequences", "parameters"),
    "derived": {
        "main.sequences_seen": "steps x batch",
        "main.sequence_space": "alphabet^L",
        "main.seen_share": "steps x batch / alphabet^L",
        "main.chance_token_accuracy": "1 / alphabet",
        "main.d_head": "d / heads",
        "main.distinct_share_expected": "the share of sequences of distinct symbols: alphabet and L",
        "main.n_parameters": "the model's entries: a product of its sizes",
        "main.vocab": "the alphabet and the special symbols",
    },
}

# case keys that go to TrainConfig, and those that only describe the run
TRAIN_KEYS = ("task", "L", "seed", "steps", "batch", "d", "heads", "layers", "d_ff", "lr",
              "alphabet", "scale", "post_ln", "position", "curve_every")


def config_of(params):
    """The TrainConfig of one case."""
    return TrainConfig(**{k: params[k] for k in TRAIN_KEYS})


def _long_parameters(p):
    """Every tensor in long form: tensor, flat index, value (shapes follow init_params)."""
    return pd.DataFrame({
        "tensor": np.concatenate([np.full(v.size, k, dtype=object) for k, v in p.items()]),
        "index": np.concatenate([np.arange(v.size) for v in p.values()]),
        "value": np.concatenate([v.ravel() for v in p.values()]),
    })


def run(params):
    cfg = config_of(params)
    start = time.perf_counter()
    result = train(cfg)
    train_seconds = time.perf_counter() - start  # machine-bound: 001 says "a training took 35 s"
    ev = evaluate(result.params, cfg.task, cfg.L, cfg.arch, n=params["eval_sequences"],
                  seed=params["eval_seed"], alphabet=cfg.alphabet)
    main = pd.DataFrame([{
        "task": cfg.task, "L": cfg.L, "seed": cfg.seed, "ablation": params["ablation"],
        "steps": cfg.steps, "batch": cfg.batch, "d": cfg.d, "heads": cfg.heads,
        "d_head": cfg.d // cfg.heads, "layers": cfg.layers, "d_ff": cfg.d_ff, "lr": cfg.lr,
        "alphabet": cfg.alphabet, "vocab": cfg.alphabet + 1, "scale": cfg.scale,
        "post_ln": cfg.post_ln, "position": cfg.position,
        "eval_sequences": params["eval_sequences"], "eval_seed": params["eval_seed"],
        "final_loss": result.final_loss,
        "token_accuracy": ev["token_accuracy"], "sequence_accuracy": ev["sequence_accuracy"],
        "n_parameters": model_params.count(result.params),
        "train_seconds": train_seconds,
        # the share of questions whose L symbols are all distinct, in closed form
        "distinct_share_expected": expected_distinct_share(cfg.alphabet, cfg.L),
        # sizes the prose derives from the configuration: one new batch per step, so the questions
        # seen are steps x batch, out of alphabet^L possible questions; a guess scores 1/alphabet
        "sequences_seen": cfg.steps * cfg.batch,
        "sequence_space": cfg.alphabet ** cfg.L,
        "seen_share": cfg.steps * cfg.batch / cfg.alphabet ** cfg.L,
        "chance_token_accuracy": 1 / cfg.alphabet,
    }])
    curve = pd.DataFrame({"step": result.curve_steps, "loss": result.curve_losses})
    questions = ev["questions"]
    sequences = pd.DataFrame({
        "index": np.arange(len(questions)),
        "question": [" ".join(map(str, q)) for q in questions],
        "produced": [" ".join(map(str, a)) for a in ev["produced"]],
        "correct": ev["correct"],
        "all_distinct": all_distinct(questions),
        "n_correct_tokens": ev["n_correct_tokens"],
    })
    parameters = _long_parameters(result.params)
    return {"main": main, "curve": curve, "sequences": sequences, "parameters": parameters}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

# bytes per parameter while run builds its long parameters table: np.full(..., name,
# dtype=object) makes one str object per element (62 bytes with its slot), then the
# concatenated columns and the DataFrame (pandas' str column goes through Arrow)
TABLE_BUILT = 192  # (measured: 152 to 167, the tensors aside)

def peak_memory(p):
    """Three phases: the training steps, the evaluation by generation, the parameters table."""
    L, d, h, layers, d_ff = p["L"], p["d"], p["heads"], p["layers"], p["d_ff"]
    vocab, T = p["alphabet"] + 1, 2 * L
    count = parameter_count(vocab, d, layers, d_ff, T + 1)
    training = [term(12 * count * F64, "the decoder's tensors, their packed copy, the gradients, Adam's "
                     "moments and its update's temporaries: 12 copies float64", **sizes("alphabet", "L"))]
    training += decoder_pass(p["batch"], T, d, h, layers, d_ff, vocab, True, "batch", "L", "alphabet")
    # generation keeps the previous step's caches (one token shorter) beside the current ones
    evaluation = [term(2 * count * F64, "the trained tensors and their packed copy float64",
                       **sizes("alphabet", "L"))]
    evaluation += decoder_pass(p["eval_sequences"], T, d, h, layers, d_ff, vocab,
                              False,  # pragma: no mutate (equivalent: None is as false as False)
                              "eval_sequences", "L", "alphabet")
    table = [term(count * (F64 + TABLE_BUILT), "the trained tensors float64 and their long parameters "
                  "table: one row per parameter", **sizes("alphabet", "L"))]
    return largest(training, evaluation, table)


def work(p):
    """The steps, then the evaluation: L generation steps, each a forward pass (half a step) of
    every question (the long parameters table, built by whole arrays, takes milliseconds)."""
    L, d, h, layers, d_ff, vocab = p["L"], p["d"], p["heads"], p["layers"], p["d_ff"], p["alphabet"] + 1
    training = p["steps"] * decoder_step(p["batch"], 2 * L, d, h, layers, d_ff, vocab)
    return training + L * decoder_step(p["eval_sequences"], 2 * L, d, h, layers, d_ff, vocab) / 2
