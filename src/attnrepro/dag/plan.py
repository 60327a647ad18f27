"""The run plan: every experiment, its article, its jobs and its output files.

Pure Python, no numerical import: the Snakefile reads it to build the DAG, the
command line reads it to run one case, the report reads it to find results. What each
experiment is (its article, section, tables, grid keys, timing) is declared beside its
``run()``, in its module's ``EXPERIMENT`` (:mod:`attnrepro.experiments.declared` reads them).

An experiment reads the config section named like it. ``grid`` names the keys
of that section whose values are lists: the plan makes one job per combination
(a *case*), and the job receives the section with those keys set to one value.
"""

import itertools
import re
from dataclasses import dataclass, field

from attnrepro import paths
from attnrepro.experiments import declared

# Columns that measure the machine rather than compute a result: wall times anywhere, and in
# timing experiments also what is derived from times, memory peaks, the machine's load and how
# quiet each measurement was (experiments._timing.measure: cpu_share, attempts, disturbed).
# Two runs of the same job agree on every other column, to the bit.
_MEASURED = re.compile(r"seconds|time", re.IGNORECASE)
_MEASURED_IN_TIMING = re.compile(
    r"seconds|_ms$|time|slope|speedup|ci_|regime|quadratic|load_|interval|growth|peak|cpu_share|attempts"
    r"|disturbed"
)


@dataclass(frozen=True)
class Experiment:
    id: str
    article: str  # the id of its article (config articles)
    section: str  # the section of the article that holds the listing
    tables: tuple = ("main",)  # named tables each job writes; "main" first
    grid: tuple = ()  # config keys that fan out into one job per value
    threads: int = 1
    timing: bool = False  # measures time: runs alone on the machine
    torch: bool = False  # imports torch: a slower start (attnrepro.resources.runtime)
    article_code: int = 0  # the article's listing timed beside it (experiments._article_code)
    derived: dict = field(default_factory=dict, compare=False)  # "table.column": why it is an echo
    softmax: dict = field(default_factory=dict, compare=False)  # "table.column": {rows, mask}
    case_builder: object = field(default=None, compare=False)  # section -> {case: params}
    # config -> {name: path}: result files of other experiments this one reads; they
    # reach run(params, inputs) as paths and become the rule's inputs
    inputs: object = field(default=None, compare=False)

    @property
    def module(self):
        return f"attnrepro.experiments.{self.id}"


def _case_name(values):
    return "_".join(f"{k}-{str(v).lower()}" for k, v in values.items()) or "default"


def grid_cases(section, grid):
    """{case name: params} over the cartesian product of the ``grid`` keys of ``section``."""
    if not grid:
        return {"default": dict(section)}
    cases = {}
    for combo in itertools.product(*(section[k] for k in grid)):
        values = dict(zip(grid, combo))
        cases[_case_name(values)] = {**section, **values}
    return cases


# train: the keys of the section that are not shared by every run
TRAIN_FAN_OUT = ("tasks", "lengths", "seeds", "ablation_base", "ablations")


def train_cases(section):
    """001 trainings: tasks x lengths x seeds ("copy-L6-seed0"), then each named ablation
    ("ablation-no_position"): its base run (``ablation_base``) with its overrides."""
    shared = {k: v for k, v in section.items() if k not in TRAIN_FAN_OUT}
    cases = {}
    for task, L, seed in itertools.product(section.get("tasks", []), section.get("lengths", []),
                                           section.get("seeds", [])):
        cases[f"{task}-L{L}-seed{seed}"] = {**shared, "task": task, "L": L, "seed": seed, "ablation": "full"}
    for name, overrides in (section.get("ablations") or {}).items():
        base = section.get("ablation_base", {})
        cases[f"ablation-{name}"] = {**shared, **base, **overrides, "ablation": name}
    return cases


def _attention_map_inputs(config):
    """The trained model the attention map reads: the train job named by attention_map.run."""
    run = (config.get("attention_map") or {}).get("run")
    if run is None:
        return {}
    return {table: output_path("train", run, table) for table in ("main", "parameters")}


# the two experiments that the declarations alone do not plan: train's cases are not a grid (the
# seed distribution reuses them), attention_map reads a result of train
CASE_BUILDERS = {"train": train_cases}
INPUTS = {"attention_map": _attention_map_inputs}

# every experiment, as its module declares it (attnrepro.experiments.declared): by article, then in
# the article's order
def experiments(declarations):
    """{id: Experiment} of the experiment modules' ``declarations`` (declared.EXPERIMENTS)."""
    return {
        id: Experiment(id, d["article"], d["section"], tables=d["tables"], grid=d["grid"],
                       threads=d["threads"], timing=d["timing"], torch=d["torch"],
                       article_code=d["article_code"],
                       derived=d["derived"], softmax=d["softmax"],
                       case_builder=CASE_BUILDERS.get(id), inputs=INPUTS.get(id))
        for id, d in declarations.items()
    }


EXPERIMENTS = experiments(declared.EXPERIMENTS)


def article_code(experiment_id, config):
    """Whether the experiment's jobs time the article's own listing beside theirs (config
    ``<experiment>.article_code``, for an experiment that names one)."""
    exp = EXPERIMENTS[experiment_id]
    return bool(exp.article_code and (config.get(experiment_id) or {}).get("article_code"))


def measured_columns(experiment_id, columns):
    """The columns of one of the experiment's tables that hold measurements of the machine."""
    pattern = _MEASURED_IN_TIMING if EXPERIMENTS[experiment_id].timing else _MEASURED
    return [c for c in columns if pattern.search(c)]


def cases(experiment_id, config):
    """{case name: params} for one experiment under ``config``."""
    exp = EXPERIMENTS[experiment_id]
    section = config.get(experiment_id, {})
    if exp.case_builder is not None:
        return exp.case_builder(section)
    return grid_cases(section, exp.grid)


def seed_distribution_cases(config):
    """{case name: params} of the ``seeds`` target: full-model trainings of
    seed_distribution.tasks over train.lengths and seed_distribution.seeds. A case that the
    run's own grid holds (the same name, the same parameters) is the same job and file."""
    spread = config.get("seed_distribution") or {}
    section = {**(config.get("train") or {}), "tasks": spread.get("tasks", []),
               "seeds": spread.get("seeds", []), "ablations": {}}
    return train_cases(section)


def seed_extra_cases(config):
    """{case name: params} of the seed distribution's trainings that the run's own grid does not
    hold (the run's own are the same jobs and files)."""
    own = cases("train", config)
    return {name: params for name, params in seed_distribution_cases(config).items()
            if own.get(name) != params}


def seed_output_path(case, table="main"):
    """Where a training of the seed distribution beyond the run's own writes a table:
    ``results/seeds/data/001/train/<case>[.<table>].parquet``, never beside the run's trainings
    (a glob of results/data/001/train/ holds exactly the run's)."""
    return paths.seed_data_path(EXPERIMENTS["train"].article, "train", case, table)


def seed_training_paths(config, tables=("main",)):
    """Every table ``tables`` of every training of the seed distribution: the run's own where
    they are, the others under results/seeds/ (seed_output_path)."""
    extra = seed_extra_cases(config)
    return [seed_output_path(case, t) if case in extra else output_path("train", case, t)
            for case in seed_distribution_cases(config) for t in tables]


def runnable_cases(experiment_id, config):
    """{case name: params} that the experiment's rule can build: the run's cases and, for
    ``train``, the seed distribution's (built only when a target asks for them)."""
    out = dict(cases(experiment_id, config))
    if experiment_id == "train":
        out = {**seed_distribution_cases(config), **out}
    return out


def input_paths(experiment_id, config):
    """{name: path} of the upstream result files an experiment reads (often empty)."""
    exp = EXPERIMENTS[experiment_id]
    return dict(exp.inputs(config)) if exp.inputs is not None else {}


def output_path(experiment_id, case, table="main"):
    """Where one job writes one of its tables."""
    exp = EXPERIMENTS[experiment_id]
    return paths.data_path(exp.article, exp.id, case, table)


def output_of(path):
    """(experiment, table, case) of a results path of an experiment of the plan, read from the path
    alone (``paths.parse_output``); ValueError for a path of no experiment of the plan."""
    experiment, table, case = paths.parse_output(path)
    if experiment not in EXPERIMENTS:
        raise ValueError(f"not a results file of a known experiment: {path}")
    return experiment, table, case


def output_case(path):
    """(experiment, case) of a results path: the job that writes it (:func:`output_of`)."""
    experiment, _, case = output_of(path)
    return experiment, case


def expected_params(paths, config):
    """{experiment: {case: params}}: what ``config`` plans for the jobs that write ``paths`` (the
    parameters each of them records in its provenance; readers compare, see attnrepro.run.io)."""
    out, planned = {}, {}
    for path in paths:
        experiment, case = output_case(path)
        if experiment not in planned:
            planned[experiment] = runnable_cases(experiment, config)
        if case in planned[experiment]:
            out.setdefault(experiment, {})[case] = planned[experiment][case]
    return out


def enabled(config):
    """The experiments that the config switches on (all by default)."""
    off = set(config.get("skip", []))
    return [e for e in EXPERIMENTS if e not in off]


def experiment_outputs(experiment_id, config):
    """Every Parquet file of one experiment (all its cases, all its tables)."""
    return [
        output_path(experiment_id, case, table)
        for case in cases(experiment_id, config)
        for table in EXPERIMENTS[experiment_id].tables
    ]


def all_outputs(config):
    """Every Parquet file of a full run under ``config``."""
    return [path for e in enabled(config) for path in experiment_outputs(e, config)]


# train: the column of a training's tables that each fan-out key of its section fills
TRAIN_SELECTORS = {"task": "tasks", "L": "lengths", "seed": "seeds"}


def selectors(config):
    """{experiment: {column: [config key, values]}}: for each experiment of ``config``, the list
    keys of its section (a grid key, or one job's list such as ``quadratic_cost.n``) and the
    values this config gives them, under the column of the results their values fill (train's
    ``lengths`` fill ``L``). The ledger names the key when the config leaves out a claim's row."""
    out = {}
    for experiment_id in EXPERIMENTS:
        section = config.get(experiment_id) or {}
        found = {key: [f"{experiment_id}.{key}", value] for key, value in section.items()
                 if isinstance(value, list)}
        if experiment_id == "train":
            found = {column: [f"train.{key}", section[key]] for column, key in TRAIN_SELECTORS.items()
                     if isinstance(section.get(key), list)}
        if found:
            out[experiment_id] = found
    return out
