"""The parts of the archive's RO-Crate that describe things rather than the run's actions: its
files (size, SHA-256, format, a sentence each), the software the jobs ran (Python, NumPy, torch,
pyarrow, OpenBLAS with its kernel, ...), the profiles it conforms to, and the workflow's
parameters (the resolved config's sections and the jobs' keys, described by the config schema).

:mod:`attnrepro.archive.crate` assembles them with the actions; everything here takes plain values and
returns rocrate entities or dicts, so that each piece is tested alone.
"""

import json
from pathlib import PurePosixPath

from rocrate.model.contextentity import ContextEntity

from attnrepro import paths

# Provenance Run Crate 0.5 and the profiles it extends (the validator's provenance-run-crate chain)
PROFILES = (
    ("https://w3id.org/ro/wfrun/process/0.5", "Process Run Crate", "0.5"),
    ("https://w3id.org/ro/wfrun/workflow/0.5", "Workflow Run Crate", "0.5"),
    ("https://w3id.org/ro/wfrun/provenance/0.5", "Provenance Run Crate", "0.5"),
    ("https://w3id.org/workflowhub/workflow-ro-crate/1.0", "Workflow RO-Crate", "1.0"),
)
# Terms defined in the crate's own @context, after RO-Crate 1.1's: two that 1.1 lacks (no other
# context to fetch), and the four Bioschemas terms as RO-Crate 1.1 defines them, so that the crate
# means the same under a later context (1.3 maps them to https://bioschemas.org/terms/...).
EXTRA_TERMS = {
    "buildInstructions": "https://codemeta.github.io/terms/buildInstructions",
    "environment": "https://w3id.org/ro/terms/workflow-run#environment",
    "ComputationalWorkflow": "https://bioschemas.org/ComputationalWorkflow",
    "FormalParameter": "https://bioschemas.org/FormalParameter",
    "input": "https://bioschemas.org/ComputationalWorkflow#input",
    "output": "https://bioschemas.org/ComputationalWorkflow#output",
}
FORMATS = {
    ".parquet": "application/vnd.apache.parquet", ".csv": "text/csv", ".md": "text/markdown",
    ".svg": "image/svg+xml", ".html": "text/html", ".json": "application/json",
    ".yaml": "application/yaml", ".yml": "application/yaml", ".tsv": "text/tab-separated-values",
    ".log": "text/plain", ".lock": "text/plain", ".smk": "text/x-snakemake", ".sha256": "text/plain",
}
# what the main results and the workflow's own files are, for a person reading the crate
DESCRIPTIONS = {
    paths.LEDGER_MD: "The ledger: every number the three articles print beside the value this "
                         "run reproduced, with its class (exact, round-off, finite-difference, stochastic, "
                         "machine-bound), verdict and reason.",
    paths.LEDGER_CSV: "The ledger as CSV, at full precision: one row per published number.",
    paths.INDEX: "The index of the results: every output, and for each table and figure its "
                         "chain from the config section to the experiment module, the data files, the "
                         "builder and the caption.",
    paths.OVERVIEW: "Every numeric claim of the articles, published against "
                                           "reproduced, coloured by class, with tolerances.",
    paths.CONFIG_RESOLVED: "The resolved config of the run, as Snakemake wrote it.",
    "config.resolved.yaml": "The resolved config of the run: every parameter the jobs ran with "
                            "(config/config.yaml with the run's --configfile merged over it).",
    "Snakefile": "The Snakemake workflow: config, validation, the rule files it includes, target all.",
    "workflow/schemas/config.schema.yaml": "The config schema: every key of the config, typed, bounded "
                                           "and described.",
    "envs/attnrepro.yaml": "The conda environment of every rule (the same pins as the runtime lock).",
    "requirements/runtime.lock": "The pip lock the run's environment was installed from (every package "
                                 "pinned, with hashes).",
    "environment.json": "Package versions, BLAS libraries, machine and commit of the process that "
                        "wrote this archive.",
    "README.md": "What this archive holds and how to check it, for a person opening it.",
    "MANIFEST.sha256": "The SHA-256 of every file of the archive but itself (sha256sum -c "
                       "MANIFEST.sha256 checks them); its own checksum cannot be in this metadata, "
                       "which it lists.",
}
CONDA_ENV_FORMAT = ("https://docs.conda.io/projects/conda/en/latest/user-guide/tasks/manage-environments.html"
                    "#create-env-file-manually", "Conda environment file")
PIP_LOCK_FORMAT = ("https://pip.pypa.io/en/stable/reference/requirements-file-format/",
                   "pip requirements file")
BUILD_FILES = (("envs/attnrepro.yaml", CONDA_ENV_FORMAT), ("requirements/runtime.lock", PIP_LOCK_FORMAT))
# the packages of provenance.package_versions() and their names for people
PACKAGES = {"python": "Python", "numpy": "NumPy", "pandas": "pandas", "pyarrow": "pyarrow",
            "torch": "PyTorch", "matplotlib": "Matplotlib", "threadpoolctl": "threadpoolctl"}


def profile_entities(crate):
    """The CreativeWork entities of the profiles the crate conforms to."""
    return [ContextEntity(crate, uri, properties={"@type": "CreativeWork", "name": name, "version": v})
            for uri, name, v in PROFILES]


def encoding_format(path):
    """The media type of an archived file, from its name (None when unknown)."""
    if PurePosixPath(path).name == "Snakefile":
        return FORMATS[".smk"]
    return FORMATS.get(PurePosixPath(path).suffix)


READS_SUFFIX = paths.reads_of_log("x.log").removeprefix("x")  # a reads record's suffix: .reads.json
# where an experiment's table lies (attnrepro.paths.ResultFile.folder), as its description says it
WHERE = {
    paths.DATA: "",
    paths.SEEDS: ", a training of the seed distribution beyond the run's own",
    paths.SWEEP_ROOT: ", rerun under the numerics setting {setting}",
}


def result_file(path):
    """The experiment, table, case, article (and folder, setting) of an archived experiment's
    table, read by :func:`attnrepro.paths.parse_result`; None for any other file."""
    try:
        return paths.parse_result(path)
    except ValueError:
        return None


def file_description(path):
    """A sentence on what an archived file is, for a person reading the crate."""
    if path in DESCRIPTIONS:
        return DESCRIPTIONS[path]
    p = PurePosixPath(path)
    if paths.under(path, paths.EDITIONS):
        return (f"Article {p.stem} as published, every number the ledger judges marked with its "
                "verdict (the annotated edition).")
    if (result := result_file(path)) is not None:
        return (f"The {result.table} table of experiment {result.experiment} (article {result.article}), "
                f"case {result.case}{WHERE[result.folder].format(setting=result.setting)}: a Parquet "
                "file carrying its provenance (parameters, seeds, versions, numerics, times).")
    if paths.under(path, paths.TABLES):
        return f"Table {p.stem} ({'Markdown, as printed' if p.suffix == '.md' else 'CSV, full precision'})."
    if paths.under(path, paths.FIGURES):
        return f"Figure {p.stem} (SVG)."
    if paths.under(path, paths.LOGS) and path.endswith(READS_SUFFIX):
        return ("What the job it is about read, as its harness recorded it: the project files it opened "
                "and the attnrepro modules it imported (JSON).")
    if paths.under(path, paths.LOGS):
        return "The log of the job that wrote the file(s) it is about."
    if paths.under(path, paths.BENCHMARKS):
        return "The wall time and memory of a job, as Snakemake's benchmark measured them."
    if p.parts[:2] == ("workflow", "rules"):
        return f"Snakemake rules included by the Snakefile ({p.stem})."
    return None


def file_properties(path, sha256=None, size=None):
    """The properties of an archived file's entity (None values left out)."""
    props = {"name": PurePosixPath(path).name, "encodingFormat": encoding_format(path),
             "description": file_description(path), "sha256": sha256,
             "contentSize": None if size is None else str(size)}
    return {k: v for k, v in props.items() if v is not None}


def format_entity(crate, spec):
    """A contextual entity for a file format that a file ``conformsTo``."""
    uri, name = spec
    return ContextEntity(crate, uri, properties={"@type": "CreativeWork", "name": name})


def _pypi(name, version):
    return f"https://pypi.org/project/{name}/{version.split('+')[0]}/"


def software_entity(crate, key, version):
    """A SoftwareApplication for a package of provenance.package_versions() at ``version``."""
    if key == "python":
        uri, url = (f"https://www.python.org/downloads/release/python-{version.replace('.', '')}/",
                    "https://www.python.org/")
    else:
        uri = url = _pypi(key, version)
    return ContextEntity(crate, uri, properties={
        "@type": "SoftwareApplication", "name": PACKAGES.get(key, key), "alternateName": key,
        "version": version, "url": url})


OPENBLAS = "https://www.openblas.net/"


def openblas_entity(crate, version, kernel):
    """OpenBLAS as NumPy loads it, with the kernel it ran (threadpoolctl's architecture): its id is
    the project's web address (a wheel's build, 0.3.31.188.0, has no release page of its own), the
    version and kernel its fragment (one entity per kernel run)."""
    return ContextEntity(crate, f"{OPENBLAS}#openblas-{version}-{kernel}", properties={
        "@type": "SoftwareApplication", "name": "OpenBLAS", "alternateName": "openblas",
        "version": version, "url": OPENBLAS,
        "description": f"OpenBLAS {version} running its {kernel} kernel (threadpoolctl's architecture)."})


def job_software(provenance):
    """(key, version) of every package a job's provenance records, and ("openblas", (version,
    kernel)) for each OpenBLAS library it loaded."""
    out = [(k, v) for k, v in sorted((provenance.get("versions") or {}).items())
           if k in PACKAGES and isinstance(v, str)]
    for lib in provenance.get("blas") or []:
        if lib.get("internal_api") == "openblas" and lib.get("version"):
            out.append(("openblas", (lib["version"], lib.get("architecture") or "unknown")))
    return out


# ---- the workflow's parameters: the sections of the resolved config --------------------------

def _resolve(schema, node):
    """Follow ``$ref`` (within the schema) until a node that has properties of its own."""
    seen = 0
    while isinstance(node, dict) and "$ref" in node and "properties" not in node and seen < 10:
        target = schema
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        node, seen = target, seen + 1
    return node if isinstance(node, dict) else {}


def schema_description(schema, dotted):
    """The config schema's description of a dotted key (named properties first, then the
    schema of a mapping's entries), or None."""
    node, description = schema, None
    for part in dotted.split("."):
        node = _resolve(schema, node)
        child = (node.get("properties") or {}).get(part)
        if child is None and isinstance(node.get("additionalProperties"), dict):
            child = node["additionalProperties"]
        if child is None:
            return None
        description = child.get("description") or _resolve(schema, child).get("description")
        node = child
    return " ".join(description.split()) if isinstance(description, str) else None


def value_type(value):
    """A FormalParameter's additionalType for a value (schema.org DataType names; a mapping is a
    PropertyValue, as the Workflow Run Crate profile types a structured value)."""
    if isinstance(value, dict):
        return "PropertyValue"
    if isinstance(value, bool):
        return "Boolean"
    if isinstance(value, int):
        return "Integer"
    if isinstance(value, float):
        return "Float"
    return "Text"  # strings, and lists and null given as JSON text


def value_of(value):
    """A PropertyValue's value: a number, a boolean or a string (JSON for anything else)."""
    if isinstance(value, (bool, int, float, str)):
        return value
    return json.dumps(value, sort_keys=True)
