"""The mathematics of attention: pure NumPy, no I/O, no randomness of its own."""
