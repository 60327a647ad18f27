"""The interpreter that runs an article's listings: one session, in order, verbatim.

    python -m attnrepro.evidence.listings_session LISTINGS.json RESULTS.json

``LISTINGS.json`` holds the listings of one article ([{"name", "first", "code"}], in the order the
article prints them). Each is compiled and executed as written, all in one namespace: the module
``__main__`` of this interpreter, a fresh one, so that a later listing uses the names an earlier one
defined (the article says they are read in that order) and a function that a listing hands to a
``multiprocessing.Pool`` is found by its workers, as when the listings are one script. Nothing runs
before them but this module: NumPy and torch are loaded by the listings themselves, with the
environment the caller set (:mod:`attnrepro.evidence.listings_run`: the numerics pin). Their
thread counts and timings are theirs.

What each listing prints (Python's ``sys.stdout``) is captured on its own; its status is ``ran``, or
``failed`` with the exception's type and message (and the line of the listing it stopped at), and
the session goes on with the next listing. After each listing the results so far are written to
``RESULTS.json`` ([{"name", "status", "error", "seconds", "stdout"}]), so that an interpreter that
dies leaves what ran before. At the end, ``numerics`` records what the libraries ran (OpenBLAS's
kernel, NumPy's features, torch's capability where a listing loaded it).

It imports nothing of NumPy, pandas or the rest of the package before the listings run.
"""

import contextlib
import io
import json
import os
import sys
import time
import traceback
import types


def _where(error, name):
    """The listing's line where ``error`` was raised ("line 12"), or ""."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == name]
    return f"line {frames[-1].lineno}" if frames else ""


def run_one(listing, namespace):
    """Run one listing in ``namespace``; its result record."""
    buffer = io.StringIO()
    started = time.perf_counter()
    status, error = "ran", ""
    try:
        code = compile(listing["code"], listing["name"], "exec")
        with contextlib.redirect_stdout(buffer):
            exec(code, namespace)  # noqa: S102 - the article's listing, verbatim: what this runs
    except BaseException as caught:  # noqa: BLE001 - every failure is the listing's result
        if isinstance(caught, KeyboardInterrupt):
            raise
        where = _where(caught, listing["name"])
        status = "failed"
        error = f"{type(caught).__name__}: {caught}" + (f" ({where})" if where else "")
    seconds = time.perf_counter() - started
    sys.stdout.flush()
    return {"name": listing["name"], "status": status, "error": error, "seconds": seconds,
            "stdout": buffer.getvalue()}


def fresh_main():
    """A new, empty ``__main__`` module installed in sys.modules (the listings' namespace)."""
    module = types.ModuleType("__main__")
    module.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = module
    return module.__dict__


def numerics():
    """What the libraries ran once the listings are done (None for a library no listing loaded)."""
    if "numpy" not in sys.modules:
        return {}
    from attnrepro.numerics import canonical

    record = canonical.effective()
    torch = sys.modules.get("torch")
    record["torch_capability"] = torch.backends.cpu.get_cpu_capability() if torch is not None else None
    return record


def _write(path, results, record):
    tmp = f"{path}.session.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump({"results": results, "numerics": record}, fh, indent=1)
    os.replace(tmp, path)


def main(argv=None):
    source, target = (argv if argv is not None else sys.argv[1:])
    with open(source, encoding="utf-8") as fh:
        listings = json.load(fh)
    namespace = fresh_main()
    results = []
    for listing in listings:
        results.append(run_one(listing, namespace))
        _write(target, results, {})
        print(f"{listing['name']}: {results[-1]['status']} in {results[-1]['seconds']:.1f} s "
              f"{results[-1]['error']}".rstrip(), file=sys.stderr)
    _write(target, results, numerics())
    return 0


if __name__ == "__main__":
    sys.exit(main())
