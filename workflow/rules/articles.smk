# The articles, re-rendered with this run's numbers: one rule per article with a claims file
# (config `articles`, src/attnrepro/articles/catalog.py) writes its annotated edition,
# results/articles/<article>.html, from the article's text, the locations in its claims file
# and results/ledger.csv; `ledger_overview` draws every numeric claim, published against
# reproduced, in results/figures/ledger_overview.svg. Target: `articles`.
#
# The articles live outside the checkout (each entry's `text`): a copy of the workflow elsewhere
# (a test's temporary folder, `attnrepro verify`'s rerun) may have none, and an article whose
# text is not the one its entry's sha256 records would have its claims marked on other words;
# so the default target leaves those editions out, with a warning naming the file (and the
# hashes), and builds the figures (article_outputs). Asked for by name, such an edition's job
# refuses, saying the same. The index (report.smk) names the editions not built (UNBUILT).
from snakemake.logging import logger  # noqa: E402

ARTICLES_CATEGORY = "Articles, annotated"


# the articles with an edition: those with claims to mark
EDITIONS = {name: article for name, article in ARTICLES.items() if article.claims}
# {article: why its edition is not built}: its text is missing, or is not the text whose SHA-256
# its entry records (the locations of the claims would mark other words)
UNBUILT = articles_catalog.problems(EDITIONS)
for why in UNBUILT.values():
    logger.warning(f"annotated edition not built: {why}")


def article_outputs():
    """The editions of the articles found with their recorded text, and the ledger's overview and
    speed figures, for `all`."""
    editions = [paths.edition_path(a) for a in EDITIONS if a not in UNBUILT]
    return editions + [paths.OVERVIEW, paths.SPEED]


for article in EDITIONS.values():

    rule:
        name:
            f"edition_{article.id}"
        input:
            text=article.text,
            ledger=paths.LEDGER_CSV,
            speed=paths.SPEED_CSV,
            published=article.claims,
            config=paths.CONFIG_RESOLVED,
            code=job_code("edition"),
        output:
            report(
                paths.edition_path(article.id),
                caption="../report/edition.rst",
                category=ARTICLES_CATEGORY,
                labels={"name": f"edition_{article.id}", "format": "html"},
            ),
        log:
            paths.report_log(f"edition_{article.id}"),
        localrule: True
        conda:
            CONDA_ENV
        threads: 1
        params:
            job=job_env(f"edition_{article.id}"),
            software=pinned("edition"),
            article=article.id,
            pin=NUMERICS["pin"],
        shell:
            "{params.job} python -m attnrepro.jobs.edition --pin {params.pin} {params.article}"
            " --text {input.text:q} --ledger {input.ledger} --published {input.published:q}"
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
        [paths.edition_path(a) for a in EDITIONS],
        paths.OVERVIEW,
        paths.SPEED,
    localrule: True
