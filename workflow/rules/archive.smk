# The archive of a run (`snakemake --cores 2 archive`): every output, the workflow that made them and
# an RO-Crate describing the run (src/attnrepro/archive/crate.py), whose jobs come from each output's
# provenance and Snakemake's records. Included last (Snakefile): its input function lists the outputs
# of every other rule file.


def git_sha():
    """The checkout's commit (short), with -dirty when tracked files differ from it."""
    import subprocess

    def git(*args):
        return subprocess.run(
            ["git", "-C", workflow.basedir, *args], capture_output=True, text=True
        ).stdout.strip()

    sha = git("rev-parse", "--short=12", "HEAD") or "unversioned"
    return sha + (
        "-dirty" if git("status", "--porcelain", "--untracked-files=no") else ""
    )


GIT_SHA = git_sha()


def workflow_files():
    """The workflow's own files that the archive holds: the Snakefile, the rule files, the
    config and published-claims schemas and the conda environment."""
    base = Path(workflow.basedir)
    rules = sorted(
        p.relative_to(base).as_posix() for p in (base / "workflow/rules").glob("*.smk")
    )
    return [
        "Snakefile",
        *rules,
        "workflow/schemas/config.schema.yaml",
        "workflow/schemas/published.schema.yaml",
        CONDA_ENV.removeprefix("../../"),
    ]


def rule_files(wildcards):
    """A params function: the JSON {rule: the file that defines it} of every rule, for the
    archive's RO-Crate."""
    base = Path(workflow.basedir)
    return json.dumps(
        {
            r.name: Path(r.snakefile).resolve().relative_to(base.resolve()).as_posix()
            for r in workflow.rules
        },
        sort_keys=True,
    )


def archive_files(wildcards):
    """Every output of the run (the annotated articles included) and, when switched on, the
    evidence with the data it reads. An input function, called once Snakemake has read every file
    of rules (it calls the helpers of the others).
    """
    files = all_outputs() + report_outputs() + evidence_all() + article_outputs()
    if "seeds" in LEDGER_EVIDENCE:
        # every table of those trainings: `attnrepro verify` compares every Parquet file
        files += plan.seed_training_paths(config, plan.EXPERIMENTS["train"].tables)
    if "numerics" in LEDGER_EVIDENCE:
        files += [paths.SETTINGS_FILE, *numerics_data(wildcards)]
    if "listings" in LEDGER_EVIDENCE:
        files += [paths.LISTINGS_TABLE, *listing_runs()]
    return sorted(set(files))


rule:
    name:
        "archive"
    input:
        files=archive_files,
        config=paths.CONFIG_RESOLVED,
        workflow=workflow_files(),
        code=job_code("archive"),
    output:
        paths.archive_path(GIT_SHA),
    log:
        paths.ARCHIVE_LOG,
    localrule: True
    conda:
        CONDA_ENV
    threads: 1
    params:
        job=job_env(),
        software=pinned("archive"),
        rules=rule_files,
    shell:
        "{params.job} python -m attnrepro.jobs.archive --config {input.config} --out {output}"
        " --rules {params.rules:q} --files {input.files} {input.workflow} {input.config} 2> {log}"
