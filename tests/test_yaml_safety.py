"""Config and claims files are data: an anchor or alias, a tag or a template is refused, naming
the file and the line, before any value is built or walked (src/attnrepro/dag/yamlfile.py).

A "billion laughs" is the case in point: nine anchors, each listing the previous one ten times,
are 10^9 leaves in 450 bytes. PyYAML builds them as shared lists in a moment;
a walk of the data (a check of every value, a copy, a dump) then meets every leaf.
"""

import re
import subprocess
import sys
import time

import pytest
import yaml

from attnrepro.dag import config as cfg
from attnrepro.dag import yamlfile

from conftest import REPO

LEVELS = "abcdefghi"
BOMB = "".join(  # each level lists the one before ten times; the first level's leaves are NaNs
    f"{name}: &{name} [{', '.join(['.nan'] * 10 if i == 0 else [f'*{LEVELS[i - 1]}'] * 10)}]\n"
    for i, name in enumerate(LEVELS))
REFUSED = "line 1: an anchor &a (and 88 more): attnrepro reads YAML as plain data"
QUICK = 1.0  # seconds: a refusal reads the file once, it never walks the data


@pytest.fixture
def bomb(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB)
    return path


def timed(function, *args, **kwargs):
    """(the exception ``function`` raised, seconds it took); fails when it raised none."""
    start = time.perf_counter()
    with pytest.raises(ValueError) as info:
        function(*args, **kwargs)
    return info.value, time.perf_counter() - start


@pytest.mark.timeout(30)
@pytest.mark.parametrize("fast", [True, False], ids=["libyaml", "python"])
def test_a_billion_laughs_is_refused_by_the_loader_at_once(bomb, fast):
    error, seconds = timed(yamlfile.load, bomb, fast=fast)
    assert isinstance(error, yamlfile.NotData) and isinstance(error, yamlfile.Refused)
    assert error.lines == [f"{bomb}, {REFUSED}: write each value out, without anchors, aliases or merge keys"]
    assert seconds < QUICK


@pytest.mark.timeout(30)
def test_validate_refuses_the_file_before_walking_what_snakemake_loaded(bomb, default_config):
    loaded = cfg.merge(default_config, yaml.safe_load(BOMB))  # as Snakemake holds it: shared lists
    error, seconds = timed(cfg.validate, loaded, files=[cfg.DEFAULT, bomb])
    # the file's refusal alone: no NaN of the values, no unknown key of the schema (never walked)
    assert str(error).splitlines() == ["invalid configuration:", f"  {bomb}, {REFUSED}: write each value "
                                       "out, without anchors, aliases or merge keys"]
    assert seconds < QUICK


@pytest.mark.timeout(30)
def test_value_errors_visit_a_shared_list_once():
    shared = yaml.safe_load(BOMB)  # 10^9 leaves, 9 distinct lists
    start = time.perf_counter()
    assert cfg.value_errors(shared) == [f"a[{i}]: .nan is not a finite number" for i in range(10)]
    assert time.perf_counter() - start < QUICK


@pytest.mark.timeout(30)
def test_a_config_too_large_to_walk_is_refused_before_the_schema(default_config):
    # Snakemake's --config key=VALUE: YAML read by Snakemake, in no file that could be refused
    # (the mapping, then 11 + 111 + ... + 1,111,111,111 values in its nine lists and their items)
    loaded = cfg.merge(default_config, {"skip": yaml.safe_load(BOMB)})
    error, seconds = timed(cfg.validate, loaded)
    assert str(error).splitlines() == ["invalid configuration:", "  skip: 1,234,567,900 values once its YAML "
                                       "aliases are expanded, more than the 1,000,000 a config may hold: "
                                       "write each value out"]
    assert seconds < QUICK


def test_a_config_too_large_without_aliases_is_not_said_to_have_any():
    written_out = {"skip": [0] * 1_677_720, "small": 1}  # as a file of 16 MiB would hold them
    assert cfg.size_errors(written_out) == [
        "skip: 1,677,721 values, more than the 1,000,000 a config may hold"]
    assert cfg.size_errors({"skip": [0] * 999_999}) == []  # the list and its values: the cap itself


def test_list_refuses_a_billion_laughs_in_one_line(bomb):
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "attnrepro", "list", "--config", str(bomb)],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    seconds = time.perf_counter() - start
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [f"attnrepro: {bomb}, {REFUSED}: write each value out, "
                                        "without anchors, aliases or merge keys"]
    assert "Traceback" not in proc.stderr
    assert seconds < 20  # the interpreter's start and imports; a walk of the bomb never ends


def test_snakemake_refuses_a_billion_laughs_before_any_job(bomb):
    # about 1.5 s: Snakemake builds the bomb's shared lists, common.smk refuses the file it read
    command = [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", str(bomb)]
    proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert f"  {bomb}, {REFUSED}: write each value out" in proc.stdout + proc.stderr
    assert "Job stats" not in proc.stdout + proc.stderr


def _claims_loaders():
    from attnrepro.report.ledger import claims, coverage, headline

    return {"load_claims": claims.load_claims, "load_speed": claims.load_speed,
            "unclaimed": coverage.load, "stated_environment": headline.stated_environment}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("loader", ["load_claims", "load_speed", "unclaimed", "stated_environment"])
def test_the_claims_loaders_refuse_a_billion_laughs(bomb, loader):
    error, seconds = timed(_claims_loaders()[loader], bomb)
    assert isinstance(error, yamlfile.NotData)
    assert str(error).startswith(f"{bomb}, {REFUSED}") and "\n" not in str(error)
    assert seconds < QUICK


def test_a_claim_given_by_an_alias_is_refused_naming_file_and_line(tmp_path):
    from attnrepro.report.ledger import verdicts

    text = (REPO / "config/published.yaml").read_text()
    lines = text.splitlines(True)
    first = next(i for i, line in enumerate(lines) if line.startswith("  - {id: "))
    lines[first] = lines[first].replace("  - {id: ", "  - &claim {id: ", 1)
    lines.insert(first + 1, "  - *claim\n")  # the same claim again, by alias
    path = tmp_path / "published.yaml"
    path.write_text("".join(lines))
    with pytest.raises(yamlfile.NotData) as info:
        verdicts.load_claims(path)
    assert str(info.value) == (f"{path}, line {first + 1}: an anchor &claim (and 1 more): attnrepro "
                               "reads YAML as plain data: write each value out, without anchors, "
                               "aliases or merge keys")


@pytest.mark.parametrize("text, line, found", [
    ("train:\n  lr: !!python/object/apply:os.system [echo]\n", 2, "the tag !!python/object/apply:os.system"),
    ("train:\n  lr: !!python/object:collections.OrderedDict {}\n", 2,
     "the tag !!python/object:collections.OrderedDict"),
    ("skip: !custom [train]\n", 1, "the tag !custom"),
    ("train:\n  steps: !!int 5\n", 2, "the tag !!int"),  # a standard tag too: one rule, no tags
    ("train:\n  <<: {lr: 0.1}\n", 2, "a merge key <<"),
    ("train: {lr: 0.1}\n__use_yte__: true\nskip: ?['train']\n", 2, "the key __use_yte__"),
], ids=["python-apply", "python-object", "local-tag", "standard-tag", "merge", "yte"])
def test_tags_merges_and_templates_are_refused_naming_file_and_line(tmp_path, text, line, found):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    refused = f"{path}, line {line}: {found}: attnrepro reads YAML as plain data"
    with pytest.raises(yamlfile.NotData, match=re.escape(refused)):
        yamlfile.load(path, fast=True)
    with pytest.raises(cfg.ConfigError) as info:
        cfg.load(path)
    assert str(info.value).startswith(refused) and "\n" not in str(info.value)


def test_a_key_given_twice_is_still_a_duplicate_key():
    with pytest.raises(yamlfile.DuplicateKey) as info:
        yamlfile.loads("a: 1\na: 2\n", "x.yaml")
    assert isinstance(info.value, yamlfile.Refused)
    assert info.value.lines == ["x.yaml, line 2: key a given twice (first at line 1)"]


@pytest.mark.parametrize("name", ["config/config.yaml", "config/small.yaml", "config/evidence.yaml",
                                  "config/published.yaml", "config/unclaimed.yaml",
                                  "workflow/schemas/config.schema.yaml"])
def test_the_projects_yaml_files_are_plain_data(name):
    # (workflow/schemas/published.schema.yaml shares its definitions by anchors, on purpose: it is
    # this checkout's own file, read by the validator, never by yamlfile)
    assert yamlfile.load(REPO / name, fast=True)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("depth", [yamlfile.MAX_DEPTH, 100_000])
def test_lists_nested_too_deep_are_refused_before_the_composer_would_crash(tmp_path, depth):
    """libyaml's composer recurses: 10^5 nested lists crashed the interpreter (SIGSEGV) before."""
    path = tmp_path / "deep.yaml"
    path.write_text("a: " + "[" * depth + "]" * depth + "\n")
    code = f"from attnrepro.dag import config as c; c.load({str(path)!r})"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "Traceback" in proc.stderr  # an error raised, not a crash
    assert (f"{path}, line 1: lists or mappings nested more than {yamlfile.MAX_DEPTH} deep" in proc.stderr
            or "exceeded maximum nesting depth" in proc.stderr)
    shallow = tmp_path / "shallow.yaml"
    shallow.write_text("a: " + "[" * (yamlfile.MAX_DEPTH - 1) + "]" * (yamlfile.MAX_DEPTH - 1) + "\n")
    assert cfg.load(shallow)["a"] is not None  # the limit itself is allowed
