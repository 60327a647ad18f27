"""A job's run: its ownership by one Snakemake run, the heartbeat, Parquet I/O, provenance."""
