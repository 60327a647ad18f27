"""The report's commands, one module per command: its options and its work together.

Each module holds ``HELP`` (one line), ``OUTPUTS`` (the dests of the options that name the files it
writes), ``add_options(parser)`` and ``run(args)``, of its parsed options; ``run`` imports what loads
NumPy inside it, after the harness applied the pin. A module is imported by its command's entry
(``python -m attnrepro.jobs.<module>``, which its rules run) and by the command line for people
(:mod:`attnrepro.report.cli`, whose ``COMMANDS`` lists them), both running it through
:mod:`attnrepro.report.runner`, which names no command. No module imports another command's: editing
one reruns that command's jobs alone. ``_product`` holds the options a table and a figure share.
"""
