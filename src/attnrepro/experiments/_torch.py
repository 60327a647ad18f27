"""Torch, imported on demand and limited to this job's threads."""

from attnrepro.numerics import threads


def load():
    """The ``torch`` module with its intra-op pool set to the job's thread count."""
    import torch

    torch.set_num_threads(threads.current())
    return torch


def seeded_attention(torch, params):
    """Article 000's set-up, in its order of draws: seed torch, build a float64
    ``MultiheadAttention(d, h)`` (its initial weights), then draw the input x (1, n, d)."""
    torch.manual_seed(params["torch_seed"])
    mha = torch.nn.MultiheadAttention(params["d"], params["h"], batch_first=True, dtype=torch.float64)
    x = torch.randn(1, params["n"], params["d"], dtype=torch.float64)  # (1, n, d)
    return mha, x
