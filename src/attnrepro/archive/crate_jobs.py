"""The jobs of a run, for its RO-Crate: Snakemake's record of each output joined with the provenance
that each Parquet output carries.

Snakemake records, for every output of a job it ran, the rule, the inputs, the log, the shell
command and the start and end times (``.snakemake/metadata``, one JSON file per output, named by
the output's path in URL-safe base64; ``snakemake --detailed-summary`` prints the same records).
The experiment jobs also write their own record into every Parquet file (:mod:`attnrepro.run.provenance`:
experiment, parameters, versions, BLAS, numerics, times); the report jobs (tables, figures, the
ledger, the index, the editions) write no Parquet file, and Snakemake's record is their only source.

:func:`jobs` groups the archived files into jobs: the files of one Snakemake job (same rule and
shell command), or, for a Parquet file that Snakemake has no record of (a job run by hand, or a
``.snakemake`` folder that was removed), the files of one provenance record. Where the two
sources disagree, the job's :attr:`Job.notes` say so in a sentence, with both values; neither is
preferred silently.

What a job read is its reads record when one lies beside its log (:func:`attnrepro.paths.reads_of_log`,
written by the job harness: the project files it opened, the attnrepro modules it imported), else
Snakemake's declared inputs, which its notes then say.
"""

import base64
import binascii
import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

from attnrepro import paths
from attnrepro.run import io

METADATA = Path(".snakemake") / "metadata"
SHELL_SHOWN = 2000  # characters of a shell command shown in an action's description
TOLERANCE_SECONDS = 2.0  # a job's own clock against Snakemake's: process start-up and file times


@dataclass
class Job:
    """One job of the run, as the crate describes it (one ``CreateAction``)."""

    rule: str | None  # Snakemake's rule; None for a job Snakemake has no record of
    outputs: list  # its archived output files, sorted
    inputs: list = field(default_factory=list)  # Snakemake's declared inputs (code files too)
    logs: list = field(default_factory=list)
    shellcmd: str | None = None
    start: str | None = None  # ISO 8601, UTC, milliseconds
    end: str | None = None
    provenance: dict | None = None  # the main table's provenance (experiment jobs)
    reads: list | None = None  # the project files its reads record lists; None: no record
    notes: list = field(default_factory=list)  # where the sources disagree, or what one lacks

    @property
    def name(self):
        """What ran: the rule, else the experiment of its provenance."""
        return self.rule or (self.provenance or {}).get("experiment") or "unknown"

    @property
    def read(self):
        """The files it read: its reads record's, else Snakemake's declared inputs."""
        return self.inputs if self.reads is None else self.reads


NO_READS = ("No record of the files this job read exists ({where}): the files it lists as read are "
            "Snakemake's declared inputs.")


def reads_record(workdir, logs):
    """(files, note): the sorted files of the reads record beside the first of ``logs`` that has
    one (:func:`attnrepro.paths.reads_of_log`), else None and a sentence saying why there is none."""
    for log in logs:
        where = paths.reads_of_log(log)
        try:
            record = json.loads((Path(workdir) / where).read_text())
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as error:
            return None, NO_READS.format(where=f"{where} cannot be read: {type(error).__name__}")
        files = record.get("files") if isinstance(record, dict) else None
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            return None, NO_READS.format(where=f"{where} lists no files")
        return sorted(set(files)), None
    where = " or ".join(map(paths.reads_of_log, logs)) or "the job has no log"
    return None, NO_READS.format(where=where)


def iso(seconds):
    """A Unix time as ISO 8601 in UTC with milliseconds (the format of the provenance's times)."""
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).isoformat(timespec="milliseconds")


def _seconds(text):
    """Seconds since the epoch of an ISO 8601 time, or None when it cannot be read."""
    try:
        return dt.datetime.fromisoformat(text).timestamp()
    except (TypeError, ValueError):
        return None


def _decoded(relative):
    """The output path a metadata file stands for: Snakemake splits a long base64 name into
    folders whose names start with '@'."""
    name = "".join(part.removeprefix("@") for part in relative.parts)
    try:
        return base64.urlsafe_b64decode(name).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None


def snakemake_records(workdir="."):
    """{output path: Snakemake's record of the job that wrote it}, from ``.snakemake/metadata``
    (empty when the run kept no records there). Unreadable records are left out."""
    root = Path(workdir) / METADATA
    records = {}
    if not root.is_dir():
        return records
    for path in root.rglob("*"):
        output = _decoded(path.relative_to(root)) if path.is_file() else None
        if output is None:
            continue
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and record.get("rule") and not record.get("incomplete"):
            records[output] = record
    return records


def _provenance(path):
    """The provenance of a Parquet file (its footer only; the digest is checked)."""
    return io.read_provenance(path)


def _key(record):
    """What identifies one Snakemake job among the records of its outputs."""
    return record["rule"], record.get("shellcmd") or "", record.get("job_hash")


def jobs(files, workdir="."):
    """The jobs that wrote ``files`` (paths relative to ``workdir``), sorted by start time; files
    that no job wrote (logs, benchmarks, the workflow's own files) belong to none."""
    records = snakemake_records(workdir)
    written = {}  # every output Snakemake recorded for each job, archived or not
    for output, record in records.items():
        written.setdefault(_key(record), []).append(output)
    groups, provenances = {}, {}
    for f in sorted(files):
        if f.endswith(".parquet") and Path(workdir, f).is_file():
            provenances[f] = _provenance(Path(workdir) / f)
        if f in records:
            key = ("snakemake", *_key(records[f]))
        elif f in provenances:
            p = provenances[f]
            key = ("provenance", p.get("experiment"), json.dumps(p.get("argv"), sort_keys=True))
        else:
            continue
        groups.setdefault(key, []).append(f)
    out = [_from_record(outputs, records, written[key[1:]], provenances, workdir) if key[0] == "snakemake"
           else _from_provenance(outputs, provenances) for key, outputs in groups.items()]
    return sorted(out, key=lambda j: (j.start or "", j.outputs))


def _main(outputs, provenances):
    """The provenance of a job's main table (of its first file with one), or None."""
    own = [provenances[f] for f in outputs if f in provenances]
    return next((p for p in own if p.get("table") == "main"), own[0] if own else None)


def _from_provenance(outputs, provenances):
    """A job that Snakemake has no record of, from its files' provenance."""
    main = _main(outputs, provenances)
    job = Job(rule=None, outputs=outputs, provenance=main, start=main.get("started"),
              end=main.get("finished"))
    job.notes.append("Snakemake has no record of these files (run outside Snakemake, or its .snakemake "
                     "folder was removed): this action is described from their provenance alone, "
                     "without the files it read.")
    return job


def _from_record(outputs, records, written, provenances, workdir):
    """A job from Snakemake's records of its archived ``outputs`` (``written``: every output it
    recorded), the reads record beside its log and, when they carry one, their provenance."""
    record = records[outputs[0]]
    starts = [records[f]["starttime"] for f in outputs if records[f].get("starttime") is not None]
    ends = [records[f]["endtime"] for f in outputs if records[f].get("endtime") is not None]
    job = Job(rule=record["rule"], outputs=outputs, inputs=list(record.get("input") or []),
              logs=list(record.get("log") or []), shellcmd=record.get("shellcmd"),
              provenance=_main(outputs, provenances),
              start=iso(min(starts)) if starts else None, end=iso(max(ends)) if ends else None)
    job.reads, no_reads = reads_record(workdir, job.logs)
    missing = sorted(set(written) - set(outputs))
    if missing:
        job.notes.append(f"Outputs of this job that the archive does not hold: {', '.join(missing)}.")
    if job.provenance is not None:
        own = [provenances[f] for f in outputs if f in provenances]
        job.notes += _disagreements(job, own, min(starts, default=None), max(ends, default=None))
        job.start = job.provenance.get("started") or job.start
        job.end = job.provenance.get("finished") or job.end
    if no_reads:
        job.notes.append(no_reads)
    return job


def _disagreements(job, provenances, first, last):
    """Sentences on where Snakemake's record and the files' provenance disagree: another
    experiment than the rule runs, times outside Snakemake's, files of several runs."""
    notes, main = [], job.provenance
    experiment = main.get("experiment")
    if experiment and not job.rule.endswith(f"{experiment}_case"):
        notes.append(f"Snakemake's record and the files' provenance disagree: the rule is {job.rule}, "
                     f"the experiment {experiment}.")
    started, finished = _seconds(main.get("started")), _seconds(main.get("finished"))
    if None not in (started, finished, first, last) and (
            started < first - TOLERANCE_SECONDS or finished > last + TOLERANCE_SECONDS):
        notes.append(f"Snakemake's record and the files' provenance disagree on the times: Snakemake "
                     f"recorded this job from {iso(first)} to {iso(last)}, the provenance says "
                     f"{main.get('started')} to {main.get('finished')} (this action's times are the "
                     "provenance's).")
    runs = {(p.get("started"), p.get("finished")) for p in provenances}
    if len(runs) > 1:
        notes.append(f"The files' provenance records {len(runs)} different runs of this job (a file "
                     "written by another run than the others).")
    return notes


def _numerics(numerics):
    """A sentence on the numerics a job ran: its pin, what its libraries ran, canonical or not."""
    ran = [f"{label} {numerics[key]}" for label, key in (
        ("OpenBLAS kernel", "openblas_kernel"), ("NumPy features", "numpy_features"),
        ("torch", "torch_capability")) if numerics.get(key)]
    canonical = ("canonical" if numerics.get("canonical") is True
                 else f"not canonical ({numerics.get('reason') or 'no reason recorded'})")
    return f"Numerics: pin {numerics.get('pin')}; ran {', '.join(ran) or 'no library recorded'}; {canonical}."


def description(job, unheld=()):
    """What ran, the numerics it ran with, where the sources disagree, and how many files it read
    that the archive does not hold (``unheld``: its reads record lists them)."""
    provenance = job.provenance or {}
    parts = []
    if provenance.get("experiment"):
        parts.append(f"Experiment {provenance['experiment']} of article {provenance.get('article')}, "
                     f"section '{provenance.get('section')}'.")
    if job.shellcmd:
        command = job.shellcmd.strip()
        if len(command) > SHELL_SHOWN:
            command = (f"{command[:SHELL_SHOWN]} [... {len(command) - SHELL_SHOWN} more characters: "
                       "snakemake --detailed-summary prints it whole]")
        parts.append(f"Shell command (Snakemake's record): {command}")
    if numerics := provenance.get("numerics") or {}:
        parts.append(_numerics(numerics))
    elif job.rule and not provenance:
        parts.append("Its outputs carry no provenance: Snakemake's record is this action's only source.")
    if unheld:
        where = " or ".join(paths.reads_of_log(log) for log in job.logs)
        parts.append(f"It read {len(unheld)} project file(s) that the archive does not hold ({where} "
                     "lists them).")
    return " ".join(parts + job.notes)
