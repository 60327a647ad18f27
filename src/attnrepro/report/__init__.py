"""Tables, figures and the ledger: they read Parquet results only, never recompute science."""
