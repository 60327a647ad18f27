"""Whether a claim of this run is comparable with the article: computed with the article's parameters.

The ledger compares numbers computed here with numbers the articles printed. Under another config
(``config/small.yaml``: 200 trials where the article ran 4000; a user exploring a larger d_k),
that comparison says nothing about the article: such a claim is judged **other parameters**, a
verdict of its own, never "differs" or "missing", and the reason names each key that differs:

- its source files (the cases its selector reads) record other provenance parameters than the
  article's config (config/config.yaml) plans for the same case: ``scale_sweep.trials = 200; the
  article: 4000`` (:func:`differing`);
- the run's config left out the claim's row, so no file holds it: ``quadratic_cost.n = [64,
  128] has no 2048`` (:func:`left_out`); a claim is "missing" only when its job should have
  produced it and did not.

What the article plans (:class:`Article`) is computed where Snakemake plans the run
(workflow/rules/common.smk: the default config's parameters of the run's cases, and the run's
list values, ``attnrepro.dag.plan.selectors``) and reaches the ledger job on its command line.
"""

import json
from dataclasses import dataclass, field

from attnrepro.report.ledger.claims import cases_read

VERDICT = "other parameters"


@dataclass
class Article:
    """``params``: {experiment: {case: params}} the article's config plans for the run's cases (a
    case it does not plan is absent); ``grid``: {experiment: {column: [config key, values]}} the
    run's values of each list key (plan.selectors); ``sections``: the config sections whose values
    differ from the article's (said at the top of LEDGER.md); ``upstream``: {experiment: [[experiment,
    case], ...]} the cases of other experiments whose results it reads (plan.input_paths)."""

    params: dict = field(default_factory=dict)
    grid: dict = field(default_factory=dict)
    sections: dict = field(default_factory=dict)
    upstream: dict = field(default_factory=dict)

    @classmethod
    def from_json(cls, text):
        data = json.loads(text) if text else {}
        return cls(data.get("params", {}), data.get("grid", {}), data.get("sections", {}),
                   data.get("upstream", {}))


def _shown(value):
    return json.dumps(value, sort_keys=True)


def differing(claim, load, article):
    """The sentence naming each parameter in which the claim's source files differ from the
    article's (``experiment.key = here; the article: there``), or ""."""
    found = []
    for experiment, table, case in cases_read(claim.source, load):
        found += _differences(experiment, case, load.params(experiment, table)[case][0], article)
        for above, above_case in article.upstream.get(experiment, []):
            recorded = load.params(above).get(above_case)
            if recorded is not None:  # else not among the ledger's inputs: its reader checked it
                found += _differences(above, above_case, recorded[0], article)
    return "; ".join(dict.fromkeys(found))


def _differences(experiment, case, params, article):
    """``experiment.key = here; the article: there`` for each key in which ``params`` (what a
    case's file records) differ from what the article plans for the case."""
    planned = article.params.get(experiment, {}).get(case)
    if planned is None:
        return [f"{experiment} case {case} is not one of the article's"]
    return [f"{experiment}.{key} = {_shown(params.get(key))}; the article: {_shown(planned.get(key))}"
            for key in sorted(set(params) | set(planned)) if params.get(key) != planned.get(key)]


def left_out(claim, article):
    """The sentence naming the key whose values in this run's config leave out the claim's row
    (``quadratic_cost.n = [64, 128] has no 2048``), or ""."""
    selectors = article.grid.get(claim.source["experiment"], {})
    found = []
    for column, wanted in (claim.source.get("where") or {}).items():
        if column not in selectors:
            continue
        key, values = selectors[column]
        wanted = wanted if isinstance(wanted, list) else [wanted]
        absent = [w for w in wanted if w not in values]
        if absent:
            found.append(f"{key} = {_shown(values)} has no {', '.join(map(_shown, absent))}")
    return "; ".join(found)
