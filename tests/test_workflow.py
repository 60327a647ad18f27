"""The workflow end to end, on the small config, in a temporary copy of the repository."""

import ast
import re
import resource
import time
from pathlib import Path

import yaml

from attnrepro.run import io
from attnrepro.dag import plan
from attnrepro.report.products import catalog

from conftest import REPO, copy_run, small_config, snakemake




def test_small_run_writes_every_planned_file(small_run):
    config = small_config()
    expected = plan.all_outputs(config) + catalog.all_outputs(config)
    expected += ["results/ledger.csv", "results/LEDGER.md", "results/README.md"]
    missing = [p for p in expected if not (small_run / p).is_file()]
    assert not missing
    assert not list((small_run / "results").rglob("*.tmp"))


def test_every_file_carries_its_provenance(small_run):
    for path in plan.all_outputs(small_config()):
        meta = io.read_provenance(small_run / path)
        exp = plan.EXPERIMENTS[meta["experiment"]]
        assert path.startswith(f"results/data/{exp.article}/{exp.id}/")
        assert meta["versions"]["numpy"] and meta["started"] <= meta["finished"]
        assert meta["threads"] >= 1 and meta["blas"]
        # a copy of the workflow is no git checkout: neither clean nor dirty, and it says why
        assert meta["git"] == {"commit": None, "dirty": None, "unknown": meta["git"]["unknown"]}
        assert meta["git"]["unknown"].startswith("no commit to record: fatal: not a git repository")
        assert meta["numerics"]["canonical"] is True, (path, meta["numerics"])  # numerics.pin reached the job


def test_a_checkout_records_its_commit_and_whether_it_is_dirty(tmp_path):
    from attnrepro.run import provenance

    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    run = ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a"]
    import subprocess

    subprocess.run([*run[:3], "init", "-q"], check=True)
    (repo / "src" / "x.py").write_text("a = 1\n")
    subprocess.run([*run, "add", "."], check=True)
    subprocess.run([*run, "commit", "-qm", "x"], check=True)
    state = provenance.git_state(repo)
    assert len(state["commit"]) == 40 and state == {"commit": state["commit"], "dirty": False}
    (repo / "src" / "x.py").write_text("a = 2\n")
    assert provenance.git_state(repo)["dirty"] is True
    assert provenance.git_state(tmp_path / "nowhere") == {
        "commit": None, "dirty": None, "unknown": provenance.git_state(tmp_path / "nowhere")["unknown"]}


def test_small_config_reaches_the_jobs(small_run):
    meta = io.read_provenance(small_run / "results/data/001/scale_table/d_k-64_scaled-true.parquet")
    assert meta["params"]["repetitions"] == 20
    assert not (small_run / "results/data/001/scale_table/d_k-512_scaled-true.parquet").exists()


def test_results_index_lists_every_output(small_run):
    index = (small_run / "results/README.md").read_text()
    for path in plan.all_outputs(small_config()) + catalog.all_outputs(small_config()):
        assert f"`{path.removeprefix('results/')}`" in index


def test_results_index_chains_reach_existing_files_and_functions(small_run):
    """From results/README.md alone: each product's config section, experiment module, data files,
    builder function and caption exist (the data files in this run)."""
    index = (small_run / "results/README.md").read_text()
    resolved = yaml.safe_load((small_run / "results/config.resolved.yaml").read_text())
    chains = [line for line in index.splitlines() if line.startswith("  config `")]
    assert len(chains) == len(catalog.enabled(small_config()))
    for chain in chains:
        sections = re.findall(r"config `(\w+)`", chain)
        assert sections and all(section in resolved for section in sections), chain
        builders = re.findall(r"`(src/[\w/]+\.py)::(\w+)`", chain)
        assert len(builders) == 1, chain
        for module, function in builders:
            tree = ast.parse((small_run / module).read_text())
            assert function in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}, chain
        experiments = re.findall(r"`(src/attnrepro/experiments/\w+\.py)`", chain)
        assert experiments and all((small_run / m).is_file() for m in experiments), chain
        for pattern, count in re.findall(r"`(data/[\w/]+/\*\.parquet)` \((\d+) files?\)", chain):
            # the seed distribution's extra trainings share train's folder
            assert len(list((small_run / "results").glob(pattern))) >= int(count) > 0, chain
        caption = re.findall(r"caption `(workflow/report/\w+\.rst)`", chain)
        assert len(caption) == 1 and (small_run / caption[0]).is_file(), chain


def test_every_table_and_figure_names_its_builder_experiments_and_commit(small_run):
    """The Markdown table's last line, the SVG's dc:source: builder, experiments, commit."""
    for product in catalog.enabled(small_config()):
        path = small_run / (product.outputs["md"] if product.kind == "table" else product.outputs["svg"])
        text = path.read_text()
        trail = (text.rstrip("\n").rsplit("\n", 1)[-1] if product.kind == "table"
                 else re.search(r"<dc:source>([^<]*)</dc:source>", text).group(1))
        assert trail.startswith(f"Built by `{product.module}:{product.function}` from the results of"), path
        assert all(f"`{e}`" in trail for e in product.experiments), path
        assert re.search(r"at commit (\w+(-dirty)?|unversioned)\.$", trail), trail


def _children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def test_second_run_has_nothing_to_do_and_is_fast(small_run, tmp_path):
    root = copy_run(small_run, tmp_path / "run")  # Snakemake writes its log even when nothing is to be done
    # fast: the CPU seconds Snakemake spends (its start, the DAG, the checks of every output), which
    # other work on the machine inflates less than the wall time (measured: 5.1 CPU s and 6.9 s wall
    # under a load of 5 on 2 cores; 15.1 s wall under a heavier one). Rebuilding or hashing the
    # results would take several times more.
    start, cpu = time.perf_counter(), _children_cpu_seconds()
    proc = snakemake(root)
    elapsed, cpu = time.perf_counter() - start, _children_cpu_seconds() - cpu
    assert proc.returncode == 0
    assert "Nothing to be done" in proc.stdout + proc.stderr
    assert cpu < 6.5, f"no-op rerun took {cpu:.1f} CPU seconds ({elapsed:.1f} s wall)"


def test_small_config_file_is_valid():
    assert yaml.safe_load((REPO / "config" / "small.yaml").read_text())
    small_config()


def test_the_index_counts_the_files_each_folder_holds_on_disk(small_run):
    """Each data folder the index names holds exactly the files it counts: the seed distribution's
    trainings beyond the run's own live under results/seeds/, never beside the run's trainings."""
    text = (small_run / "results/README.md").read_text()
    counted = re.findall(r"`(data/\d{3}/\w+)/\*\.parquet` \((\d+) files?\)", text)
    assert len(counted) > 20
    for folder, n in dict(counted).items():
        assert len(list((small_run / "results" / folder).glob("*.parquet"))) == int(n), folder
    seeds = re.search(r"`(seeds/data/001/train)/<task>-L<L>-seed<seed>.parquet` \((\d+) files\)", text)
    assert seeds is not None
    assert len(list((small_run / "results" / seeds.group(1)).glob("*.parquet"))) == int(seeds.group(2))
    run_seeds = {p.name for p in (small_run / "results/data/001/train").glob("*.parquet")}
    assert run_seeds == {Path(p).name for p in plan.experiment_outputs("train", small_config())}


def test_timing_tables_state_the_speed_factor_the_ledger_states(small_run):
    from attnrepro.report.ledger import speed

    results = small_run / "results"
    factors = speed.read(results / "speed.csv")
    ledger_md = (results / "LEDGER.md").read_text()
    products = [p for p in catalog.PRODUCTS.values()
                if p.speed and (results / "tables" / f"{p.name}.md").is_file()]
    assert products
    for product in products:
        note = (results / "tables" / f"{product.name}.md").read_text()
        factor = factors.get(product.article)
        if factor is None:
            assert f"no raw time of article {product.article} is compared" in note, product.name
        else:  # the same sentence, the same digits, as LEDGER.md
            assert f"Machine speed: {factor.sentence()}, from results/speed.csv." in note, product.name
            assert factor.sentence() in ledger_md
    assert any(p.article in factors for p in products)  # at least one table with a factor
