"""The job entries: one module per command a rule runs (``python -m attnrepro.jobs.<command>``).

Each parses its own command line, imports statically what its command runs, and hands its job to
the job harness (:func:`attnrepro.run.harness.run_job`). A rule's code inputs are its entry's
import closure and what its command dispatches by a name from the config or the catalog: an
experiment's module, a product's builder, an evidence product's evaluate module
(``job_code`` in workflow/rules/common.smk, :mod:`attnrepro.dag.code_inputs`). No entry imports
another command's modules, so editing one reruns only the jobs that run it. The top layer of the
package (.importlinter), beside :mod:`attnrepro.cli`.

Run as ``python -m attnrepro.jobs.<command>``, this package is imported before the entry's body:
the record of what the job reads (:mod:`attnrepro.run.reads`) begins here, so a read at import
time (a module-level ``open`` in the entry or anything it imports) is recorded; the job harness
takes the recording over.
"""

from attnrepro.run import reads

reads.begin(__name__)
