"""Files combined into one product were computed with the same parameters: checked without a config.

The rules give every reading job the parameters its config plans for its inputs
(``--expected-params``, :func:`attnrepro.run.io.check_inputs`), and ``python -m attnrepro.report`` by
hand checks its inputs against a config the same way. What no config says is whether an evidence
product made by an earlier command was computed from results with the parameters of the run that
cites it: a seed distribution of 100-step trainings judging a run's 60-step ones, a numerics sweep
of another size. So each evidence row records the parameters of the files it was computed from
(column ``params``, JSON: :func:`encode`), the evidence refuses files that disagree among
themselves (:func:`shared`), and the ledger compares the rows with its own inputs
(:func:`check`). A difference raises :class:`attnrepro.run.io.InconsistentInputs`, naming both files
and the first differing key.
"""

import json

from attnrepro.run import io

PARAMS = "params"  # the evidence tables' column


def encode(params):
    """Parameters as the evidence tables record them: compact JSON, keys sorted."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)


def decode(text):
    """The parameters of an evidence row (its ``params`` cell); {} for an empty cell."""
    return json.loads(text) if isinstance(text, str) and text else {}


def shared(params, paths, ignore=()):
    """The parameters that every case of ``params`` ({case: params}) records, ``ignore`` keys left
    out; InconsistentInputs naming two of their files (``paths``: {case: path}) when two cases
    differ in another key."""
    cases = list(params)
    base = {k: v for k, v in params[cases[0]].items() if k not in ignore}
    for case in cases[1:]:
        other = {k: v for k, v in params[case].items() if k not in ignore}
        if (difference := io.differing_key(other, base)) is not None:
            key, found, expected = difference
            raise io.InconsistentInputs(paths[case], key, found, paths[cases[0]], expected)
    return base


def check(evidence_path, recorded, run, run_path):
    """Raise InconsistentInputs when an evidence row's ``recorded`` parameters differ from those
    of the run's file ``run_path`` (``run``) that it stands for."""
    if (difference := io.differing_key(recorded, run)) is not None:
        key, found, expected = difference
        raise io.InconsistentInputs(evidence_path, key, found, run_path, expected)
