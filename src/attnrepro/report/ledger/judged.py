"""One claim's judgement, and the two helpers every judging function writes its reason with."""


class Judged(tuple):
    """(verdict, reproduced text, reason) of one claim, and ``window``: the (low, high) of the values
    the rule that decided accepted, in the reproduced value's units (an open side is -inf or inf;
    None: no window, the digits decided). The ledger records it (``accepted_low``, ``accepted_high``)
    and the overview figure draws it."""

    def __new__(cls, verdict, text, reason, window=None):
        judged = super().__new__(cls, (verdict, text, reason))
        judged.window = window
        return judged


def rationale(claim):
    """`` (<rationale>)`` of a claim that names one (published.yaml rationales), else ""."""
    return f" ({claim.rationale})" if claim.rationale else ""


def join(*parts):
    return "; ".join(p for p in parts if p)
