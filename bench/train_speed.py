"""Speed of article 001's trainings: seconds per training and per step, at one BLAS thread.

    python bench/train_speed.py                       # one training (copy, L = 6, seed 0)
    python bench/train_speed.py --repeats 3 --reference /tmp/article001/art.py
    python bench/train_speed.py --grid --processes 2  # the whole default grid as CLI jobs
    python bench/train_speed.py --numerics paired --repeats 5  # what the pin costs, paired

A benchmark, not a test: times depend on the machine and on what else runs on it
(the load average is recorded beside each time). Every training runs in a fresh
interpreter limited to one BLAS thread; only the training loop is timed.
``--reference`` names a Python file outside the repository that defines the
article's ``addestra(compito, L, passi=..., seme=...)``; its trainings alternate with ours.
``--grid`` runs every case of the config's ``train`` section through the command
line, ``--processes`` at a time, and reports each job's wall time and the total.
``--numerics`` chooses the trainings' numerics: ``canonical`` (the default: the pin every
job applies, attnrepro.numerics.canonical), ``native`` (the host's own), or ``paired``: each repeat
runs both, in alternating order, to measure what the pin costs on this machine.
Writes ``train_speed.parquet`` and ``train_speed.md`` under ``--out``.
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from attnrepro.numerics import canonical, threads  # noqa: E402

threads.limit(1)  # before numpy
NUMERICS = ("canonical", "native", "paired")


def _load():
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


# Each training runs in a fresh interpreter, as a job does: no state (heap, caches) carries over.
_OURS = """
import sys, time
from attnrepro.model.train import TrainConfig, train
t0 = time.perf_counter()
train(TrainConfig({task!r}, {L}, seed={seed}, steps={steps}))
print(time.perf_counter() - t0)
"""
_REFERENCE = """
import importlib.util, time
spec = importlib.util.spec_from_file_location("reference", {path!r})
ref = importlib.util.module_from_spec(spec); spec.loader.exec_module(ref)
t0 = time.perf_counter()
ref.addestra({task!r}, {L}, passi={steps}, seme={seed})
print(time.perf_counter() - t0)
"""


def _environment(numerics):
    """The environment of a timed interpreter: the pinned variables, or the host's own."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    if numerics == "canonical":
        canonical.apply(canonical.SETTING, env)
    return env


def _timed(code, numerics):
    env = _environment(numerics)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env,
                         check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def time_ours(task, L, seed, steps, numerics):
    return _timed(_OURS.format(task=task, L=L, seed=seed, steps=steps), numerics)


def time_reference(path, task, L, seed, steps, numerics):
    code = _REFERENCE.format(path=str(Path(path).resolve()), task=task, L=L, seed=seed, steps=steps)
    return _timed(code, numerics)


def single(args):
    rows = []
    variants = ["canonical", "native"] if args.numerics == "paired" else [args.numerics]
    for repeat in range(args.repeats):
        runs = [(f"attnrepro, {n}", n, time_ours) for n in variants]
        if args.reference:
            runs += [(f"article code, {n}", n, lambda *a: time_reference(args.reference, *a))
                     for n in variants]
        for who, numerics, fn in (runs if repeat % 2 == 0 else runs[::-1]):
            load = _load()
            seconds = fn(args.task, args.L, args.seed, args.steps, numerics)
            rows.append({"what": who, "numerics": numerics, "task": args.task, "L": args.L,
                         "seed": args.seed, "steps": args.steps, "repeat": repeat, "seconds": seconds,
                         "seconds_per_step": seconds / args.steps, "threads": 1,
                         "load_before": load, "load_after": _load()})
            print(f"{who:<24} {seconds:7.2f} s  ({1e3 * seconds / args.steps:.2f} ms/step, load {load:.2f})",
                  flush=True)
    return rows


def grid(args):
    from attnrepro.dag import config as cfg
    from attnrepro.dag import plan

    config = cfg.validate(cfg.load(REPO / "config" / "config.yaml"))
    cases = plan.cases("train", config)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    pin = canonical.NATIVE if args.numerics == "native" else canonical.SETTING

    def job(name, params, out):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "attnrepro", "run", "train", "--threads", "1", "--pin", pin,
                        "--params-json", json.dumps(params), "--out", str(out / f"{name}.parquet")],
                       cwd=REPO, env=env, check=True, capture_output=True)
        return name, params, time.perf_counter() - t0

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        load = _load()
        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(args.processes) as pool:
            futures = [pool.submit(job, name, params, Path(tmp)) for name, params in cases.items()]
            for f in concurrent.futures.as_completed(futures):
                name, params, seconds = f.result()
                print(f"{name:<28} {seconds:7.2f} s", flush=True)
                rows.append({"what": "grid job", "numerics": args.numerics, "case": name,
                             "task": params["task"], "L": params["L"], "seed": params["seed"],
                             "steps": params["steps"], "seconds": seconds,
                             "seconds_per_step": seconds / params["steps"], "threads": 1})
        wall = time.perf_counter() - t0
    rows.append({"what": f"grid wall time ({len(cases)} jobs, {args.processes} at a time)",
                 "numerics": args.numerics, "seconds": wall,
                 "threads": 1, "load_before": load, "load_after": _load()})
    print(f"grid: {len(cases)} jobs, {args.processes} at a time: {wall:.1f} s", flush=True)
    return rows


def write(rows, out):
    import pandas as pd

    from attnrepro.run import io, provenance

    df = pd.DataFrame(rows)
    out.mkdir(parents=True, exist_ok=True)
    machine = provenance.machine()
    io.write_parquet(df, out / "train_speed.parquet",
                     {"bench": "train_speed", "argv": sys.argv, "machine": machine, "blas": provenance.blas(),
                      "versions": provenance.package_versions(), "finished": provenance.now()})
    summary = df.groupby("what")["seconds"].agg(["count", "min", "median"]).reset_index()
    lines = ["# Training speed, article 001 (one BLAS thread per training)", "",
             f"Machine: {machine['cpu']}, {machine['cores']} cores; "
             f"numerics: {', '.join(df['numerics'].unique())}; "
             f"{provenance.now()}.", "",
             "| what | runs | min (s) | median (s) |", "|---|---|---|---|"]
    lines += [f"| {r.what} | {r['count']} | {r['min']:.2f} | {r['median']:.2f} |"
              for _, r in summary.iterrows()]
    per_step = df.dropna(subset=["seconds_per_step"]).groupby("what")["seconds_per_step"].min()
    lines += ["", "Fastest step time: " + ", ".join(f"{w} {1e3 * s:.2f} ms" for w, s in per_step.items()), ""]
    (out / "train_speed.md").write_text("\n".join(lines))
    print("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", default="copy")
    parser.add_argument("--L", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--reference",
                        help="a file defining the article's addestra (kept outside the repository)")
    parser.add_argument("--grid", action="store_true", help="time the whole default train grid as CLI jobs")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--numerics", choices=NUMERICS, default="canonical")
    parser.add_argument("--out", default=str(REPO / "results" / "bench"))
    args = parser.parse_args()
    if args.grid and args.numerics == "paired":
        parser.error("--numerics paired times single trainings, not --grid")
    rows = grid(args) if args.grid else single(args)
    write(rows, Path(args.out))


if __name__ == "__main__":
    main()
