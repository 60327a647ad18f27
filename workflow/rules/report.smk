# The report: the articles' tables (Markdown + CSV) and figures (SVG), each built by
# `python -m attnrepro.jobs.table` or `.figure` (its builder from the catalog) from the Parquet files of the
# experiments it reads, and the ledger of every published number. Targets: `table_<name>`,
# `figure_<name>`, `ledger`. A table reads the ledger too (results/ledger.csv and the claims): a cell
# that prints a claim shows the published value and the ledger's verdict (report.ledger.printed).
# Each reading job gets `--expected-params`: the parameters this config plans for the cases it
# reads (only those: a value reruns the jobs it feeds and no other); a file written with other
# ones (an orphaned job of an earlier run) stops it, naming the file (attnrepro.run.io).


from attnrepro import evidence  # noqa: E402
from attnrepro.report.products import catalog  # noqa: E402

# the evidence products the config switches on: their CSVs are the ledger's inputs, and the archive
# holds them with the data they read (evidence.smk builds them)
LEDGER_EVIDENCE = evidence.enabled(config)


def figure_sections(product):
    """`--sections JSON` of a figure's job: the article and section of its experiments
    and its own, which its title names (report.style); "" for a table."""
    import shlex

    if product.kind != "figure":
        return ""
    sections = json.dumps(catalog.sections(product), sort_keys=True)
    return f"--sections {shlex.quote(sections)}"


def report_outputs():
    """Every table, figure and ledger file of the run, and the index of results/."""
    return catalog.all_outputs(config) + [
        paths.LEDGER_CSV,
        paths.LEDGER_MD,
        paths.SPEED_CSV,
        paths.INDEX,
    ]


def article_comparison():
    """The ledger's `--article` JSON (attnrepro.report.ledger.comparable.Article): the parameters the
    article's config (config/config.yaml) plans for the run's cases, the run's list values
    (plan.selectors), and each experiment section whose keys differ from the article's.
    """
    article = attnrepro_config.load(attnrepro_config.DEFAULT)
    sections = {}
    for name in plan.EXPERIMENTS:
        mine, theirs = config.get(name) or {}, article.get(name) or {}
        keys = sorted(
            k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k)
        )
        if keys:
            sections[name] = keys
    upstream = {
        name: [
            list(case)
            for case in dict.fromkeys(
                plan.output_case(p) for p in plan.input_paths(name, config).values()
            )
        ]
        for name in plan.enabled(config)
    }
    comparison = {
        "params": plan.expected_params(all_outputs(), article),
        "grid": plan.selectors(config),
        "sections": sections,
        "upstream": {name: cases for name, cases in upstream.items() if cases},
    }
    return json.dumps(comparison, sort_keys=True, separators=(",", ":"))


def yaml_text(cfg):
    """The resolved config as YAML (a param: changing any value rewrites it); plain data first:
    a config read from JSON (verify's rerun) holds OrderedDicts in its lists."""
    import yaml

    return yaml.safe_dump(json.loads(json.dumps(cfg)), sort_keys=True)


def ledger_evidence():
    """The ledger's evidence inputs: the CSV of each product the config switches on."""
    return {name: product.paths["csv"] for name, product in LEDGER_EVIDENCE.items()}


def ledger_evidence_tables():
    """The Markdown table beside each evidence CSV: what the ledger's reasons cite
    (attnrepro.report.evidence_tables.citations.cited_file), so an input too."""
    return {
        f"{name}_table": product.paths["md"]
        for name, product in LEDGER_EVIDENCE.items()
    }


def ledger_evidence_code():
    """The evaluate modules of the evidence the ledger reads (attnrepro.report.evidence_tables.citations)."""
    return [product.evaluate for product in LEDGER_EVIDENCE.values()]


def evidence_options(wildcards, input):
    """`--numerics-evidence FILE --seed-evidence FILE` for the ledger's evidence inputs."""
    return " ".join(
        f"{LEDGER_EVIDENCE[name].ledger_option} {input[name]}"
        for name in ledger_evidence()
    )


for product in catalog.PRODUCTS.values():
    product_code = job_code(product.kind, product.module)

    rule:
        name:
            f"{product.kind}_{product.name}"
        input:
            # a table of machine-bound times states this machine's speed factor (the ledger's)
            **({"speed": paths.SPEED_CSV} if product.speed else {}),
            # a table's cells that print a claim show the published value and the ledger's verdict
            # (the ledger reads no table: no cycle)
            **(
                {"ledger": paths.LEDGER_CSV, "published": "config/published.yaml"}
                if product.kind == "table"
                else {}
            ),
            data=catalog.input_files(product, config),
            code=product_code,
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
            paths.report_log(product.name),
        localrule: True
        conda:
            CONDA_ENV
        threads: 1
        params:
            job=job_env(),
            software=pinned(product.kind, product.module),
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
            speed=f"--speed {paths.SPEED_CSV}" if product.speed else "",
            printed=(
                f"--name {product.name} --ledger {paths.LEDGER_CSV} --published config/published.yaml"
                if product.kind == "table"
                else ""
            ),
        shell:
            "{params.job} python -m attnrepro.jobs.{params.kind} --pin {params.pin} --expected-params {params.expected:q}"
            " {params.sections} --builder {params.builder} {params.speed} {params.printed}"
            " --article {params.article} --section {params.section:q}"
            " --experiments {params.experiments} {params.outputs} --inputs {input.data} 2> {log}"


rule:
    name:
        "ledger"
    input:
        **ledger_evidence(),
        **ledger_evidence_tables(),
        data=all_outputs(),
        # the rows of the articles checked from their text (articles.smk, check_<article>)
        checked=[paths.checked_ledger(a) for a in CHECKABLE],
        published="config/published.yaml",
        code=job_code("ledger", *ledger_evidence_code()),
    output:
        csv=paths.LEDGER_CSV,
        md=report(
            paths.LEDGER_MD,
            caption="../report/ledger.rst",
            category="Ledger",
        ),
        speed=paths.SPEED_CSV,
    log:
        paths.report_log("ledger"),
    localrule: True
    conda:
        CONDA_ENV
    threads: 1
    params:
        job=job_env(),
        software=pinned("ledger", *ledger_evidence_code()),
        evidence=evidence_options,
        pin=NUMERICS["pin"],
        expected=expected_params(all_outputs()),
        # what the article's config plans: a claim computed otherwise is "other parameters"
        article=article_comparison(),
    shell:
        "{params.job} python -m attnrepro.jobs.ledger --pin {params.pin} --expected-params {params.expected:q}"
        " --published {input.published} --article {params.article:q}"
        " --csv {output.csv} --md {output.md} --speed {output.speed} {params.evidence}"
        " --inputs {input.data} --checked {input.checked} 2> {log}"


rule:
    name:
        "config_resolved"
    output:
        paths.CONFIG_RESOLVED,
    log:
        paths.report_log("config_resolved"),
    localrule: True
    conda:
        CONDA_ENV
    threads: 1
    params:
        text=yaml_text(config),
    shell:
        "printf '%s' {params.text:q} > {output} 2> {log}"


rule:
    name:
        "index"
    input:
        config=paths.CONFIG_RESOLVED,
        # the index opens with the ledger's summary (report.ledger.headline), the run's versions
        # read from the data files' provenance, the articles' stated ones from published.yaml
        ledger=paths.LEDGER_CSV,
        published="config/published.yaml",
        data=all_outputs(),
        code=job_code("index"),
    output:
        paths.INDEX,
    log:
        paths.report_log("index"),
    localrule: True
    conda:
        CONDA_ENV
    threads: 1
    params:
        job=job_env(),
        software=pinned("index"),
        # which editions are not built, and why: the index says so, and is rebuilt when they appear
        # (a function: articles.smk, which decides which are built, may be included after this file)
        unbuilt=lambda wildcards: json.dumps({**UNBUILT, **UNCHECKED}, sort_keys=True),
    shell:
        "{params.job} python -m attnrepro.jobs.index --config {input.config} --unbuilt {params.unbuilt:q}"
        " --ledger {input.ledger} --published {input.published} --inputs {input.data}"
        " --out {output} 2> {log}"
