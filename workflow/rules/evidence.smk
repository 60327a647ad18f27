# The ledger's evidence for its round-off and stochastic claims (src/attnrepro/evidence/): one
# target per product, named by its record (attnrepro.evidence.NUMERICS, SEEDS).
#
# `numerics`, the numerics sweep: the cases of config `numerics.cases` rerun under every numerics
# setting (OpenBLAS kernel x NumPy CPU-feature mask) that this machine accepts, into
# results/numerics/<setting>/data/<article>/<experiment>/<case>[.<table>].parquet (each table
# records the setting, the kernel OpenBLAS really ran and NumPy's features), then
# results/numerics/ledger_numerics.{csv,md,svg}: which settings give which published digits. The
# checkpoint `numerics_settings` probes the settings where the jobs run: which kernels exist
# there, and which settings are distinct, is a property of that machine.
#
# `seeds`, the seed distribution: trains `seed_distribution.tasks` over train.lengths and
# `seed_distribution.seeds` (20; the run's own seeds are the same jobs) and writes
# results/seeds/seed_distribution.{csv,md,svg}: each published training figure among the seeds.
#
# `listings`, the articles' own code: each article's listings, read from its text, run verbatim in
# one interpreter per article (results/listings/runs/<article>.json), then
# results/listings/article_code.{csv,md,svg} and listings.csv: what they print against the
# published output, number by number, and claim by claim what the article's code gives here.
#
# Switches `numerics.sweep`, `seed_distribution.build` and `listings.build` (all on in
# config/evidence.yaml; the second also in config/config.yaml) add a product to `snakemake` (all)
# and its CSV to the ledger's inputs: the ledger cites the sweep and the listings (its column
# article_code), and judges its stochastic claims by the seeds.
# The ledger (report.smk) reads the CSVs of the products the config switches on.
import math

from attnrepro import evidence  # noqa: E402
from attnrepro.evidence import sweep  # noqa: E402
from attnrepro.dag import sweep_plan  # noqa: E402

EVIDENCE_ON = evidence.enabled(config)
LISTINGS = config.get("listings") or {}


def evidence_all():
    """The evidence products the config switches on, for the default target."""
    return [path for product in EVIDENCE_ON.values() for path in product.paths.values()]


def numerics_data(wildcards):
    """Every Parquet file of the sweep, over the settings the probe kept (a checkpoint)."""
    probe = checkpoints.numerics_settings.get().output[0]
    return sweep_plan.outputs(config, sweep.kept(probe))


def seed_trainings():
    """The main table of every training of the seed distribution: the run's own, and the others
    under results/seeds/ (plan.seed_training_paths)."""
    return plan.seed_training_paths(config)


def train_sections():
    """`--sections JSON` of the seed distribution's job: its figure's title names `train`."""
    import shlex

    train = plan.EXPERIMENTS["train"]
    sections = {"experiments": {"train": [train.article, train.section]}}
    return f"--sections {shlex.quote(json.dumps(sections, sort_keys=True))}"


def listings_code():
    """{"article_code": CSV} when the listings are on: the sweep marks the settings that give
    what the article's own code prints here."""
    if "listings" not in EVIDENCE_ON:
        return {}
    return {"article_code": evidence.LISTINGS.paths["csv"]}


def listings_code_module():
    """The module that reads the listings' CSV, when the sweep reads it."""
    return [evidence.LISTINGS.evaluate] if "listings" in EVIDENCE_ON else []


def listing_runs():
    """The run of every reproduced article's listings (one interpreter per article; an article
    checked from its text runs its own in its check, articles.smk)."""
    return [paths.listing_run(article) for article in REPRODUCED]


def environment_built(setting=None):
    """The `.installed` file of every side environment (of ``setting``'s only, when given)."""
    envs = sweep.environments(NUMERICS)
    if setting is not None:
        name = sweep.split(setting)[0]
        envs = {name: envs[name]} if name is not None else {}
    return [sweep.installed(env) for env in envs.values() if env.get("make")]


def pinned_in_main_environment(command, *dispatched):
    """A params function: pinned(command, ...) for a setting of the main environment, nothing for
    one of a side environment, whose jobs rerun through its installed stamp (input `environment`).
    """
    pins = pinned(command, *dispatched)
    return lambda wildcards: "" if sweep.split(wildcards.setting)[0] else pins


for env_name, env in sweep.environments(NUMERICS).items():
    if not env.get("make"):
        continue

    rule:
        name:
            f"numerics_environment_{env_name}"
        input:
            paths.ARTICLE_LOCK,
        output:
            sweep.installed(env),
        log:
            paths.log_path("numerics", f"environment-{env_name}"),
        localrule: True
        conda:
            CONDA_ENV
        params:
            target=env["make"],
        shell:
            "make {params.target} > {log} 2>&1"


checkpoint numerics_settings:
    input:
        code=job_code("sweep_probe"),
        environments=environment_built(),
    output:
        paths.SETTINGS_FILE,
    log:
        paths.log_path("numerics", "settings"),
    conda:
        CONDA_ENV
    threads: 1
    params:
        job=job_env(),
        software=pinned("sweep_probe"),
        kernels=" ".join(NUMERICS.get("kernels", [])),
        masks=" ".join(NUMERICS.get("numpy_masks", ["default"])),
        environments=json.dumps(sweep.environments(NUMERICS), sort_keys=True),
    shell:
        "{params.job} python -m attnrepro.jobs.sweep_probe --kernels {params.kernels}"
        " --masks {params.masks} --environments {params.environments:q} --out {output} 2> {log}"


for exp_id, exp_cases in sweep_plan.sweep_cases(config).items():
    exp = plan.EXPERIMENTS[exp_id]

    rule:
        name:
            f"numerics_{exp.id}_case"
        input:
            code=job_code("sweep_case", exp.module),
            environment=lambda wildcards: environment_built(wildcards.setting),
        output:
            **{
                t: sweep_plan.output_path("{setting}", exp.id, "{case}", t)
                for t in exp.tables
            },
        log:
            paths.log_path("numerics", "{setting}", exp.article, exp.id, "{case}"),
        wildcard_constraints:
            case=alternatives(exp_cases),
            setting=alternatives(sweep.candidates(NUMERICS)),
        conda:
            CONDA_ENV
        threads: timing_threads() if exp.timing else exp.threads
        resources:
            **whole_node(exp),
            mem_mb=job_memory(exp.id),
            runtime=job_runtime(exp.id),
        params:
            job=job_env(),
            software=pinned_in_main_environment("sweep_case", exp.module),
            json=case_params(exp.id),
            experiment=exp.id,
            article=exp.article,
            section=exp.section,
            tables=extra_tables,
            python=lambda wildcards: sweep.interpreter(
                wildcards.setting, NUMERICS, "python"
            ),
            setting=lambda wildcards: sweep.split(wildcards.setting)[1],
        shell:
            "{params.job} {params.python} -m attnrepro.jobs.sweep_case {params.experiment} --article {params.article}"
            " --section {params.section:q} --threads {threads}"
            " --numerics {params.setting} --params-json {params.json:q}"
            " --out {output.main} {params.tables} 2> {log}"


rule:
    name:
        evidence.NUMERICS.target
    input:
        **listings_code(),
        data=numerics_data,
        settings=paths.SETTINGS_FILE,
        published="config/published.yaml",
        code=job_code("numerics", *listings_code_module()),
    output:
        csv=evidence.NUMERICS.paths["csv"],
        md=report(
            evidence.NUMERICS.paths["md"],
            caption=f"../report/{evidence.NUMERICS.captions['md']}.rst",
            category="Evidence",
            subcategory=evidence.NUMERICS.title,
        ),
        svg=report(
            evidence.NUMERICS.paths["svg"],
            caption=f"../report/{evidence.NUMERICS.captions['svg']}.rst",
            category="Evidence",
            subcategory=evidence.NUMERICS.title,
        ),
    log:
        evidence.NUMERICS.log,
    localrule: True
    conda:
        CONDA_ENV
    threads: 1
    params:
        job=job_env(),
        software=pinned("numerics", *listings_code_module()),
        pin=NUMERICS["pin"],
        expected=lambda wildcards: expected_params(numerics_data(wildcards)),
        article_code=lambda wildcards, input: (
            f"--article-code {input.article_code}"
            if "article_code" in input.keys()
            else ""
        ),
    shell:
        "{params.job} python -m attnrepro.jobs.numerics --pin {params.pin} --expected-params {params.expected:q}"
        " --published {input.published}"
        " --settings {input.settings} {params.article_code} --csv {output.csv}"
        " --md {output.md} --svg {output.svg} --inputs {input.data} 2> {log}"


rule:
    name:
        evidence.SEEDS.target
    input:
        data=seed_trainings(),
        published="config/published.yaml",
        code=job_code("seeds"),
    output:
        csv=evidence.SEEDS.paths["csv"],
        md=report(
            evidence.SEEDS.paths["md"],
            caption=f"../report/{evidence.SEEDS.captions['md']}.rst",
            category="Evidence",
            subcategory=evidence.SEEDS.title,
        ),
        svg=report(
            evidence.SEEDS.paths["svg"],
            caption=f"../report/{evidence.SEEDS.captions['svg']}.rst",
            category="Evidence",
            subcategory=evidence.SEEDS.title,
        ),
    log:
        evidence.SEEDS.log,
    localrule: True
    conda:
        CONDA_ENV
    threads: 1
    params:
        job=job_env(),
        software=pinned("seeds"),
        pin=NUMERICS["pin"],
        expected=expected_params(seed_trainings()),
        sections=train_sections(),
    shell:
        "{params.job} python -m attnrepro.jobs.seeds --pin {params.pin} --expected-params {params.expected:q}"
        " {params.sections} --published {input.published}"
        " --csv {output.csv} --md {output.md} --svg {output.svg}"
        " --inputs {input.data} 2> {log}"


rule:
    name:
        "listings_article"
    input:
        text=lambda wildcards: REPRODUCED[wildcards.article].text,
        code=job_code("listings_run"),
    output:
        paths.listing_run("{article}"),
    log:
        paths.log_path("listings", "{article}"),
    wildcard_constraints:
        article=alternatives(REPRODUCED),
    conda:
        CONDA_ENV
    threads: timing_threads()
    resources:
        slurm_extra="--exclusive",
        # the listings stop themselves at listings.timeout_s: the job asks for that, and a minute
        # to start and write (the profile's flat runtime would end it first)
        runtime=math.ceil(LISTINGS.get("timeout_s", 3600) / 60) + 1,
    params:
        job=job_env(),
        software=pinned("listings_run"),
        pin=NUMERICS["pin"],
        timeout=LISTINGS.get("timeout_s", 3600),
    shell:
        "{params.job} python -m attnrepro.jobs.listings_run --article {wildcards.article}"
        " --text {input.text:q} --pin {params.pin} --timeout {params.timeout}"
        " --out {output} 2> {log}"


rule:
    name:
        evidence.LISTINGS.target
    input:
        runs=listing_runs(),
        texts=[article.text for article in REPRODUCED.values()],
        published="config/published.yaml",
        code=job_code("listings"),
    output:
        csv=evidence.LISTINGS.paths["csv"],
        listings=paths.LISTINGS_TABLE,
        md=report(
            evidence.LISTINGS.paths["md"],
            caption=f"../report/{evidence.LISTINGS.captions['md']}.rst",
            category="Evidence",
            subcategory=evidence.LISTINGS.title,
        ),
        svg=report(
            evidence.LISTINGS.paths["svg"],
            caption=f"../report/{evidence.LISTINGS.captions['svg']}.rst",
            category="Evidence",
            subcategory=evidence.LISTINGS.title,
        ),
    log:
        evidence.LISTINGS.log,
    localrule: True
    conda:
        CONDA_ENV
    threads: 1
    params:
        job=job_env(),
        software=pinned("listings"),
        pin=NUMERICS["pin"],
    shell:
        "{params.job} python -m attnrepro.jobs.listings --pin {params.pin} --published {input.published}"
        " --runs {input.runs} --csv {output.csv} --listings-csv {output.listings}"
        " --md {output.md} --svg {output.svg} 2> {log}"
