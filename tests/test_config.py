"""Configuration validation: every problem is refused with a message naming its key."""

import copy
import subprocess
import sys

import pytest

from attnrepro.dag import config as cfg

from conftest import REPO


def errors_of(config):
    with pytest.raises(cfg.ConfigError) as info:
        cfg.validate(config)
    return str(info.value)


def test_default_config_is_valid(default_config):
    assert cfg.validate(copy.deepcopy(default_config))


@pytest.mark.parametrize(
    "section, key, value, expected",
    [
        ("scale_sweep", "trials", -5, "scale_sweep.trials: -5 is less than the minimum of 1"),
        ("scale_sweep", "trials", 2.5, "scale_sweep.trials: 2.5 is not of type 'integer'"),
        ("scale_table", "d_k", [], "scale_table.d_k"),
        ("attention_vs_sdpa", "seed", "zero", "attention_vs_sdpa.seed: 'zero' is not of type 'integer'"),
        ("multihead_vs_torch", "h", 5,
         "multihead_vs_torch.d: 16 is not divisible by multihead_vs_torch.h = 5"),
        ("permutation_position", "d", 15, "permutation_position.d"),
    ],
)
def test_bad_values_name_their_key(default_config, section, key, value, expected):
    config = copy.deepcopy(default_config)
    config[section][key] = value
    assert expected in errors_of(config)


def test_unknown_keys_are_refused(default_config):
    config = copy.deepcopy(default_config)
    config["scale_sweep"]["trails"] = 10
    config["no_such_experiment"] = {}
    message = errors_of(config)
    assert "scale_sweep: Additional properties are not allowed ('trails' was unexpected)" in message
    assert "'no_such_experiment' was unexpected" in message


def test_missing_config_file_is_named(tmp_path):
    with pytest.raises(cfg.ConfigError, match="config file not found: .*nope.yaml"):
        cfg.load(tmp_path / "nope.yaml")


LONG = "a" * 230  # an ablation whose output file name would exceed 255 bytes


@pytest.mark.parametrize("text, expected", [
    # rules across keys, output file names (~1.5 s each)
    (f"multihead_vs_torch:\n  h: 3\ntrain:\n  ablations:\n    {LONG}: {{d: 64}}\n"
     f"articles:\n  - {{id: a, text: a.txt, sha256: '{'0' * 64}', title: A}}\n"
     f"  - {{id: a, text: b.md, sha256: '{'1' * 64}', title: B}}\n",
     ["multihead_vs_torch.d: 16 is not divisible by multihead_vs_torch.h = 3",
      "articles[1].id: 'a' is the id of articles[0] too",
      f"train.ablations.{LONG[:40]}...(230 characters): the output file ablation-"]),
    # the file read again: a key twice; the values: NaN, a float count, a control character
    ("train:\n  lr: 0.1\n  lr: .nan\n  seeds: [0, 1.0]\nskip: [\"train\\n\"]\n",
     ["bad.yaml, line 3: key train.lr given twice (first at line 2)",
      "train.lr: .nan is not a finite number", "train.seeds[1]: 1.0 is not of type 'integer'",
      "skip[0]: 'train\\n' holds control character(s) U+000A"]),
], ids=["rules-and-names", "file-and-values"])
def test_snakemake_refuses_bad_config_before_any_job(tmp_path, text, expected):
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", str(bad)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode != 0
    for message in expected:
        assert message in proc.stdout + proc.stderr
    assert "Job stats" not in proc.stdout + proc.stderr


# ---- what no key may hold, whatever its schema: NaN, a float count, a control character ----

def _with(default_config, change):
    config = copy.deepcopy(default_config)
    change(config)
    return config


@pytest.mark.parametrize("text, expected", [
    ("train:\n  lr: .nan\n", "train.lr: .nan is not a finite number"),
    ("memory:\n  limit_gib: .inf\n", "memory.limit_gib: .inf is not a finite number"),
    ("grad_check:\n  threshold: -.inf\n", "grad_check.threshold: -.inf is not a finite number"),
], ids=["nan", "inf", "-inf"])
def test_non_finite_numbers_are_refused_naming_the_key(default_config, tmp_path, text, expected):
    (tmp_path / "bad.yaml").write_text(text)
    assert expected in errors_of(cfg.merge(default_config, cfg.load(tmp_path / "bad.yaml")))


@pytest.mark.parametrize("section, key, value, expected", [
    ("train", "seeds", [0, 1.0], "train.seeds[1]: 1.0 is not of type 'integer'"),
    ("train", "steps", 60.0, "train.steps: 60.0 is not of type 'integer'"),
    ("train", "steps", True, "train.steps: True is not of type 'integer'"),
    ("scale_table", "d_k", [8, 64.0], "scale_table.d_k[1]: 64.0 is not of type 'integer'"),
])
def test_an_integer_is_a_python_int_not_a_float(default_config, section, key, value, expected):
    assert expected in errors_of(_with(default_config, lambda c: c[section].update({key: value})))


def test_control_characters_are_refused_in_values_and_keys(default_config):
    def change(config):
        config["self_attention_tokens"]["tokens"] = ["Meera", "bought\t"]
        config["attention_map"]["run"] = "copy-L6-seed0\r"
        config["train"]["ablations"]["wide\n"] = {"d": 64}

    message = errors_of(_with(default_config, change))
    assert "self_attention_tokens.tokens[1]: 'bought\\t' holds control character(s) U+0009" in message
    assert "attention_map.run: 'copy-L6-seed0\\r' holds control character(s) U+000D" in message
    assert "train.ablations.'wide\\n': the key 'wide\\n' holds control character(s) U+000A" in message
    assert all(line.isprintable() for line in message.splitlines())  # one line per problem


def test_a_pattern_ends_at_the_end_of_the_string_not_before_a_final_newline(default_config):
    config = _with(default_config, lambda c: c.update(skip=["train\n"]))
    assert "skip[0]: 'train\\n' does not match '^[a-z_0-9]+$'" in cfg.schema_errors(config)
    assert cfg.schema_errors(_with(default_config, lambda c: c.update(skip=["train"]))) == []


# ---- output file names that the file system takes, temporaries included --------------------

def test_the_temporary_names_length_is_the_one_io_writes(tmp_path):
    from attnrepro.run import io

    tmp = io.temporary_beside(tmp_path / "x.parquet")
    tmp.unlink()
    assert len(tmp.name) - len("x.parquet") == cfg.TEMPORARY_EXTRA == 14


def test_an_ablation_name_too_long_for_its_temporary_file_is_refused(default_config):
    longest_table = len("ablation-") + len(".parameters.parquet")  # train's longest output name
    fits = cfg.NAME_MAX - cfg.TEMPORARY_EXTRA - longest_table  # 213 characters
    config = _with(default_config, lambda c: c["train"]["ablations"].update({"a" * fits: {"d": 64}}))
    assert cfg.validate(config)
    name = "b" * (fits + 10)  # its file name (251 bytes) fits, its temporary (265) does not
    message = errors_of(_with(default_config, lambda c: c["train"]["ablations"].update({name: {"d": 64}})))
    assert (f"train.ablations.{'b' * 40}...(223 characters): the output file ablation-{'b' * 31}..."
            "(251 characters) and its temporary name take 265 bytes, more than the 255 a file name may "
            "have: shorten the name by 10 bytes") in message


# ---- a key given twice in a YAML file ----------------------------------------------------------

DUPLICATED = "train:\n  lr: 0.1\n  steps: 5\n  ablations:\n    wide: {d: 64, d: 128}\n  lr: 0.001\n"


def test_a_key_given_twice_in_a_config_file_is_refused_naming_file_line_and_key(tmp_path):
    path = tmp_path / "twice.yaml"
    path.write_text(DUPLICATED)
    with pytest.raises(cfg.ConfigError) as info:
        cfg.load(path)
    assert str(info.value).splitlines() == [
        "invalid configuration:",
        f"  {path}, line 5: key train.ablations.wide.d given twice (first at line 5)",
        f"  {path}, line 6: key train.lr given twice (first at line 2)"]
    assert cfg.file_errors([REPO / "config/config.yaml", path])[1].endswith("key train.lr given twice "
                                                                            "(first at line 2)")


def test_a_key_given_twice_in_published_yaml_is_refused(tmp_path):
    from attnrepro.report.ledger import verdicts

    path = tmp_path / "published.yaml"
    path.write_text((REPO / "config/published.yaml").read_text().replace(
        "class: exact,", "class: exact, class: round-off,", 1))
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1)
                if "class: exact, class: round-off," in text)
    with pytest.raises(ValueError, match=rf"line {line}: key claims\[\d+\]\.class given twice"):
        verdicts.load_claims(path)


# ---- the articles: one entry each, every field checked ----------------------------------------

def _article(default_config, place=0, **fields):
    """The default config with entry ``place`` of ``articles`` changed (a field set to None: removed)."""
    def change(config):
        entry = {**config["articles"][place], **fields}
        config["articles"][place] = {k: v for k, v in entry.items() if v is not None}
    return _with(default_config, change)


@pytest.mark.parametrize("fields, expected", [
    ({"sha256": "4F3B" + "0" * 60}, f"articles[0].sha256: '4F3B{'0' * 60}' does not match '^[0-9a-f]{{64}}"),
    ({"sha256": "abc"}, "articles[0].sha256: 'abc' does not match '^[0-9a-f]{64}$'"),
    ({"text": None}, "articles[0]: 'text' is a required property"),
    ({"folder": "../shared/seeds"},
     "articles[0]: Additional properties are not allowed ('folder' was unexpected)"),
    ({"id": "0 0"}, "articles[0].id: '0 0' does not match '^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$'"),
    ({"id": "-post"}, "articles[0].id: '-post' does not match"),
    ({"id": 0}, "articles[0].id: 0 is not of type 'string'"),  # `id: 000` unquoted: YAML reads 0
    ({"text": "../shared/seeds/000.pdf"}, "articles[0].text: '../shared/seeds/000.pdf' does not match"),
    ({"text": "../{shared}/000.txt"}, "articles[0].text: '../{shared}/000.txt' does not match"),
    ({"text": "../shared/"}, "articles[0].text: '../shared/' does not match"),
    ({"title": " "}, "articles[0].title: ' ' does not match '\\\\S'"),
    ({"title": ""}, "articles[0].title: '' should be non-empty"),
    ({"title": "t" * 201}, f"articles[0].title: '{'t' * 201}' is too long"),
    ({"title": "A\ntitle"}, "articles[0].title: 'A\\ntitle' holds control character(s) U+000A"),
    ({"claims": "config/published.yml"}, "articles[0].claims: 'config/published.yml' does not match"),
], ids=["sha256-upper", "sha256-short", "no-text", "unknown-key", "id-space", "id-dash", "id-number",
        "text-suffix", "text-braces", "text-folder", "title-blank", "title-empty", "title-long",
        "title-newline", "claims-suffix"])
def test_a_bad_article_entry_is_refused_naming_its_key(default_config, fields, expected):
    assert expected in errors_of(_article(default_config, **fields))


def test_an_article_id_given_twice_is_refused_naming_both_entries(default_config):
    config = _article(default_config, place=2, id="000")
    assert errors_of(config) == "invalid configuration:\n  articles[2].id: '000' is the id of articles[0] too"
    assert cfg.validate(_article(default_config, place=2, id="post"))


def test_the_articles_are_a_list_not_a_folder(default_config):
    config = _with(default_config, lambda c: c.update(articles={"folder": "../shared/seeds"}))
    assert "articles: {'folder': '../shared/seeds'} is not of type 'array'" in errors_of(config)


def test_an_article_of_any_form_with_or_without_claims_is_valid(default_config):
    def add(config):
        config["articles"] += [
            {"id": "post", "text": "../shared/my-post.md", "sha256": "0" * 64, "title": "My post"},
            {"id": "nb_1", "text": "/data/nb.ipynb", "sha256": "1" * 64, "title": "A notebook",
             "claims": "config/nb.yaml"}]
    assert cfg.validate(_with(default_config, add))


def test_the_readmes_worked_example_of_an_article_is_a_valid_entry(default_config):
    import re

    import yaml

    section = (REPO / "README.md").read_text().split("## Adding an article", 1)[1]
    (block,) = re.findall(r"```yaml\n(.*?)```", section.split("\n## ", 1)[0], re.DOTALL)
    (entry,) = yaml.safe_load(block)
    assert (entry["id"], entry["text"]) == ("post", "../shared/my-post.md")
    assert cfg.validate(_with(default_config, lambda c: c["articles"].append(entry)))
    assert "articles[4].id: 'post' is the id of articles[3] too" in errors_of(
        _with(default_config, lambda c: c["articles"].extend([entry, entry])))
