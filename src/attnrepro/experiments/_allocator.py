"""The allocator's steady state for timing: glibc malloc's two thresholds fixed for the whole job.

By default glibc's malloc adapts its mmap threshold (the size from which a block is mapped afresh,
and unmapped when freed) and its trim threshold (the free memory at the heap's top it keeps) to
what the process freed before. So a call on score-sized arrays (2 MiB at T = 512) pays a page
fault per 4 KiB page on every call, or none, depending on what ran earlier in the process: its
minimum time moved 2.3x with one freed 16 MiB array (7.1 ms against 3.0 ms; 2026-12-04, a 2-core
AMD EPYC of this project's machine kind). :func:`steady_state`
fixes both thresholds, which also stops their adaptation: every array of a timing experiment then
comes from the heap, and the heap keeps what a timed call freed for the next call. What was set
is recorded in the ``machine`` table (:func:`attnrepro.experiments._timing.machine_table`). Why and
what else is controlled: docs/outputs.md, "Timings".
"""

import ctypes

# mallopt's parameter numbers (glibc's malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
# above the largest single array a timing experiment allocates: timing_exponent's n = 4096 float64
# score matrix, 128 MiB; every array then comes from the heap
MMAP_THRESHOLD = 256 * 2**20
# above the most one timed call holds at once: at n = 4096, 4 score-sized float64 arrays and the
# mask's 3 bool ones, 560 MiB. With 256 MiB the heap was trimmed after each call and the next one
# faulted its pages in again: 272 ms against 211 ms at n = 4096, 141 against 105 at n = 2896
# (2026-12-04, the same machine)
TRIM_THRESHOLD = 2**30
NOT_CONTROLLED = "not controlled"


def glibc():
    """(the process's C library, its version) when it is glibc, else (None, None)."""
    try:
        libc = ctypes.CDLL(None)  # the symbols already loaded into this process
        version = libc.gnu_get_libc_version
    except (OSError, AttributeError, TypeError):
        return None, None
    version.restype = ctypes.c_char_p
    return libc, version().decode()


def steady_state(mmap_threshold=MMAP_THRESHOLD, trim_threshold=TRIM_THRESHOLD, libc=None):
    """Fix glibc malloc's mmap and trim thresholds (bytes) for the rest of the process; return what
    was set: {allocator ("glibc 2.36", or NOT_CONTROLLED elsewhere), malloc_mmap_threshold,
    malloc_mmap_accepted, malloc_trim_threshold, malloc_trim_accepted}; a threshold is None where
    nothing was set. ``libc``: (library, version), as :func:`glibc` returns (a test may pass one)."""
    library, version = libc or glibc()
    if library is None:
        return {"allocator": NOT_CONTROLLED, "malloc_mmap_threshold": None, "malloc_mmap_accepted": False,
                "malloc_trim_threshold": None, "malloc_trim_accepted": False}
    mmap_accepted = library.mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1
    trim_accepted = library.mallopt(M_TRIM_THRESHOLD, trim_threshold) == 1
    return {"allocator": f"glibc {version}",
            "malloc_mmap_threshold": mmap_threshold, "malloc_mmap_accepted": mmap_accepted,
            "malloc_trim_threshold": trim_threshold, "malloc_trim_accepted": trim_accepted}
