"""Shared fixtures: the default config and a runner for one experiment case."""

import importlib
import re
import html
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from attnrepro.articles import catalog  # noqa: E402
from attnrepro.dag import config as cfg  # noqa: E402
from attnrepro.dag import plan  # noqa: E402

# --- tests that need something of the environment (a tool, a cluster, an OpenBLAS kernel) -------

# Set (CI sets it for `make test`, .ci/run): a missing tool fails its tests instead of skipping them.
REQUIRE_ALL = "ATTNREPRO_REQUIRE_ALL"


def missing(reason):
    """Skip the calling test because ``reason`` (what this environment lacks), or, with
    ATTNREPRO_REQUIRE_ALL=1, fail it with the same reason. Every environment-dependent skip
    goes through here: directly inside a test, or through the ``needs`` mark below."""
    if os.environ.get(REQUIRE_ALL, "") not in ("", "0"):
        pytest.fail(f"{reason} ({REQUIRE_ALL} is set: a missing requirement is a failure)", pytrace=False)
    pytest.skip(reason)


def seed_articles():
    """{id: Article} of config/config.yaml's articles, their paths read from the repository."""
    return catalog.from_config(cfg.load(REPO / "config" / "config.yaml"), root=REPO)


def article_text(article):
    """The text of config/config.yaml's article ``article`` (its id); the calling test is
    skipped (:func:`missing`) where the text is not beside the checkout."""
    entry = seed_articles()[article]
    if not Path(entry.text).is_file():
        missing(f"the article {article} is not at {entry.text}")
    return Path(entry.text).read_text(encoding="utf-8")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "needs(reason): reason is None, or what this environment lacks: conftest.missing(reason)"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """``pytest.mark.needs(reason)`` on a test or a module: ``missing(reason)`` unless reason is
    None, before any fixture runs (as a skipif mark would)."""
    for mark in item.iter_markers("needs"):
        if mark.args and mark.args[0]:
            missing(mark.args[0])


@pytest.fixture(scope="session")
def default_config():
    return cfg.validate(cfg.load(REPO / "config" / "config.yaml"))


@pytest.fixture(scope="session")
def run_case(default_config):
    """run_case(experiment_id, case=None, **overrides) -> dict of DataFrames."""

    def runner(experiment_id, case=None, **overrides):
        cases = plan.cases(experiment_id, default_config)
        params = ours_only(cases[case or next(iter(cases))])
        params.update(overrides)
        module = importlib.import_module(plan.EXPERIMENTS[experiment_id].module)
        return module.run(params)

    return runner


def ours_only(params):
    """A case's ``params`` without the article's own listing timed beside it (``article_code``: the
    timing entry gives it; tests/test_article_code.py runs it): what a test runs of a timing experiment."""
    return {**params, "article_code": False} if params.get("article_code") else dict(params)


def small_config():
    """config/config.yaml overridden by config/small.yaml, as Snakemake merges them."""
    config = cfg.load(REPO / "config" / "config.yaml")
    for section, values in cfg.load(REPO / "config" / "small.yaml").items():
        config[section] = {**config.get(section, {}), **values} if isinstance(values, dict) else values
    return cfg.validate(config)


# Set by tests/mutation/run.py (`make mutation`): each mutant runs the fast tests that reach it;
# a test that copies the workflow, runs Snakemake or trains is skipped there (not_in_a_mutant).
MUTATION = "ATTNREPRO_MUTATION"


def not_in_a_mutant(what="runs the workflow"):
    """Skip a test too slow to run once per mutant (``what`` it does) under mutation testing."""
    if os.environ.get(MUTATION):
        pytest.skip(f"{what}: not inside a mutant ({MUTATION} is set)")


@pytest.fixture(autouse=True)
def _figure_sections():
    """Every figure drawn in a test is titled with every section, as by hand (a job is given its
    figure's: report.products.style)."""
    from attnrepro.report.products import catalog, style

    style.use_sections(catalog.all_sections())
    yield
    style.use_sections({})


@pytest.fixture(autouse=True, scope="session")
def _subprocesses_under_mutation():
    """Under mutmut's first pass (MUTANT_UNDER_TEST=stats, which records the functions each test
    calls in this process), a subprocess runs the original code: it could not record its calls
    (mutmut reads its settings from the working directory's pyproject.toml), and they would not
    reach this process. While a mutant is tested, subprocesses inherit it and run it too."""
    if not os.environ.get(MUTATION):
        yield
        return
    original = subprocess.Popen.__init__

    def init(self, *args, env=None, **kwargs):
        base = os.environ if env is None else env
        if base.get("MUTANT_UNDER_TEST") == "stats":
            env = {**base, "MUTANT_UNDER_TEST": ""}
        original(self, *args, env=env, **kwargs)

    subprocess.Popen.__init__ = init
    yield
    subprocess.Popen.__init__ = original


# tests/golden/numerics.json: the golden fingerprint, which every job reads (attnrepro.numerics.fingerprint)
COPIED = ("Snakefile", "workflow", "src", "config", "envs", "requirements",
          "tests/golden/numerics.json")


def copy_repo(dest):
    """A runnable copy of the workflow (no results, no .snakemake) in ``dest``."""
    not_in_a_mutant()
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in COPIED:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dest / name)
    link_articles(dest)
    return dest


def copy_run(run, dest):
    """A copy of the finished run ``run`` in ``dest``: results, Snakemake's records and the times
    kept (nothing is out of date), and the articles beside it as beside ``run``: a run whose
    articles went missing would rebuild its index (its rule's ``unbuilt`` parameter)."""
    shutil.copytree(run, dest, symlinks=True)
    link_articles(dest)
    return Path(dest)


def link_articles(dest):
    """The articles where a run in ``dest`` reads them, ``../shared/seeds`` (a link to this
    checkout's, when they are there): the copy then builds the annotated editions as the checkout
    does (workflow/rules/articles.smk; without them it leaves the editions out)."""
    seeds = REPO.parent / "shared" / "seeds"
    beside = Path(dest).resolve().parent / "shared" / "seeds"
    if seeds.is_dir() and not beside.exists():
        beside.parent.mkdir(parents=True, exist_ok=True)
        beside.symlink_to(seeds, target_is_directory=True)


def snakemake(workdir, *args, configfile="config/small.yaml", timeout=900, cores=2):
    """Run Snakemake in ``workdir`` with a clean environment; returns the CompletedProcess."""
    not_in_a_mutant()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # greedy as in the profiles (workflow/profiles/default/config.yaml): no knapsack solver per job
    cmd = [sys.executable, "-m", "snakemake", "--cores", str(cores), "--scheduler", "greedy", *args]
    if configfile:  # last: --configfile takes every word that follows it
        cmd += ["--configfile", *configfile.split()]
    return subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=timeout, env=env)


def planned_jobs(proc):
    """{rule: count} from the job-stats table of a (dry) run's output."""
    jobs, inside = {}, False
    for line in (proc.stdout + proc.stderr).splitlines():
        parts = line.split()
        if parts[:2] == ["job", "count"]:
            inside, jobs = True, {}
        elif inside and parts and parts[0] == "total":
            inside = False
        elif inside and len(parts) == 2 and parts[1].isdigit():
            jobs[parts[0]] = int(parts[1])
    return jobs


def declared_inputs(root, *targets, configfile="config/small.yaml"):
    """{rule: its declared input files} of the DAG of ``targets``, from `snakemake --filegraph`."""
    proc = snakemake(root, "--filegraph", *targets, configfile=configfile)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rules = {}
    for node in proc.stdout.split("label=<<table")[1:]:
        name = re.search(r'point-size="18">([^<]+)<', node).group(1)
        inputs = node.partition("&#8618; input")[2].partition("output &rarr;")[0]  # none: ""
        rules[name] = {html.unescape(f) for f in re.findall(r'face="monospace">([^<]+)<', inputs)}
    assert rules
    return rules


def planned_reasons(proc):
    """{rule[/case]: its reason} of every job a dry run's output lists."""
    jobs = {}
    for block in re.split(r"\n(?=(?:local)?(?:rule|checkpoint) )", proc.stdout + proc.stderr):
        rule = re.match(r"(?:local)?(?:rule|checkpoint) (\w+):", block)
        case, reason = re.search(r"\bcase=([^,\s]+)", block), re.search(r"reason: (.*)", block)
        if rule and reason:
            jobs[rule[1] + (f"/{case[1]}" if case else "")] = reason[1]
    return jobs


def experiment_of(rule):
    """The experiment an experiment job's rule runs; None for any other rule."""
    if rule == "seed_training_case":
        return "train"
    name = rule.removeprefix("numerics_").removesuffix("_case")
    return name if rule.endswith("_case") and name in plan.EXPERIMENTS else None


def planned_resource(text, resource):
    """[(rule, case, the job's ``resource`` as an int, or None)] of every job a dry run's output lists."""
    jobs = []
    for block in re.split(r"\n(?=rule |checkpoint )", text):
        rule = re.match(r"(?:rule|checkpoint) (\w+):", block)
        if rule is None:
            continue
        case = re.search(r"wildcards:.*\bcase=([^,\s]+)", block)
        value = re.search(rf"resources:.*\b{resource}=(\d+)", block)
        jobs.append((rule[1], case and case[1], value and int(value[1])))
    return jobs


def snapshot(root):
    """{path: (size, mtime)} of every file under ``root`` (Python's bytecode caches aside)."""
    found = {}
    for folder, folders, files in os.walk(root):
        folders[:] = [f for f in folders if f != "__pycache__"]
        for name in files:
            path = os.path.join(folder, name)
            stat = os.lstat(path)
            found[os.path.relpath(path, root)] = (stat.st_size, stat.st_mtime_ns)
    return found


@pytest.fixture(scope="session")
def small_run(tmp_path_factory):
    """A finished run of the small config in a temporary copy of the repository: the one pipeline
    run of `make test`, which every test shares read-only (a test that writes works in a copy,
    ``copy_run``). At the session's end, a file it changed, added or removed fails the session."""
    root = copy_repo(tmp_path_factory.mktemp("small_run"))
    proc = snakemake(root)
    assert proc.returncode == 0, proc.stderr[-6000:]
    before = snapshot(root)
    yield root
    after = snapshot(root)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    assert not changed, f"a test wrote into the shared small run (use copy_run): {changed[:10]}"


@pytest.fixture(scope="session")
def archived(small_run, tmp_path_factory):
    """(results folder, archive) of a private copy of the small run, archived with its lock
    (``snakemake --cores 1 archive``: once per session, for every test that reads an archive)."""
    root = tmp_path_factory.mktemp("archived") / "run"
    copy_run(small_run, root)
    shutil.rmtree(root / "results/archive", ignore_errors=True)
    shutil.copy(REPO / "requirements/runtime.lock", root / "requirements/runtime.lock")
    proc = snakemake(root, "archive")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (archive,) = (root / "results/archive").glob("attnrepro-results-*.tar.gz")
    return root / "results", archive
