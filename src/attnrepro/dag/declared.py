"""What a rule hands its job: its name and, as declared, every file of its ``input:``
(workflow/rules/common.smk, ``job_env``), checked by the job harness against what the job read
(:mod:`attnrepro.run.reads`).

The files travel in one variable of the job's environment (:data:`attnrepro.run.reads.DECLARED_ENV`),
compacted (:func:`attnrepro.run.reads.compact`). One string of a process's environment holds at most
128 KiB on Linux (MAX_ARG_STRLEN), so a job whose inputs take more, even compacted, is refused while
Snakemake builds the DAG, in one line naming the config keys that multiply them: never handed down cut
short, which would fail the job on a read it did declare, or start it with "Argument list too long".
"""

import shlex
from collections import Counter

from attnrepro import paths
from attnrepro.dag import plan
from attnrepro.run import reads

SEED_KEYS = "seed_distribution.seeds, seed_distribution.tasks"  # what multiplies results/seeds/


def handed_down(rule, files, config):
    """``ATTNREPRO_RULE=<rule> ATTNREPRO_DECLARED=<the files, compacted>`` (quoted for the shell), the
    start of the shell of a job of ``rule`` that declares ``files``; ValueError (one line) when they
    exceed :data:`attnrepro.run.reads.DECLARED_MAX` or a name cannot be declared."""
    files = [str(f) for f in files]
    declared = reads.compact(files)
    if len(declared) > reads.DECLARED_MAX:
        raise ValueError(f"rule {rule}: {len(set(files))} input files take {len(declared)} bytes in "
                         f"{reads.DECLARED_ENV}, "
                         f"over the {reads.DECLARED_MAX} one variable of a job's environment may hold: "
                         f"fewer values of {fan_out(files, config)}")
    return f"{reads.RULE_ENV}={shlex.quote(rule)} {reads.DECLARED_ENV}={shlex.quote(declared)}"


def fan_out(files, config):
    """The config keys behind most of the results ``files``: the list keys of the experiment with
    the most files among them (:func:`attnrepro.dag.plan.selectors`), or the seed distribution's."""
    selectors = plan.selectors(config)
    counts = Counter(filter(None, (_keys_of(name, selectors) for name in files)))
    most = counts.most_common(1)  # pragma: no mutate (equivalent: most_common(n)[0] is the most for any n)
    return most[0][0] if most else "the config lists that make its inputs"


def _keys_of(name, selectors):
    """The config keys whose values make the results file ``name`` one of many (``selectors``: the
    plan's); None for another file."""
    if paths.under(name, paths.SEEDS):
        return SEED_KEYS
    if not paths.under(name, paths.RESULTS):
        return None
    try:
        experiment = plan.output_of(name)[0]
    except ValueError:
        return None
    keys = [key for key, _ in selectors.get(experiment, {}).values()]
    return ", ".join(sorted(keys)) or f"the cases of {experiment}"
