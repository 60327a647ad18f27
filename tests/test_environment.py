"""The conda env files and the pip lock pin the same stack."""

import re

import yaml

from conftest import REPO

CONDA_TO_PIP = {"pytorch": "torch"}


def normalise(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_pins():
    pins = {}
    for line in (REPO / "requirements.lock").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[normalise(name)] = version.split("+")[0]
    return pins


def conda_pins(path):
    pins = {}
    for dep in yaml.safe_load(path.read_text())["dependencies"]:
        if isinstance(dep, str):
            name, _, version = dep.partition("=")
            pins[normalise(CONDA_TO_PIP.get(name, name))] = version
    return pins


def test_every_conda_pin_matches_the_pip_lock():
    lock = lock_pins()
    env_files = sorted((REPO / "envs").glob("*.yaml"))
    assert env_files
    for env in env_files:
        for name, version in conda_pins(env).items():
            if name == "python":
                continue
            assert name in lock, f"{env.name}: {name} is not in requirements.lock"
            assert lock[name] == version, f"{env.name}: {name}={version} but the lock has {lock[name]}"


def test_the_lock_pins_the_stack_the_brief_names():
    lock = lock_pins()
    assert lock["torch"] == "2.13.0"
    assert lock["snakemake"].startswith("9.")
    for name in ("numpy", "pandas", "pyarrow", "matplotlib"):
        assert re.fullmatch(r"\d+\.\d+(\.\d+)?", lock[name]), name


def test_every_rule_names_an_existing_conda_env():
    rules = list((REPO / "workflow" / "rules").glob("*.smk"))
    text = "\n".join(p.read_text() for p in rules)
    assert 'CONDA_ENV = "../../envs/attnrepro.yaml"' in text
    assert (REPO / "envs" / "attnrepro.yaml").is_file()
