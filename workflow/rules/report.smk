# The report: the articles' tables (Markdown + CSV) and figures (SVG), each built by
# `python -m attnrepro.report.job` (its builder from the catalog) from the Parquet files of the
# experiments it reads, and the ledger of every published number. Targets: `table_<name>`,
# `figure_<name>`, `ledger`.
# Each reading job gets `--expected-params`: the parameters this config plans for the cases it
# reads (only those: a value reruns the jobs it feeds and no other); a file written with other
# ones (an orphaned job of an earlier run) stops it, naming the file (attnrepro.run.io).


for product in catalog.PRODUCTS.values():

    rule:
        name:
            f"{product.kind}_{product.name}"
        input:
            # a table of machine-bound times states this machine's speed factor (the ledger's)
            **({"speed": SPEED_CSV} if product.speed else {}),
            data=catalog.input_files(product, config),
            code=report_code(
                product.kind,
                product.module,
                *(["attnrepro.report.ledger.speed"] if product.speed else []),
            ),
        output:
            **{
                key: report(
                    path,
                    caption=f"../report/{product.name}.rst",
                    category=f"Article {product.article}",
                    subcategory=product.section,
                    labels={"name": product.name, "format": key},
                )
                for key, path in product.outputs.items()
            },
        log:
            f"results/logs/report/{product.name}.log",
        localrule: True
        conda:
            CONDA_ENV
        threads: 1
        params:
            kind=product.kind,
            builder=product.builder,
            article=product.article,
            section=product.section,
            experiments=" ".join(product.experiments),
            sections=figure_sections(product),
            outputs=lambda wildcards, output: " ".join(
                f"--{key} {path}" for key, path in output.items()
            ),
            pin=NUMERICS["pin"],
            expected=expected_params(catalog.input_files(product, config)),
            speed=f"--speed {SPEED_CSV}" if product.speed else "",
        shell:
            "python -m attnrepro.report.job --pin {params.pin} --expected-params {params.expected:q}"
            " {params.sections} {params.kind} --builder {params.builder} {params.speed}"
            " --article {params.article} --section {params.section:q}"
            " --experiments {params.experiments} {params.outputs} --inputs {input.data} 2> {log}"


rule ledger:
    input:
        **ledger_evidence(),
        data=all_outputs(),
        published="config/published.yaml",
        code=report_code("ledger", *ledger_evidence_code()),
    output:
        csv="results/ledger.csv",
        md=report(
            "results/LEDGER.md",
            caption="../report/ledger.rst",
            category="Ledger",
        ),
        speed=SPEED_CSV,
    log:
        "results/logs/report/ledger.log",
    localrule: True
    conda:
        CONDA_ENV
    threads: 1
    params:
        evidence=evidence_options,
        pin=NUMERICS["pin"],
        expected=expected_params(all_outputs()),
        # what the article's config plans: a claim computed otherwise is "other parameters"
        article=article_comparison(),
    shell:
        "python -m attnrepro.report.job --pin {params.pin} --expected-params {params.expected:q}"
        " ledger --published {input.published} --article {params.article:q}"
        " --csv {output.csv} --md {output.md} --speed {output.speed} {params.evidence}"
        " --inputs {input.data} 2> {log}"


rule config_resolved:
    output:
        "results/config.resolved.yaml",
    log:
        "results/logs/report/config_resolved.log",
    localrule: True
    conda:
        CONDA_ENV
    threads: 1
    params:
        text=yaml_text(config),
    shell:
        "printf '%s' {params.text:q} > {output} 2> {log}"


rule index:
    input:
        config="results/config.resolved.yaml",
        code=report_code("index"),
    output:
        "results/README.md",
    log:
        "results/logs/report/index.log",
    localrule: True
    conda:
        CONDA_ENV
    threads: 1
    params:
        # which editions are not built, and why: the index says so, and is rebuilt when they appear
        unbuilt=json.dumps(UNBUILT, sort_keys=True),
    shell:
        "python -m attnrepro.report.job index --config {input.config} --unbuilt {params.unbuilt:q}"
        " --out {output} 2> {log}"


# The archive: every output, the workflow that made them and an RO-Crate describing the run
# (src/attnrepro/archive/crate.py), whose jobs come from each output's provenance and Snakemake's records.
rule archive:
    input:
        files=archive_files,
        config="results/config.resolved.yaml",
        workflow=workflow_files(),
        code=report_code("archive"),
    output:
        f"results/archive/attnrepro-results-{GIT_SHA}.tar.gz",
    log:
        "results/logs/archive.log",
    localrule: True
    conda:
        CONDA_ENV
    threads: 1
    params:
        rules=rule_files,
    shell:
        "python -m attnrepro.report.job archive --config {input.config} --out {output}"
        " --rules {params.rules:q} --files {input.files} {input.workflow} {input.config} 2> {log}"
