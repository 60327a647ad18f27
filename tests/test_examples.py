"""Every example command of the documentation runs.

The commands are collected from the files, not copied here: code spans and code blocks of
README.md, CONTRIBUTING.md and every docs/*.md whose first word is a program (``python``,
``snakemake``, ``make``, ...), and the lines of the docstrings under src/attnrepro that start with
``python``. A new
example therefore runs by default; the few that cannot run here are in SKIPPED, with the reason.

How an example runs, in a scratch copy of the workflow (relative outputs land there):

- ``python ...`` as written, with this interpreter; a path under /tmp/ becomes one in the copy,
  the placeholders of PLACEHOLDERS are replaced and ``[--optional ...]`` parts dropped; SHRINK
  adds small values to the inherently slow ones (train: ``--set steps=20``, the benchmark:
  ``--steps 20 --repeats 1``, the probe: one mask). A command reading
  ``results/data/<article>/<experiment>/...`` first gets those experiments built by Snakemake
  (SHRUNK_CONFIG: train shrunk the same way, scale_table's d_k = 8 only).
- ``snakemake ...`` as a dry run (``-n`` added, unless it is read-only already), in another
  copy: the targets, options, config files and profiles it names exist and the DAG builds. The
  examples that only name targets share one dry run (Snakemake's start-up is most of its cost).

All run two at a time.
"""

import ast
import concurrent.futures
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, copy_repo

# the documentation whose commands run: the front door, the contributors' guide, every topic of docs/
DOCS = ("README.md", "CONTRIBUTING.md",
        *sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md")))
PROGRAM = re.compile(r"(python3?|snakemake|make|pytest|sha256sum|source|bash|\.?[\w.-]*/bin/[\w.-]+)$")

# (pattern searched in the command, why it does not run here)
SKIPPED = [
    (r"^make (reproduce|test)\b", "runs the whole pipeline or the whole test suite"),
    (r"^make lint\b", "lints the whole tree (ruff, snakemake --lint, snakefmt, import-linter); CI runs it"),
    (r"^make (slurm|crate)-env\b", "installs a venv from PyPI (network)"),
    (r"^make mutation\b|/bin/mutmut\b", "mutation testing: about an hour"),
    (r"^make (lock|env|dev-env)\b", "installs or resolves packages from PyPI (network)"),
    (r"tests/crate_validation\.py\b", "needs an extracted archive of a finished run"),
    (r"^pytest -m slurm\b", "needs a SLURM cluster on localhost (root, slurm-wlm, munge)"),
    (r"^\.venv-slurm/bin/snakemake\b", "needs .venv-slurm (make slurm-env: network) and SLURM"),
    (r"^python bench/workflow\.py\b", "runs the whole pipeline, several times"),
    (r"attnrepro verify\b", "needs an archive of a finished run"),
    (r"^sha256sum -c MANIFEST\.sha256\b", "needs an extracted archive of a finished run"),
    (r"^snakemake --report\b", "reports a finished run (its results/ and Snakemake's records)"),
    (r"attnrepro\.report golden\b", "needs a finished canonical run, and rewrites tests/golden"),
    (r"^python tests/test_registry\.py\b",
     "rewrites tests/registry_snapshot.json; tests/test_new_experiment.py runs it in its scratch copy"),
    (r"attnrepro\.report ledger\b", "reads every result of the whole pipeline"),
    (r"attnrepro\.report numerics\b", "reads the numerics sweep (snakemake numerics: ~200 jobs)"),
    (r"attnrepro\.report seeds\b", "reads the seed distribution (snakemake seeds: 51 trainings)"),
    (r"^make article-env\b", "installs the articles' stated NumPy and torch from PyPI (network, 4.5 GiB)"),
    (r"attnrepro\.jobs\.listings_run\b",
     "runs an article's listings (001's: 23 trainings, minutes); tests/test_listings.py runs the job on a "
     "synthetic article"),
    (r"attnrepro\.articles\.session\b", "a synopsis: attnrepro.articles.bounded writes its LISTINGS.json"),
    (r"attnrepro\.archive\.rerun_guard\b",
     "verify's own guard, a synopsis whose words (WORKDIR, DIR, SNAKEMAKE) verify fills in; "
     "tests/test_rerun_guard.py runs it as verify does"),
    (r"attnrepro article check (FILE|post\.md|notebook\.ipynb|\.\./shared/my-post\.md)\b",
     "a synopsis, or README's worked example: the article is the reader's (../shared/my-post.md is "
     "imaginary); tests/test_article_check.py runs the command on articles written for it"),
    (r"^python -m attnrepro\.jobs\.(?!sweep_probe\b)\w+",
     ("a rules' job entry: a synopsis whose words (EXPERIMENT, PIN, JSON) the rule fills in; "
      "every Snakemake run of the tests runs it")),
]

PLACEHOLDERS = {
    "<id>": "scale_table",  # CONTRIBUTING's synopsis
    "table_<name>": "table_scale_table",  # README: every table and figure has a target
    "figure_<name>": "figure_scale_table_curves",
    "my.yaml": "config/small.yaml",  # README: "pass another file"
    "--cores N": "--cores 2",
    "results/data/...parquet": "results/data/001/scale_table/d_k-8_scaled-false.parquet",
}
OPTIONAL = re.compile(r"\s*\[--[^\]]*\]")  # a synopsis's [--case NAME]

# (pattern, words appended): the inherently slow examples, shrunk (a later option wins)
SHRINK = [
    (r"^python -m attnrepro run train\b", ["--set", "steps=20", "--set", "eval_sequences=20"]),
    (r"^python bench/train_speed\.py\b", ["--steps", "20", "--repeats", "1"]),
    (r"\bsweep_probe --kernels\b", ["--masks", "default"]),  # one interpreter per kernel, not two
]
# the config of the experiments built first for the commands that read their results
SHRUNK_CONFIG = "train:\n  steps: 20\n  eval_sequences: 20\nscale_table:\n  d_k: [8]\n"
READ_ONLY = {"-n", "--dry-run", "--list-target-rules", "--unlock"}
RESULTS = re.compile(r"^results/data/\d+/(\w+)/")


# --- collecting ------------------------------------------------------------------------------

def _command(text):
    """The command in a code span or line, or None (a path, an option, a word)."""
    text = " ".join(text.split())
    words = text.split()
    least = 4 if words[:2] == ["python", "-m"] else 2  # `python -m attnrepro` alone names a program
    return text if len(words) >= least and PROGRAM.match(words[0]) else None


def _from_markdown(path):
    text = path.read_text()
    found = []
    for match in re.finditer(r"```[^\n]*\n(.*?)```", text, re.DOTALL):  # fenced blocks, line by line
        start = text.count("\n", 0, match.start(1)) + 1
        found += [(start + i, line.split("#")[0]) for i, line in enumerate(match.group(1).splitlines())]
    prose = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.DOTALL)
    for n, line in enumerate(prose.splitlines(), 1):  # indented blocks
        if line.startswith("    ") and not line.strip().startswith(("-", "`", "|")):
            found.append((n, line))
    for match in re.finditer(r"`([^`]+)`", prose):  # code spans (one may wrap a line)
        found.append((prose.count("\n", 0, match.start()) + 1, match.group(1)))
    return [(f"{path.relative_to(REPO).as_posix()}:{n}", cmd) for n, text in found if (cmd := _command(text))]


def _from_docstrings(path):
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        doc = ast.get_docstring(node, clean=False)
        if not doc:
            continue
        first = node.body[0].lineno
        lines = doc.splitlines()
        i = 0
        while i < len(lines):
            if re.match(r"\s+python\s", lines[i]):
                start, text = i, lines[i]
                while text.rstrip().endswith("\\") and i + 1 < len(lines):
                    i += 1
                    text = text.rstrip()[:-1] + " " + lines[i]
                text = re.sub(r"\s{2,}\(.*\)\s*$", "", text)  # a trailing "(see ...)"
                found.append((f"{path.relative_to(REPO)}:{first + start}", text))
            i += 1
    return [(where, cmd) for where, text in found if (cmd := _command(text))]


def collect():
    """[(command, [where, ...])], in order of first appearance."""
    out = {}
    files = [(REPO / name, _from_markdown) for name in DOCS]
    files += [(p, _from_docstrings) for p in sorted((REPO / "src" / "attnrepro").rglob("*.py"))]
    for path, reader in files:
        for where, cmd in reader(path):
            out.setdefault(cmd, []).append(where)
    return list(out.items())


EXAMPLES = collect()


def skip_reason(cmd):
    return next((reason for pattern, reason in SKIPPED if re.search(pattern, cmd)), None)


# --- running ---------------------------------------------------------------------------------

def argv(cmd, workdir):
    """The words to run for ``cmd`` in ``workdir`` (placeholders replaced, /tmp moved, shrunk)."""
    for text, value in PLACEHOLDERS.items():
        cmd = cmd.replace(text, value)
    cmd = OPTIONAL.sub("", cmd)
    extra = [w for pattern, words in SHRINK if re.search(pattern, cmd) for w in words]
    words = shlex.split(cmd, comments=True) + extra
    words = [str(workdir / "tmp" / w.removeprefix("/tmp/")) if w.startswith("/tmp/") else w for w in words]
    if words[0] in ("python", "python3"):
        words = [sys.executable] + words[1:]
    elif words[0] == "snakemake":
        dry = [] if READ_ONLY & set(words) else ["-n"]
        words = [sys.executable, "-m", "snakemake", *dry, *words[1:]]
    elif words[0] in ("source", "bash"):
        words = ["bash", "-c", shlex.join(words)]
    return words


def expand(words, cwd):
    """Shell globs of the words, against ``cwd`` (a word matching nothing stays as written)."""
    out = []
    for w in words:
        matches = sorted(glob.glob(w, root_dir=cwd)) if any(c in w for c in "*?") else []
        out += matches or [w]
    return out


def needed_experiments(cmd):
    """The experiments whose results the command reads (results/data/<article>/<experiment>/)."""
    from attnrepro.dag import plan

    return {m.group(1) for w in cmd.split() if (m := RESULTS.match(w)) and m.group(1) in plan.EXPERIMENTS}


def _env():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def _run(words, cwd, env):
    started = time.monotonic()
    proc = subprocess.run(words, cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL, check=False)
    return proc, time.monotonic() - started


def _workdir(path):
    """A copy of the workflow with what the examples read: bench/, the lock, .venv."""
    copy_repo(path)
    shutil.copytree(REPO / "bench", path / "bench", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("requirements/runtime.lock", "pyproject.toml"):
        shutil.copy(REPO / name, path / name)
    (path / ".venv").symlink_to(sys.prefix)
    (path / "tmp").mkdir()
    return path


def dry_runs(commands, workdir):
    """{argv: [command, ...]}: the dry runs of the snakemake examples. The ones that only name
    targets (with --cores N, -n, --forcerun FILE) share one, with every target they name (`all`
    for none): Snakemake's start-up, not the targets, is most of what a dry run costs."""
    runs, shared, targets, forced = {}, [], [], []
    for cmd in commands:
        words = argv(cmd, workdir)  # python -m snakemake [-n] ...
        named, rest, plain = [], words[3:], True
        while rest and plain:
            word = rest.pop(0)
            if word == "--cores":
                rest = rest[1:]
            elif word == "--forcerun":  # takes every word that follows
                forced, rest = forced + rest, []
            elif word.startswith("-"):
                plain = word == "-n"
            else:
                named.append(word)
        if plain:
            shared.append(cmd)
            targets += named or ["all"]
        else:
            runs[tuple(words)] = [cmd]
    if shared:
        merged = [*argv("snakemake --cores 2", workdir), *dict.fromkeys(targets)]
        runs[tuple(merged + (["--forcerun", *dict.fromkeys(forced)] if forced else []))] = shared
    return runs


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """{command: (CompletedProcess, seconds, argv)} of every example that runs, two at a time."""
    work = _workdir(tmp_path_factory.mktemp("examples"))  # python examples, their outputs
    dry = _workdir(tmp_path_factory.mktemp("dry"))  # snakemake dry runs (no results, no lock)
    env = _env()
    env_py = {**env, "PYTHONPATH": str(REPO / "src")}
    runnable = [cmd for cmd, _ in EXAMPLES if not skip_reason(cmd)]
    snakes = [cmd for cmd in runnable if cmd.startswith("snakemake")]
    others = [cmd for cmd in runnable if cmd not in snakes]
    needed = sorted(set().union(*map(needed_experiments, others)))
    (work / "config" / "examples.yaml").write_text(SHRUNK_CONFIG)

    def run(cmd):
        if needed_experiments(cmd):
            proc, seconds = build.result()
            if proc.returncode:  # the results it reads could not be built: its failure
                return proc, seconds, proc.args
        words = expand(argv(cmd, work), work)
        return (*_run(words, work, env_py), words)

    def dry_run(words):
        return (*_run(list(words), dry, env), list(words))

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        build = pool.submit(_run, [sys.executable, "-m", "snakemake", "--cores", "1", *needed,
                                   "--configfile", "config/examples.yaml"], work, env) if needed else None
        futures = {words: pool.submit(dry_run, words) for words in dry_runs(snakes, dry)}
        # the ones that wait for the build last, so that the pool is never idle
        late = sorted(others, key=lambda c: bool(needed_experiments(c)))
        futures.update({cmd: pool.submit(run, cmd) for cmd in late})
        done = {key: future.result() for key, future in futures.items()}
    out = {cmd: done[words] for words, cmds in dry_runs(snakes, dry).items() for cmd in cmds}
    return {**out, **{cmd: done[cmd] for cmd in others}}


def _id(cmd):
    return re.sub(r"[^\w.=-]+", "_", cmd)[:80]


@pytest.mark.parametrize("cmd, where", [
    pytest.param(cmd, where, id=_id(cmd),
                 marks=[pytest.mark.skip(reason=r)] if (r := skip_reason(cmd)) else [])
    for cmd, where in EXAMPLES
])
@pytest.mark.full
def test_example_runs(outcomes, cmd, where):
    proc, seconds, words = outcomes[cmd]
    assert proc.returncode == 0, (
        f"example of {', '.join(where)} failed (status {proc.returncode}, {seconds:.1f} s):\n  {cmd}\n"
        f"ran: {shlex.join(words)}\n{(proc.stdout + proc.stderr)[-3000:]}")


def test_examples_are_collected():
    """The collector finds the examples it must (a broken pattern would run nothing), and every
    skip still matches an example (a stale entry would hide a new example of that form)."""
    commands = [cmd for cmd, _ in EXAMPLES]
    wheres = [w for _, where in EXAMPLES for w in where]
    assert any(w.startswith("src/attnrepro/cli.py:") for w in wheres), wheres
    assert {w.split(":")[0] for w in wheres} >= {"README.md", "CONTRIBUTING.md"}
    assert any(w.startswith("docs/") for w in wheres), wheres  # the topics of docs/ are read too
    assert any(c.startswith("python -m attnrepro run train") for c in commands), commands
    assert any(c.startswith("snakemake --cores 16 --configfile") for c in commands)  # an indented block
    assert "make test" in commands  # a fenced block, comment stripped
    assert any("--numerics sandybridge-noavx512 --case" in c for c in commands)  # a span over two lines
    for pattern, reason in SKIPPED:
        assert any(re.search(pattern, c) for c in commands), f"no example matches {pattern!r} ({reason})"
