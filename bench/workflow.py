"""Benchmark the workflow itself on this machine: parallel efficiency, no-op rerun, per-job cost.

    .venv/bin/python bench/workflow.py [--cores 2] [--configfile config/config.yaml]

In a temporary copy of the repository it runs the whole reproduction once and reads the
per-job wall times Snakemake records (results/benchmarks/), then times a second run with
nothing to do, and the cost of one trivial job (the `exercises` experiment: a few
multiplications, so its wall time is the fixed cost of a job: Python, imports, provenance,
Parquet). Last, in a clean copy, it runs the training grid alone (target `train`): its wall
time against the sum of its jobs' times over the cores says how well the grid packs.

A timing job holds every core (its `threads`), so job seconds are weighted by the cores each
job holds: parallel_efficiency = core-seconds of the jobs / (cores x wall time of the run).
Writes results/bench/workflow.parquet and workflow.md here.
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
# tests/golden/numerics.json: the golden fingerprint, which every job reads (attnrepro.numerics.fingerprint)
COPIED = ("Snakefile", "workflow", "src", "config", "envs", "tests/golden/numerics.json")


def snakemake(root, cores, configfile, *args):
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", str(cores), *args, "--configfile", configfile],
        cwd=root, capture_output=True, text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return time.perf_counter() - start


def job_seconds(root, cores):
    """Wall seconds of every experiment job, from Snakemake's benchmark files
    (results/benchmarks/<article>/<experiment>/<case>.tsv), and the cores it held."""
    sys.path.insert(0, str(REPO / "src"))
    from attnrepro.dag import plan

    files = sorted((root / "results/benchmarks").rglob("*.tsv"))
    frames = []
    for f in files:
        experiment = f.parent.name
        held = cores if plan.EXPERIMENTS[experiment].timing else plan.EXPERIMENTS[experiment].threads
        frames.append(pd.read_csv(f, sep="\t").assign(job=str(f.relative_to(root)), experiment=experiment,
                                                      cores_held=min(held, cores)))
    return pd.concat(frames)


def copy_repo(root):
    root.mkdir(parents=True)
    for name in COPIED:
        src = REPO / name
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy)(src, root / name)
    return root


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--configfile", default="config/config.yaml")
    parser.add_argument("--out", default=str(REPO / "results/bench"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="attnrepro-bench-") as tmp:
        root = copy_repo(Path(tmp) / "all")
        wall = snakemake(root, args.cores, args.configfile)
        jobs = job_seconds(root, args.cores)
        noop = snakemake(root, args.cores, args.configfile)
        trivial = snakemake(root, 1, args.configfile, "exercises", "--forcerun", "exercises_case")
        trivial_job = pd.read_csv(root / "results/benchmarks/001/exercises/default.tsv",
                                  sep="\t")["s"].iloc[0]
        grid_root = copy_repo(Path(tmp) / "grid")
        grid_wall = snakemake(grid_root, args.cores, args.configfile, "train")
        grid = job_seconds(grid_root, args.cores)
    core_seconds = (jobs["s"] * jobs["cores_held"]).sum()
    grid_ideal = (grid["s"] * grid["cores_held"]).sum() / args.cores
    row = {
        "cores": args.cores, "configfile": args.configfile, "jobs": len(jobs),
        "wall_seconds": wall, "sum_job_seconds": jobs["s"].sum(), "core_seconds": core_seconds,
        "ideal_seconds": core_seconds / args.cores,
        "parallel_efficiency": core_seconds / (args.cores * wall),
        "timing_jobs_seconds": (jobs.loc[jobs["cores_held"] == args.cores, "s"].sum()
                                if args.cores > 1 else 0.0),
        "noop_rerun_seconds": noop, "trivial_job_seconds": trivial_job, "trivial_run_seconds": trivial,
        "longest_job": jobs.sort_values("s").iloc[-1]["job"], "longest_job_seconds": jobs["s"].max(),
        "grid_jobs": len(grid), "grid_wall_seconds": grid_wall, "grid_ideal_seconds": grid_ideal,
        "grid_over_ideal": grid_wall / grid_ideal - 1,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame([row]).to_parquet(out / "workflow.parquet", index=False)
    lines = ["# Workflow benchmark", "", "| what | value |", "|---|---|"]
    lines += [f"| {k} | {v:.2f} |" if isinstance(v, float) else f"| {k} | {v} |" for k, v in row.items()]
    lines += ["", "parallel_efficiency = core-seconds of the experiment jobs (wall time x cores held; a "
              "timing job holds every core) / (cores x wall time of the run); report jobs (short, local) "
              "are not counted but take part of the wall time. grid_over_ideal = wall time of the "
              "training grid run alone (target `train`, including Snakemake's start) / (its core-seconds "
              "/ cores) - 1."]
    (out / "workflow.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
