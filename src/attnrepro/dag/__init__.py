"""What Snakemake reads to build the DAG: the config, the plan, the code inputs, the pre-flight."""
