"""Pre-flight: refuse, before any job runs, a config whose job would not fit in memory.

Pure Python, no numerical import: :func:`attnrepro.dag.config.validate` calls :func:`errors`
while Snakemake builds the DAG, so a config whose job would not fit stops Snakemake
before any job runs (and before it deletes any output), and ``python -m attnrepro run``
refuses it too. It also says what each job asks of the scheduler (:func:`job_mem_mb`, its
``resources: mem_mb``) and the local run's budget (:func:`budget_mb`). Each job's peak comes
from :mod:`attnrepro.resources.memory` (one function per experiment); the message names the key that
drives the largest term: the one whose value, raised to its power in the term, is the largest
factor (T in B x T x T, unless B is the larger factor).
"""

import math
import os

from attnrepro.articles import bounded
from attnrepro.dag import plan
from attnrepro.resources.memory import GIB, MIB, estimate, terms, total

SHARE = 0.8  # of the machine's memory, when memory.limit_gib is null

# What a job asks of Snakemake (`resources: mem_mb`, workflow/rules/common.smk): its estimate,
# times MARGIN, plus OVERHEAD. An estimate counts what ``run(params)`` adds to a warm process and
# is never below the peak measured so (tests/test_estimates.py); MARGIN covers what that
# measurement does not see: the heap's layout, which moves with the address space's
# randomisation, and a first run's one-time buffers. OVERHEAD is what no estimate counts: the
# interpreter with NumPy, pandas, Arrow and torch loaded (290 MiB measured) and the writing of
# the tables to Parquet after ``run`` (10 to 90 MiB measured).
MARGIN = 1.25
OVERHEAD = 400 * MIB
MB = 10**6  # Snakemake's mem_mb counts megabytes (SLURM reads it as MiB: a little more)

# --- the limit ---------------------------------------------------------------------------

def _read_int(path):
    try:
        with open(path) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None  # "max": no limit


MEMINFO = "/proc/meminfo"
# the memory limit of this process's cgroup: cgroup v2, then v1 ("max" or a huge number: none)
CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def machine_bytes(meminfo=MEMINFO, cgroup_limits=CGROUP_LIMITS):
    """This machine's memory in bytes: MemTotal of ``meminfo`` (else os.sysconf), or the
    cgroup's limit (``cgroup_limits``) when it is smaller; None when neither can be read."""
    total = None
    try:
        with open(meminfo) as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    total = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    if total is None:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):
            return None
    for cgroup in cgroup_limits:
        limit = _read_int(cgroup)
        if limit:  # None: unreadable, or "max"; 0: none
            total = min(total, limit)
    return total


def limit(config):
    """(bytes, where it comes from) that one job may use; bytes None when unknown."""
    gib = (config.get("memory") or {}).get("limit_gib")
    if gib is not None:
        return gib * GIB, "memory.limit_gib"
    total = machine_bytes()
    if total is None:
        return None, "this machine's memory is unknown; memory.limit_gib sets a limit"
    return SHARE * total, (f"{SHARE:.0%} of this machine's {total / GIB:.1f} GiB; "
                           "memory.limit_gib sets another")


# --- what a job asks for, and the local run's budget --------------------------------------

def job_mem_mb(experiment_id, params):
    """``mem_mb`` of the job of one case (``params`` as :func:`estimated_cases` gives them): its
    estimated peak times :data:`MARGIN`, plus :data:`OVERHEAD`, in megabytes rounded up."""
    return math.ceil((MARGIN * estimate(experiment_id, params) + OVERHEAD) / MB)


def budget_mb(config):
    """The local run's ``mem_mb`` budget: :func:`limit` in megabytes (rounded down); None when
    this machine's memory is unknown."""
    limit_bytes, _ = limit(config)
    return None if limit_bytes is None else math.floor(limit_bytes / MB)


# --- the messages ------------------------------------------------------------------------

def _train_key(case, key, config):
    """The config key a train case's parameter (a term's driver) comes from: an ablation's own,
    its base run's, or a key of the section (the grid's L: one of train.lengths)."""
    section = config["train"]
    if case.startswith("ablation-"):
        name = case[len("ablation-"):]
        if key in section["ablations"][name]:
            return f"train.ablations.{name}.{key}"
        if key in section["ablation_base"]:
            return f"train.ablation_base.{key}"
    elif key == "L":  # the grid's other keys, tasks and seeds, drive no term
        return "train.lengths"
    return f"train.{key}"


def _shown(experiment_id, case, params, key, config):
    """(config key, value as shown) of the parameter ``key`` of one case (the schema has checked
    the config: the experiment's section holds the key)."""
    value = params[key]
    if experiment_id == "train":
        name = _train_key(case, key, config)
        if name == "train.lengths":
            name = f"train.lengths[{config['train']['lengths'].index(value)}]"
        return name, value
    name = f"{experiment_id}.{key}"
    section = config[experiment_id][key]
    if isinstance(value, list):
        if value and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            i = max(range(len(value)), key=value.__getitem__)
            return f"{name}[{i}]", value[i]
        return name, f"{len(value)} values"
    if isinstance(section, list) and value in section:  # a grid key: one value per case
        return f"{name}[{section.index(value)}]", value
    return name, value


def _weight(value, power):
    """The log of a key's factor in a term: ``power`` times the log of its value (of a list, never
    empty: its largest number, or its length when it holds other values); 0 for a name, no size."""
    if isinstance(value, list):
        value = max(value) if all(isinstance(v, (int, float)) for v in value) else len(value)
    return power * math.log(max(value, 1)) if isinstance(value, (int, float)) else 0.0


def _driver(params, drivers):
    """The key whose value, to its power, is the largest factor of a term (the first of equals)."""
    return max(drivers, key=lambda key: _weight(params[key], drivers[key]), default=None)


def estimated_cases(experiment_id, config):
    """{case name: params} as the estimates read them: every case the experiment's rule can
    build, and for ``attention_map`` the parameters of the train case it reads, under
    ``"trained"`` (its memory is that model's, read back)."""
    if experiment_id == "train":
        return plan.runnable_cases("train", config)
    cases = plan.cases(experiment_id, config)
    if experiment_id == "attention_map":
        trained = plan.runnable_cases("train", config)
        cases = {name: {**params, "trained": trained[params["run"]]} if params.get("run") in trained
                 else params for name, params in cases.items()}
    return cases


def errors(config, limit_bytes=None):
    """One message per experiment whose largest job would need more than ``limit_bytes``
    (default: :func:`limit` of ``config``), naming the key that drives the estimate."""
    source = "the limit given"
    if limit_bytes is None:
        limit_bytes, source = limit(config)
        if limit_bytes is None:
            return []
    out = []
    for experiment_id in plan.EXPERIMENTS:
        if experiment_id not in config:
            continue
        over = []
        for case, params in estimated_cases(experiment_id, config).items():
            found = terms(experiment_id, params)
            needed = total(found)
            if needed > limit_bytes:
                over.append((needed, case, params, found))
        if not over:
            continue
        needed, case, params, found = max(over, key=lambda item: item[0])
        # the largest term that a key drives (the allowance alone, below a few MiB: no key)
        _, what, drivers = max((t for t in found if t[2]), key=lambda t: t[0], default=found[-1])
        driver = _driver(params, drivers)
        blamed = (f"{experiment_id}: every case" if driver is None
                  else "{}: {}".format(*_shown(experiment_id, case, params, driver, config)))
        where = "" if case == "default" else f" (case {case})"
        if len(over) > 1:
            where = f" (case {case}; {len(over) - 1} more cases over the limit)"
        out.append(f"{blamed} needs about {needed:.2g} bytes = {needed / GIB:.3g} GiB ({what}) "
                   f"in one job{where}; the limit is {limit_bytes / GIB:.3g} GiB ({source})")
    return out + article_errors(config, limit_bytes, source)


def article_errors(config, limit_bytes, source):
    """One message per article checked from its text whose check may need more than
    ``limit_bytes``: its listings' interpreter, up to its memory limit, beside the check's own
    process (:func:`check_mem_mb`)."""
    out = []
    for place, entry in enumerate(config.get("articles") or []):
        mib = entry.get("memory_limit_mib") if isinstance(entry, dict) else None
        needed = check_bytes(mib)
        if mib is not None and needed > limit_bytes:
            out.append(f"articles[{place}].memory_limit_mib: {mib} MiB lets its check need "
                       f"{needed / GIB:.3g} GiB (its listings' interpreter and the check itself); the "
                       f"limit is {limit_bytes / GIB:.3g} GiB ({source})")
    return out


def check_bytes(memory_limit_mib):
    """The most an article's check may use: its listings' interpreter up to ``memory_limit_mib``
    (the default when None), and the check's own process (:data:`OVERHEAD`)."""
    mib = bounded.MEMORY_LIMIT_MIB if memory_limit_mib is None else memory_limit_mib
    return mib * MIB + OVERHEAD


def check_mem_mb(memory_limit_mib):
    """``mem_mb`` of an article's check (:func:`check_bytes`), in megabytes rounded up."""
    return math.ceil(check_bytes(memory_limit_mib) / MB)
