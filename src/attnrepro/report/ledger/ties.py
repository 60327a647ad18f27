"""Exact rounding ties: a reproduced value whose printed digits a tie decided.

A value written at the published precision (:func:`attnrepro.report.ledger.claims.format_like`)
may sit exactly halfway between two printed values: the mean of three accuracies of 2000 tokens
each, 5973/6000 = 0.9955, is written at three decimals. Rounded exactly, such a tie goes up
half to even and half up alike (0.996); its float, a hair below or above the tie depending on how
it was summed, decides what is printed (here 0.995, as published). The digits then agree by the
float's last bit, not by the value, and the reason says so (:func:`reason`).

A value is on a tie when, at one more digit than the published ones, it ends in an exact 5: its
float lies within :data:`RELATIVE` of that tie (a rational of counts is not exact in binary), and
within :data:`NEAR` of a step of the last printed digit (1.0 at 12 decimals is no tie of 1.0000000000005).
"""

import math
from decimal import ROUND_FLOOR, ROUND_HALF_DOWN, ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal

import numpy as np

from attnrepro.report.ledger.claims import _FIXED, _SCI, _THOUSANDS, _parse

RELATIVE = 1e-12  # how near its tie a float lies when the exact value is the tie
NEAR = 1e-6  # and in steps of the last printed digit: a tie of a 12th decimal is not a float's noise
HALF = Decimal("0.5")


def _step_exponent(number, decimals, exact):
    """The power of ten of the last printed digit of the published ``number`` (no unit), for a
    value ``exact`` (its exponent sets a scientific number's step), or None for another style."""
    if decimals is not None:
        return -int(decimals)
    if (m := _SCI.fullmatch(number)) is not None:
        return exact.adjusted() - len(m.group(1) or "")
    if (m := _THOUSANDS.fullmatch(number) or _FIXED.fullmatch(number)) is not None:
        return -len(m.group(1) or "")
    return None


def tie(value, published, decimals=None):
    """(tie, step, unit) when ``value`` written like ``published`` sits on an exact rounding tie:
    the tie as a Decimal, the step of the last printed digit, the published unit; else None."""
    parsed = _parse(published)
    if parsed is None or parsed[3] or isinstance(value, (bool, np.bool_, str)):
        return None
    number, space, unit, _ = parsed
    try:
        x = float(value) * (100 if unit == "%" else 1)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(x) or x == 0:
        return None
    exact = Decimal(x)
    power = _step_exponent(number, decimals, exact)
    if power is None:
        return None
    step = Decimal(1).scaleb(power)
    halfway = ((exact / step).to_integral_value(ROUND_FLOOR) + HALF) * step
    if abs(exact - halfway) > min(Decimal(RELATIVE) * abs(exact), Decimal(NEAR) * step):
        return None
    return halfway, step, f"{space}{unit}"


def _written(number, published):
    """A Decimal in the style of the published string: scientific ("8.95e6"), with thousands
    separators ("1,234.5") or fixed ("0.9955")."""
    if _SCI.fullmatch(_parse(published)[0]) is not None:
        return f"{number:e}".replace("e+", "e")
    return f"{number:,f}" if "," in str(published) else f"{number:f}"


def reason(value, published, decimals=None, printed=""):
    """"on an exact rounding tie: 0.9955 rounds to 0.996 (half to even and half up) or 0.995 (half
    down); the float here, 0.9954999999999999, prints 0.995" when ``value`` sits on a tie at the
    published precision (``printed``: how the ledger wrote it), else ""."""
    found = tie(value, published, decimals)
    if found is None:
        return ""
    halfway, step, unit = found
    even, up, down = (_written(halfway.quantize(step, rounding=r), published) + unit
                      for r in (ROUND_HALF_EVEN, ROUND_HALF_UP, ROUND_HALF_DOWN))
    rounds = (f"{even} (half to even and half up) or {down} (half down)" if even == up
              else f"{even} (half to even) or {up} (half up)")
    return (f"on an exact rounding tie: {_written(halfway, published)}{unit} rounds to {rounds}; the float "
            f"here, {float(value)!r}, prints {printed}")
