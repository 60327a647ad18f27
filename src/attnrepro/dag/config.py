"""Load and validate the configuration: JSON schema first, then the rules a schema cannot say.

Every error names the key it is about (``train.lengths[2]``), and all errors are
reported at once, before any job runs. Besides the schema, anywhere in the config: a YAML file is
plain data, without a key twice, anchors, aliases, tags or templating (:mod:`attnrepro.dag.yamlfile`),
at most a million values with any aliases expanded (:func:`size_errors`), no NaN or infinity, no
control character in a string, an integer is a Python int (1.0 is not a count), and no output file
name (nor its temporary) longer than the file system allows.
"""

import math
import unicodedata
from pathlib import Path
from typing import NamedTuple

from attnrepro import paths
from attnrepro.articles import catalog
from attnrepro.dag.validator import key as _key, shown as _shown, validator

REPO = paths.REPO
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"  # checked by validate (schema_errors)
DEFAULT = REPO / "config" / "config.yaml"  # what --configfile / --config FILE overrides


class ConfigError(ValueError):
    """The configuration is not valid; the message lists every problem, by key."""


def load(path):
    """Read a YAML config file strictly: a missing file, invalid YAML, a key given twice, an
    anchor, alias, tag or ``__use_yte__``, or a top level that is not a mapping is an error naming
    the file (and the line and key)."""
    data, problems, _ = _read(path)
    if problems:
        raise ConfigError("\n  ".join(["invalid configuration:", *problems]) if len(problems) > 1
                          else problems[0])
    return data


class _File(NamedTuple):
    data: object  # {} for an empty file; None when refused
    problems: list
    is_data: bool = True  # False: anchors, aliases, tags or templating (yamlfile.NotData)


def _read(path):
    """The data and problems of a YAML config file (a :class:`_File`)."""
    import yaml

    from attnrepro.dag import yamlfile

    path = Path(path)
    if not path.is_file():
        return _File(None, [f"config file not found: {path}"])
    try:
        data = yamlfile.load(path, fast=True)
    except yamlfile.NotData as error:
        return _File(None, error.lines, is_data=False)
    except yamlfile.Refused as error:
        return _File(None, error.lines)
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        return _File(None, [f"{path}: not valid YAML: {' '.join(str(error).split())}"])
    if data is not None and not isinstance(data, dict):
        return _File(None, [f"{path}: a config file is a mapping of sections, not a {type(data).__name__}"])
    return _File(data or {}, [])


def file_errors(paths):
    """Messages for every problem of the YAML files ``paths``, a key given twice and what is not
    plain data above all: Snakemake's loader keeps a key's last value silently, and builds aliases
    and YTE templates, so common.smk passes the files Snakemake loaded (``workflow.configfiles``)
    to :func:`validate` to be read again here."""
    return [problem for path in paths for problem in _read(path).problems]


def merge(base, overlay):
    """``overlay``'s keys over ``base``, as Snakemake merges ``--configfile`` over the Snakefile's
    ``configfile:``: a mapping merges key by key (recursively), any other value replaces."""
    out = dict(base)
    for key, value in overlay.items():
        if isinstance(value, dict):
            out[key] = merge(out[key] if isinstance(out.get(key), dict) else {}, value)
        else:
            out[key] = value
    return out


def resolve(path=None):
    """The config of a run: config/config.yaml, with the keys of the file ``path`` (if given)
    over it, merged as Snakemake merges ``snakemake --configfile path``. Not validated."""
    config = load(DEFAULT)
    if path is None or Path(path).resolve() == DEFAULT.resolve():
        return config
    return merge(config, load(path))


def _control_characters(text):
    """The control (and other invisible format) characters of ``text``, as U+XXXX."""
    return sorted({f"U+{ord(c):04X}" for c in text if unicodedata.category(c) in ("Cc", "Cf", "Cs")})


MAX_VALUES = 1_000_000  # values a config may hold, its aliases expanded (config.yaml: about 2,000)


def _expanded(value, sizes, shared):
    """How many values a walk of ``value`` meets, a shared list or mapping counted at every place
    it appears; ``sizes`` holds each container's count by id, so each is counted once, and
    ``shared`` the ids of those met again (YAML aliases)."""
    if not isinstance(value, (dict, list)):
        return 1
    if id(value) in sizes:
        shared.add(id(value))
    else:
        items = value.values() if isinstance(value, dict) else value
        sizes[id(value)] = 1 + sum(_expanded(item, sizes, shared) for item in items)
    return sizes[id(value)]


def size_errors(config):
    """For a config that a walk could not finish: more than MAX_VALUES values once the lists and
    mappings it shares are expanded (YAML aliases, as Snakemake builds ``--config key=VALUE``:
    nine nested ones are 10^9 values), the top-level keys that hold them. In time linear in the
    distinct containers: checked before anything walks the config (the schema, a message's repr)."""
    sizes, shared = {}, set()
    counts = {key: _expanded(value, sizes, shared) for key, value in config.items()}
    if sum(counts.values()) <= MAX_VALUES:
        return []
    large = [key for key, count in counts.items() if count > MAX_VALUES] or [max(counts, key=counts.get)]
    if not shared:  # no alias: the values are all written out
        return [f"{_key([key])}: {counts[key]:,} values, more than the {MAX_VALUES:,} a config may hold"
                for key in large]
    return [f"{_key([key])}: {counts[key]:,} values once its YAML aliases are expanded, more than the "
            f"{MAX_VALUES:,} a config may hold: write each value out" for key in large]


def value_errors(value, path=(), seen=None):
    """Messages for what no key of the config may hold: a NaN or an infinity (YAML's .nan,
    .inf, -.inf; the schema's bounds cannot refuse them: every comparison with NaN is false),
    a control character in a string or a key (a name ending in a newline, a tab in a token).
    A list or mapping met again (``seen``: their ids; YAML aliases as Snakemake loads them) is
    checked where it was first met: the walk is linear in the config's distinct containers."""
    seen = set() if seen is None else seen
    if isinstance(value, (dict, list)):
        if id(value) in seen:
            return []
        seen.add(id(value))
    if isinstance(value, float) and not math.isfinite(value):
        shown = ".nan" if math.isnan(value) else ("-.inf" if value < 0 else ".inf")
        return [f"{_key(path)}: {shown} is not a finite number"]
    if isinstance(value, str):
        bad = _control_characters(value)
        return [f"{_key(path)}: {value!r} holds control character(s) {', '.join(bad)}"] if bad else []
    errors = []
    if isinstance(value, dict):
        for key, item in value.items():
            bad = _control_characters(key) if isinstance(key, str) else []
            if bad:
                errors.append(f"{_key((*path, key))}: the key {key!r} holds control character(s) "
                              f"{', '.join(bad)}")
            errors += value_errors(item, (*path, key), seen)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            errors += value_errors(item, (*path, i), seen)
    return errors


def schema_errors(config, schema_path=SCHEMA):
    """Messages for every violation of the JSON schema, each starting with its key."""
    errors = sorted(validator(schema_path).iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{_key(list(e.absolute_path))}: {e.message}{_bound(e)}" for e in errors]


def _bound(error):
    """For a value above its schema's upper bound, what the bound is for (its description)."""
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    if error.validator not in ("maximum", "maxItems", "maxProperties") or not description:
        return ""
    return f" ({' '.join(description.split())})"


def _divisible(config, section, d_key, h_key):
    sec = config.get(section) or {}
    if d_key not in sec or h_key not in sec:
        return []
    ds = sec[d_key] if isinstance(sec[d_key], list) else [sec[d_key]]
    hs = sec[h_key] if isinstance(sec[h_key], list) else [sec[h_key]]
    return [
        f"{section}.{d_key}: {d} is not divisible by {section}.{h_key} = {h}"
        for d in ds
        for h in hs
        if isinstance(d, int) and isinstance(h, int) and h > 0 and d % h
    ]


# (section, model width key, head count key) pairs whose ratio must be whole
DIVISIBLE = [
    ("multihead_vs_torch", "d", "h"),
    ("multihead_vs_torch", "d", "param_heads"),
    ("permutation_position", "d", "h"),
    ("causal_change", "d", "h"),
    ("multihead_shapes", "d", "heads"),
    ("multihead_shapes", "d", "permutation_heads"),
    ("torch_modules", "d_model", "heads"),
    ("block_params", "widths", "heads"),
    ("train", "d", "heads"),
    ("grad_check", "d", "heads"),
    ("autograd_check", "d", "heads"),
    ("kv_cache", "d", "heads"),
    ("kv_speedup", "d", "heads"),
]

# (section, lengths key, per-length key) pairs of lists that must have the same length
PAIRED = [
    ("causal_timing", "T", "trials"),
]


def _paired(config, section, lengths_key, per_key):
    sec = config.get(section) or {}
    lengths, per = sec.get(lengths_key), sec.get(per_key)
    if not isinstance(lengths, list) or not isinstance(per, list) or len(lengths) == len(per):
        return []
    return [f"{section}.{per_key}: {len(per)} values for the {len(lengths)} lengths of "
            f"{section}.{lengths_key} (one per length)"]


def _decoder_errors(config, planned):
    """Article 001's decoder: ablation widths, the map run and its sequence, check sizes; each
    rule when the experiment that reads it is ``planned`` (attention_map.run: attention_map)."""
    from attnrepro.dag import plan

    errors = []
    train = config.get("train") or {}
    for name, overrides in (train.get("ablations") or {}).items() if "train" in planned else ():
        d, h = overrides.get("d", train.get("d")), overrides.get("heads", train.get("heads"))
        if isinstance(d, int) and isinstance(h, int) and h > 0 and d % h:
            errors.append(f"train.ablations.{name}: d = {d} is not divisible by heads = {h}")
    amap = config.get("attention_map") or {}
    if "run" in amap and train and "attention_map" in planned:
        runs = plan.train_cases(train)
        run = runs.get(amap["run"])
        if run is None:
            errors.append(f"attention_map.run: {amap['run']!r} is not a case of train "
                          f"(e.g. {', '.join(list(runs)[:3])})")
        else:
            seq = amap.get("sequence", [])
            if "SEP" not in seq:
                errors.append("attention_map.sequence: no SEP (the answer starts after it)")
            if len(seq) > 2 * run["L"] + 1:
                errors.append(f"attention_map.sequence: {len(seq)} tokens, more than the "
                              f"2L+1 = {2 * run['L'] + 1} positions of {amap['run']}")
            errors += [f"attention_map.sequence[{i}]: {s} is not a symbol of {amap['run']} "
                       f"(0..{run['alphabet'] - 1})" for i, s in enumerate(seq)
                       if isinstance(s, int) and s >= run["alphabet"]]
    bp = config.get("block_params") or {}
    breakdown = bp.get("breakdown_width")
    if "block_params" in planned and breakdown is not None and breakdown not in bp.get("widths", []):
        errors.append(f"block_params.breakdown_width: {bp['breakdown_width']} "
                      "is not one of block_params.widths")
    for section in ("grad_check", "autograd_check"):
        if section not in planned:
            continue
        sec = config.get(section) or {}
        if sec.get("length", 0) > sec.get("t_max", float("inf")):
            errors.append(f"{section}.length: {sec['length']} tokens need t_max >= {sec['length']}, "
                          f"got {sec['t_max']}")
        if sec.get("weight_from", 0) >= sec.get("length", float("inf")):
            errors.append(f"{section}.weight_from: {sec['weight_from']} leaves no position "
                          f"of {section}.length")
    return errors


def planned(experiments=None):
    """The set of experiment ids whose rules apply: ``experiments``, or every one (None)."""
    from attnrepro.dag import plan

    if experiments is None:
        return set(plan.EXPERIMENTS)
    unknown = [e for e in experiments if e not in plan.EXPERIMENTS]
    if unknown:
        raise ValueError(f"unknown experiment(s) {', '.join(map(repr, unknown))}")
    return set(experiments)


def semantic_errors(config, experiments=None):
    """Rules across keys: head counts divide widths, even widths for sinusoids, ..., and the
    references of one section to another (``attention_map.run`` names a case of ``train``).

    Each rule is checked when what reads it is planned: with ``experiments`` (ids), only the
    rules of those experiments (their own sections, and the keys of others that they read);
    with None, the whole run that Snakemake plans: every experiment (each has a target), the
    ``skip`` list, the numerics sweep's ``numerics.cases`` (target ``numerics``) and the
    articles' ids (one entry each)."""
    from attnrepro.dag import plan

    scope = planned(experiments)
    errors = [] if experiments is not None else [
        f"skip[{i}]: unknown experiment {name!r}"
        for i, name in enumerate(config.get("skip", []))
        if name not in plan.EXPERIMENTS
    ]
    for section, d_key, h_key in DIVISIBLE:
        errors += _divisible(config, section, d_key, h_key) if section in scope else []
    for section, lengths_key, per_key in PAIRED:
        errors += _paired(config, section, lengths_key, per_key) if section in scope else []
    for section in ("permutation_position", "order_blindness"):
        d = (config.get(section) or {}).get("d") if section in scope else None
        if isinstance(d, int) and d % 2:
            errors.append(f"{section}.d: the sinusoidal encoding needs an even width, got {d}")
    errors += _decoder_errors(config, scope)
    errors += _evidence_errors(config) if experiments is None else []
    errors += catalog.errors(config) if experiments is None else []  # the articles: unique ids
    errors += _memory_errors(config, scope)
    errors += name_errors(config, scope)
    return errors or _article_code_errors(config, scope)


# what the job repeats or switches, or computes apart from the timed listing (a formula's sizes): free
# beside article_code
OURS_ONLY = {"*": ("passes", "article_code"), "quadratic_cost": ("heads", "layers"),
             "kv_cache": ("realistic",)}


def _article_code_errors(config, scope):
    """``<experiment>.article_code`` times the article's own listing, which times the article's
    sizes: on only with the article's values (config/config.yaml) of every key but OURS_ONLY."""
    from attnrepro.dag import plan

    article, errors = None, []
    for name in sorted(scope):
        section = config.get(name) or {}
        if name not in plan.EXPERIMENTS or not plan.article_code(name, config):
            continue
        article = article if article is not None else load(DEFAULT)
        theirs = article.get(name) or {}
        for key in sorted(set(section) | set(theirs)):
            free = OURS_ONLY["*"] + OURS_ONLY.get(name, ())
            if key not in free and section.get(key) != theirs.get(key):
                errors.append(f"{name}.article_code: the article's listing times {key} = "
                              f"{theirs.get(key)!r}, this config {section.get(key)!r}: set "
                              f"{name}.article_code: false, or the article's value")
                break
    return errors


NAME_MAX = 255  # bytes in one file name: ext4, XFS, btrfs, tmpfs, NFS
# what attnrepro.run.io.temporary_beside adds to a file's name: ".<name>.<8 random characters>.tmp"
TEMPORARY_EXTRA = len(".") + len(".") + 8 + len(".tmp")


def _case_key(experiment, case):
    """The config key that names a case: an ablation's entry, else the experiment's grid keys."""
    from attnrepro.dag import plan

    if experiment == "train" and case.startswith("ablation-"):
        return _key(["train", "ablations", case.removeprefix("ablation-")])
    grid = ("tasks", "lengths", "seeds") if experiment == "train" else plan.EXPERIMENTS[experiment].grid
    return ", ".join(f"{experiment}.{k}" for k in grid) or experiment


def name_errors(config, scope):
    """Every output file of the experiments in ``scope`` (each case's tables, under results/ and
    under a numerics setting) has a name that the file system takes, its temporary included
    (``.<name>.<random>.tmp``, written first and renamed): else the key naming the case."""
    from attnrepro.dag import plan

    errors = []
    for experiment in (e for e in plan.EXPERIMENTS if e in scope):
        tables = plan.EXPERIMENTS[experiment].tables
        for case in plan.runnable_cases(experiment, config):
            names = [Path(plan.output_path(experiment, case, table)).name for table in tables]
            longest = max(names, key=lambda n: len(n.encode()))
            size = len(longest.encode()) + TEMPORARY_EXTRA
            if size > NAME_MAX:
                errors.append(f"{_case_key(experiment, case)}: the output file {_shown(longest)} and "
                              f"its temporary name take {size} bytes, more than the {NAME_MAX} a file "
                              f"name may have: shorten the name by {size - NAME_MAX} bytes")
    return errors


def _evidence_errors(config):
    """The numerics sweep names known cases of known experiments."""
    from attnrepro.dag import sweep_plan

    return sweep_plan.config_errors(config)


def _memory_errors(config, scope):
    """Every job of the experiments in ``scope`` fits in memory: its estimated peak against
    memory.limit_gib (default: 80% of this machine's memory), see attnrepro.dag.preflight."""
    from attnrepro.dag import plan, preflight

    # the pre-flight refuses configs and never changes a result: a job that loads a config
    # (an edition) declares it, through this import
    return preflight.errors({k: v for k, v in config.items() if k in scope or k not in plan.EXPERIMENTS})


def validate(config, schema_path=SCHEMA, *, experiments=None, files=()):
    """Raise :class:`ConfigError` listing every problem; return the config when it is valid.

    The YAML ``files`` the config was read from (Snakemake's ``workflow.configfiles``) are read
    again strictly (:func:`file_errors`: a key given twice, an anchor, a tag, ``__use_yte__``);
    a file that is not plain data is refused alone, before anything walks ``config`` (the aliases
    of a "billion laughs" are 10^9 values to a walk), and so is a config too large to walk
    (:func:`size_errors`: aliases of ``--config key=VALUE``, never in a file); else the values
    (:func:`value_errors`) and the schema are checked over the whole config; the rules across keys
    (:func:`semantic_errors`, output file names among them) where they are read:
    ``experiments=None`` (Snakemake, ``workflow/rules/common.smk``) checks every rule of the
    run; ``experiments=["train"]`` (``python -m attnrepro run train``) leaves out what only
    other experiments read, such as ``attention_map.run`` or ``numerics.cases`` naming a case
    of train that a ``--set`` removed."""
    read = [_read(path) for path in files]
    errors = [problem for file in read for problem in file.problems]
    if all(file.is_data for file in read):  # else the config may be a billion laughs: never walked
        errors += size_errors(config) or value_errors(config) + schema_errors(config, schema_path)
    if not errors:
        errors = semantic_errors(config, experiments)
    if errors:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(errors))
    return config
