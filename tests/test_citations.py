"""Reasons that are true and point somewhere: a reason cites a file only when the run holds it (a
file the ledger was given, or the Markdown table beside it), says how to make a product the run
lacks, and says which numerics give the published digits where the numerics sweep knows it.

The ledger is built in-process (report.commands.ledger.write) from frames in memory and small evidence
files written here, as the evidence targets write them."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from attnrepro.evidence import PRODUCTS
from attnrepro.report.commands import ledger as ledger_command
from attnrepro.report.evidence_tables import citations, listings_evaluate, numerics_evaluate, seeds_evaluate
from attnrepro.report.ledger import verdicts
from conftest import REPO
from report_helpers import FrameLoad

PIN = "haswell-noavx512"  # the run's pin: every FrameLoad file ran the canonical numerics
SEEDS = [0.96, 0.97, 0.98, 0.99, 0.95, 0.97, 0.98, 0.96, 0.97, 0.99]
CLAIMS = [
    {"id": "000.multihead.max-diff", "published": "1.11e-16", "class": "round-off", "tolerance": 1e-14,
     "why": "float", "source": {"experiment": "multihead_vs_torch", "column": "max_abs_diff_output"}},
    {"id": "001.grad.eps-1e-06", "published": "4.90e-05", "class": "finite-difference", "tolerance": 1e-3,
     "why": "central", "source": {"experiment": "grad_check", "column": "worst_relative_deviation"}},
    {"id": "001.train.sort-L4.mean", "published": "0.981", "class": "stochastic",
     "source": {"experiment": "train", "column": "acc", "reduce": "mean",
                "where": {"task": "sort", "L": 4, "ablation": "full", "seed": [0, 1, 2]}}},
]
RATIONALES = {"float": "float64 round-off", "central": "the centred difference's error at eps = 1e-6"}
ROUNDOFF, FINITE, STOCHASTIC = (c["id"] for c in CLAIMS)


def frames(output, grad, kernel="Haswell"):
    """{(experiment, table): frame} of one run: the two deviations (``kernel``: the OpenBLAS kernel a
    sweep setting records) and the sort trainings."""
    numerics = {"numerics_openblas_kernel": [kernel], "numerics_numpy_features": ["X86_V3"]}
    train = pd.DataFrame({"task": "sort", "L": 4, "ablation": "full", "seed": range(len(SEEDS)),
                          "acc": SEEDS, "case": [f"sort-L4-seed{s}" for s in range(len(SEEDS))]})
    return {("multihead_vs_torch", "main"): pd.DataFrame({"max_abs_diff_output": [output], **numerics}),
            ("grad_check", "main"): pd.DataFrame({"worst_relative_deviation": [grad], **numerics}),
            ("train", "main"): train}


RUN = FrameLoad(frames(1.94e-16, 6.785e-5))  # computed under the pin, whose torch paths move 1.11e-16


@pytest.fixture
def published(tmp_path):
    path = tmp_path / "published.yaml"
    claims = [{"article": c["id"][:3], "section": "s", "claim": c["id"], "location": {"line": 1, "column": 1},
               **c} for c in CLAIMS]
    path.write_text(yaml.safe_dump({"rationales": RATIONALES, "claims": claims}, sort_keys=False))
    return path


@pytest.fixture
def evidence(tmp_path, published):
    """The evidence files as their targets write them: the sweep's CSV and Markdown, the seeds'
    CSV and Markdown, the listings' CSV alone (its Markdown not made)."""
    claims = verdicts.load_claims(published)
    by_setting = {"default": FrameLoad(frames(1.11e-16, 1.847e-4, "SkylakeX")),  # the host's native numerics
                  "sandybridge": FrameLoad(frames(1.11e-16, 4.898e-5, "Sandybridge")),
                  PIN: FrameLoad(frames(1.11e-16, 6.785e-5))}  # a sweep setting leaves torch's paths native
    files = {"numerics": tmp_path / "numerics/ledger_numerics.csv", "seeds": tmp_path / "seeds/sd.csv",
             "listings": tmp_path / "listings/article_code.csv"}
    for path in files.values():
        path.parent.mkdir()
    numerics_evaluate.evaluate(claims[:2], by_setting).to_csv(files["numerics"], index=False)
    files["numerics"].with_suffix(".md").write_text("# the sweep\n")
    seeds_evaluate.evaluate(claims, RUN).to_csv(files["seeds"], index=False)
    files["seeds"].with_suffix(".md").write_text("# the seeds\n")
    pd.DataFrame([{"id": ROUNDOFF, "article": "000", "class": "round-off", "listing": 1, "line": 1,
                   "published": "1.11e-16", "article_code": "1.94e-16", "equal": False, "why": ""}],
                 columns=listings_evaluate.CLAIM_COLUMNS).to_csv(files["listings"], index=False)
    return files


def ledger(published, tmp_path, **given):
    """{claim id: reason} of the ledger written from RUN with the evidence files ``given``."""
    out = tmp_path / "ledger.csv"
    assert ledger_command.write(published, RUN, out, tmp_path / "LEDGER.md", **given) == 0
    table = pd.read_csv(out, dtype=str, keep_default_na=False)
    return dict(zip(table["id"], table["reason"]))


FILE = re.compile(r"[\w./-]+\.(?:md|csv|svg|json)\b")


def pointing_nowhere(reason, held):
    """The files ``reason`` names that it neither cites from ``held`` (in brackets) nor says how to
    make ("`command` makes FILE")."""
    out = []
    for found in FILE.finditer(reason):
        path, before = found.group(0), reason[:found.start()]
        cited = before.endswith("[") and reason[found.end():].startswith("]")
        made = re.search(r"` makes $", before) is not None
        if not ((cited and path in held) or (made and not cited)):
            out.append(path)
    return out


def held_by(given):
    """The files a ledger given ``given`` holds: each one, and the Markdown table beside it when its
    target wrote one (the ledger rule declares both as inputs: workflow/rules/report.smk)."""
    held = set()
    for path in map(Path, given.values()):
        held |= {str(p) for p in (path, path.with_suffix(".md")) if p.is_file()}
    return held


def test_without_evidence_no_reason_cites_a_file_and_each_says_how_to_make_it(published, tmp_path):
    reasons = ledger(published, tmp_path)
    for claim_id, reason in reasons.items():
        assert "[" not in reason and pointing_nowhere(reason, set()) == [], reason
    for claim_id in (ROUNDOFF, FINITE):
        assert ("not in this run: which numerics give the published digits (`snakemake --cores 2 numerics` "
                "makes results/numerics/ledger_numerics.md), what the article's own code prints here "
                "(`snakemake --cores 2 listings` makes results/listings/article_code.md); "
                "`snakemake --cores 2 --configfile config/evidence.yaml` makes them with the run, and the "
                "ledger cites them"
                ) in reasons[claim_id]
    assert "`snakemake --cores 2 seeds` builds it" in reasons[STOCHASTIC]


@pytest.mark.parametrize("products", [("numerics",), ("seeds", "listings"),
                                      ("numerics", "seeds", "listings")])
def test_every_file_a_reason_cites_is_one_the_run_holds(published, tmp_path, evidence, products):
    options = {"numerics": "numerics_csv", "seeds": "seeds_csv", "listings": "listings_csv"}
    given = {options[p]: str(evidence[p]) for p in products}
    reasons = ledger(published, tmp_path, **given)
    held = held_by(given)
    cited = {path for reason in reasons.values() for path in re.findall(r"\[([^\]]+)\]", reason)}
    assert cited and cited <= held, (cited, held)
    for reason in reasons.values():
        assert pointing_nowhere(reason, held) == [], reason
    if "listings" in products:  # its Markdown not made: the CSV the ledger read is cited
        assert f"the article's own code prints 1.94e-16 here [{evidence['listings']}]" in reasons[ROUNDOFF]
    if "seeds" in products:
        assert f"(per seed: percentile 80) [{evidence['seeds'].with_suffix('.md')}]" in reasons[STOCHASTIC]


def test_a_round_off_reason_says_the_pin_moved_the_digits_the_hosts_native_numerics_give(
        published, tmp_path, evidence):
    reasons = ledger(published, tmp_path, numerics_csv=str(evidence["numerics"]))
    table = f"[{evidence['numerics'].with_suffix('.md')}]"
    native = ("published digits 1.11e-16 given by every numerics setting of the sweep; this host's native "
              "numerics (OpenBLAS SkylakeX, NumPy AVX2) give the published 1.11e-16, this run under the pin "
              f"{PIN} gives 1.94e-16: the difference is the pin's {table}; not in this run: what the ")
    assert reasons[ROUNDOFF].startswith("round-off: both below 1e-14 (float64 round-off); its last bits")
    assert native in reasons[ROUNDOFF]
    # the native numerics give other digits too: the pin is not named as the cause
    assert reasons[FINITE].startswith("finite-difference error: both below 0.001 (the centred difference's")
    assert (
        "published digits 4.90e-05 given by sandybridge; this host's native numerics (OpenBLAS SkylakeX, "
        f"NumPy AVX2) give 1.85e-04, this run under the pin {PIN} gives 6.78e-05 {table}") in reasons[FINITE]
    assert "round-off" not in reasons[FINITE]


def test_what_the_native_numerics_give_is_said_against_the_runs_own_value():
    long = pd.DataFrame({"id": "c", "setting": ["default", "sandybridge"], "published": "1.11e-16",
                         "reproduced": ["1.11e-16", "1.94e-16"], "published_digits": [True, False],
                         "openblas_kernel": ["Zen", "Sandybridge"], "numpy_features": "X86_V3"})
    where = "this host's native numerics (OpenBLAS Zen, NumPy AVX2)"
    assert numerics_evaluate.native(long, "c") == f"{where} give 1.11e-16"  # nothing said of the run
    assert numerics_evaluate.native(long, "c", (PIN, "1.94e-16")) == (
        f"{where} give the published 1.11e-16, this run under the pin {PIN} gives 1.94e-16: the difference "
        "is the pin's")
    assert numerics_evaluate.native(long, "c", (PIN, "1.11e-16")) == (
        f"{where} give 1.11e-16 too: the pin {PIN} does not move it")
    assert numerics_evaluate.native(long, "c", (None, "1.94e-16")) == f"{where} give 1.11e-16"
    assert numerics_evaluate.native(long[long["setting"] != "default"], "c", (PIN, "1.94e-16")) == ""


def test_the_run_is_pinned_where_every_file_ran_the_canonical_numerics():
    table = pd.DataFrame({"id": ["a", "b"], "reproduced": ["1", "2"],
                          "numerics": ["canonical", "non-canonical: x.parquet: numerics.pin is native"]})
    assert citations.runs(table) == {"a": (PIN, "1"), "b": (None, "2")}


def test_a_product_is_cited_by_its_markdown_table_when_its_target_wrote_one(tmp_path):
    csv = tmp_path / "ledger_numerics.csv"
    assert citations.cited_file(csv) == str(csv)
    csv.with_suffix(".md").write_text("# table\n")
    assert citations.cited_file(csv) == str(tmp_path / "ledger_numerics.md")


@pytest.mark.parametrize("configfile, products", [
    (None, ("seeds",)), ("config/evidence.yaml", ("numerics", "seeds", "listings"))])
def test_the_ledger_rule_declares_the_tables_its_reasons_cite(configfile, products):
    """The seed distribution is on by default, the three products with config/evidence.yaml: each
    one's CSV and the Markdown table beside it are the ledger's inputs (tests/rule_inputs.py)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = str(REPO / "src")
    proc = subprocess.run([sys.executable, str(REPO / "tests/rule_inputs.py"), *filter(None, [configfile])],
                          cwd=REPO, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    declared = {f for f in json.loads(proc.stdout)["ledger"] if f.endswith((".csv", ".md"))}
    assert declared == {PRODUCTS[p].paths[kind] for p in products for kind in ("csv", "md")}


def test_no_evidence_is_appended_to_a_claim_the_run_does_not_hold(published):
    claims = verdicts.load_claims(published)
    table = pd.DataFrame({"id": [ROUNDOFF, FINITE], "class": ["round-off", "finite-difference"],
                          "verdict": ["missing", "within tolerance"], "reason": ["no result file", "below"]})
    found = {"numerics": {ROUNDOFF: "native gives it [n.md]", FINITE: "sandybridge gives it [n.md]"}}
    out = citations.annotate(table, claims, found, cited={"numerics", "listings"})
    assert out["reason"].tolist() == ["no result file",
                                      "below; sandybridge gives it [n.md]; no row in the listings evidence"]
