"""Benchmark the workflow itself on this machine: parallel efficiency, no-op rerun, per-job cost.

    .venv/bin/python bench/workflow.py [--cores 2] [--configfile config/config.yaml]

In a temporary copy of the repository it runs the whole reproduction once and reads the
per-job wall times Snakemake records (results/benchmarks/), then times a second run with
nothing to do, and the cost of one trivial job (the `exercises` experiment: a few
multiplications, so its wall time is the fixed cost of a job: Python, imports, provenance,
Parquet). Writes results/bench/workflow.parquet and workflow.md here.
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
COPIED = ("Snakefile", "workflow", "src", "config", "envs")


def snakemake(root, cores, configfile, *args):
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", str(cores), *args, "--configfile", configfile],
        cwd=root, capture_output=True, text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return time.perf_counter() - start


def job_seconds(root):
    """Wall seconds of every experiment job, from Snakemake's benchmark files."""
    files = sorted((root / "results/benchmarks").rglob("*.tsv"))
    return pd.concat([pd.read_csv(f, sep="\t").assign(job=str(f.relative_to(root))) for f in files])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--configfile", default="config/config.yaml")
    parser.add_argument("--out", default=str(REPO / "results/bench"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="attnrepro-bench-") as tmp:
        root = Path(tmp)
        for name in COPIED:
            src = REPO / name
            (shutil.copytree if src.is_dir() else shutil.copy)(src, root / name)
        wall = snakemake(root, args.cores, args.configfile)
        jobs = job_seconds(root)
        noop = snakemake(root, args.cores, args.configfile)
        trivial = snakemake(root, 1, args.configfile, "exercises", "--forcerun", "exercises_case")
        trivial_job = pd.read_csv(root / "results/benchmarks/001/exercises/default.tsv", sep="\t")["s"].iloc[0]
    total = jobs["s"].sum()
    row = {
        "cores": args.cores, "configfile": args.configfile, "jobs": len(jobs),
        "wall_seconds": wall, "sum_job_seconds": total, "ideal_seconds": total / args.cores,
        "parallel_efficiency": total / (args.cores * wall), "noop_rerun_seconds": noop,
        "trivial_job_seconds": trivial_job, "trivial_run_seconds": trivial,
        "longest_job": jobs.sort_values("s").iloc[-1]["job"], "longest_job_seconds": jobs["s"].max(),
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame([row]).to_parquet(out / "workflow.parquet", index=False)
    lines = ["# Workflow benchmark", "", "| what | value |", "|---|---|"]
    lines += [f"| {k} | {v:.2f} |" if isinstance(v, float) else f"| {k} | {v} |" for k, v in row.items()]
    lines += ["", "parallel_efficiency = sum of job wall times / (cores x wall time of the run); "
              "experiment jobs only (report jobs are short and local)."]
    (out / "workflow.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
