"""Numerics settings (OpenBLAS kernel x NumPy mask), the sweep's ledger, seed distributions."""

import copy
import functools
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

from attnrepro.numerics import canonical
from attnrepro import evidence, paths
from attnrepro.run import io
from attnrepro.dag import plan
from attnrepro.dag import config as cfg
from attnrepro.dag import sweep_plan
from attnrepro.evidence import sweep
from attnrepro.report.evidence_tables import citations, numerics_evaluate, numerics_render, seeds_evaluate
from attnrepro.report.products import catalog, results
from attnrepro.report.ledger import verdicts

from conftest import REPO, copy_repo, copy_run, missing, planned_jobs, snakemake
from report_helpers import FrameLoad

# --- settings (names, environment: tests/test_canonical.py) and the sweep ---------------------


def test_candidates_and_sweep_layout(default_config):
    names = sweep.candidates(default_config["numerics"])
    assert names[0] == "default" and "sandybridge-noavx512" in names and len(names) == len(set(names))
    path = sweep_plan.output_path("haswell-noavx512", "grad_check", "post_ln-true_eps-0.0001", "tensors")
    assert (
        path
        == "results/numerics/haswell-noavx512/data/001/grad_check/post_ln-true_eps-0.0001.tensors.parquet"
    )
    assert results.parse(path) == ("grad_check", "tensors", "post_ln-true_eps-0.0001")
    assert numerics_evaluate.setting_of(path) == "haswell-noavx512"
    outputs = sweep_plan.outputs(default_config, ["default", "zen"])
    assert len(outputs) == len(set(outputs)) and all(p.startswith("results/numerics/") for p in outputs)
    assert sum("/train/sort-L8-seed2.parquet" in p for p in outputs) == 2


def test_schema_lists_exactly_the_known_kernels_and_masks():
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    section = schema["properties"]["numerics"]["properties"]
    assert tuple(section["kernels"]["items"]["enum"]) == canonical.KERNELS
    assert section["numpy_masks"]["items"]["enum"] == list(canonical.MASKS)


def _errors(config):
    with pytest.raises(cfg.ConfigError) as info:
        cfg.validate(config)
    return str(info.value)


def test_config_refuses_unknown_kernels_masks_and_cases(default_config):
    config = copy.deepcopy(default_config)
    config["numerics"]["kernels"] = ["Haswell", "Pentium4"]
    assert "numerics.kernels[1]: 'Pentium4' is not one of" in _errors(config)
    config = copy.deepcopy(default_config)
    config["numerics"]["numpy_masks"] = ["default", "noavx9"]
    assert "numerics.numpy_masks[1]" in _errors(config)
    config = copy.deepcopy(default_config)
    config["numerics"]["cases"]["train"] = ["sort-L4-seed0", "sort-L5-seed0"]
    config["numerics"]["cases"]["attention_map"] = ["default"]
    config["numerics"]["cases"]["no_such"] = "all"
    message = _errors(config)
    assert "numerics.cases.train[1]: 'sort-L5-seed0' is not a case of train" in message
    assert "numerics.cases.attention_map: reads another experiment's results" in message
    assert "numerics.cases.no_such: unknown experiment" in message
    config = copy.deepcopy(default_config)
    config["seed_distribution"]["seeds"] = [0, 1, 2]
    assert "seed_distribution.seeds" in _errors(config)  # a distribution needs more than 3 seeds


def test_evidence_config_switches_both_products_on_and_stays_valid(default_config):
    switches = yaml.safe_load((REPO / "config/evidence.yaml").read_text())
    config = copy.deepcopy(default_config)
    for section, values in switches.items():
        config[section] = {**config[section], **values}
    cfg.validate(config)
    assert sorted(evidence.enabled(config)) == ["listings", "numerics", "seeds"]
    # the default run builds the seed distribution: the ledger judges the stochastic claims by it
    assert evidence.enabled(default_config) == {"seeds": evidence.SEEDS}
    spread = plan.seed_distribution_cases(config)
    assert all(p["task"] == "sort" and p["ablation"] == "full" for p in spread.values())
    assert all(sum(f"-L{L}-" in c for c in spread) >= 20 for L in (4, 6, 8))
    # the run's own sort trainings are the same jobs (same names, same parameters), and the
    # extra seeds stay out of the run's tables
    own = plan.cases("train", config)
    shared = set(own) & set(spread)
    assert len(shared) == 9 and all(own[c] == spread[c] for c in shared)
    assert set(spread) - shared <= set(plan.runnable_cases("train", config)) - set(own)


# --- what a process really runs ------------------------------------------------------------


def _env():
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES")}
    env["PYTHONPATH"] = str(REPO / "src")
    return env


def _run_multihead_shapes(setting, out, timeout=120):
    """`python -m attnrepro run multihead_shapes --numerics SETTING --out OUT`, as a job runs it."""
    cmd = [sys.executable, "-m", "attnrepro", "run", "multihead_shapes",
           "--numerics", setting, "--out", str(out)]
    return subprocess.run(cmd, cwd=REPO, env=_env(), capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def probed():
    """The default setting and, when this machine has one, a setting with another kernel."""
    default = sweep.probe_one("default")
    other = None
    for name in ("sandybridge", "haswell", "nehalem", "prescott"):
        row = sweep.probe_one(name)
        if row["openblas_kernel"] and row["openblas_kernel"] != default["openblas_kernel"]:
            other = row
            break
    return default, other


def test_probe_finds_the_default_kernel(probed):
    default, _ = probed
    assert default["accepted"] and default["openblas_kernel"] not in ("", "?")
    assert default["openblas_coretype"] == "" and default["numpy_features"] is not None
    kept = sweep.keep(
        [default, {**default, "setting": "x"}, {**default, "setting": "y", "openblas_kernel": ""}]
    )
    assert [(r["kept"], r["duplicate_of"]) for r in kept] == [(True, ""), (False, "default"), (False, "")]


def test_a_kernel_the_cpu_cannot_execute_is_refused_by_the_probe():
    """OpenBLAS accepts OPENBLAS_CORETYPE=SkylakeX by name on any CPU; without AVX-512 its first
    product dies with SIGILL, so the probe must refuse it (a sweep job would die the same way)."""
    from attnrepro.numerics import canonical

    row = sweep.probe_one("skylakex")
    if "avx512f" in (canonical.cpu_flags() or set()):
        assert row["accepted"] and row["openblas_kernel"] == "SkylakeX"
    else:
        assert not row["accepted"] and "illegal instruction" in row["error"]
        assert not sweep.keep([row])[0]["kept"]


def test_a_job_records_the_kernel_it_really_ran(probed, tmp_path):
    default, other = probed
    if other is None:
        missing("OpenBLAS offers a single kernel on this CPU")
    kernels = {}
    for row in (default, other):
        out = tmp_path / row["setting"] / "m.parquet"
        proc = _run_multihead_shapes(row["setting"], out)
        assert proc.returncode == 0, proc.stderr[-2000:]
        table = io.read_parquet(out.with_name("m.permutation.parquet"))
        assert set(table["numerics"]) == {row["setting"]}
        assert set(table["numerics_openblas_coretype"]) == {row["openblas_coretype"]}
        kernels[row["setting"]] = table["numerics_openblas_kernel"].iloc[0]
        assert io.read_provenance(out)["numerics"]["openblas_kernel"] == kernels[row["setting"]]
    assert kernels == {
        default["setting"]: default["openblas_kernel"],
        other["setting"]: other["openblas_kernel"],
    }
    assert len(set(kernels.values())) == 2


def test_cli_refuses_a_setting_the_config_does_not_name(tmp_path):
    proc = _run_multihead_shapes("core2-noavx2", tmp_path / "x.parquet", timeout=60)
    assert proc.returncode != 0 and "is not one of the config's" in proc.stderr
    assert not (tmp_path / "x.parquet").exists()


EQUIVARIANCE = "001.multihead_shapes.permutation.equivariance-error"  # round-off, published 4.441e-16


def _narrow_the_sweep(root, kernel):
    """In the copy ``root``: the sweep of the small config cut down to one cheap case
    (multihead_shapes default) under two settings, the default kernel and ``kernel``. Snakemake
    merges config files key by key, so the cases of config.yaml are replaced in the copy itself."""
    for name in ("config/config.yaml", "config/small.yaml"):
        path = root / name
        data = yaml.safe_load(path.read_text())
        data["numerics"] = {**data.get("numerics", {}), "cases": {"multihead_shapes": ["default"]}}
        if name == "config/config.yaml":  # one kernel besides the default, no side environment
            data["numerics"].update(kernels=[kernel], numpy_masks=["default"], environments={})
        path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.mark.full
def test_the_numerics_target_runs_end_to_end_on_a_tiny_sweep(probed, tmp_path):
    """`snakemake numerics` for real (~12 s): the probe, one job per setting, the sweep's ledger."""
    default, other = probed
    if other is None:
        missing("OpenBLAS offers a single kernel on this CPU: a sweep needs two")
    root = copy_repo(tmp_path / "repo")
    _narrow_the_sweep(root, other["kernel"])
    proc = snakemake(root, "numerics")
    assert proc.returncode == 0, proc.stderr[-4000:]
    settings = [default["setting"], other["setting"]]

    # the probe: both settings tried and kept, each with the kernel it really runs
    probe = json.loads((root / paths.SETTINGS_FILE).read_text())
    rows = {r["setting"]: r for r in probe["settings"]}
    assert list(rows) == settings and sweep.kept(root / paths.SETTINGS_FILE) == settings
    for expected in (default, other):
        assert rows[expected["setting"]]["openblas_kernel"] == expected["openblas_kernel"]

    # the sweep: exactly the one case's tables under each setting, each recording what ran
    written = sorted(str(p.relative_to(root)) for p in (root / paths.SWEEP_ROOT).rglob("*.parquet"))
    tiny = {"numerics": {"cases": {"multihead_shapes": ["default"]}}}
    assert written == sorted(sweep_plan.outputs(tiny, settings))
    assert len(written) == 2 * len(plan.EXPERIMENTS["multihead_shapes"].tables)
    errors = {}
    for expected in (default, other):
        setting = expected["setting"]
        path = functools.partial(sweep_plan.output_path, setting, "multihead_shapes", "default")
        for table in plan.EXPERIMENTS["multihead_shapes"].tables:
            frame = io.read_parquet(root / path(table))
            assert set(frame["numerics"]) == {setting}, (setting, table)
            assert set(frame["numerics_openblas_kernel"]) == {expected["openblas_kernel"]}, table
            assert set(frame["numerics_openblas_coretype"]) == {expected["openblas_coretype"]}, table
        errors[setting] = float(io.read_parquet(root / path("permutation"))["max_equivariance_error"].iloc[0])
        assert 0 < errors[setting] < 1e-14  # round-off shows, and stays round-off

    # the sweep's ledger: the round-off claim once per setting, as the Parquet files give it
    table = pd.read_csv(root / evidence.NUMERICS.paths["csv"], dtype=str, keep_default_na=False)
    assert set(table["setting"]) == set(settings)
    claim = table[table["id"] == EQUIVARIANCE].set_index("setting")
    assert sorted(claim.index) == sorted(settings)
    for expected in (default, other):
        row = claim.loc[expected["setting"]]
        assert row["openblas_kernel"] == expected["openblas_kernel"] and row["published"] == "4.441e-16"
        assert row["reproduced"] == verdicts.format_like(errors[expected["setting"]], "4.441e-16")
        assert row["published_digits"] == str(row["reproduced"] == "4.441e-16")
    md = (root / evidence.NUMERICS.paths["md"]).read_text()
    header = md.splitlines()[2]
    assert all(f" {s} " in header for s in settings), header
    assert "max \\|attn(PX) - P attn(X)\\|" in md
    assert all(f"{r['setting']}: OpenBLAS {r['openblas_kernel']}," in md for r in (default, other)), md
    svg = (root / evidence.NUMERICS.paths["svg"]).read_text()
    assert svg.startswith("<?xml") and all(s in svg for s in settings)


# --- the sweep judged by the ledger's rules ------------------------------------------------


def _claim(id_, published, column, cls="round-off", **source):
    return verdicts.Claim.from_dict(
        {
            "id": id_,
            "article": "001",
            "section": "s",
            "claim": id_,
            "published": published,
            "class": cls,
            "tolerance": 1e-3,
            "source": {"experiment": "grad_check", "column": column, **source},
        }
    )


FakeLoad = FrameLoad


def _setting(kernel, value, exact):
    frame = pd.DataFrame(
        {
            "post_ln": [True],
            "worst_relative_deviation": [value],
            "shape": [exact],
            "numerics_openblas_kernel": [kernel],
            "numerics_numpy_features": ["X86_V3"],
        }
    )
    return FakeLoad({("grad_check", "main"): frame})


def test_the_sweep_ledger_names_the_settings_that_give_each_published_digit():
    by_setting = {
        "default": _setting("SkylakeX", 1.847e-4, 7),
        "sandybridge-noavx512": _setting("Sandybridge", 4.898e-5, 7),
        "haswell-noavx512": _setting("Haswell", 6.785e-5, 7),
    }
    claims = [
        _claim("grad", "4.90e-05", "worst_relative_deviation", where={"post_ln": True}),
        _claim("shape", "7", "shape", cls="exact"),
        _claim("absent", "1", "nope", cls="exact"),
    ]
    swept = numerics_evaluate.swept_claims(claims, by_setting)
    assert [c.id for c in swept] == ["grad", "shape"]  # "absent" reads no swept column
    long = numerics_evaluate.evaluate(
        swept, by_setting, order=["default", "sandybridge-noavx512", "haswell-noavx512"],
        article_code={"grad": "6.78e-05"},  # what the article's own code printed in the listings' run
    )
    assert list(long["id"].unique()) == ["grad"]  # an exact claim reproduced everywhere is not listed
    assert numerics_evaluate.giving(long, "grad") == ["sandybridge-noavx512"]
    assert numerics_evaluate.giving(long, "grad", "article_code_digits") == ["haswell-noavx512"]
    reason = numerics_evaluate.reason_for("grad", long)
    assert "published digits 4.90e-05 given by sandybridge-noavx512;" in reason
    assert "the article's own code prints 6.78e-05 here, as haswell-noavx512 give" in reason
    assert reason.endswith("; this host's native numerics (OpenBLAS SkylakeX, NumPy AVX2) give 1.85e-04")
    assert numerics_evaluate.reason_for("shape", long) is None
    wide = numerics_render.wide(long)
    assert (
        wide.loc[0, "sandybridge-noavx512"] == "4.90e-05 P"
        and wide.loc[0, "haswell-noavx512"] == "6.78e-05 A"
    )


def test_evidence_reads_the_products_back(tmp_path):
    by_setting = {"default": _setting("SkylakeX", 1.847e-4, 7), "zen": _setting("Haswell", 4.9e-5, 7)}
    claims = [_claim("grad", "4.90e-05", "worst_relative_deviation", where={"post_ln": True})]
    long = numerics_evaluate.evaluate(claims, by_setting, article_code={"grad": "6.78e-05"})
    long.to_csv(tmp_path / "n.csv", index=False)
    found = citations.reasons(numerics_csv=tmp_path / "n.csv")
    # no Markdown beside the CSV: the reason cites the CSV the ledger read
    assert found == {"grad": f"{numerics_evaluate.reason_for('grad', long)} [{tmp_path / 'n.csv'}]"}
    with pytest.raises(FileNotFoundError, match="absent.csv"):  # a declared product must exist
        citations.spread(tmp_path / "absent.csv")
    assert citations.spread(None) is None
    assert (
        "given by zen (OpenBLAS Haswell);" in found["grad"]
        and "the article's own code prints 6.78e-05 here, which no setting gives" in found["grad"]
    )
    stochastic = verdicts.Claim.from_dict(
        {
            "id": "s",
            "article": "001",
            "section": "s",
            "claim": "c",
            "published": "0.9",
            "class": "stochastic",
            "source": {"experiment": "train", "column": "x"},
        }
    )
    found = {"numerics": found}
    uncited = citations.reason_for(stochastic, found)  # the seed distribution judges; it is not appended
    assert "numerics` makes" in uncited and "seeds` makes" not in uncited and "listings` makes" in uncited
    assert "--configfile config/evidence.yaml" in uncited and "[" not in uncited
    assert citations.reason_for(stochastic, found, cited={"numerics", "listings"}) == (
        "no row in the numerics evidence; no row in the listings evidence")


# --- seed distributions --------------------------------------------------------------------


def test_percentile_is_mid_rank():
    assert seeds_evaluate.percentile([1, 2, 3, 4], 2.5) == 50
    assert seeds_evaluate.percentile([1, 2, 2, 4], 2) == 50  # 1 below, 2 equal: (1 + 1) / 4
    assert (
        seeds_evaluate.percentile([1, 2, 3], 0) == 0 and seeds_evaluate.percentile([1, 2, 3], 9) == 100
    )


def test_subset_statistics_enumerate_every_set_or_sample_with_a_fixed_seed():
    values = [0.90, 0.95, 0.97, 0.99, 1.00]
    means, method = seeds_evaluate.subset_statistics(values, 3, "mean")
    assert len(means) == 10 and method == "all 10 sets of 3 of the 5 seeds"
    assert np.isclose(sorted(means)[0], (0.90 + 0.95 + 0.97) / 3) and np.isclose(
        sorted(means)[-1], (0.97 + 0.99 + 1.00) / 3
    )
    mins, _ = seeds_evaluate.subset_statistics(values, 3, "min")
    assert sorted(mins) == sorted([0.90] * 6 + [0.95] * 3 + [0.97])
    sampled, method = seeds_evaluate.subset_statistics(np.arange(30.0), 3, "mean", limit=50)
    again, _ = seeds_evaluate.subset_statistics(np.arange(30.0), 3, "mean", limit=50)
    assert len(sampled) == 50 and "random" in method and np.array_equal(sampled, again)
    assert seeds_evaluate.interval(np.arange(101.0)) == pytest.approx((2.5, 97.5))


def _train(values):
    return pd.DataFrame(
        {"task": "sort", "L": 4, "ablation": "full", "seed": range(len(values)), "sequence_accuracy": values}
    )


def test_a_published_mean_is_placed_among_the_seeds():
    values = [0.96, 0.97, 0.98, 0.99, 0.95, 0.97, 0.98, 0.96, 0.97, 0.99]
    claim = verdicts.Claim.from_dict(
        {
            "id": "m",
            "article": "001",
            "section": "s",
            "claim": "sort L=4 mean",
            "published": "0.981",
            "class": "stochastic",
            "source": {
                "experiment": "train",
                "column": "sequence_accuracy",
                "where": {"task": "sort", "L": 4, "seed": [0, 1, 2]},
                "reduce": "mean",
            },
        }
    )
    row = seeds_evaluate.place(claim, _train(values))
    assert row["n_seeds"] == 10  # the seed restriction is dropped: every seed of the grid
    assert row["seed_percentile"] == 80  # 8 of 10 below 0.981
    assert row["subsets"] == 120 and row["first_seeds_value"] == pytest.approx(0.97)
    means, _ = seeds_evaluate.subset_statistics(values, 3, "mean")
    assert row["subset_percentile"] == pytest.approx(seeds_evaluate.percentile(means, 0.981))
    assert (row["interval_low"], row["interval_high"]) == pytest.approx(seeds_evaluate.interval(means))
    assert row["inside_interval"] == (row["interval_low"] <= 0.981 <= row["interval_high"])
    out_of_reach = seeds_evaluate.place(
        verdicts.Claim.from_dict({**_as_dict(claim), "published": "0.999"}), _train(values)
    )
    assert out_of_reach["inside_interval"] is False and out_of_reach["seed_percentile"] == 100
    table = pd.DataFrame([row, out_of_reach], columns=seeds_evaluate.COLUMNS)
    assert "outside their 95% interval" in seeds_evaluate.reason_for("m", table.iloc[[1]])
    assert "percentile 80)" in seeds_evaluate.reason_for("m", table.iloc[[0]])


def _as_dict(claim):
    return {
        "id": claim.id,
        "article": claim.article,
        "section": claim.section,
        "claim": claim.claim,
        "published": claim.published,
        "class": claim.cls,
        "source": claim.source,
    }


# --- the workflow --------------------------------------------------------------------------


@pytest.mark.full
def test_rule_all_builds_the_evidence_only_when_switched_on_and_the_ledger_cites_it(tmp_path):
    root = copy_repo(tmp_path / "repo")
    default = snakemake(root, "-n", "-p", configfile=None)  # the seed distribution is on by default
    assert default.returncode == 0, default.stderr[-3000:]
    jobs = planned_jobs(default)
    assert "numerics_settings" not in jobs and jobs.get("seeds") == 1
    # the run's 23 trainings, and the distribution's 60 less the 9 it shares with them, apart
    assert jobs["train_case"] == 23 and jobs["seed_training_case"] == 60 - 9
    assert "--numerics-evidence" not in default.stdout
    assert "--seed-evidence results/seeds/seed_distribution.csv --inputs" in default.stdout
    (root / "off.yaml").write_text("seed_distribution:\n  build: false\n")
    off = snakemake(root, "-n", "-p", configfile="off.yaml")
    assert off.returncode == 0, off.stderr[-3000:]
    jobs = planned_jobs(off)
    assert "numerics_settings" not in jobs and "seeds" not in jobs and jobs["train_case"] == 23
    assert "--numerics-evidence" not in off.stdout and "--seed-evidence" not in off.stdout
    (root / "on.yaml").write_text("numerics:\n  sweep: true\nseed_distribution:\n  build: false\n")
    on = snakemake(root, "-n", "-p", configfile="on.yaml")
    assert on.returncode == 0, on.stderr[-3000:]
    jobs = planned_jobs(on)
    assert jobs.get("numerics_settings") == 1 and jobs.get("numerics") == 1
    assert "seeds" not in jobs
    assert "--numerics-evidence results/numerics/ledger_numerics.csv --inputs" in on.stdout
    both = snakemake(root, "-n", "-p", configfile="config/evidence.yaml")
    assert both.returncode == 0, both.stderr[-3000:]
    jobs = planned_jobs(both)
    assert jobs.get("seeds") == 1 and jobs["train_case"] == 23 and jobs["seed_training_case"] == 51
    assert (
        "--numerics-evidence results/numerics/ledger_numerics.csv"
        " --seed-evidence results/seeds/seed_distribution.csv"
        " --listings-evidence results/listings/article_code.csv --inputs" in both.stdout
    )


@pytest.mark.full
def test_the_ledger_cites_the_evidence_it_is_given(small_run, tmp_path):
    claims = verdicts.load_claims(REPO / "config/published.yaml")
    grad = next(c for c in claims if c.id == "001.grad_check.post-ln.eps-1e-06")
    by_setting = {
        name: FakeLoad({("grad_check", "main"): pd.DataFrame({
            "post_ln": [True], "eps": [1e-6], "worst_relative_deviation": [value],
            "numerics_openblas_kernel": [kernel], "numerics_numpy_features": ["X86_V3"]})})
        for name, kernel, value in (
            ("default", "SkylakeX", 1.847e-4), ("sandybridge", "Sandybridge", 4.898e-5)
        )
    }
    numerics_evaluate.evaluate([grad], by_setting).to_csv(tmp_path / "sweep.csv", index=False)
    inputs = sorted(str(p) for p in (small_run / "results/data").rglob("*.parquet"))

    def ledger_table(*evidence_options):
        out = tmp_path / f"ledger{len(evidence_options)}.csv"
        cmd = [sys.executable, "-m", "attnrepro.report", "--configfile", "config/small.yaml",
               "ledger", "--published", "config/published.yaml",
               "--csv", str(out), "--md", str(tmp_path / "L.md"), *evidence_options, "--inputs", *inputs]
        proc = subprocess.run(cmd, cwd=small_run, env=_env(), capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        table = pd.read_csv(out, dtype=str, keep_default_na=False)
        # evidence explains a value the run has: a reproduced or missing one gets none
        judged = ~table["verdict"].isin(["reproduced", "missing"])
        return table[table["class"].isin(evidence.CITED_FOR) & judged]

    bare, cited = ledger_table(), ledger_table("--numerics-evidence", str(tmp_path / "sweep.csv"))
    assert len(bare) and bare["reason"].str.contains("`snakemake --cores 2 numerics` makes").all()
    assert not bare["reason"].str.contains(r"\[[^\]]*\.(?:md|csv)\]").any()  # nothing cited that it lacks
    for _, row in cited.iterrows():
        if row["id"] == grad.id:
            assert "published digits 4.90e-05 given by sandybridge" in row["reason"]
        else:
            assert "no row in the numerics evidence" in row["reason"], row.to_dict()


def test_a_published_interval_is_given_by_a_value_inside_it_and_not_placed_among_seeds():
    by_setting = {
        "default": _setting("SkylakeX", 1.847e-4, 7),
        "sandybridge-noavx512": _setting("Sandybridge", 4.898e-5, 7),
    }
    claims = [_claim("range", "4e-05 to 6e-05", "worst_relative_deviation", where={"post_ln": True})]
    long = numerics_evaluate.evaluate(claims, by_setting)
    assert numerics_evaluate.giving(long, "range") == ["sandybridge-noavx512"]
    prose = verdicts.Claim.from_dict(
        {
            "id": "p",
            "article": "001",
            "section": "s",
            "claim": "c",
            "published": "0.987-0.995",
            "class": "stochastic",
            "source": {"experiment": "train", "column": "x", "reduce": "mean"},
        }
    )
    single = verdicts.Claim.from_dict({**_as_dict(prose), "id": "q", "published": "0.990"})
    assert [c.id for c in seeds_evaluate.placed_claims([prose, single])] == ["q"]


def test_evidence_is_appended_to_roundoff_and_stochastic_deviations_only():
    claims = [
        verdicts.Claim.from_dict(
            {
                "id": i,
                "article": "001",
                "section": "s",
                "claim": "c",
                "published": "1",
                "class": cls,
                "source": {"experiment": "x", "column": "y"},
            }
        )
        for i, cls in (("r", "round-off"), ("s", "stochastic"), ("e", "exact"), ("ok", "round-off"))
    ]
    table = pd.DataFrame(
        {
            "id": ["r", "s", "e", "ok"],
            "class": ["round-off", "stochastic", "exact", "round-off"],
            "verdict": ["within tolerance", "differs", "differs", "reproduced"],
            "reason": ["below 1e-14", "", "x", ""],
        }
    )
    found = {"numerics": {"r": "published digits 1 given by sandybridge [t.md]"},
             "listings": {"r": "the article's own code prints 2 here [l.md]"}}
    out = citations.annotate(table, claims, found, cited={"numerics", "seeds", "listings"})
    assert out["reason"].tolist() == [
        "below 1e-14; published digits 1 given by sandybridge [t.md]; "
        "the article's own code prints 2 here [l.md]",
        # the seed distribution judges (ledger.judge says so): not appended
        "no row in the numerics evidence; no row in the listings evidence",
        "x",
        "",
    ]


def _ledger_as_if_comparable(run, out, seeds_csv):
    """The small run's ledger judged as if its config were the article's (no ``article``): the
    seed-distribution judgement itself, which the run's own ledger replaces by "other parameters"
    (the small config trains fewer steps than the articles)."""
    from attnrepro.report.commands import ledger as ledger_command
    from attnrepro.report.products import results

    inputs = sorted((run / "results/data").rglob("*.parquet"))
    out.mkdir(parents=True, exist_ok=True)
    ledger_command.write(REPO / "config/published.yaml", results.Loader(inputs), out / "ledger.csv",
                    out / "LEDGER.md", seeds_csv=seeds_csv)
    return pd.read_csv(out / "ledger.csv", dtype=str, keep_default_na=False)


@pytest.mark.full
def test_the_run_judges_by_its_seed_distribution_and_switched_off_says_it_falls_back(small_run, tmp_path):
    seeds_csv = small_run / "results/seeds/seed_distribution.csv"
    table = pd.read_csv(seeds_csv)  # on by default
    assert len(table) and set(table["L"]) == {6} and set(table["n_seeds"]) == {4}
    assert set(table["subsets"]) == {4}  # every set of 3 of the 4 seeds

    def stochastic(ledger_table):
        return ledger_table[ledger_table["id"].isin(table["id"]) & (ledger_table["verdict"] != "reproduced")]

    def ledger_of(root):
        return pd.read_csv(root / "results/ledger.csv", dtype=str, keep_default_na=False)

    # the run's own ledger: the small config's trainings are not the article's
    own = stochastic(ledger_of(small_run))
    assert len(own) and own["verdict"].eq("other parameters").all()
    assert own["reason"].str.contains("train.steps", regex=False).all()
    assert "`seeds/seed_distribution.csv`" in (small_run / "results/README.md").read_text()
    # judged as if comparable: by the seed distribution, whose file the reason cites
    placed = stochastic(_ledger_as_if_comparable(small_run, tmp_path / "on", str(seeds_csv)))
    assert len(placed) and placed["reason"].str.contains("results/seeds/seed_distribution.md",
                                                         regex=False).all()
    assert not placed["reason"].str.contains("weaker judgement").any()
    fallen = stochastic(_ledger_as_if_comparable(small_run, tmp_path / "off", None))
    assert len(fallen) and fallen["reason"].str.contains("a weaker judgement").all()
    assert fallen["reason"].str.contains("`snakemake --cores 2 seeds` builds it", regex=False).all()
    # switched off in the run: only the ledger and what reads it rerun
    root = tmp_path / "run"
    copy_run(small_run, root)
    (root / "off.yaml").write_text("seed_distribution:\n  build: false\n")
    off = snakemake(root, configfile="config/small.yaml off.yaml")
    assert off.returncode == 0, off.stderr[-3000:]
    reads_ledger = {"ledger", "index", "config_resolved", "all", "ledger_overview", "machine_speed",
                    "edition_000", "edition_001", "edition_003"}
    # every table reads the ledger (its cells' verdicts, report.ledger.printed)
    reads_ledger |= {f"table_{p.name}" for p in catalog.PRODUCTS.values() if p.kind == "table"}
    assert set(planned_jobs(off)) <= reads_ledger
    assert "ledger" in planned_jobs(off)
    assert stochastic(ledger_of(root))["verdict"].eq("other parameters").all()
