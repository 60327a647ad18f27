"""The environments hold what the code needs, and no more: the locks, the conda env, pyproject."""

import re
import tomllib

import pytest
import yaml

from conftest import REPO
from attnrepro.dag import software
from attnrepro.run import pip_lock

REQUIREMENTS = REPO / "requirements"
RUNTIME = REQUIREMENTS / "runtime.lock"
CONDA_ENV = REPO / "envs" / "attnrepro.yaml"
CONDA_TO_PIP = {"pytorch": "torch"}
# what develops the pipeline and never runs in it (requirements/dev.in)
DEVELOPMENT = ("pytest", "pytest-timeout", "ruff", "snakefmt", "black", "import-linter", "roc-validator",
               "mutmut", "textual", "pyshacl", "uv")


def conda_pins(path=CONDA_ENV):
    pins = {}
    for dep in yaml.safe_load(path.read_text())["dependencies"]:
        if isinstance(dep, str):
            name, _, version = dep.partition("=")
            pins[pip_lock.normal(CONDA_TO_PIP.get(name, name))] = version
    return pins


def pyproject_names(path=REPO / "pyproject.toml"):
    deps = tomllib.loads(path.read_text())["project"]["dependencies"]
    return {pip_lock.normal(re.split(r"[=<>!~\[; ]", d, maxsplit=1)[0]): d for d in deps}


def needed():
    """{distribution: (file, why)} of every module of the package (attnrepro.dag.software's scan)."""
    return software.distributions(sorted(str(p) for p in (REPO / "src").rglob("*.py")))


def missing(names, where):
    """What the code needs that ``names`` (one environment's distributions) lacks, said."""
    return [f"{where} lacks {name}, which {file} needs ({why})"
            for name, (file, why) in sorted(needed().items()) if name not in names]


def test_the_scan_finds_the_imports_and_what_pandas_calls_for_us():
    found = needed()
    for name in ("numpy", "pandas", "pyarrow", "matplotlib", "torch", "threadpoolctl", "pyyaml",
                 "jsonschema", "jinja2", "rocrate"):
        assert name in found, name
    assert found["numpy"][1] == "imports numpy" and found["pyyaml"][1] == "imports yaml"
    assert found["tabulate"][1] == "calls to_markdown"  # no module imports it: pandas does
    assert "attnrepro" not in found and "json" not in found and "yaml" not in found


def test_the_import_that_mutation_testing_adds_needs_no_distribution(tmp_path):
    """A mutated module imports mutmut's trampoline: the rules of a workflow rerun inside a mutant
    (attnrepro verify in tests/test_hostile.py) must not ask the lock for mutmut."""
    module = tmp_path / "mutated.py"
    module.write_text("from mutmut.mutation.trampoline import x\nimport numpy\nimport mutmut.other\n")
    assert software.needed(str(module)) == {"numpy": "imports numpy", "mutmut": "imports mutmut"}
    module.write_text("from mutmut.mutation.trampoline import x\nimport numpy\n")
    software.needed.cache_clear()
    assert software.needed(str(module)) == {"numpy": "imports numpy"}


@pytest.mark.parametrize("where", ["conda", "pyproject", "runtime lock"])
def test_every_environment_holds_every_distribution_the_code_needs(where):
    names = {"conda": conda_pins, "pyproject": pyproject_names,
             "runtime lock": lambda: pip_lock.pins(RUNTIME)}
    assert missing(set(names[where]()), where) == []


def test_an_environment_without_tabulate_is_refused(tmp_path):
    env = tmp_path / "env.yaml"
    env.write_text(CONDA_ENV.read_text().replace("  - tabulate=", "  - not-tabulate="))
    said = missing(set(conda_pins(env)), "env.yaml")
    assert len(said) == 1 and said[0].startswith("env.yaml lacks tabulate, which ")
    assert said[0].endswith("(calls to_markdown)")


def test_every_conda_pin_matches_the_runtime_lock():
    lock = pip_lock.pins(RUNTIME)
    for name, version in conda_pins().items():
        if name != "python":
            pinned = lock.get(name, "")
            assert pinned.removesuffix("+cpu") == version, f"{name}={version}, lock {pinned}"


def torch_is_the_cpu_build(pin):
    return bool(re.fullmatch(r"\d+\.\d+\.\d+\+cpu", pin or ""))


def test_torch_is_named_by_its_cpu_build():
    assert torch_is_the_cpu_build(pip_lock.pins(RUNTIME)["torch"])
    assert torch_is_the_cpu_build(pip_lock.pins(REQUIREMENTS / "runtime.in")["torch"])
    assert pyproject_names()["torch"] == f"torch=={pip_lock.pins(RUNTIME)['torch']}"
    assert not torch_is_the_cpu_build("2.13.0") and not torch_is_the_cpu_build("2.13.0+cu130")
    assert "torch==2.13.0+cpu" in (REPO / "README.md").read_text()


def test_the_runtime_lock_holds_no_development_package():
    runtime = pip_lock.pins(RUNTIME)
    assert [name for name in DEVELOPMENT if name in runtime] == []
    dev = pip_lock.pins(REQUIREMENTS / "dev.lock")
    assert {"pytest", "pytest-timeout", "ruff", "mutmut", "roc-validator", "uv"} <= set(dev)
    shared = {name for name in dev if name in runtime}
    assert {n: dev[n] for n in shared} == {n: runtime[n] for n in shared}  # the runtime's pins hold


@pytest.mark.parametrize("name", ["runtime", "dev", "slurm", "runcrate", "article"])
def test_every_lock_pins_its_in_file_with_hashes(name):
    lock_text = (REQUIREMENTS / f"{name}.lock").read_text()
    blocks = re.split(r"\n(?=\S)", lock_text)
    pinned = [b for b in blocks if re.match(r"[A-Za-z0-9]", b)]
    assert pinned and all("==" in b.split()[0] and "--hash=sha256:" in b for b in pinned), name
    lock = pip_lock.pins(REQUIREMENTS / f"{name}.lock")
    wanted = pip_lock.pins(REQUIREMENTS / ("runtime.in" if name == "article" else f"{name}.in"))
    if name == "article":
        wanted.update(pip_lock.pins(REQUIREMENTS / "article.in"))
    assert {n: lock.get(n) for n in wanted} == wanted, f"{name}.lock is older than {name}.in: make lock"


def test_every_lock_is_named_in_the_requirements_readme():
    readme = (REQUIREMENTS / "README.md").read_text()
    locks_here = sorted(p.name for p in REQUIREMENTS.glob("*.lock"))
    assert locks_here == ["article.lock", "dev.lock", "runcrate.lock", "runtime.lock", "slurm.lock"]
    assert all(f"`{name}`" in readme for name in locks_here)
    assert not list(REPO.glob("requirements*.lock"))  # one folder


def test_every_rule_names_an_existing_conda_env():
    rules = list((REPO / "workflow" / "rules").glob("*.smk"))
    text = "\n".join(p.read_text() for p in rules)
    assert 'CONDA_ENV = "../../envs/attnrepro.yaml"' in text
    assert CONDA_ENV.is_file()


def test_a_rules_pins_are_what_its_code_needs_and_an_unpinned_one_is_refused(tmp_path):
    code = tmp_path / "module.py"
    code.write_text("import numpy as np\nfrom yaml import safe_load\n\n\n"
                    "def f(df):\n    return df.to_markdown()\n")
    (tmp_path / "full.lock").write_text("numpy==1.0 \\\n    --hash=sha256:00\n"
                                        "PyYAML==6.0\ntabulate==0.9\ntorch==2.0\n")
    assert software.pinned([str(code), "data.csv"], lock="full.lock", root=tmp_path) == (
        "numpy==1.0 pyyaml==6.0 tabulate==0.9")  # not torch: the code does not import it
    (tmp_path / "short.lock").write_text("numpy==1.0\nPyYAML==6.0\n")
    with pytest.raises(software.MissingPin, match=r"^short.lock pins no tabulate, which .*module.py needs "
                                                   r"\(calls to_markdown\): add it to short.in"):
        software.pinned([str(code)], lock="short.lock", root=tmp_path)
