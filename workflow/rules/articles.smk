# The three articles, re-rendered with this run's numbers: one rule per article writes
# its annotated edition, results/articles/<article>.html, from the article's text
# (../shared/seeds/<file>, src/attnrepro/report/articles.py), the locations in
# config/published.yaml and results/ledger.csv; `ledger_overview` draws every numeric claim,
# published against reproduced, in results/figures/ledger_overview.svg. Target: `articles`.
#
# The articles live beside the checkout, not in it (config `articles.folder`): a copy of the
# workflow elsewhere (a test's temporary folder, `attnrepro verify`'s rerun) has none, and an
# article whose text is not the one config/published.yaml hashes would have its claims marked on
# other words; so the default target leaves those editions out, with a warning naming the file
# (and the hashes), and builds the figures (article_outputs, common.smk). Asked for by name, such
# an edition's job refuses, saying the same.

for article in articles.ARTICLES:

    rule:
        name:
            f"edition_{article}"
        input:
            text=articles.article_path(article, ARTICLES_FOLDER),
            ledger="results/ledger.csv",
            speed=SPEED_CSV,
            published="config/published.yaml",
            config="results/config.resolved.yaml",
            code=report_sources("edition"),
        output:
            report(
                articles.edition_path(article),
                caption=f"../report/edition_{article}.rst",
                category=ARTICLES_CATEGORY,
                labels={"name": f"edition_{article}", "format": "html"},
            ),
        log:
            f"results/logs/report/edition_{article}.log",
        localrule: True
        conda:
            CONDA_ENV
        threads: 1
        params:
            article=article,
            pin=NUMERICS["pin"],
        shell:
            "python -m attnrepro.report --pin {params.pin} edition {params.article}"
            " --text {input.text:q} --ledger {input.ledger} --published {input.published}"
            " --config {input.config} --speed {input.speed} --out {output} 2> {log}"


rule ledger_overview:
    input:
        ledger="results/ledger.csv",
        published="config/published.yaml",
        code=report_sources("ledger-overview"),
    output:
        report(
            articles.OVERVIEW,
            caption="../report/ledger_overview.rst",
            category=ARTICLES_CATEGORY,
            labels={"name": "ledger_overview", "format": "svg"},
        ),
    log:
        "results/logs/report/ledger_overview.log",
    localrule: True
    conda:
        CONDA_ENV
    threads: 1
    params:
        pin=NUMERICS["pin"],
    shell:
        "python -m attnrepro.report --pin {params.pin} ledger-overview --ledger {input.ledger}"
        " --published {input.published} --svg {output} 2> {log}"


rule machine_speed:
    input:
        speed=SPEED_CSV,
        code=report_sources("machine-speed"),
    output:
        report(
            articles.SPEED,
            caption="../report/machine_speed.rst",
            category="Ledger",
            labels={"name": "machine_speed", "format": "svg"},
        ),
    log:
        "results/logs/report/machine_speed.log",
    localrule: True
    conda:
        CONDA_ENV
    threads: 1
    params:
        pin=NUMERICS["pin"],
    shell:
        "python -m attnrepro.report --pin {params.pin} machine-speed --speed {input.speed}"
        " --svg {output} 2> {log}"


rule articles:
    input:
        [articles.edition_path(a) for a in articles.ARTICLES],
        articles.OVERVIEW,
        articles.SPEED,
    localrule: True
