"""The environment as the numerics sweep's third axis: side environments (another interpreter, with
the NumPy and torch versions the articles state) whose settings are named <environment>.<setting>."""

import pandas as pd

from attnrepro.report.evidence_tables import numerics_evaluate, numerics_render
from attnrepro.evidence import sweep
from report_helpers import FrameLoad

SECTION = {
    "kernels": ["Sandybridge"],
    "numpy_masks": ["default"],
    "environments": {"article": {"python": ".venv-article/bin/python", "make": "article-env",
                                 "packages": "NumPy 2.3.5, torch 2.12.0",
                                 "settings": ["haswell-noavx512", "default"]}},
}


def test_a_side_environment_adds_its_settings_and_its_interpreter():
    assert sweep.candidates(SECTION) == ["default", "sandybridge", "article.haswell-noavx512",
                                         "article.default"]
    assert sweep.split("article.haswell-noavx512") == ("article", "haswell-noavx512")
    assert sweep.split("sandybridge-noavx512") == (None, "sandybridge-noavx512")
    assert sweep.interpreter("article.default", SECTION, "python") == ".venv-article/bin/python"
    assert sweep.interpreter("default", SECTION, "python") == "python"
    assert sweep.installed(SECTION["environments"]["article"]) == ".venv-article/.installed"


def test_the_same_kernel_in_another_environment_is_no_duplicate():
    row = {"openblas_kernel": "Haswell", "numpy_features": "X86_V3", "accepted": True}
    kept = sweep.keep([{**row, "setting": "haswell-noavx512", "environment": ""},
                       {**row, "setting": "default", "environment": ""},
                       {**row, "setting": "article.haswell-noavx512", "environment": "article"},
                       {**row, "setting": "article.default", "environment": "article"}])
    assert [(r["setting"], r["kept"], r["duplicate_of"]) for r in kept] == [
        ("haswell-noavx512", True, ""), ("default", False, "haswell-noavx512"),
        ("article.haswell-noavx512", True, ""), ("article.default", False, "article.haswell-noavx512")]


def test_an_environment_not_built_is_refused_by_the_probe_naming_its_interpreter(tmp_path):
    section = {"environments": {"absent": {**SECTION["environments"]["article"],
                                           "python": str(tmp_path / "no-venv/bin/python")}}}
    row = sweep.probe(["absent.default"], section)[0]
    assert (row["environment"], row["accepted"], row["kept"]) == ("absent", False, False)
    assert row["error"] == f"no interpreter {tmp_path}/no-venv/bin/python (its make target builds it)"


def _setting(kernel, value, numpy_version, torch_version="2.13.0+cpu"):
    frame = pd.DataFrame({"task": ["sort"], "acc": [value], "numerics_openblas_kernel": [kernel],
                          "numerics_numpy_features": ["X86_V3"], "numerics_numpy_version": [numpy_version],
                          "numerics_torch_version": [torch_version]})
    return FrameLoad({("train", "main"): frame})


def _sort_claim(published):
    from attnrepro.report.ledger import verdicts

    source = {"experiment": "train", "column": "acc", "where": {"task": "sort"}}
    return verdicts.Claim.from_dict({"id": "sort", "article": "001", "section": "s", "claim": "sort",
                                   "published": published, "class": "stochastic", "source": source})


def test_a_reason_names_what_was_varied_and_what_no_setting_gives():
    by_setting = {"haswell-noavx512": _setting("Haswell", 0.953, "2.4.6"),
                  "article.haswell-noavx512": _setting("Haswell", 0.992, "2.3.5", "2.12.0+cu130")}
    long = numerics_evaluate.evaluate([_sort_claim("0.970")], by_setting, article_code={"sort": "0.953"})
    reason = numerics_evaluate.reason_for("sort", long)
    assert reason.startswith(
        "no setting measured here gives 0.970 (settings: OpenBLAS Haswell; NumPy paths AVX2; "
        "NumPy 2.3.5, 2.4.6; torch 2.12.0+cu130, 2.13.0+cpu); "
        "untested: the article's Python 3.14 and its CPU; "
        "the article's own code prints 0.953 here, as haswell-noavx512 give")
    assert numerics_evaluate.describe(long, "article.haswell-noavx512") == (
        "OpenBLAS Haswell, NumPy 2.3.5 X86_V3, torch 2.12.0+cu130")
    wide = numerics_render.wide(long)
    assert wide.loc[0, ["haswell-noavx512", "article.haswell-noavx512"]].tolist() == ["0.953 A", "0.992"]
    given = numerics_evaluate.evaluate([_sort_claim("0.992")], by_setting)
    # the run holds no numerics table to cite: the reason cites no file (report.evidence_tables.citations)
    assert numerics_evaluate.reason_for("sort", given) == (
        "published digits 0.992 given by article.haswell-noavx512")


def test_a_side_environment_setting_that_names_no_kernel_is_refused_with_its_key():
    from attnrepro.dag import sweep_plan

    env = {**SECTION["environments"]["article"], "settings": ["haswell-noavx512", "hasswell"]}
    errors = sweep_plan.config_errors({"numerics": {"environments": {"article": env}}})
    assert len(errors) == 1 and errors[0].startswith(
        "numerics.environments.article.settings[1]: unknown OpenBLAS kernel 'hasswell'")


def test_numpy_2_3_feature_names_are_read_as_their_code_paths():
    long = pd.DataFrame({"setting": ["article.default", "default"],
                         "openblas_kernel": ["Haswell", "SkylakeX"],
                         "numpy_features": ["SSE42 AVX F16C FMA3 AVX2", "SSE42 AVX2 AVX512F AVX512_SKX"]})
    assert numerics_evaluate.short_numerics(long, "article.default") == "OpenBLAS Haswell\nNumPy AVX2"
    assert numerics_evaluate.short_numerics(long, "default") == "OpenBLAS SkylakeX\nNumPy AVX-512"
