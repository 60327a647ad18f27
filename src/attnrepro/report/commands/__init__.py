"""The work of each report command, one module per command (``run(args)``, of its parsed options).

Shared by the command's job entry (:mod:`attnrepro.jobs`, which a rule runs) and the command line
for people (:mod:`attnrepro.report.cli`), both through :func:`attnrepro.report.job.run`. A module
imports only what its command runs: editing it reruns that command's jobs alone.
"""
