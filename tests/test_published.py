"""config/published.yaml: the ledger's data loads, and every selector points at a real table and column."""

import re
from pathlib import Path

import pytest
import yaml

from attnrepro.dag import plan
from attnrepro.report.ledger import claims as published, verdicts
from attnrepro.report.products.results import Loader

from conftest import REPO

PUBLISHED = REPO / "config" / "published.yaml"


@pytest.fixture(scope="module")
def claims():
    return verdicts.load_claims(PUBLISHED)


@pytest.fixture(scope="module")
def small_tables(small_run):
    """loader(experiment, table) over the Parquet files of the small end-to-end run."""
    return Loader(sorted((Path(small_run) / "results" / "data").rglob("*.parquet")))


def _selectors(claim):
    """The claim's selector and, for a ratio, the selector of its denominator (same table by default)."""
    source = claim.source
    yield source
    if source.get("over"):
        yield {"experiment": source["experiment"], "table": source.get("table", "main"), **source["over"]}


def test_the_file_loads_with_unique_ids_and_known_classes(claims):
    ids = [c.id for c in claims]
    assert len(ids) == len(set(ids)) and len(ids) > 500
    assert {c.cls for c in claims} <= set(verdicts.CLASSES)
    assert {c.article for c in claims} == {"000", "001", "003"}
    raw = yaml.safe_load(PUBLISHED.read_text())["claims"]
    assert all(isinstance(entry["published"], str) for entry in raw), "published holds the printed string"


def test_every_selector_names_an_experiment_and_one_of_its_tables(claims):
    for claim in claims:
        for source in _selectors(claim):
            experiment = plan.EXPERIMENTS.get(source["experiment"])
            assert experiment is not None, claim.id
            assert source.get("table", "main") in experiment.tables, claim.id
            assert source.get("reduce", "single") in verdicts.REDUCERS, claim.id


def test_class_fields_are_consistent(claims):
    for claim in claims:
        if claim.cls in published.TOLERATED:
            assert claim.tolerance is not None, claim.id
        if claim.cls == "machine-bound" and claim.why in ("restated", verdicts.ALONE):  # no band judges it
            assert claim.band is None, claim.id
        elif claim.cls == "machine-bound":
            assert claim.band is not None and claim.band[0] < claim.band[1], claim.id
        if claim.cls != "machine-bound" and claim.band is not None:  # a bound stated in words
            assert claim.cls in ("exact", "echo") and "text" in claim.location, claim.id
            assert None in claim.band and claim.band != [None, None], claim.id
        if claim.cls == "stochastic":  # a statistic over seeds: the ledger needs the per-seed rows
            assert claim.source.get("reduce") in ("mean", "min", "max"), claim.id
        # every published string parses as number, interval or text
        verdicts.format_like(1.0, claim.published)


def test_a_claim_whose_source_column_is_a_config_parameter_is_an_echo(claims):
    """A configuration value printed back (train's d, lr, steps; kv_cache's layers) reproduces by
    construction: it is counted apart (class echo), never as a computed claim."""
    from attnrepro.dag import config as cfg

    config = cfg.resolve()
    echoes = 0
    for claim in claims:
        cases = plan.cases(claim.source["experiment"], config)
        parameters = set().union(*(set(p) for p in cases.values()))
        if claim.source["column"] in parameters:
            assert claim.cls == "echo" and claim.why == "echo-config", claim.id
            echoes += 1
    assert echoes >= 20
    assert all(c.rationale and c.why.startswith("echo-") for c in claims if c.cls == "echo")


def test_every_band_tolerance_and_echo_names_a_rationale_that_stands_alone(claims):
    raw = yaml.safe_load(PUBLISHED.read_text())
    for claim in claims:
        if claim.cls in published.JUSTIFIED:
            assert claim.rationale == " ".join(raw["rationales"][claim.why].split()), claim.id
    texts = [str(v) for v in raw["rationales"].values()] + [raw["speed"]["why"]]
    texts += [c.note for c in claims if c.note]
    for text in texts:  # a reader of the archive has no issue tracker, and cannot check when a band was set
        assert not re.search(r"\bissues?\b|stated before|before measuring", text, re.IGNORECASE), text


def test_the_published_numbers_are_the_printed_ones(claims):
    by_id = {c.id: c for c in claims}
    assert len([c for c in claims if c.id.startswith("000.scale_sweep.d_k-")]) == 30
    assert len([c for c in claims
                if c.id.startswith("001.train.copy-") or c.id.startswith("001.train.sort-")]) == 24
    assert by_id["001.scale_table.d_k-512.divided-no.sensitivity"].published == "0.0998"
    assert by_id["001.grad_check.post-ln.eps-1e-06"].published == "4.90e-05"
    assert by_id["001.prose.causal_timing.slope"].published == "1.99-2.04"  # judged by the cell below
    assert by_id["001.causal_timing.slope"].band == [1.8, 2.3]
    # the class follows from what the number is: every time is machine-bound, every sort row stochastic
    assert all(c.cls == "machine-bound" for c in claims if c.source["column"] in
               ("mean_seconds", "min_ms", "loglog_slope", "time_ratio", "speedup", "train_seconds",
                "seconds_with_cache", "seconds_without_cache"))
    assert all(c.cls == "stochastic" for c in claims if c.id.startswith("001.train.sort-"))
    # the gradient check: at eps = 1e-6 the error of the difference quotient (cancellation), judged by
    # a tolerance; at eps = 1e-4 a deterministic figure (a ReLU corner within the step), digit for digit
    grad = {c.id.removeprefix("001.grad_check."): c.cls for c in claims if c.id.startswith("001.grad_check.")}
    assert grad == {"pre-ln.eps-1e-06": "finite-difference", "post-ln.eps-1e-06": "finite-difference",
                    "pre-ln.eps-1e-04": "exact", "post-ln.eps-1e-04": "exact"}
    assert by_id["001.grad_check.post-ln.eps-1e-06"].why == "central-difference-1e-6"
    # the prose's ranges hold for every L: checked row by row, not against a mean pooled over L
    for range_id in ("001.prose.train.sort-token-range", "001.prose.train.sort-sequence-share"):
        assert by_id[range_id].source["per"] == "L", range_id


def test_every_selector_column_exists_in_the_small_run(claims, small_tables):
    frames = {}
    for claim in claims:
        for source in _selectors(claim):
            key = (source["experiment"], source.get("table", "main"))
            if key not in frames:
                frames[key] = small_tables(*key)
            columns = set(frames[key].columns)
            wanted = set(source.get("where") or {}) | {source["column"]}
            wanted |= {source["per"]} if source.get("per") else set()
            assert wanted <= columns, f"{claim.id}: {sorted(wanted - columns)} not in {key}"


def test_claims_of_listings_the_small_config_leaves_alone_are_reproduced(claims, small_tables):
    """Listings whose config section small.yaml does not touch run exactly as in the default run."""
    touched = set(yaml.safe_load((REPO / "config" / "small.yaml").read_text()) or {})
    untouched = {e for e, exp in plan.EXPERIMENTS.items() if e not in touched and exp.inputs is None}
    chosen = [c for c in claims if c.cls in ("exact", "echo")  # an echo is judged as exact
              and all(s["experiment"] in untouched for s in _selectors(c))]
    assert len(chosen) > 250
    table = verdicts.evaluate(chosen, small_tables)
    failures = table[table["verdict"] != "reproduced"]
    assert failures.empty, failures[["id", "published", "reproduced", "verdict"]].to_string()


def test_every_band_tolerance_and_echo_reason_quotes_its_rationale(claims):
    """Judged with a value on each side of its band or tolerance, every machine-bound, round-off,
    finite-difference and echo claim gives a reason that quotes its rationale from published.yaml
    and never refers to an issue or to when a band was set."""
    from attnrepro.report.ledger import speed

    rule = published.load_speed(PUBLISHED)
    factor = speed.Factor("000", 2.0, 1.5, 2.5, {"x": 2.0})
    checked = 0
    for claim in claims:
        if claim.cls not in published.JUSTIFIED:
            continue
        low, high = verdicts.published_range(claim.published) if verdicts._parse(claim.published) else (1, 1)
        top = max(b for b in (claim.band or [low, high]) if b is not None)  # a bound in words: one side open
        for value in (high * 1.0001 + 1e-30, top * 10 + 1):
            if claim.cls == "echo":
                value = "not the published value"
            verdict, _, reason = verdicts.judge(claim, value, factor=factor if claim.raw_time else None,
                                              rule=rule)
            if verdict == "reproduced":
                continue
            wanted = rule.why if claim.raw_time and claim.why != verdicts.ALONE else claim.rationale
            assert wanted in reason, (claim.id, reason)
            assert not re.search(r"\bissues?\b|stated before|before measuring", reason, re.IGNORECASE), reason
            checked += 1
    assert checked > 60


def test_no_caption_readme_or_contributing_line_mentions_an_issue():
    captions = sorted((REPO / "workflow/report").glob("*.rst"))
    for path in [REPO / "README.md", REPO / "CONTRIBUTING.md", *captions]:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            assert not re.search(r"\bissues?\b", line, re.IGNORECASE), f"{path.name}:{n}: {line}"
