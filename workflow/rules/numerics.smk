# Evidence for the ledger's round-off and stochastic reasons (issue 7).
#
# The numerics sweep (src/attnrepro/numerics.py): the cases of config `numerics.cases` rerun
# under every numerics setting (OpenBLAS kernel x NumPy CPU-feature mask) that this machine
# accepts, into results/numerics/<setting>/data/<article>/<experiment>/<case>[.<table>].parquet
# (each table records the setting, the kernel OpenBLAS really ran and NumPy's features), then
# results/numerics/ledger_numerics.{csv,md,svg}: which settings give which published digits.
# Target `numerics`. The checkpoint `numerics_settings` probes the settings where the jobs
# run: which kernels exist there, and which settings are distinct, is a property of that machine.
#
# The seed distributions: target `seeds` trains `seed_distribution.tasks` over train.lengths
# and `seed_distribution.seeds` (20; the run's own seeds are the same jobs) and writes
# results/seeds/seed_distribution.{csv,md,svg}: each published training figure among the seeds.
#
# Switches `numerics.sweep` and `seed_distribution.build` (both on in config/evidence.yaml; the
# second also in config/config.yaml) add a product to `snakemake` (all) and its CSV to the
# ledger's inputs: the ledger cites the sweep, and judges its stochastic claims by the seeds.


checkpoint numerics_settings:
    input:
        code=deps.source_files("attnrepro.numerics"),
    output:
        numerics.SETTINGS_FILE,
    log:
        "results/logs/numerics/settings.log",
    conda:
        CONDA_ENV
    threads: 1
    params:
        kernels=" ".join(NUMERICS.get("kernels", [])),
        masks=" ".join(NUMERICS.get("numpy_masks", ["default"])),
    shell:
        "python -m attnrepro.numerics probe --kernels {params.kernels}"
        " --masks {params.masks} --out {output} 2> {log}"


for exp_id, exp_cases in numerics.sweep_cases(config).items():
    exp = plan.EXPERIMENTS[exp_id]

    rule:
        name:
            f"numerics_{exp.id}_case"
        input:
            sources(exp.module, "attnrepro.numerics"),
        output:
            **{
                t: numerics.output_path("{setting}", exp.id, "{case}", t)
                for t in exp.tables
            },
        log:
            f"results/logs/numerics/{{setting}}/{exp.article}/{exp.id}/{{case}}.log",
        wildcard_constraints:
            case=alternatives(exp_cases),
            setting=alternatives(numerics.candidates(NUMERICS)),
        conda:
            CONDA_ENV
        threads: timing_threads() if exp.timing else exp.threads
        resources:
            **whole_node(exp),
        params:
            json=case_params(exp.id),
            experiment=exp.id,
            tables=extra_tables,
        shell:
            "python -m attnrepro run {params.experiment} --threads {threads}"
            " --numerics {wildcards.setting} --params-json {params.json:q}"
            " --out {output.main} {params.tables} 2> {log}"


rule numerics_ledger:
    input:
        data=numerics_data,
        settings=numerics.SETTINGS_FILE,
        published="config/published.yaml",
        code=report_sources("attnrepro.report.numerics_grid"),
    output:
        csv=NUMERICS_PRODUCTS["csv"],
        md=report(
            NUMERICS_PRODUCTS["md"],
            caption="../report/ledger_numerics.rst",
            category="Evidence",
            subcategory="Numerics sweep",
        ),
        svg=report(
            NUMERICS_PRODUCTS["svg"],
            caption="../report/ledger_numerics_grid.rst",
            category="Evidence",
            subcategory="Numerics sweep",
        ),
    log:
        "results/logs/report/ledger_numerics.log",
    localrule: True
    conda:
        CONDA_ENV
    threads: 1
    params:
        pin=NUMERICS["pin"],
        expected=lambda wildcards: expected_params(numerics_data(wildcards)),
    shell:
        "python -m attnrepro.report --pin {params.pin} --expected-params {params.expected:q}"
        " numerics --published {input.published}"
        " --settings {input.settings} --csv {output.csv} --md {output.md}"
        " --svg {output.svg} --inputs {input.data} 2> {log}"


rule numerics:
    input:
        rules.numerics_ledger.output,
    localrule: True


rule seed_distribution:
    input:
        data=seed_trainings(),
        published="config/published.yaml",
        code=report_sources("attnrepro.report.seed_distribution"),
    output:
        csv=SEED_PRODUCTS["csv"],
        md=report(
            SEED_PRODUCTS["md"],
            caption="../report/seed_distribution.rst",
            category="Evidence",
            subcategory="Seed distributions",
        ),
        svg=report(
            SEED_PRODUCTS["svg"],
            caption="../report/seed_distribution_points.rst",
            category="Evidence",
            subcategory="Seed distributions",
        ),
    log:
        "results/logs/report/seed_distribution.log",
    localrule: True
    conda:
        CONDA_ENV
    threads: 1
    params:
        pin=NUMERICS["pin"],
        expected=expected_params(seed_trainings()),
    shell:
        "python -m attnrepro.report --pin {params.pin} --expected-params {params.expected:q}"
        " seeds --published {input.published}"
        " --csv {output.csv} --md {output.md} --svg {output.svg}"
        " --inputs {input.data} 2> {log}"


rule seeds:
    input:
        rules.seed_distribution.output,
    localrule: True
