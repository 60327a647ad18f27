"""One module per listing family. Each exposes ``run(params) -> dict[str, DataFrame]``.

``params`` is one case of the config section named like the module (see
:mod:`attnrepro.dag.plan`); the returned tables are tidy (one row per measured case,
parameters as columns) and the first, ``"main"``, is the one the ledger reads
first. Torch is imported only inside the experiments that compare against it.
"""
