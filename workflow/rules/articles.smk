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


# the articles with an edition of their own rule: those reproduced by experiments, with claims to
# mark (an article checked from its text gets its edition from its check, below)
EDITIONS = {name: article for name, article in REPRODUCED.items() if article.claims}
# {article: why its edition is not built}: its text is missing, or is not the text whose SHA-256
# its entry records (the locations of the claims would mark other words)
UNBUILT = articles_catalog.problems(EDITIONS)
for why in UNBUILT.values():
    logger.warning(f"annotated edition not built: {why}")
for why in UNCHECKED.values():
    logger.warning(f"article not checked: {why}")


def article_outputs():
    """The editions of the articles found with their recorded text, and the ledger's overview and
    speed figures, for `all`."""
    editions = [paths.edition_path(a) for a in EDITIONS if a not in UNBUILT]
    return editions + checked_outputs() + [paths.OVERVIEW, paths.SPEED]


def checked_outputs():
    """The files of every article checked from its text (rules check_<article>) that can be."""
    return [
        path
        for a in CHECKABLE
        for path in (
            paths.drafted_claims(a),
            paths.unclaimed_numbers(a),
            paths.checked_numbers(a),
            paths.checked_ledger(a),
            paths.edition_path(a),
        )
    ]


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
            job=job_env(),
            software=pinned("edition"),
            article=article.id,
            pin=NUMERICS["pin"],
        shell:
            "{params.job} python -m attnrepro.jobs.edition --pin {params.pin} {params.article}"
            " --text {input.text:q} --ledger {input.ledger} --published {input.published:q}"
            " --config {input.config} --speed {input.speed} --out {output} 2> {log}"


# An article without experiments of its own is checked from its text: its listings run twice in a
# fresh, bounded interpreter (config articles[i].time_limit_s, memory_limit_mib), a claim is
# drafted for every number they print (results/claims/<article>.yaml) and judged by the ledger's
# rules; its rows join results/ledger.csv (the ledger rule reads results/claims/<article>.ledger.csv),
# and its edition is written beside the others. Its listings run with the rights of whoever runs
# the workflow (README.md, "Adding an article").
for article in CHECKED.values():

    rule:
        name:
            f"check_{article.id}"
        input:
            text=article.text,
            speed="config/published.yaml",
            # its confirmed claims, when its entry names them (else the drafted ones are judged)
            claims=[article.claims] if article.claims else [],
            code=job_code("article_check"),
        output:
            claims=paths.drafted_claims(article.id),
            unclaimed=paths.unclaimed_numbers(article.id),
            numbers=paths.checked_numbers(article.id),
            ledger=paths.checked_ledger(article.id),
            edition=report(
                paths.edition_path(article.id),
                caption="../report/edition.rst",
                category=ARTICLES_CATEGORY,
                labels={"name": f"check_{article.id}", "format": "html"},
            ),
        log:
            paths.report_log(f"check_{article.id}"),
        conda:
            CONDA_ENV
        threads: 1
        resources:
            # two runs of the listings, each within its time limit, and a minute to start and write
            runtime=math.ceil(2 * article.time_limit_s / 60) + 1,
            # its listings' interpreter up to its memory limit, and the check itself (preflight)
            mem_mb=preflight.check_mem_mb(article.memory_limit_mib),
        params:
            job=job_env(),
            software=pinned("article_check"),
            pin=NUMERICS["pin"],
            id=article.id,
            title=article.title,
            time=article.time_limit_s,
            memory=article.memory_limit_mib,
            sha256=article.sha256,
            claims=lambda wildcards, input: (
                f"--claims {input.claims}" if input.claims else ""
            ),
        shell:
            "{params.job} python -m attnrepro.jobs.article_check {input.text:q} --in-run --id {params.id}"
            " --title {params.title:q} --sha256 {params.sha256} {params.claims} --pin {params.pin}"
            " --speed-rule {input.speed} --time-limit {params.time} --memory-limit {params.memory}"
            " --threads {threads} 2> {log}"


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
        job=job_env(),
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
        job=job_env(),
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
        checked_outputs(),
        paths.OVERVIEW,
        paths.SPEED,
    localrule: True
