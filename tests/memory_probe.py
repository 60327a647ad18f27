"""The resident memory that one experiment's ``run(params)`` adds: tests/test_estimates.py runs this file.

Reads a JSON list of cases on stdin, each {"experiment", "params", "warm_up", "inputs",
"warm_up_inputs"}, and prints a JSON list: the bytes each case's run added at its peak.

The libraries are imported once, here; each case then runs in a child forked from this
process, so that it starts from the heap a job starts from (a process that ran other cases
keeps their freed blocks, and glibc's thresholds raised by them). The child runs the
experiment once on the small ``warm_up`` parameters (code and the libraries' first-call
buffers become resident), gives its freed memory back (gc, malloc_trim), resets the peak
(``5`` written to /proc/self/clear_refs), runs the case and reports VmHWM - VmRSS: what the
run added to the resident memory at its peak. Unlike tracemalloc, this sees torch's and
Arrow's buffers, and the freed blocks the heap keeps; it is what a job's memory limit meets.
Linux only; one BLAS and torch thread, as the experiment jobs run.
"""

import os
import sys

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import ctypes  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import traceback  # noqa: E402

import numpy  # noqa: E402, F401  (imported once, before the children fork)
import pandas  # noqa: E402, F401
import torch  # noqa: E402, F401


def _status(field):
    """A field of /proc/self/status in bytes (VmRSS: resident now, VmHWM: its peak)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _run(module, params, inputs):
    # the article's listing, timed beside a timing experiment at the article's sizes, holds no more
    # than ours: it runs after our pass has freed its arrays (experiments._article_code)
    params = {**params, "article_code": False} if params.get("article_code") else params
    return module.run(params, inputs) if inputs else module.run(params)


def peak(case):
    """Bytes that ``run(case["params"])`` added to this process's resident memory at its peak."""
    module = importlib.import_module(f"attnrepro.experiments.{case['experiment']}")
    _run(module, case["warm_up"], case.get("warm_up_inputs"))
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # VmHWM := VmRSS
    before = _status("VmRSS")
    _run(module, case["params"], case.get("inputs"))
    return _status("VmHWM") - before


def in_child(case):
    """:func:`peak` of ``case`` in a child forked from this process."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            answer, status = json.dumps(peak(case)), 0
        except BaseException:
            answer, status = json.dumps(traceback.format_exc()), 1
        os.write(write, answer.encode())
        os._exit(status)
    os.close(write)
    data = b""
    while chunk := os.read(read, 65536):
        data += chunk
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if status:
        raise RuntimeError(f"{case['experiment']}: {json.loads(data)}")
    return json.loads(data)


if __name__ == "__main__":
    print(json.dumps([in_child(case) for case in json.load(sys.stdin)]))
