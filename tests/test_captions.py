"""Report captions read the config, and every config key says what it is.

A caption ``workflow/report/<name>.rst`` is a Jinja2 template: ``snakemake --report`` renders it
with ``snakemake.config`` (the run's merged config), and so does the results index
(``attnrepro.report.index.render_caption``). Numbers that come from the config are written as
expressions reading it, so that a caption stays true under ``--configfile config/small.yaml``.
The schema describes every key, and the keys that fan out into one job per value are marked as
such, in the schema and in ``config/config.yaml``.
"""

import copy
import functools
import re
import types

import jinja2
import pytest
import yaml
from docutils.core import publish_parts

from attnrepro.dag import config as cfg
from attnrepro.dag import plan
from attnrepro.report.products import catalog
from attnrepro.report import index

from conftest import REPO, small_config

CAPTIONS = REPO / "workflow" / "report"
NAMES = sorted(path.stem for path in CAPTIONS.glob("*.rst"))
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
CONFIG = REPO / "config" / "config.yaml"


@functools.cache
def default_config():
    return cfg.validate(cfg.load(CONFIG))


@functools.cache
def small_merged():
    return small_config()


CONFIGS = {"config.yaml": default_config, "small.yaml": small_merged}


def render(text, config):
    """``text`` rendered as Snakemake renders a caption (its Jinja2 environment: trim_blocks,
    lstrip_blocks), except that an undefined name is an error instead of an empty string."""
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    return env.from_string(text).render(snakemake=types.SimpleNamespace(config=config))


def caption(name, config):
    return render((CAPTIONS / f"{name}.rst").read_text(), config)


def words(text):
    return " ".join(text.split())


# --- every caption renders, under both configs --------------------------------------------------


def test_the_captions_are_there():
    assert "workflow" in NAMES and "scale_table" in NAMES and len(NAMES) > 50
    assert {p.name for p in catalog.PRODUCTS.values()} <= set(NAMES)


@pytest.mark.parametrize("config_name", CONFIGS)
@pytest.mark.parametrize("name", NAMES)
def test_every_caption_renders_under_both_configs(name, config_name):
    """Jinja with StrictUndefined (a name the config lacks fails), then reStructuredText as the
    report publishes it (docutils' warnings are errors here); the index renders the same text."""
    config = CONFIGS[config_name]()
    text = caption(name, config)
    assert text.strip() and not re.search(r"\{\{|\}\}|\{%|%\}|\{#", text), text
    publish_parts(text, writer="html", settings_overrides={"halt_level": 2, "report_level": 2})
    assert index.render_caption(name, config) == text


def test_a_caption_with_an_undefined_name_fails(tmp_path, monkeypatch):
    """Positive control: a key the config does not have is an error, here and in the index."""
    config = default_config()
    with pytest.raises(jinja2.UndefinedError, match="d_q"):
        render('d_k = {{ snakemake.config["scale_table"]["d_q"] | join(", ") }}', config)
    with pytest.raises(jinja2.UndefinedError, match="no_such_section"):
        render('{{ snakemake.config["no_such_section"]["n"] }}', config)
    (tmp_path / "broken.rst").write_text('Article 001, "X": n = {{ snakemake.config["nope"] }}.\n')
    monkeypatch.setattr(index, "CAPTIONS", tmp_path)
    with pytest.raises(jinja2.UndefinedError, match="nope"):
        index.render_caption("broken", config)


# --- the captions follow the config -----------------------------------------------------------


def test_captions_show_the_values_of_the_run():
    default, small = default_config(), small_config()
    table = {"default": words(caption("scale_table", default)), "small": words(caption("scale_table", small))}
    assert "d_k = 8, 64, 512 (T = 64, 400 repetitions)" in table["default"]
    assert "d_k = 8, 64 (T = 64, 20 repetitions)" in table["small"]  # small.yaml's scale_table
    assert "512" not in table["small"]
    accuracy = {"default": words(caption("train_accuracy", default)),
                "small": words(caption("train_accuracy", small))}
    assert "for copy and sort at L = 4, 6, 8, mean and minimum over 3 seeds (0, 1, 2) after 1500 steps" \
        in accuracy["default"]
    assert "for copy and sort at L = 6, mean and minimum over 1 seed (0) after 100 steps" in accuracy["small"]
    assert "n = 64, 128" in words(caption("quadratic_cost", small))
    assert "4 seeds per L" in words(caption("seed_distribution", small))
    assert "20 seeds per L" in words(caption("seed_distribution", default))
    run = {"default": words(caption("workflow", default)), "small": words(caption("workflow", small))}
    assert "18 of 1500 steps" in run["default"] and "2 of 100 steps" in run["small"]


def test_captions_read_any_value_of_the_config():
    """Not just the two config files: a value set here reaches the caption."""
    config = copy.deepcopy(default_config())
    config["scale_table"]["d_k"] = [16, 32]
    config["block_params"]["widths"] = [128]
    config["block_params"]["breakdown_width"] = 128
    config["two_heads"]["heads"] = 3
    assert "d_k = 16, 32" in words(caption("scale_table", config))
    assert "d = 128 (d_ff = 4d)" in words(caption("block_params", config))
    assert "the block of width 128" in words(caption("block_breakdown", config))
    assert "the weights of 3 heads" in words(caption("two_heads", config))


def _literal(text):
    """A caption's own text, its Jinja expressions and statements removed."""
    return re.sub(r"\{\{.*?\}\}|\{%.*?%\}", " ", text, flags=re.DOTALL)


def test_no_caption_writes_a_grid_of_its_experiments_as_literal_text():
    """A list of numbers from the sections a product reads (``8, 64, 512``, ``4, 6, 8``) is never
    written out in its caption: it would go stale under another config."""
    config = default_config()
    stale = {}
    for product in catalog.PRODUCTS.values():
        text = words(_literal((CAPTIONS / f"{product.name}.rst").read_text()))
        for experiment in product.experiments:
            for key, value in config[experiment].items():
                if isinstance(value, list) and len(value) > 1 and all(isinstance(v, int) for v in value):
                    for sep in (", ", " and ", " to "):
                        shown = sep.join(map(str, value)) if sep != " to " else f"{value[0]} to {value[-1]}"
                        if shown in text:
                            stale.setdefault(product.name, []).append(f"{experiment}.{key}: {shown}")
    assert not stale, stale


def test_the_index_shows_rendered_captions_without_their_article_prefix():
    text = index.lines(small_config())
    products = [line for line in text.splitlines() if line.startswith(("- `tables/", "- `figures/"))]
    assert products and not any("{{" in line or "{%" in line for line in text.splitlines())
    scale = [line for line in products if line.startswith("- `tables/scale_table.md`")]
    assert scale == [(
        "- `tables/scale_table.md` and `tables/scale_table.csv` (article 001, \u201cWhy you divide by the "
        "square root of d_k, measured\u201d): variance of the raw dot products, spread of the scores, mean "
        "maximum weight, entropy and softmax sensitivity (trace of the Jacobian) for d_k = 8, 64 "
        "(T = 64, 20 repetitions), with and without the division by \u221ad_k.")]
    prefixed = [line for line in products if re.search(r"\u201d\): Article \d{3}, ", line)]
    assert not prefixed, prefixed


# --- the schema describes every key; the grid keys say that they fan out ------------------------


def undescribed(node, path=""):
    """Paths of the schema's properties (at every level, in $defs too), definitions and
    additionalProperties schemas (the entries of train.ablations, numerics.cases) that have no
    description."""
    out = []
    if not isinstance(node, dict):
        return out
    for group in ("properties", "$defs"):
        for key, sub in (node.get(group) or {}).items():
            where = f"{path}.{key}" if group == "properties" else f"{path}.$defs.{key}"
            if not (isinstance(sub, dict) and str(sub.get("description", "")).strip()):
                out.append(where.lstrip("."))
            out += undescribed(sub, where)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        if not str(extra.get("description", "")).strip():
            out.append(f"{path}.<entry>".lstrip("."))
        out += undescribed(extra, f"{path}.<entry>")
    for key in ("items", "anyOf", "oneOf", "allOf"):
        subs = node.get(key)
        for sub in subs if isinstance(subs, list) else [subs]:
            out += undescribed(sub, path)
    return out


def test_every_config_key_has_a_description():
    schema = yaml.safe_load(SCHEMA.read_text())
    missing = undescribed(schema)
    assert not missing, f"schema keys without a description: {missing}"


def test_the_description_check_finds_a_missing_one():
    """Positive control: removing one nested description is found, by its path."""
    schema = yaml.safe_load(SCHEMA.read_text())
    before = set(undescribed(schema))
    del schema["properties"]["train"]["properties"]["ablation_base"]["properties"]["L"]["description"]
    del schema["properties"]["numerics"]["properties"]["cases"]["additionalProperties"]["description"]
    assert set(undescribed(schema)) - before == {"train.ablation_base.L", "numerics.cases.<entry>"}


def grid_keys():
    """(section, key) of every key that fans out into one job per value: each experiment's grid
    (plan.EXPERIMENTS), train's trainings and ablations, the seeds target's trainings."""
    keys = {(e.id, key) for e in plan.EXPERIMENTS.values() for key in e.grid}
    keys |= {("train", key) for key in plan.TRAIN_FAN_OUT if key != "ablation_base"}
    keys |= {("seed_distribution", "tasks"), ("seed_distribution", "seeds")}
    return keys


def marked_in_config():
    """(section, key) of the lines of config/config.yaml whose comment starts with ``# grid``."""
    marked, section = set(), None
    for line in CONFIG.read_text().splitlines():
        top = re.match(r"^([a-z_]+):", line)
        if top:
            section = top.group(1)
        key = re.match(r"^  ([A-Za-z_]+):.*#\s*grid\b", line)
        if key:
            marked.add((section, key.group(1)))
        elif re.search(r"#\s*grid\b", line) and not line.startswith("#"):
            marked.add((section, line.strip()))  # a marked line that is not a key of a section
    return marked


def test_grid_keys_are_marked_in_the_config_and_the_schema():
    keys = grid_keys()
    assert ("scale_table", "d_k") in keys and ("train", "ablations") in keys
    marked = marked_in_config()
    assert marked == keys, {"grid keys without `# grid`": keys - marked,
                            "marked `# grid`, not grid keys": marked - keys}
    schema = yaml.safe_load(SCHEMA.read_text())
    fans_out = set()
    for section, spec in schema["properties"].items():
        for key, sub in (spec.get("properties") or {}).items():
            if "fans out" in sub.get("description", ""):
                fans_out.add((section, key))
                assert sub["description"].startswith("grid: fans out into one job per "), (section, key)
    assert fans_out == keys, {"grid keys whose description does not say so": keys - fans_out,
                              "said to fan out, not grid keys": fans_out - keys}


def test_the_config_comments_change_no_value():
    """config/config.yaml is valid, and its small override still only shrinks sizes."""
    config = default_config()
    assert config["scale_table"]["d_k"] == [8, 64, 512] and config["train"]["seeds"] == [0, 1, 2]
    assert small_config()["scale_table"]["d_k"] == [8, 64]
