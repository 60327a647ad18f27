"""The minimum time of 001's causal attention in a fresh process: tests/test_timing_state.py runs this file.

Reads a JSON object on stdin: {"steady": set the allocator's steady state first, "freed_mib": MiB
allocated and freed before anything is timed (0: none), "sizes": the lengths T in the order they
are visited, "calls": timed calls per size}. Per size it draws Q, K, V (T, 64) from one generator,
makes one warm-up call and times ``calls`` calls as one batch (experiments._timing.measure, one
attempt: the test decides whether to measure again). Prints {T: [minimum seconds, disturbed]}.
One BLAS thread, as the tests ask of every timing.
"""

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"

import json  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

from attnrepro.experiments._allocator import steady_state  # noqa: E402
from attnrepro.experiments._timing import measure  # noqa: E402
from attnrepro.experiments.causal_timing import causal_attention  # noqa: E402


def minima(steady, freed_mib, sizes, calls):
    if steady:
        steady_state()
    if freed_mib:
        np.ones(freed_mib * 2**20, dtype=np.uint8)  # allocated, written and freed at once
    rng, found = np.random.default_rng(0), {}
    for T in sizes:
        args = tuple(rng.normal(size=(T, 64)) for _ in range(3))  # (T, 64) each
        batch = measure([(causal_attention, args)] * calls, warmup=[(causal_attention, args)],
                        attempts=1, keep_result=False)
        found[T] = [min(batch.seconds), batch.disturbed]
    return found


if __name__ == "__main__":
    print(json.dumps(minima(**json.load(sys.stdin))))
