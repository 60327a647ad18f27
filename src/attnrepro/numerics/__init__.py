"""Numerics: the pin every job computes with, the math-library fingerprint, thread limits."""
