# attnrepro: reproduce every number, table and figure of three articles on attention.
# Run `snakemake --cores N`; see README.md.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/experiments.smk"
include: "workflow/rules/evidence.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/articles.smk"
include: "workflow/rules/archive.smk"


rule all:
    default_target: True
    input:
        all_outputs(),
        report_outputs(),
        evidence_all(),
        article_outputs(),
