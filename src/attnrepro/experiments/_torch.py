"""Torch, imported on demand and limited to this job's threads."""

from attnrepro import threads


def load():
    """The ``torch`` module with its intra-op pool set to the job's thread count."""
    import torch

    torch.set_num_threads(threads.current())
    return torch
