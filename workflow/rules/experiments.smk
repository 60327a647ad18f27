# Two rules per experiment of src/attnrepro/dag/plan.py: `<id>` is the target that builds
# all of its cases (`snakemake scale_table`), `<id>_case` runs one case. Each job runs
# `python -m attnrepro.jobs.experiment <experiment>` (everything it needs on its command line: it reads no
# plan and no config) and writes one Parquet file per table under
# results/data/<article>/<experiment>/<case>[.<table>].parquet (attnrepro.paths.data_path).
# Timing experiments claim every core of the run, so that nothing shares the CPU while they
# measure, and time on one BLAS thread (`--threads 1`: the CPU-time check of experiments._timing
# sees every thread of one). With `article_code` their job runs the entry
# attnrepro.jobs.timed_experiment, given the article's text (an input) and its listing's number:
# the article's own code is timed after each pass, in the same process.


def timed_code(exp):
    """(entry, {input name: file}, extra command line) of one experiment's jobs: the timing
    entry with the article's text when the config times its article's code beside it."""
    if not plan.article_code(exp.id, config):
        return "experiment", {}, ""
    article = ARTICLES.get(exp.article)
    if article is None:
        raise WorkflowError(
            f"{exp.id}.article_code: config articles has no entry {exp.article!r} whose text to time"
        )
    import shlex

    extra = (
        f" --article-text {shlex.quote(str(article.text))} --article-sha256 "
        f"{article.sha256} --listing {exp.article_code}"
    )
    return "timed_experiment", {"article_text": article.text}, extra


def blas_threads(exp):
    """A params function: the job's BLAS threads, one for a timing job (which holds every core)."""

    def blas(wildcards, threads):
        return 1 if exp.timing else threads

    return blas


def upstream_inputs(experiment_id):
    """A params function: `--input NAME=FILE` for each upstream results file, and
    `--expected-params` (what the config plans for them: a stale file stops the job)."""
    import shlex

    upstream = plan.input_paths(experiment_id, config)
    expected = (
        f" --expected-params {shlex.quote(expected_params(upstream.values()))}"
        if upstream
        else ""
    )

    def inputs(wildcards, input):
        return " ".join(f"--input {n}={input[n]}" for n in upstream) + expected

    return inputs


def case_pattern(experiment_id):
    """A wildcard constraint matching exactly the run's cases of the experiment (the seed
    distribution's other trainings have a rule of their own, evidence.smk)."""
    names = plan.cases(experiment_id, config)
    return "|".join(sorted(names)) or "__none__"


for exp in plan.EXPERIMENTS.values():
    ENTRY, TEXT, TIMED = timed_code(exp)

    rule:
        name:
            exp.id
        input:
            plan.experiment_outputs(exp.id, config),
        localrule: True

    rule:
        name:
            f"{exp.id}_case"
        input:
            job_code(ENTRY, exp.module),
            **plan.input_paths(exp.id, config),
            **TEXT,
        output:
            **{t: plan.output_path(exp.id, "{case}", t) for t in exp.tables},
        log:
            paths.log_path(exp.article, exp.id, "{case}"),
        benchmark:
            paths.benchmark_path(exp.article, exp.id, "{case}")
        wildcard_constraints:
            case=case_pattern(exp.id),
        conda:
            CONDA_ENV
        threads: timing_threads() if exp.timing else exp.threads
        resources:
            **whole_node(exp),
            mem_mb=job_memory(exp.id),
            runtime=job_runtime(exp.id),
        params:
            job=job_env(),
            software=pinned(ENTRY, exp.module),
            json=case_params(exp.id),
            experiment=exp.id,
            article=exp.article,
            section=exp.section,
            tables=extra_tables,
            inputs=upstream_inputs(exp.id),
            pin=NUMERICS["pin"],
            entry=ENTRY,
            timed=TIMED,
            blas=blas_threads(exp),
        shell:
            "{params.job} python -m attnrepro.jobs.{params.entry} {params.experiment} --article {params.article}"
            " --section {params.section:q} --threads {params.blas} --pin {params.pin}"
            " --params-json {params.json:q} --out {output.main} {params.tables}"
            " {params.inputs}{params.timed} 2> {log}"


# The seed distribution's trainings beyond the run's own: the train experiment's job, writing under
# results/seeds/data/ (plan.seed_output_path), never beside the run's trainings.
TRAIN = plan.EXPERIMENTS["train"]
SEED_EXTRA = plan.seed_extra_cases(config)


rule:
    name:
        "seed_training_case"
    input:
        job_code("experiment", TRAIN.module),
    output:
        **{t: plan.seed_output_path("{case}", t) for t in TRAIN.tables},
    log:
        paths.log_path("seeds", TRAIN.article, TRAIN.id, "{case}"),
    benchmark:
        paths.benchmark_path("seeds", TRAIN.article, TRAIN.id, "{case}")
    wildcard_constraints:
        case=alternatives(SEED_EXTRA),
    conda:
        CONDA_ENV
    threads: TRAIN.threads
    resources:
        mem_mb=job_memory("train"),
        runtime=job_runtime("train"),
    params:
        job=job_env(),
        software=pinned("experiment", TRAIN.module),
        json=case_params("train", SEED_EXTRA),
        article=TRAIN.article,
        section=TRAIN.section,
        tables=extra_tables,
        pin=NUMERICS["pin"],
    shell:
        "{params.job} python -m attnrepro.jobs.experiment train --article {params.article}"
        " --section {params.section:q} --threads {threads} --pin {params.pin}"
        " --params-json {params.json:q} --out {output.main} {params.tables} 2> {log}"
