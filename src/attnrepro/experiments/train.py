"""001, the experiment: one training of the NumPy decoder on copy or sort, then evaluation.

One job per training (a grid run or a named ablation, see ``plan._train_cases``).
The model is initialised from default_rng(seed), which then draws every batch;
evaluation is true generation on ``eval_sequences`` fresh questions from
default_rng(eval_seed), with the same scale / post-LN flags as the training.

Tables: ``main`` (one row: the run, its hyperparameters, final loss, per-token and
per-sequence accuracy, parameter count, wall seconds of the training loop: machine-bound),
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
