"""Print {rule: its declared input files} of the workflow in the current folder, as JSON.

    python tests/rule_inputs.py [--shell] [CONFIGFILE ...]

Every rule of the workflow, read as Snakemake reads it (no DAG is built, nothing runs): each
rule's inputs that are file names, sorted (an input function, such as the sweep's data behind
its checkpoint, is left out). The code inputs of every rule are among them
(workflow/rules/common.smk), so two copies of the workflow whose code differs only in how a
module is imported print the same JSON when their rules' inputs are the same
(tests/test_code_inputs.py). ``--shell``: {rule: {"inputs": ..., "shell": its shell command, "log":
its log files, "job": its params.job (job_env) given no input, or None}}.
"""

import json
import sys
from pathlib import Path


def rule_inputs(configfiles=(), shell=False):
    """{rule: sorted input files} of the workflow in the current folder (with ``shell``, each
    beside the rule's shell command)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
        workflow = api.workflow(
            resource_settings=ResourceSettings(cores=2),
            config_settings=ConfigSettings(configfiles=[Path(f).absolute() for f in configfiles]),
            snakefile=Path("Snakefile").absolute(),
            workdir=Path.cwd(),
        )._workflow
        inputs = {rule.name: sorted({f for f in rule.input if isinstance(f, str)}) for rule in workflow.rules}
        if shell:
            return {rule.name: {"inputs": inputs[rule.name], "shell": rule.shellcmd or "",
                                "log": [str(f) for f in rule.log], "job": _job(rule)}
                    for rule in workflow.rules}
        return inputs


def _job(rule):
    """What the rule's ``params.job`` (workflow/rules/common.smk, job_env) gives a job of no input
    files; None for a rule without it."""
    if "job" not in rule.params.keys():
        return None
    return rule.params.job({}, [])


if __name__ == "__main__":
    words = sys.argv[1:]
    json.dump(rule_inputs([w for w in words if w != "--shell"], "--shell" in words), sys.stdout, indent=1,
              sort_keys=True)
    print()
