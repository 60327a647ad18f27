"""Mutation testing of the guard modules: run mutmut, print the kill rate per module.

    make mutation                              # every guard module (pyproject.toml [tool.mutmut])
    make mutation MODULES="attnrepro.run.io"       # one or more modules, by dotted name

mutmut (requirements/dev.lock, in .venv) copies ``src/`` into ``mutants/``, changes
one operator, constant or call at a time in the modules of ``[tool.mutmut] only_mutate``, and runs
the tests of ``pytest_add_cli_args_test_selection`` that reach the changed function. A mutant that
no test fails ("survived") is a change of behaviour the tests would let through: kill it with a
test, or, when it changes nothing observable, mark its line equivalent in the code with
``# pragma: no mutate (equivalent: <why>)``. No pipeline runs inside a mutant: with
``ATTNREPRO_MUTATION`` set, the tests that copy the workflow or run Snakemake skip
(tests/conftest.py).

The table: per module, the mutants (a line marked equivalent makes none), those killed (a test
failed, or it timed out), the survivors, those no test reaches (not killed either), the lines
marked equivalent, the kill rate (killed / mutants), and the seconds its mutants took. The
survivors are listed below it (``mutmut show NAME`` prints one's diff). Exit status 1 when a
module's kill rate is below THRESHOLD.
"""

import json
import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
THRESHOLD = 0.90
KILLED = {1, 3, 36, -24, 24, 152, 255}  # a failing test, pytest's internal error, a timeout
SURVIVED = {0}
NO_TESTS = {5, 33}
EQUIVALENT = re.compile(r"#\s*pragma:\s*no mutate\b")


def modules():
    """{dotted module: its file} of the modules pyproject.toml puts under mutation."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mutmut"]
    return {path.removeprefix("src/").removesuffix(".py").replace("/", "."): path
            for path in config["only_mutate"]}


def run_mutmut(selected):
    """`mutmut run` on the mutants of ``selected`` modules; its exit status."""
    env = {**os.environ, "ATTNREPRO_MUTATION": "1"}
    env.pop("ATTNREPRO_RUN", None)
    patterns = [f"{module}.*" for module in selected]
    mutmut = Path(sys.executable).with_name("mutmut")
    return subprocess.run([str(mutmut), "run", *patterns], cwd=REPO, env=env).returncode


def results(module, path):
    """The counts of one module from mutmut's record (mutants/<file>.meta)."""
    meta = REPO / "mutants" / f"{path}.meta"
    data = json.loads(meta.read_text()) if meta.is_file() else {"exit_code_by_key": {}}
    codes = data["exit_code_by_key"]
    durations = data.get("durations_by_key", {})
    survivors = sorted(name for name, code in codes.items() if code in SURVIVED)
    untested = sorted(name for name, code in codes.items() if code in NO_TESTS)
    # an exit status of none of the sets (-9: the mutant killed pytest itself): counted as neither
    # killed nor survived, so listed, never left out silently
    other = sorted((name, code) for name, code in codes.items() if code not in KILLED | SURVIVED | NO_TESTS)
    equivalent = sum(bool(EQUIVALENT.search(line)) for line in (REPO / path).read_text().splitlines())
    killed = sum(code in KILLED for code in codes.values())
    return {"module": module, "mutants": len(codes), "killed": killed, "survived": len(survivors),
            "no tests": sum(code in NO_TESTS for code in codes.values()), "equivalent": equivalent,
            "kill rate": killed / len(codes) if codes else float("nan"),
            "seconds": sum(v for v in durations.values() if v), "survivors": survivors,
            "untested": untested, "other": other}


def table(rows):
    head = ["module", "mutants", "killed", "survived", "no tests", "equivalent", "kill rate", "seconds"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["module"], r["mutants"], r["killed"], r["survived"], r["no tests"], r["equivalent"],
                 f"{r['kill rate']:.1%}", f"{r['seconds']:.0f}"]
        lines.append("| " + " | ".join(map(str, cells)) + " |")
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    known = modules()
    selected = [m for a in argv for m in a.split()] or list(known)
    unknown = [m for m in selected if m not in known]
    if unknown:
        print(f"not a guard module: {', '.join(unknown)}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    started = time.monotonic()
    status = run_mutmut(selected)
    rows = [results(m, known[m]) for m in selected]
    print(f"\nmutation testing: {time.monotonic() - started:.0f} s (mutmut exit status {status})\n")
    print(table(rows))
    for r in rows:
        for name in r["survivors"]:
            print(f"survived: {name}")
        for name in r["untested"]:
            print(f"no test reaches: {name}")
        for name, code in r["other"]:
            print(f"neither killed nor survived (exit status {code}): {name}")
    low = [r["module"] for r in rows if not r["kill rate"] >= THRESHOLD]
    if low:
        print(f"\nbelow {THRESHOLD:.0%}: {', '.join(low)}")
    return 1 if low or status not in (0, None) else 0


if __name__ == "__main__":
    sys.exit(main())
