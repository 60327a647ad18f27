# The three articles, re-rendered with this run's numbers: one rule per article writes
# its annotated edition, results/articles/<article>.html, from the article's text
# (../shared/seeds/<file>, src/attnrepro/evidence/articles.py), the locations in
# config/published.yaml and results/ledger.csv; `ledger_overview` draws every numeric claim,
# published against reproduced, in results/figures/ledger_overview.svg. Target: `articles`.
#
# The articles live beside the checkout, not in it (config `articles.folder`): a copy of the
# workflow elsewhere (a test's temporary folder, `attnrepro verify`'s rerun) has none, and an
# article whose text is not the one config/published.yaml hashes would have its claims marked on
# other words; so the default target leaves those editions out, with a warning naming the file
# (and the hashes), and builds the figures (article_outputs). Asked for by name, such an edition's
# job refuses, saying the same. The index (report.smk) names the editions not built (UNBUILT).
from snakemake.logging import logger  # noqa: E402

from attnrepro.evidence import articles  # noqa: E402

ARTICLES_CATEGORY = "Articles, annotated"


ARTICLES_FOLDER = articles.folder_of(config)
# {article: why its edition is not built}: its text is missing, or is not the text whose SHA-256
# config/published.yaml records (the locations of the claims would mark other words)
UNBUILT = articles.problems(ARTICLES_FOLDER)
for why in UNBUILT.values():
    logger.warning(f"annotated edition not built: {why}")


def article_outputs():
    """The editions of the articles found with their recorded text, and the ledger's overview and
    speed figures, for `all`."""
    editions = [paths.edition_path(a) for a in articles.ARTICLES if a not in UNBUILT]
    return editions + [paths.OVERVIEW, paths.SPEED]


for article in articles.ARTICLES:

    rule:
        name:
            f"edition_{article}"
        input:
            text=articles.article_path(article, ARTICLES_FOLDER),
            ledger=paths.LEDGER_CSV,
            speed=paths.SPEED_CSV,
            published="config/published.yaml",
            config=paths.CONFIG_RESOLVED,
            code=job_code("edition"),
        output:
            report(
                paths.edition_path(article),
                caption=f"../report/edition_{article}.rst",
                category=ARTICLES_CATEGORY,
                labels={"name": f"edition_{article}", "format": "html"},
            ),
        log:
            paths.report_log(f"edition_{article}"),
        localrule: True
        conda:
            CONDA_ENV
        threads: 1
        params:
            job=job_env(f"edition_{article}"),
            software=pinned("edition"),
            article=article,
            pin=NUMERICS["pin"],
        shell:
            "{params.job} python -m attnrepro.jobs.edition --pin {params.pin} {params.article}"
            " --text {input.text:q} --ledger {input.ledger} --published {input.published}"
            " --config {input.config} --speed {input.speed} --out {output} 2> {log}"


rule:
    name:
        "ledger_overview"
    input:
        ledger=paths.LEDGER_CSV,
        published="config/published.yaml",
        code=job_code("ledger_overview"),
    output:
        report(
            paths.OVERVIEW,
            caption="../report/ledger_overview.rst",
            category=ARTICLES_CATEGORY,
            labels={"name": "ledger_overview", "format": "svg"},
        ),
    log:
        paths.report_log("ledger_overview"),
    localrule: True
    conda:
        CONDA_ENV
    threads: 1
    params:
        job=job_env("ledger_overview"),
        software=pinned("ledger_overview"),
        pin=NUMERICS["pin"],
    shell:
        "{params.job} python -m attnrepro.jobs.ledger_overview --pin {params.pin} --ledger {input.ledger}"
        " --published {input.published} --svg {output} 2> {log}"


rule:
    name:
        "machine_speed"
    input:
        speed=paths.SPEED_CSV,
        code=job_code("machine_speed"),
    output:
        report(
            paths.SPEED,
            caption="../report/machine_speed.rst",
            category="Ledger",
            labels={"name": "machine_speed", "format": "svg"},
        ),
    log:
        paths.report_log("machine_speed"),
    localrule: True
    conda:
        CONDA_ENV
    threads: 1
    params:
        job=job_env("machine_speed"),
        software=pinned("machine_speed"),
        pin=NUMERICS["pin"],
    shell:
        "{params.job} python -m attnrepro.jobs.machine_speed --pin {params.pin} --speed {input.speed}"
        " --svg {output} 2> {log}"


rule:
    name:
        "articles"
    input:
        [paths.edition_path(a) for a in articles.ARTICLES],
        paths.OVERVIEW,
        paths.SPEED,
    localrule: True
