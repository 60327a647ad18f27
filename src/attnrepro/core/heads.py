"""Split the model dimension into heads and merge it back."""


def split(M, h):
    """(B, T, d) -> (B, h, T, d/h): reshape the last axis, then bring the head before time."""
    B, T, d = M.shape
    return M.reshape(B, T, h, d // h).transpose(0, 2, 1, 3)


def merge(M):
    """(B, h, T, d/h) -> (B, T, d): the inverse path, in the same order."""
    B, h, T, dh = M.shape
    return M.transpose(0, 2, 1, 3).reshape(B, T, h * dh)
