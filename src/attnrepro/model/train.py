"""The training loop of article 001: one generator for the initialisation, then the batches.

A fresh batch every step (no data set to overfit), weighted cross-entropy on the
answer, full backward pass, Adam. Without position the table of positions is
zeroed after its draw and its gradient is zeroed at every step, so it is never
updated. The loss reported as final is that of the last step's batch, computed
before the last update, as in the article.
"""

import logging
from dataclasses import dataclass

import numpy as np

from attnrepro.model.adam import Adam
from attnrepro.model.decoder import Arch, loss_and_grads
from attnrepro.model.memory import keep_freed_memory
from attnrepro.model.params import init_params, packed
from attnrepro.model.tasks import make_batch

log = logging.getLogger("attnrepro")


@dataclass(frozen=True)
class TrainConfig:
    task: str
    L: int
    seed: int = 0
    steps: int = 1500
    batch: int = 32
    d: int = 32
    heads: int = 4
    layers: int = 2
    d_ff: int = 128
    lr: float = 3e-3
    alphabet: int = 20
    scale: bool = True
    post_ln: bool = False
    position: bool = True
    curve_every: int = 10  # record the loss at step 1 and every curve_every steps
    log_every: int = 100

    @property
    def arch(self):
        return Arch(self.layers, self.heads, self.scale, self.post_ln)


@dataclass
class TrainResult:
    params: dict  # name -> trained tensor
    final_loss: float
    curve_steps: list
    curve_losses: list


def train(cfg):
    """Train one decoder under ``cfg``; returns the tensors, the final loss and the loss curve."""
    keep_freed_memory()
    rng = np.random.default_rng(cfg.seed)
    vocab, t_max = cfg.alphabet + 1, 2 * cfg.L + 1
    params = init_params(vocab, cfg.d, cfg.layers, cfg.d_ff, t_max, rng)
    if not cfg.position:
        params["P"][:] = 0.0  # the table is zeroed ...
    flat_params, p = packed(params)
    flat_grads, g = packed({k: np.zeros_like(v) for k, v in p.items()})
    adam = Adam(flat_params.shape, cfg.lr)
    arch = cfg.arch
    steps, losses = [], []
    value = float("nan")
    for t in range(1, cfg.steps + 1):
        tokens, targets, weights = make_batch(rng, cfg.batch, cfg.L, cfg.task, cfg.alphabet)
        value, grads = loss_and_grads(p, tokens, targets, weights, arch)
        for name, grad in grads.items():
            g[name][...] = grad
        if not cfg.position:
            g["P"][:] = 0.0  # ... and never updated
        adam.step(flat_params, flat_grads, t)
        if t == 1 or t % cfg.curve_every == 0:
            steps.append(t)
            losses.append(float(value))
        if t % cfg.log_every == 0 or t == cfg.steps:
            log.info("step %d/%d loss %.4f", t, cfg.steps, value)
    return TrainResult(p, float(value), steps, losses)
