"""What produced a result: code version, packages, BLAS kernel, machine, times."""

import datetime as _dt
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from attnrepro import __version__
from attnrepro.numerics import threads
from attnrepro import paths

PACKAGES = ("numpy", "pandas", "pyarrow", "torch", "matplotlib", "threadpoolctl")
REPO = paths.REPO


def now():
    """The current time, UTC, ISO 8601."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


def git_state(repo=REPO):
    """Commit of the checkout and whether its tracked files under src/, workflow/ and config/ differ
    from it. Where that cannot be known (not a git checkout, no git), both are None and ``unknown``
    says why: a copy without a repository is neither clean nor dirty."""
    def git(*args):
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=10)
        if done.returncode:
            raise subprocess.SubprocessError(done.stderr.strip().splitlines()[-1] if done.stderr.strip()
                                             else f"git {args[0]} failed")
        return done.stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no", "--", "src", "workflow", "config"))
    except (OSError, subprocess.SubprocessError) as error:
        return {"commit": None, "dirty": None, "unknown": f"no commit to record: {error}"}
    return {"commit": commit, "dirty": dirty}


def package_versions():
    """Versions of the numerical stack (None where a package is absent)."""
    out = {"python": platform.python_version(), "attnrepro": __version__}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def blas():
    """The BLAS/OpenMP libraries loaded in this process, with kernel and thread count."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    keep = ("internal_api", "version", "architecture", "num_threads", "threading_layer")
    return [{k: info.get(k) for k in keep} for info in threadpool_info()]


def torch_threads():
    """The threads torch's intra-op pool runs, where the job loaded torch (else None)."""
    torch = sys.modules.get("torch")
    return torch.get_num_threads() if torch is not None else None


def cpu_model():
    """The processor's model name, from /proc/cpuinfo where there is one."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def machine():
    """A description of the machine that transfers to a ledger or an archive."""
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "system": platform.platform(),
        "load_average": load,
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        # see attnrepro.numerics.canonical
        "numpy_disabled_features": os.environ.get("NPY_DISABLE_CPU_FEATURES"),
    }


def record(experiment, article, section, params, started, finished):
    """The provenance dictionary stored in every Parquet file's metadata."""
    seeds = {k: v for k, v in params.items() if "seed" in k}
    return {
        "experiment": experiment,
        "article": article,
        "section": section,
        "params": params,
        "seeds": seeds,
        "versions": package_versions(),
        "blas": blas(),
        "threads": threads.current(),  # the limit the job ran with (at most its CPUs)
        "threads_asked": threads.asked(),  # its rule's threads
        "cpus_available": threads.available(),
        "torch_threads": torch_threads(),
        "machine": machine(),
        "git": git_state(),
        "argv": sys.argv,
        "started": started,
        "finished": finished,
    }
