"""The evidence products judged claim by claim and written: each one's table (``*_evaluate``, pandas),
its files (``*_render``: CSV, Markdown, SVG), and what the ledger cites of them (``citations``).

Named for what the report makes of the evidence, its tables, apart from :mod:`attnrepro.evidence`,
which declares the products and runs them (the sweep, the seeds' trainings, the listings).
"""
