"""The interpreter that runs an article's listings: in order, in one namespace, as a notebook does.

    python -m attnrepro.articles.session LISTINGS.json RESULTS.json [--events FD]

``LISTINGS.json`` holds the listings of one article, in the order the article prints them
([{"name", "first", "code", "display"}]), or the plan of one interpreter of
:mod:`attnrepro.articles.bounded` ({"listings", "start", "replay"}: go on from the listing at
position ``start``, after running again, output discarded, the earlier listings in ``replay``).
All run in the module ``__main__`` of this interpreter, a fresh one, so that a later listing uses
the names an earlier one bound, and a function handed to a ``multiprocessing.Pool`` is found by its
workers, as when the listings are one script. Nothing runs before them but this module and
:func:`attnrepro.articles.listings.runnable` (pure Python): NumPy and torch are loaded by the
listings themselves, with the environment the caller set.

Each listing runs as a Jupyter kernel runs a cell: its code as printed, but its IPython lines
(``%matplotlib inline``, ``%timeit f(x)``, ``!pip install x``, a ``%%time`` cell) made Python by
:func:`~attnrepro.articles.listings.runnable`, here in :func:`run_one`, the one place a listing's
code is compiled; a shell command is never run. A listing that fails keeps what it bound before its
error, and every listing after it runs: one that reads a name the failed one never bound fails with
its own ``NameError``, as in the notebook.

A listing's ``display`` says what it shows, as the article's form does:

- ``print``: what it prints (``sys.stdout``), as a script;
- ``last``: a Jupyter cell: what it prints, then the ``repr`` of its final bare expression's value
  when that is not None (a trailing ``;`` hides it). IPython's pretty printer breaks a long
  container over lines where ``repr`` does not;
- ``each``: a ``>>>`` transcript: every expression statement's value that is not None, shown with
  ``repr`` as it runs (compiled statement by statement in the REPL's ``single`` mode, so an
  expression inside a top-level ``for`` shows too, as at the prompt).

A shown value is also bound to ``_``. What a listing writes to ``sys.stderr`` (warnings, progress
bars) is kept apart from its output.

Each listing's record: {"name", "status", "error", "seconds", "stdout", "stderr", "defined",
"notes"}. The status is ``ran``, or ``failed``, its error one line ("ModuleNotFoundError: No module
named 'tiktoken' (line 3)", the line of the listing; "cell magic %%bash: not Python, not run").
``defined`` names what it bound (to a new object), up to its error when it failed; ``notes`` one
line per IPython line made Python ("line 1: shell command not run: !wget URL"). (``skipped`` is
the bounded interpreter's, for a listing no interpreter reached.) After each listing the records
so far are written to ``RESULTS.json`` ({"results", "replayed", "numerics"}), so that an
interpreter that dies leaves what ran before; with ``--events``, "run K", "replay K" and "done K"
lines on that descriptor tell the caller which listing runs, for its time limit. At the end,
``numerics`` records what the libraries ran (OpenBLAS's kernel, NumPy's features, torch's
capability where a listing loaded it).
"""

import argparse
import ast
import contextlib
import io
import json
import os
import sys
import time
import traceback
import types

from attnrepro.articles import listings
from attnrepro.run import usage

DISPLAYS = ("print", "last", "each")


def _line(error, name):
    """The listing's line where ``error`` was raised, or None."""
    if isinstance(error, SyntaxError) and error.filename == name:
        return error.lineno
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == name]
    return frames[-1].lineno if frames else None


def one_line(error, name):
    """``error`` in one line: its type, message and the listing's line."""
    text = error.msg if isinstance(error, SyntaxError) else str(error)
    message = " ".join(line.strip() for line in text.strip().splitlines())
    line = _line(error, name)
    return (f"{type(error).__name__}: {message}" if message else type(error).__name__) + (
        f" (line {line})" if line else "")


def _silenced(code, statement):
    """Whether a ``;`` follows the expression statement (Jupyter then shows nothing)."""
    line = code.splitlines()[statement.end_lineno - 1].encode()
    return line[statement.end_col_offset:].decode().lstrip().startswith(";")


def steps(listing):
    """The listing compiled: [(code object, whether it is an expression whose value is shown)].
    A transcript's statements are compiled in the REPL's ``single`` mode, which shows the values."""
    name, code, display = listing["name"], listing["code"], listing.get("display", "print")
    if display not in DISPLAYS:
        raise ValueError(f"display {display!r} is not one of {', '.join(DISPLAYS)}")
    if display == "print":
        return [(compile(code, name, "exec"), False)]
    body = ast.parse(code, name).body
    if display == "each":
        return [(compile(ast.Interactive([statement]), name, "single"), False) for statement in body]
    if body and isinstance(body[-1], ast.Expr) and not _silenced(code, body[-1]):
        return [(compile(ast.Module(body[:-1], []), name, "exec"), False),
                (compile(ast.Expression(body[-1].value), name, "eval"), True)]
    return [(compile(code, name, "exec"), False)]


def _shower(namespace):
    """The display hook: a value that is not None printed with ``repr`` and bound to ``_``."""

    def show(value):
        if value is not None:
            sys.stdout.write(repr(value) + "\n")
            namespace["_"] = value

    return show


def _execute(listing, namespace):
    show = _shower(namespace)
    hook, sys.displayhook = sys.displayhook, show
    try:
        for code, expression in steps(listing):
            if expression:
                show(eval(code, namespace))  # noqa: S307 - the article's listing, verbatim
            else:
                exec(code, namespace)  # noqa: S102 - the article's listing, verbatim: what this runs
    finally:
        sys.displayhook = hook


def run_one(listing, namespace):
    """Run one listing in ``namespace``, its IPython lines made Python first; its record (see the
    module's docstring). A failed listing's bindings stay, as a notebook's cell's do."""
    try:
        code, notes = listings.runnable(listing["code"])
    except listings.NotPython as refused:
        return blank(listing, "failed", str(refused), 0.0)
    out, err = io.StringIO(), io.StringIO()
    before = dict(namespace)
    started = time.perf_counter()
    status, error = "ran", ""
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            _execute({**listing, "code": code}, namespace)
    except KeyboardInterrupt:
        raise
    except BaseException as caught:  # noqa: BLE001 - every failure is the listing's result
        status, error = "failed", one_line(caught, listing["name"])
    seconds = time.perf_counter() - started
    defined = [k for k, v in namespace.items()
               if not k.startswith("__") and k != "_" and (k not in before or before[k] is not v)]
    sys.stdout.flush()
    return {"name": listing["name"], "status": status, "error": error, "seconds": seconds,
            "stdout": out.getvalue(), "stderr": err.getvalue(), "defined": defined, "notes": notes}


def blank(listing, status, error, seconds=None):
    """The record of a listing that printed nothing: skipped (``error`` says why), failed before it
    ran, or failed outside this interpreter (its caller's account of a kill)."""
    return {"name": listing["name"], "status": status, "error": error, "seconds": seconds,
            "stdout": "", "stderr": "", "defined": [], "notes": []}


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


class Session:
    """One interpreter's pass over a plan: the records so far, written after each listing."""

    def __init__(self, plan, target, events=None):
        self.listings = plan["listings"]
        self.target, self.events = target, events
        self.results, self.replayed = [], []
        self.namespace = fresh_main()

    def _send(self, kind, index):
        if self.events is not None:
            with contextlib.suppress(OSError):
                os.write(self.events, f"{kind} {index}\n".encode())

    def _run(self, index, kind):
        """The record of listing ``index``, run between the events that tell the caller so."""
        self._send(kind, index)
        record = run_one(self.listings[index], self.namespace)
        self._send("done", index)
        return record

    def replay(self, index):
        record = self._run(index, "replay")
        self.replayed.append({"index": index, "status": record["status"], "error": record["error"]})
        self.write({})

    def run(self, index):
        record = self._run(index, "run")
        self.results.append({"index": index, **record})
        self.write({})
        print(f"{record['name']}: {record['status']}"  # the error is the article's: escaped
              + (f" in {record['seconds']:.1f} s" if record["seconds"] is not None else "")
              + f" {usage.printable(record['error'])}".rstrip(), file=sys.stderr)

    def write(self, record):
        tmp = f"{self.target}.session.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"results": self.results, "replayed": self.replayed, "numerics": record}, fh, indent=1)
        os.replace(tmp, self.target)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m attnrepro.articles.session",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("listings", help="the listings (a list), or one interpreter's plan")
    parser.add_argument("results", help="the records, written after each listing")
    parser.add_argument("--events", type=int, help="a descriptor for the 'run K' and 'done K' lines")
    args = parser.parse_args(argv)
    with open(args.listings, encoding="utf-8") as fh:
        plan = json.load(fh)
    plan = {"listings": plan} if isinstance(plan, list) else plan
    session = Session(plan, args.results, args.events)
    for index in plan.get("replay", []):
        session.replay(index)
    for index in range(plan.get("start", 0), len(plan["listings"])):
        session.run(index)
    session.write(numerics())
    return 0


if __name__ == "__main__":
    sys.exit(main())
