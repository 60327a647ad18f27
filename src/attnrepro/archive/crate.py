"""The archive's ``ro-crate-metadata.json``: a Workflow Run RO-Crate conforming to the Provenance
Run Crate profile 0.5 (https://w3id.org/ro/wfrun/provenance/0.5), built with ``rocrate``.

What it describes, and where each piece comes from:

- the workflow: ``Snakefile`` is the main ``ComputationalWorkflow`` (Snakemake, with the version
  that wrote the archive; its ``version`` is the commit), with the rule files, the config schema,
  the conda environment and the lock (its ``buildInstructions``); every section of the resolved
  config is one of its input ``FormalParameter``s, described by the config schema;
- the run: one ``CreateAction`` (``#run``) whose ``object`` is the resolved config and its values,
  whose ``result`` is the ledger, the annotated editions and the index, from the first job's start
  to the last one's end; an ``OrganizeAction`` for Snakemake, which orchestrated it;
- every job: one ``CreateAction`` whose ``instrument`` is its rule (a ``SoftwareApplication``, the
  tool of the step ``#step-<rule>``, a ``HowToStep``, whose ``softwareVersion`` is the commit, else
  attnrepro's version), whose ``object`` is the archived files it read (its reads record's, else
  Snakemake's declared inputs) and its parameters (``PropertyValue``s of the rule's
  ``FormalParameter``s), whose ``result`` is exactly its output files, with its start and end
  time, the numerics it ran (the pin and its environment variables, the kernel, canonical or not)
  and its ``agent`` when the config names one (``crate.agent``), and one ``ControlAction`` per job
  (the step execution); from each output's provenance, Snakemake's record and the reads record
  (:mod:`attnrepro.archive.crate_jobs`), their disagreements stated in the action's description;
- the software the jobs ran, from their provenance (:mod:`attnrepro.archive.crate_entities`);
- every archived file with its ``contentSize`` and ``sha256``.

What is not known is left out: the person who ran it (the actions' ``agent``), a licence or an
author the config does not name (``crate.agent``, ``crate.license``, ``crate.author``); the licence
then is a sentence saying that none was set, which RO-Crate 1.1 admits in place of one and which is
not a licence.
"""

import graphlib
from pathlib import PurePosixPath

from rocrate.model.contextentity import ContextEntity
from rocrate.model.file import File
from rocrate.rocrate import ROCrate

from attnrepro import paths
from attnrepro.archive import crate_entities as ce, crate_jobs

CONFIG = "config.resolved.yaml"  # the archive's copy: what verify reruns
MAIN_RESULTS = (paths.LEDGER_MD, paths.LEDGER_CSV, paths.INDEX, paths.OVERVIEW)
NO_LICENSE = ("No licence was set for this crate (config key crate.license): ask the person who ran "
              "it before reusing it.")
WORKFLOW_TYPES = ["File", "SoftwareSourceCode", "ComputationalWorkflow", "HowTo"]  # HowTo: it has steps
COMPLETED = "http://schema.org/CompletedActionStatus"  # a text, as the profiles' validator reads it
ENV_VARS = (("OPENBLAS_CORETYPE", "openblas_coretype"), ("NPY_DISABLE_CPU_FEATURES", "numpy_disabled"),
            ("ATEN_CPU_CAPABILITY", "aten_cpu_capability"), ("ONEDNN_MAX_CPU_ISA", "onednn_max_cpu_isa"),
            ("MKL_CBWR", "mkl_cbwr"))


def main_results(files):
    """The run's main results among the archived files: the ledger, its overview, the index of
    results/ and the annotated editions."""
    editions = sorted(f for f in files if f.startswith(f"{paths.EDITIONS}/") and f.endswith(".html"))
    return [f for f in MAIN_RESULTS if f in files] + editions


def build(files, jobs, config, *, schema=None, environment=None, rules=None, name, created,
          snakemake_version=None):
    """The crate's JSON-LD (a dict) for an archive holding ``files`` ({path: (sha256, size)}; a
    size of None for a file whose checksum cannot be in the crate), written by ``jobs``
    (:func:`attnrepro.archive.crate_jobs.jobs`), run with the resolved ``config``."""
    builder = _Builder(files, schema or {}, rules or {})
    builder.root(config.get("crate") or {}, name, created)
    builder.package_version = ((environment or {}).get("versions") or {}).get("attnrepro")
    workflow = builder.workflow(environment or {}, snakemake_version)
    inputs = builder.config_parameters(workflow, config)
    actions = [builder.job(job) for job in jobs]
    controls = builder.steps(workflow, jobs)
    run = builder.run(workflow, inputs, jobs)
    builder.engine(run, controls, snakemake_version)
    builder.crate.root_dataset.append_to("mentions", [run, *actions])
    metadata = builder.crate.metadata
    metadata.extra_terms = dict(ce.EXTRA_TERMS)
    return single_values(metadata.generate())


def single_values(crate):
    """The crate with every one-element list of a property as that element (RO-Crate 1.1's
    JSON-LD recommendation: a single value, not a singleton array)."""
    for entity in crate["@graph"]:
        for key, value in entity.items():
            if isinstance(value, list) and len(value) == 1 and key != "@type":
                entity[key] = value[0]
    return crate


class _Builder:
    """The crate under construction and what its parts refer to."""

    def __init__(self, files, schema, rules):
        self.crate = ROCrate(version="1.1")
        self.files, self.schema, self.rules = files, schema, rules
        self.entities = {}
        for path, (sha256, size) in sorted(files.items()):
            self.entities[path] = self.crate.add(File(
                self.crate, dest_path=path, properties=ce.file_properties(path, sha256, size)))
        self.tools, self.software, self.required = {}, {}, set()
        self.version = None  # the workflow's commit, when known: the version of its rules too
        self.package_version = None  # attnrepro's version: its rules' when the commit is not known
        self.agent = None  # the Person who ran the workflow (config crate.agent), when named
        self.code = None  # where each commit's code is published (config crate.code), when named
        self.key_of = {}  # {a tool's @id: its key (_tool_key)}

    def add(self, identifier, properties):
        return self.crate.add(ContextEntity(self.crate, identifier, properties=properties))

    # ---- the crate, the workflow and its parameters ---------------------------------------

    def root(self, settings, name, created):
        """Name, description, date, licence and author (the last two only when the config sets them)."""
        root = self.crate.root_dataset
        root["name"] = settings.get("title") or name
        root["description"] = (
            "One run of the attnrepro workflow, which reproduces every number, table and figure of "
            "three articles on attention from their own procedures: the Parquet results of every job "
            "with their provenance, the tables, figures, ledger and annotated articles, the workflow "
            "and the environment that made them, and how each job ran.")
        root["datePublished"] = created
        if "README.md" in self.entities:
            self.entities["README.md"]["about"] = root
        root["conformsTo"] = [self.crate.add(p) for p in ce.profile_entities(self.crate)]
        license_ = settings.get("license")
        if license_:
            uri = license_ if "://" in license_ else f"https://spdx.org/licenses/{license_}"
            root["license"] = self.add(uri, {"@type": "CreativeWork", "name": license_,
                                             "identifier": license_})
        else:
            root["license"] = NO_LICENSE
        if author := self.person(settings.get("author"), "author"):
            root["author"] = author
        self.agent = self.person(settings.get("agent"), "agent")
        self.code = settings.get("code")

    def person(self, named, role):
        """The Person the config names ({name, id}: its id, else ``#<role>-<name>``), or None."""
        if not (named or {}).get("name"):
            return None
        uri = named.get("id") or f"#{role}-{named['name'].replace(' ', '-')}"
        return self.add(uri, {"@type": "Person", "name": named["name"]})

    def workflow(self, environment, snakemake_version):
        """The Snakefile as the main ComputationalWorkflow, its environment files as its
        buildInstructions."""
        props = {**ce.file_properties("Snakefile", *self.files.get("Snakefile", (None, None))),
                 "@type": WORKFLOW_TYPES, "name": "attnrepro"}
        git = environment.get("git") or {}
        if git.get("commit"):
            self.version = props["version"] = git["commit"] + ("-dirty" if git.get("dirty") else "")
        workflow = self.crate.add_workflow(dest_path="Snakefile", main=True, lang="snakemake",
                                           lang_version=snakemake_version, properties=props)
        self.entities["Snakefile"] = workflow
        build = []
        for path, spec in ce.BUILD_FILES:
            if path in self.entities:
                self.entities[path]["conformsTo"] = self.crate.add(ce.format_entity(self.crate, spec))
                build.append(self.entities[path])
        if build:
            workflow["buildInstructions"] = build
        return workflow

    def config_parameters(self, workflow, config):
        """One FormalParameter (the workflow's input) and one PropertyValue (its value in this
        run, a section as JSON) per section of the resolved config: the jobs' own parameters are
        the actions' PropertyValues, key by key."""
        values = []
        for key, value in sorted(config.items()):
            props = {"@type": "FormalParameter", "name": key, "additionalType": ce.value_type(value)}
            if description := ce.schema_description(self.schema, key):
                props["description"] = description
            parameter = self.add(f"#config-{key}", props)
            workflow.append_to("input", parameter)
            values.append(self.add(f"#config-{key}-value", {
                "@type": "PropertyValue", "name": key, "value": ce.value_of(value),
                "exampleOfWork": parameter}))
        return values

    # ---- the tools (rules), their steps, and one action per job -----------------------------

    def tool(self, job):
        """The rule (or, run by hand, the experiment) that ran ``job``, created once."""
        key = _tool_key(job)
        if key not in self.tools:
            rule_file = self.rules.get(job.rule)
            where = f", defined in {rule_file}" if rule_file else ""
            described = (f"Snakemake rule {job.rule}{where}" if job.rule
                         else f"experiment {job.name}, run without Snakemake")
            props = {"@type": "SoftwareApplication", "name": job.name, "description": described}
            if rule_file in self.entities:  # its source, in the crate
                props.update(isPartOf=self.entities[rule_file], url={"@id": rule_file})
            if self.version or self.package_version:  # the commit, else attnrepro's version
                props["softwareVersion"] = self.version or self.package_version
            self.tools[key] = self.add(self.published(rule_file, job.rule) or f"#rule-{key}", props)
            self.key_of[self.tools[key].id] = key
        return self.tools[key]

    def published(self, rule_file, rule):
        """The web address of a rule in its commit's published code (config ``crate.code``, a
        template of ``{commit}`` and ``{path}``), its name the fragment; None when the config names
        no such address, the commit is not known or had uncommitted changes, or the rule no file."""
        if not (self.code and rule_file and rule and self.version) or self.version.endswith("-dirty"):
            return None
        address = self.code.replace("{commit}", self.version).replace("{path}", rule_file)  # no str.format
        return f"{address}#{rule}"

    def parameter(self, tool, direction, slot, kind, description=None):
        """The FormalParameter ``slot`` of a tool's input or output, created once."""
        identifier = f"#rule-{self.key_of[tool.id]}-{direction}-{slot}"  # in the crate, as its steps
        if identifier not in self.crate:
            props = {"@type": "FormalParameter", "name": slot, "additionalType": kind}
            if description:
                props["description"] = description
            tool.append_to(direction, self.add(identifier, props))
        return self.crate.get(identifier)

    def job(self, job):
        """The CreateAction of one job, and the ControlAction of its step."""
        tool = self.tool(job)
        action_id = f"#job-{job.outputs[0]}"
        objects = []
        for path in job.read:
            if path in self.entities:
                self.entities[path].append_to("exampleOfWork", self.parameter(tool, "input", "files", "File"))
                objects.append(self.entities[path])
        objects += self.job_parameters(tool, action_id, job)
        for path in job.outputs:
            parameter = self.parameter(tool, "output", _slot(path, job), "File")
            self.entities[path].append_to("exampleOfWork", parameter)
        more = f" and {len(job.outputs) - 2} more" if len(job.outputs) > 2 else ""
        unheld = [p for p in job.reads or () if p not in self.entities]
        props = {"@type": "CreateAction", "name": f"{job.name}: {', '.join(job.outputs[:2])}{more}",
                 "description": crate_jobs.description(job, unheld), "instrument": tool,
                 "result": [self.entities[p] for p in job.outputs], "actionStatus": COMPLETED}
        if self.agent:
            props["agent"] = self.agent
        if objects:
            props["object"] = objects
        props.update({k: v for k, v in (("startTime", job.start), ("endTime", job.end)) if v})
        environment = self.environment(action_id, job)
        if environment:
            props["environment"] = environment
        action = self.add(action_id, props)
        self.link_records(action, job)
        self.link_software(tool, job)
        return action

    def job_parameters(self, tool, action_id, job):
        """PropertyValues of a job's parameters (its provenance's, and the numerics pin)."""
        provenance = job.provenance or {}
        params = dict(sorted((provenance.get("params") or {}).items()))
        pin = (provenance.get("numerics") or {}).get("pin")
        if pin:
            params["numerics.pin"] = pin
        section = provenance.get("experiment")
        return [self.add(f"{action_id}-param-{key}", {
            "@type": "PropertyValue", "name": key, "value": ce.value_of(value),
            "exampleOfWork": self.parameter(tool, "input", key, ce.value_type(value),
                                            ce.schema_description(self.schema, f"{section}.{key}"))})
            for key, value in params.items()]

    def environment(self, action_id, job):
        """PropertyValues of the environment variables the numerics pin set for the job."""
        numerics = (job.provenance or {}).get("numerics") or {}
        return [self.add(f"{action_id}-env-{var}", {"@type": "PropertyValue", "name": var,
                                                     "value": numerics[key]})
                for var, key in ENV_VARS if numerics.get(key)]

    def link_records(self, action, job):
        """The job's log, benchmark and reads record are ``about`` its action."""
        for log in job.logs:
            for path in (log, paths.benchmark_of_log(log), paths.reads_of_log(log)):
                if path in self.entities:
                    self.entities[path]["about"] = action

    def link_software(self, tool, job):
        """The software of a job's provenance, as its tool's softwareRequirements."""
        for key, version in ce.job_software(job.provenance or {}):
            if (key, version) not in self.software:
                entity = (ce.openblas_entity(self.crate, *version) if key == "openblas"
                          else ce.software_entity(self.crate, key, version))
                self.software[key, version] = self.crate.add(entity)
            if (tool.id, key, version) not in self.required:
                self.required.add((tool.id, key, version))
                tool.append_to("softwareRequirements", self.software[key, version])

    def steps(self, workflow, jobs):
        """One HowToStep per tool, positioned in an order that puts each rule after the rules
        whose outputs it reads, and one ControlAction per job (its step's execution)."""
        producer = {out: _tool_key(job) for job in jobs for out in job.outputs}
        graph = {}
        for job in jobs:
            key = _tool_key(job)
            graph.setdefault(key, set()).update({producer[i] for i in job.inputs if i in producer} - {key})
        try:
            order = list(graphlib.TopologicalSorter(graph).static_order())
        except graphlib.CycleError:
            order = sorted(graph)
        for tool in self.tools.values():
            workflow.append_to("hasPart", tool)
        for position, key in enumerate(order):
            workflow.append_to("step", self.add(f"#step-{key}", {
                "@type": "HowToStep", "name": self.tools[key]["name"], "position": str(position),
                "workExample": self.tools[key]}))
        return [self.add(f"#control-{job.outputs[0]}", {
            "@type": "ControlAction", "name": f"orchestrate {job.name}",
            "instrument": {"@id": f"#step-{_tool_key(job)}"}, "object": {"@id": f"#job-{job.outputs[0]}"},
            "actionStatus": COMPLETED}) for job in jobs]

    # ---- the run and the engine ------------------------------------------------------------

    def run(self, workflow, inputs, jobs):
        """The CreateAction of the whole run: the config in, the main results out."""
        starts = sorted(j.start for j in jobs if j.start)
        ends = sorted(j.end for j in jobs if j.end)
        results = main_results(self.files)
        for slot in dict.fromkeys(map(_slot, results)):
            workflow.append_to("output", self.add(f"#output-{slot}", {
                "@type": "FormalParameter", "name": slot, "additionalType": "File"}))
        for path in results:
            self.entities[path].append_to("exampleOfWork", {"@id": f"#output-{_slot(path)}"})
        objects = [self.entities[CONFIG]] if CONFIG in self.entities else []
        description = (f"All {len(jobs)} jobs of the run, from the resolved config ({CONFIG}) to the "
                       "ledger, the annotated articles and the index.")
        if jobs and not any(job.rule for job in jobs):
            description += (" Snakemake's records (.snakemake/metadata) were not found: the jobs are "
                            "described from their files' provenance, and those that write no Parquet "
                            "file (tables, figures, the ledger) not at all.")
        props = {"@type": "CreateAction", "name": "Run of the attnrepro workflow", "description": description,
                 "instrument": workflow, "object": objects + inputs,
                 "result": [self.entities[p] for p in results], "actionStatus": COMPLETED}
        if starts and ends:
            props.update(startTime=starts[0], endTime=ends[-1])
        if self.agent:
            props["agent"] = self.agent
        return self.add("#run", props)

    def engine(self, run, controls, snakemake_version):
        """Snakemake, and the OrganizeAction of its orchestration of every job's step (none
        without a step: the profile wants one at least)."""
        if not controls:
            return None
        uri = (f"https://pypi.org/project/snakemake/{snakemake_version}/" if snakemake_version
               else "https://snakemake.github.io/")
        props = {"@type": "SoftwareApplication", "name": "Snakemake", "url": "https://snakemake.github.io/"}
        if snakemake_version:
            props["version"] = snakemake_version
        snakemake = self.add(uri, props)
        props = {"@type": "OrganizeAction", "name": f"Run of Snakemake {snakemake_version or ''}".strip(),
                 "instrument": snakemake,
                 "object": controls, "result": run}
        props.update({k: run[k] for k in ("startTime", "endTime", "agent") if run.get(k)})
        return self.add("#snakemake-run", props)


def _tool_key(job):
    """What names a job's tool and step: its rule, or the experiment of a job run by hand."""
    return job.rule or f"experiment-{job.name}"


def _slot(path, job=None):
    """A file's parameter slot: a Parquet file's table, else its kind (md, csv, svg, html, ...)."""
    p = PurePosixPath(path)
    if p.suffix == ".parquet":
        result = ce.result_file(path)  # the path's own table (a case may hold a dot: eps-0.0001)
        table = (job.provenance or {}).get("table") if job else None
        return result.table if result is not None else table or "main"
    if paths.under(p, paths.EDITIONS):
        return "edition"
    return p.name.replace(".", "-") if job is None else p.suffix.lstrip(".") or p.name
