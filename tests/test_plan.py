"""The run plan and the source files each job depends on."""

from attnrepro.dag import code_inputs, plan


def test_grid_cases_fan_out_over_the_grid_keys():
    cases = plan.grid_cases({"d_k": [8, 64], "scaled": [False, True], "T": 64}, ("d_k", "scaled"))
    assert list(cases) == ["d_k-8_scaled-false", "d_k-8_scaled-true",
                           "d_k-64_scaled-false", "d_k-64_scaled-true"]
    assert cases["d_k-64_scaled-true"] == {"d_k": 64, "scaled": True, "T": 64}


def test_no_grid_is_one_default_case():
    assert plan.grid_cases({"seed": 0}, ()) == {"default": {"seed": 0}}


def test_output_paths_are_unique_and_under_results(default_config):
    paths = plan.all_outputs(default_config)
    assert len(paths) == len(set(paths))
    assert all(p.startswith("results/data/") and p.endswith(".parquet") for p in paths)
    assert "results/data/001/scale_table/d_k-512_scaled-false.parquet" in paths


def test_skip_leaves_an_experiment_out(default_config):
    config = {**default_config, "skip": ["scale_table"]}
    assert not any("scale_table" in p for p in plan.all_outputs(config))


def test_sources_follow_imports_and_nothing_else():
    files = code_inputs.source_files("attnrepro.jobs.experiment", "attnrepro.experiments.attention_vs_sdpa")
    assert "src/attnrepro/core/attention.py" in files
    assert "src/attnrepro/experiments/_torch.py" in files
    assert "src/attnrepro/run/io.py" in files and "src/attnrepro/__init__.py" in files
    assert "src/attnrepro/core/positional.py" not in files  # not imported by this experiment
    assert not any("/report/" in f for f in files)


def test_every_registered_experiment_has_a_module():
    from pathlib import Path

    src = Path(code_inputs.SRC)
    for exp in plan.EXPERIMENTS.values():
        assert (src / "attnrepro" / "experiments" / f"{exp.id}.py").is_file(), exp.id


def test_output_case_names_the_job_that_writes_a_file_of_any_table():
    assert plan.output_case("results/data/001/grad_check/post_ln-true_eps-0.0001.parquet") == (
        "grad_check", "post_ln-true_eps-0.0001")
    assert plan.output_case("results/data/001/kv_cache/default.memory.parquet") == ("kv_cache", "default")


def test_an_import_in_any_block_is_found_and_one_in_an_expression_is_not(tmp_path):
    src = tmp_path / "src"
    package = src / "attnrepro"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    names = ["top", "in_if", "in_else", "in_try", "in_except", "in_finally", "in_with", "in_def",
             "in_class", "in_match", "in_while", "in_for_else", "unused"]
    for name in names:
        (package / f"{name}.py").write_text("")
    (package / "main.py").write_text(
        "import attnrepro.top\n"
        "if X:\n    import attnrepro.in_if\nelse:\n    from attnrepro import in_else\n"
        "try:\n    import attnrepro.in_try\nexcept ImportError:\n    import attnrepro.in_except\n"
        "finally:\n    import attnrepro.in_finally\n"
        "with X:\n    import attnrepro.in_with\n"
        "def f():\n    import attnrepro.in_def\n"
        "class C:\n    def m(self):\n        import attnrepro.in_class\n"
        "match X:\n    case 1:\n        import attnrepro.in_match\n"
        "while X:\n    import attnrepro.in_while\n"
        "for x in X:\n    pass\nelse:\n    import attnrepro.in_for_else\n"
        "Y = lambda: __import__('attnrepro.unused')\n")
    files = code_inputs.source_files("attnrepro.main", src=src)
    assert files == sorted(f"src/attnrepro/{n}.py" for n in ["__init__", "main", *names[:-1]])
