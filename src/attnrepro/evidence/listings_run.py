"""One article's listings run verbatim in one interpreter (target ``listings``), and their record.

    python -m attnrepro.jobs.listings_run --article ID --text TEXT --pin haswell-noavx512 \
        --out results/listings/runs/ID.json [--timeout 3600]

It extracts the article's listings from its text (:mod:`attnrepro.articles.listings`), checks
which packages each imports (one outside ``requirements/runtime.lock`` is named in the result, and the
listing runs all the same), then runs them all, in order and verbatim, in a fresh interpreter
(:func:`attnrepro.articles.bounded.run_listings`, each listing's output what it prints) whose
environment carries the numerics pin (:func:`attnrepro.numerics.canonical.apply`) and no thread
limit: the listings set their own (``torch.set_num_threads(2)``, 001's ``Pool(16)`` with one BLAS
thread asked per training), as they did for the article; the thread variables that Snakemake sets
for a job are removed. The article's budget is ``listings.timeout_s``; there is no memory limit
(none is configured: 001's ``Pool(16)`` gets the machine's memory, as for the article). The session
runs in a scratch folder (a listing that writes a file writes it there).

The result, one JSON file per article: the interpreter and the versions it ran, the pin, one line
per listing that did not run (``problems``), and per listing its index, first line, the hash of its
code, the packages outside the lock, its status (``ran``; ``failed`` with the error, a time limit
passed or the interpreter killed; ``skipped`` when it needs a name of a listing that did not run,
or the budget was spent before it), its seconds and what it printed.
:mod:`attnrepro.report.evidence_tables.listings_evaluate` compares that with the published output.
"""

import ast
import hashlib
import json
import logging
import os
import subprocess
import sys
from importlib import metadata

from attnrepro.articles import bounded
from attnrepro.numerics import canonical, threads
from attnrepro.run import pip_lock, usage
from attnrepro import paths

log = logging.getLogger("attnrepro")
LOCK = paths.RUNTIME_LOCK
READS = ("requirements/runtime.lock",)  # which packages are the pinned environment's (LOCK)
THREAD_VARIABLES = (*threads.VARIABLES, "GOTO_NUM_THREADS")
_SRC = str(paths.SRC)


def lock_names(path=LOCK):
    """The normalised distribution names pinned in the runtime lock."""
    return set(pip_lock.pins(path))


def imported(code):
    """The top-level packages a listing imports, in order."""
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            found += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module.split(".")[0])
    return list(dict.fromkeys(found))


def outside_lock(code, locked, distributions=None):
    """The packages a listing imports that neither the standard library nor the lock provides."""
    distributions = metadata.packages_distributions() if distributions is None else distributions
    out = []
    for name in imported(code):
        if name in sys.stdlib_module_names:
            continue
        if not any(pip_lock.normal(d) in locked for d in distributions.get(name, [])):
            out.append(name)
    return out


def session_environment(pin, environ=None):
    """The session's environment: this one with the pin applied and no thread limit, and the
    package importable; (environment, the pin's state)."""
    env = dict(os.environ if environ is None else environ)
    state = canonical.apply(pin, env)
    for name in THREAD_VARIABLES:
        env.pop(name, None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [_SRC, env.get("PYTHONPATH")]))
    return env, state


def run_session(listings, env, timeout, python=sys.executable, memory_limit_mib=None):
    """Run ``listings`` ([{name, first, code}]) in a fresh interpreter, their output what they
    print, within the article's budget ``timeout`` (listings.timeout_s) and, unless given, no
    memory limit; the :class:`attnrepro.articles.bounded.Outcome`."""
    given = [{**listing, "display": "print"} for listing in listings]
    return bounded.run_listings(given, time_limit_s=timeout, memory_limit_mib=memory_limit_mib, env=env,
                                python=python)


def versions(python=sys.executable):
    """Python, NumPy and torch of the interpreter the listings run in."""
    script = ("import json, platform; from importlib import metadata as m\n"
              "def v(n):\n try: return m.version(n)\n except m.PackageNotFoundError: return None\n"
              "print(json.dumps({'python': platform.python_version(), 'numpy': v('numpy'), "
              "'torch': v('torch')}))")
    out = subprocess.run([python, "-c", script], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def run(article, text_path, pin, timeout, lock=LOCK):
    """The record of one article's listings run (see the module's docstring)."""
    from attnrepro.articles import forms
    from attnrepro.articles.listings import extract

    listings = extract(forms.read(text_path), article)
    locked = lock_names(lock)
    env, state = session_environment(pin)
    log.info("article %s: %d listings, pin %s%s", article, len(listings), pin,
             "" if state["applied"] else f" not applied ({state['reason']})")
    given = [{"name": item.name, "first": item.first, "code": item.code} for item in listings]
    outcome = run_session(given, env, timeout)
    rows = []
    for item, ran in zip(listings, outcome.results):
        rows.append({"index": item.index, "name": item.name, "first": item.first,
                     "code_sha256": hashlib.sha256(item.code.encode()).hexdigest(),
                     "outside_lock": outside_lock(item.code, locked),
                     **{k: ran[k] for k in ("status", "error", "seconds", "stdout")}})
    return {"article": article, "text": str(text_path), "pin": {"pin": pin, **state},
            "problems": outcome.problems, "environment": versions(), "numerics": outcome.numerics,
            "listings": rows}


def write(article, text_path, pin, timeout, out):
    """Run the listings of ``article`` (:func:`run`) and write their record to ``out`` (in the job
    harness: attnrepro.jobs.listings_run)."""
    from attnrepro.run import io

    record = run(article, text_path, pin, timeout)
    io.write_text(out, json.dumps(record, indent=1) + "\n")
    for row in record["listings"]:
        log.info("%s (line %d): %s%s", row["name"], row["first"], row["status"],
                 f", {usage.printable(row['error'])}" if row["error"] else "")
    return 0
