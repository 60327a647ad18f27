"""The archive's RO-Crate: its jobs from Snakemake's records and the provenance, what it leaves
out, the community's validator and a second reader on the small run's archive, and verify
reading it."""

import base64
import json
import subprocess
import tarfile

import pandas as pd
import pytest
import yaml
from rocrate.rocrate import ROCrate

import crate_validation
from conftest import REPO
from attnrepro import paths
from attnrepro.archive import crate, crate_entities, crate_jobs, pack, verify, verify_crate, verify_rerun
from attnrepro.archive import verify_warnings
from attnrepro.dag import config as cfg, plan, sweep_plan
from attnrepro.evidence import sweep
from attnrepro.report.evidence_tables import numerics_evaluate
from attnrepro.run import io

RUNCRATE = REPO / ".venv-runcrate" / "bin" / "runcrate"  # make crate-env


# ---- units: the jobs, what is left out, the schema's descriptions ---------------------------

def _record(root, output, rule, start, end, inputs=(), job_hash=1, shellcmd=None, logs=()):
    """A Snakemake metadata record of ``output`` in ``root``/.snakemake/metadata."""
    name = base64.urlsafe_b64encode(output.encode()).decode()
    path = root / crate_jobs.METADATA / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"rule": rule, "input": list(inputs), "log": list(logs), "starttime": start,
                                "endtime": end, "job_hash": job_hash, "shellcmd": shellcmd or rule,
                                "incomplete": False}))


def _parquet(root, output, experiment, started, finished, table="main"):
    io.write_parquet(pd.DataFrame({"x": [1.0]}), root / output, {
        "experiment": experiment, "params": {"n": 5}, "table": table, "argv": [experiment],
        "started": crate_jobs.iso(started), "finished": crate_jobs.iso(finished),
        "numerics": {"pin": "haswell-noavx512", "canonical": True, "openblas_kernel": "Haswell",
                     "openblas_coretype": "Haswell"}})


T0 = 1_800_000_000.0


def test_jobs_join_snakemakes_records_and_the_provenance_and_say_where_they_disagree(tmp_path):
    a, a_extra = "results/data/001/a/default.parquet", "results/data/001/a/default.w.parquet"
    _parquet(tmp_path, a, "a", T0 + 1, T0 + 5)
    _parquet(tmp_path, a_extra, "a", T0 + 1, T0 + 5, table="w")
    _record(tmp_path, a, "a_case", T0, T0 + 6, job_hash=7)
    _record(tmp_path, a_extra, "a_case", T0, T0 + 6, job_hash=7)
    late = "results/data/001/b/default.parquet"  # its provenance ends 60 s after Snakemake's record
    _parquet(tmp_path, late, "b", T0 + 1, T0 + 70)
    _record(tmp_path, late, "c_case", T0, T0 + 10, inputs=[a], job_hash=8)
    by_hand = "results/data/001/d/default.parquet"  # no Snakemake record
    _parquet(tmp_path, by_hand, "d", T0 + 20, T0 + 21)
    table = "results/tables/t.md"  # a report job: no provenance
    (tmp_path / table).parent.mkdir(parents=True)
    (tmp_path / table).write_text("t")
    _record(tmp_path, table, "table_t", T0 + 30, T0 + 31, inputs=[a, "src/attnrepro/run/io.py"], job_hash=9)
    _record(tmp_path, "results/tables/t.csv", "table_t", T0 + 30, T0 + 31, job_hash=9)  # not archived

    jobs = {j.outputs[0]: j for j in crate_jobs.jobs([a, a_extra, late, by_hand, table, "x.log"], tmp_path)}
    assert sorted(jobs) == [a, late, by_hand, table]
    no_reads = crate_jobs.NO_READS.format(where="the job has no log")
    assert jobs[a].outputs == [a, a_extra] and jobs[a].rule == "a_case" and jobs[a].notes == [no_reads]
    assert (jobs[a].start, jobs[a].end) == (crate_jobs.iso(T0 + 1), crate_jobs.iso(T0 + 5))  # provenance's
    b = jobs[late]
    assert b.notes == [
        "Snakemake's record and the files' provenance disagree: the rule is c_case, the experiment b.",
        "Snakemake's record and the files' provenance disagree on the times: Snakemake recorded this job "
        f"from {crate_jobs.iso(T0)} to {crate_jobs.iso(T0 + 10)}, the provenance says "
        f"{crate_jobs.iso(T0 + 1)} to {crate_jobs.iso(T0 + 70)} (this action's times are the provenance's).",
        no_reads]
    assert jobs[by_hand].rule is None and "Snakemake has no record of these files" in jobs[by_hand].notes[0]
    t = jobs[table]
    assert t.provenance is None and t.inputs == [a, "src/attnrepro/run/io.py"]
    assert (t.start, t.end) == (crate_jobs.iso(T0 + 30), crate_jobs.iso(T0 + 31))
    assert t.notes == ["Outputs of this job that the archive does not hold: results/tables/t.csv.", no_reads]
    assert t.reads is None and t.read == t.inputs  # no reads record: Snakemake's declared inputs


TABLE_LOG = "results/logs/report/t.log"
READ = {"rule": "table_t", "entry": "attnrepro.jobs.table",  # a reads record (attnrepro.paths.reads_of_log)
        "files": ["results/data/001/b/default.parquet", "src/attnrepro/report/products/t.py",
                  "workflow/schemas/published.schema.yaml"],
        "modules": ["attnrepro.jobs.table", "attnrepro.report.products.t"]}


def _read_and_declared(root):
    """A run in ``root`` of two jobs: a table whose reads record lists b (not declared) and two
    files the archive will not hold, and b's job, which has a log and no record; the archived files."""
    a, b = "results/data/001/a/default.parquet", "results/data/001/b/default.parquet"
    table = "results/tables/t.md"
    for path in (a, b):
        _parquet(root, path, path.split("/")[3], T0 + 1, T0 + 5)
    _record(root, b, "b_case", T0, T0 + 6, inputs=[a], job_hash=2, logs=["results/logs/001/b.log"])
    _record(root, table, "table_t", T0 + 30, T0 + 31, inputs=[a], job_hash=9, logs=[TABLE_LOG])
    for path, text in ((table, "t"), (TABLE_LOG, ""), ("results/logs/001/b.log", ""),
                       (paths.reads_of_log(TABLE_LOG), json.dumps(READ))):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return [a, b, table, TABLE_LOG, "results/logs/001/b.log"]


def test_a_jobs_objects_are_the_files_its_reads_record_lists_else_its_declared_inputs(tmp_path):
    files = _read_and_declared(tmp_path)
    reads = paths.reads_of_log(TABLE_LOG)
    assert pack.reads_records(files, tmp_path) == {reads}  # beside its log: archived with it
    jobs = {j.rule: j for j in crate_jobs.jobs(files, tmp_path)}
    assert jobs["table_t"].reads == sorted(READ["files"]) and jobs["table_t"].notes == []
    assert jobs["b_case"].reads is None and jobs["b_case"].notes == [crate_jobs.NO_READS.format(
        where="results/logs/001/b.reads.json")]
    graph = crate.build({f: ("0" * 64, 1) for f in [*files, reads]}, list(jobs.values()), {},
                        name="x", created=crate_jobs.iso(T0 + 100))["@graph"]
    crate_ = {e["@id"]: e for e in graph}
    table = crate_["#job-results/tables/t.md"]
    assert _ids(table["object"]) == ["results/data/001/b/default.parquet"]  # read, not the declared a
    assert table["description"].endswith(
        "It read 2 project file(s) that the archive does not hold "
        "(results/logs/report/t.reads.json lists them).")
    assert crate_[reads]["about"] == {"@id": "#job-results/tables/t.md"}
    assert crate_[reads]["description"].startswith("What the job it is about read")
    b = crate_["#job-results/data/001/b/default.parquet"]
    assert _ids(b["object"])[0] == "results/data/001/a/default.parquet"  # declared: no record
    assert "No record of the files this job read exists (results/logs/001/b.reads.json)" in b["description"]


def test_an_unreadable_reads_record_is_said_and_the_declared_inputs_stand(tmp_path):
    (tmp_path / "results/logs").mkdir(parents=True)
    (tmp_path / "results/logs/x.reads.json").write_text("{not json")
    assert crate_jobs.reads_record(tmp_path, ["results/logs/x.log"]) == (None, crate_jobs.NO_READS.format(
        where="results/logs/x.reads.json cannot be read: JSONDecodeError"))
    (tmp_path / "results/logs/x.reads.json").write_text('{"files": "a"}')
    assert crate_jobs.reads_record(tmp_path, ["results/logs/x.log"])[1].startswith(
        "No record of the files this job read exists (results/logs/x.reads.json lists no files)")


def test_pack_archives_each_reads_record_beside_its_log(tmp_path):
    files = _read_and_declared(tmp_path)
    out = pack.write(tmp_path / "out/attnrepro-results-x.tar.gz", files, "{}\n", tmp_path)
    with tarfile.open(out) as tar:
        names = tar.getnames()
        graph = json.load(tar.extractfile("attnrepro-results-x/ro-crate-metadata.json"))["@graph"]
    crate_ = {e["@id"]: e for e in graph}
    assert "attnrepro-results-x/results/logs/report/t.reads.json" in names
    assert "attnrepro-results-x/results/logs/001/b.reads.json" not in names  # none was written
    assert _ids(crate_["#job-results/tables/t.md"]["object"]) == ["results/data/001/b/default.parquet"]


def _build(settings, tmp_path, environment=None, rules=None):
    path = "results/data/001/a/default.parquet"
    _parquet(tmp_path, path, "a", T0 + 1, T0 + 5)
    _record(tmp_path, path, "a_case", T0, T0 + 6)
    jobs = crate_jobs.jobs([path], tmp_path)
    files = {path: ("0" * 64, 10), "Snakefile": ("1" * 64, 20), "config.resolved.yaml": ("2" * 64, 30)}
    graph = crate.build(files, jobs, {"crate": settings, "a": {"n": 5}}, name="attnrepro-results-x",
                        created=crate_jobs.iso(T0 + 100), environment=environment, rules=rules)["@graph"]
    return {e["@id"]: e for e in graph}


def test_what_is_unknown_is_left_out_and_what_the_config_names_is_used(tmp_path):
    crate_ = _build({"title": None, "author": None, "license": None}, tmp_path)
    root = crate_["./"]
    assert root["name"] == "attnrepro-results-x" and "author" not in root
    assert root["license"] == crate.NO_LICENSE  # a sentence that none was set, not a licence
    actions = [e for e in crate_.values() if str(e["@type"]).endswith("Action")]
    assert len(actions) == 4 and not any("agent" in e for e in actions)  # who ran it: not known
    assert not any(e["@type"] == "Person" for e in crate_.values())
    job = crate_["#job-results/data/001/a/default.parquet"]
    assert (job["startTime"], job["endTime"]) == (crate_jobs.iso(T0 + 1), crate_jobs.iso(T0 + 5))
    assert "Numerics: pin haswell-noavx512; ran OpenBLAS kernel Haswell; canonical." in job["description"]
    env = crate_[job["environment"]["@id"]]
    assert (env["name"], env["value"]) == ("OPENBLAS_CORETYPE", "Haswell")
    assert crate_["#config-a-value"]["value"] == '{"n": 5}'  # the run's parameters: the config, by section
    assert crate_["#config-a"]["additionalType"] == "PropertyValue"
    assert crate_[job["object"][0]["@id"]] == {  # the job's parameters, one by one
        "@id": "#job-results/data/001/a/default.parquet-param-n", "@type": "PropertyValue", "name": "n",
        "value": 5, "exampleOfWork": {"@id": "#rule-a_case-input-n"}}

    named = _build({"title": "T", "license": "CC-BY-4.0",
                    "author": {"name": "Ada Lovelace", "id": "https://orcid.org/0000-0002-1825-0097"}},
                   tmp_path / "named")
    root = named["./"]
    assert root["name"] == "T" and root["license"] == {"@id": "https://spdx.org/licenses/CC-BY-4.0"}
    assert root["author"] == {"@id": "https://orcid.org/0000-0002-1825-0097"}
    assert named["https://orcid.org/0000-0002-1825-0097"] == {
        "@id": "https://orcid.org/0000-0002-1825-0097", "@type": "Person", "name": "Ada Lovelace"}


ORCID = "https://orcid.org/0000-0002-1825-0097"


def test_every_action_names_the_agent_the_config_names(tmp_path):
    crate_ = _build({"agent": {"name": "Ada Lovelace", "id": ORCID}}, tmp_path)
    actions = {e["@id"]: e for e in crate_.values() if e["@type"] in ("CreateAction", "OrganizeAction")}
    assert sorted(actions) == ["#job-results/data/001/a/default.parquet", "#run", "#snakemake-run"]
    assert all(a["agent"] == {"@id": ORCID} for a in actions.values())
    assert crate_[ORCID] == {"@id": ORCID, "@type": "Person", "name": "Ada Lovelace"}
    assert "author" not in crate_["./"]  # who ran it is not who wrote it
    unnamed = _build({"agent": {"name": "Ada Lovelace"}}, tmp_path / "unnamed")
    assert unnamed["#run"]["agent"] == {"@id": "#agent-Ada-Lovelace"}


def test_each_tool_has_a_software_version_and_a_web_address_where_one_is_known(tmp_path):
    tool = "#rule-a_case"
    assert "softwareVersion" not in _build({}, tmp_path)[tool]  # nothing known: left out
    released = _build({}, tmp_path / "v", {"versions": {"attnrepro": "0.1.0"}})[tool]
    assert released["softwareVersion"] == "0.1.0" and "version" not in released  # the profile: one of them
    committed = _build({}, tmp_path / "c", {"versions": {"attnrepro": "0.1.0"},
                                            "git": {"commit": "abc", "dirty": True}})
    assert committed[tool]["softwareVersion"] == committed["Snakefile"]["version"] == "abc-dirty"
    code, rules = "https://github.com/o/attnrepro/blob/{commit}/{path}", {"a_case": "workflow/rules/a.smk"}
    git = {"versions": {}, "git": {"commit": "abc", "dirty": False}}
    published = _build({"code": code}, tmp_path / "p", git, rules)
    rule = "https://github.com/o/attnrepro/blob/abc/workflow/rules/a.smk#a_case"  # the config's address
    assert published[rule]["name"] == "a_case" and "#rule-a_case" not in published
    assert published["#job-results/data/001/a/default.parquet"]["instrument"] == {"@id": rule}
    assert published["#rule-a_case-input-n"]["@type"] == "FormalParameter"  # its slots: in the crate
    dirty = _build({"code": code}, tmp_path / "d", {"git": {"commit": "abc", "dirty": True}}, rules)
    assert "#rule-a_case" in dirty  # what ran is not the published commit: no address
    openblas = crate_entities.openblas_entity(ROCrate(), "0.3.27", "Haswell")
    assert openblas.id == "https://www.openblas.net/#openblas-0.3.27-Haswell"  # absolute: the profile's ask
    assert openblas["version"] == "0.3.27"


def test_the_config_parameters_are_described_by_the_schema():
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    describe = crate_entities.schema_description
    assert describe(schema, "scale_table.d_k").startswith("grid: fans out")
    assert describe(schema, "crate.license").startswith("the licence of the crate's contents")
    assert describe(schema, "train.ablations.no_scaling.lr") == "as train.lr"  # a mapping's entries ($ref)
    assert describe(schema, "numerics.cases.train") == "the experiment's case names, or all for every case"
    assert describe(schema, "scale_table.no_such_key") is None



def _built(config):
    """{path: (experiment, table, case, article, setting, where)} of every experiment table ``config``
    plans: the run's, the seed distribution's and the numerics sweep's under every candidate setting
    (``setting``, else None); ``where``: what the crate's description adds for the folder."""
    built = {}
    for exp_id in plan.enabled(config):
        exp = plan.EXPERIMENTS[exp_id]
        for case in plan.cases(exp_id, config):
            for table in exp.tables:
                built[plan.output_path(exp_id, case, table)] = (exp_id, table, case, exp.article, None, "")
    train, seeds = plan.EXPERIMENTS["train"], ", a training of the seed distribution beyond the run's own"
    for case in plan.seed_distribution_cases(config):
        for table in train.tables:
            built[plan.seed_output_path(case, table)] = ("train", table, case, train.article, None, seeds)
    settings = sweep.candidates(config["numerics"])
    for setting in settings:
        rerun = f", rerun under the numerics setting {setting}"
        for exp_id, cases in sweep_plan.sweep_cases(config).items():
            exp = plan.EXPERIMENTS[exp_id]
            for case in cases:
                for table in exp.tables:
                    built[sweep_plan.output_path(setting, exp_id, case, table)] = (
                        exp_id, table, case, exp.article, setting, rerun)
    assert set(plan.all_outputs(config)) | set(sweep_plan.outputs(config, settings)) <= set(built)
    assert set(plan.seed_training_paths(config, train.tables)) <= set(built)
    return built


@pytest.mark.parametrize("overlay", [None, "config/small.yaml", "config/evidence.yaml"])
def test_the_crate_records_each_result_file_as_the_plan_built_it(overlay):
    """Every experiment table of the three shipped configs (attnrepro.paths.parse_result, the crate's
    and the numerics evaluation's one parser): a case name's dots (eps-0.0001) are no table's."""
    built = _built(cfg.resolve(overlay and REPO / overlay))
    for path, (experiment, table, case, article, setting, where) in built.items():
        assert crate_entities.result_file(path)[:4] == (experiment, table, case, article), path
        described = crate_entities.file_properties(path)["description"]
        assert described.startswith(f"The {table} table of experiment {experiment} (article {article}), "
                                    f"case {case}{where}: a Parquet file"), (path, described)
        if setting is not None:
            assert numerics_evaluate.setting_of(path) == setting
        else:
            with pytest.raises(ValueError, match="not a numerics sweep file"):
                numerics_evaluate.setting_of(path)
    grad_check = "results/data/001/grad_check/post_ln-false_eps-0.0001.parquet"
    assert built[grad_check][:3] == ("grad_check", "main", "post_ln-false_eps-0.0001")
    assert any(".0001." in p for p in built) and any("/numerics/article." in p for p in built)
    assert crate_entities.result_file("results/tables/grad_check.csv") is None

@pytest.mark.parametrize("overlay", [None, "config/small.yaml", "config/evidence.yaml"])
def test_the_crates_file_entities_name_what_paths_parse_result_reads(overlay):
    """Every output of the three shipped configs, validated, through the crate's File entities: the
    experiment, table and case its description names are attnrepro.paths.parse_result's."""
    config = cfg.validate(cfg.resolve(overlay and REPO / overlay))
    outputs = plan.all_outputs(config)
    graph = crate.build({p: ("0" * 64, 1) for p in outputs}, [], config, name="x", created="2026-01-01")
    entities = {e["@id"]: e for e in graph["@graph"]}
    for path in outputs:
        r = paths.parse_result(path)
        assert entities[path]["description"].startswith(
            f"The {r.table} table of experiment {r.experiment} (article {r.article}), case {r.case}: "), path
    assert "results/data/001/grad_check/post_ln-false_eps-0.0001.parquet" in outputs  # a case's dot


def test_the_crate_records_the_grad_check_eps_file_as_table_main_of_its_case():
    path = "results/data/001/grad_check/post_ln-false_eps-0.0001.parquet"
    entity = {e["@id"]: e for e in crate.build({path: ("0" * 64, 1)}, [], {}, name="x",
                                                 created="2026-01-01")["@graph"]}[path]
    assert entity["description"].startswith(
        "The main table of experiment grad_check (article 001), case post_ln-false_eps-0.0001: a Parquet")
    assert crate_entities.result_file(path)[:3] == ("grad_check", "main", "post_ln-false_eps-0.0001")


# ---- the small run's archive: the jobs, the validator, runcrate, verify -----------------------

@pytest.fixture(scope="module")
def extracted(archived, tmp_path_factory):
    """(run folder, extracted top folder, crate as {@id: entity}) of the small run's archive."""
    results, archive = archived
    top = verify.extract(archive, tmp_path_factory.mktemp("crate"))
    graph = json.loads((top / "ro-crate-metadata.json").read_text())["@graph"]
    return results.parent, top, {e["@id"]: e for e in graph}


def _ids(value):
    return [v["@id"] for v in (value if isinstance(value, list) else [value])]


def _snakemake_jobs(run, archived_files):
    """{(rule, job hash): outputs} of every job that wrote an archived file, read from
    .snakemake/metadata independently of attnrepro.archive.crate_jobs."""
    jobs = {}
    root = run / ".snakemake" / "metadata"
    for path in root.rglob("*"):
        if path.is_file():
            name = "".join(part.lstrip("@") for part in path.relative_to(root).parts)
            output = base64.urlsafe_b64decode(name).decode()
            record = json.loads(path.read_text())
            jobs.setdefault((record["rule"], record["job_hash"]), set()).add(output)
    return {key: outputs for key, outputs in jobs.items() if outputs & archived_files}


def test_every_job_is_one_create_action_whose_result_is_exactly_its_outputs(extracted):
    run, top, crate_ = extracted
    lines = (top / "MANIFEST.sha256").read_text().splitlines()
    manifest = dict(reversed(line.split("  ", 1)) for line in lines)
    expected = _snakemake_jobs(run, set(manifest))
    assert len(expected) > 80 and any(rule == "table_scale_table" for rule, _ in expected)
    actions = [e for e in crate_.values() if e["@type"] == "CreateAction" and e["@id"] != "#run"]
    results = sorted(sorted(_ids(a["result"])) for a in actions)
    assert results == sorted(sorted(outputs) for outputs in expected.values())  # one action per job
    for rule, _ in expected:
        assert f"#rule-{rule}" in {a["instrument"]["@id"] for a in actions}
    for path in {p for outputs in expected.values() for p in outputs}:  # the manifest's hashes
        assert crate_[path]["sha256"] == manifest[path], path
        assert crate_[path]["contentSize"] == str((top / path).stat().st_size), path
    run_action = crate_["#run"]
    assert set(_ids(run_action["result"])) >= {"results/LEDGER.md", "results/ledger.csv", "results/README.md"}
    assert "config.resolved.yaml" in _ids(run_action["object"])


# check: why it fails on the small run's crate (each one a property nobody knows, or that the
# profiles' validator asks of something that has no such property)
RECOMMENDED = {
    "Action agent": "config crate.agent is null: who ran it is left out",
    "Root Data Entity: `author` property": "config crate.author is null in the small config",
    "Root Data Entity: `license` SHOULD link to a Contextual Entity": "crate.license is null: a sentence",
    "Root Data Entity: `publisher` property": "no publisher is known",
    "Main Workflow Bioschemas compliance": "the workflow lacks Bioschemas' minimum creator and licence",
    "SoftwareApplication id": "crate.code is null: the rules keep #rule-...; the Snakefile is a file",
    "Application url": "the Snakefile has no web address (the tests' copy is not a checkout)",
    "version": "the Snakefile's version is its commit: the tests' copy has none",
}  # "version or softwareVersion" passes: a rule's softwareVersion is attnrepro's where no commit is


@pytest.mark.full
def test_the_validator_finds_no_required_failure_at_the_provenance_run_crate_profile(extracted):
    """~20 s (SHACL with OWL-RL inference): the community's validator, offline."""
    _, top, _ = extracted
    result, adapter = crate_validation.validate(top)
    found = crate_validation.failures(result)
    assert found.get("REQUIRED", []) == []
    assert {name for name, _, _ in found.get("RECOMMENDED", [])} == set(RECOMMENDED)
    assert adapter.refused == []  # nothing but the RO-Crate context was asked for


def test_runcrate_reads_the_crate_and_names_every_step(extracted):
    run, top, crate_ = extracted
    if not RUNCRATE.is_file():
        from conftest import missing
        missing(f"runcrate is not installed ({RUNCRATE.relative_to(REPO)}: make crate-env)")
    proc = subprocess.run([str(RUNCRATE), "report", str(top)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    steps = {line.split("step: ", 1)[1] for line in proc.stdout.splitlines() if line.startswith("  step: ")}
    rules = {rule for rule, _ in _snakemake_jobs(run, set(crate_))}
    assert steps == {f"#step-{rule}" for rule in rules} and "#step-table_scale_table" in steps
    assert proc.stdout.count("action: #job-") == len(
        [e for e in crate_.values() if e["@type"] == "CreateAction"]) - 1


def _retar(top, out):
    with tarfile.open(out, "w:gz") as tar:
        tar.add(top, arcname=top.name)
    return out


@pytest.mark.full
def test_verify_names_a_file_whose_sha256_is_not_the_crates(archived, tmp_path, capsys):
    results, archive = archived
    top = verify.extract(archive, tmp_path / "x")
    table = "results/tables/scale_table.md"  # verify compares no Markdown: only the checksums see it
    (top / table).write_text((top / table).read_text() + "\nchanged\n")
    status = verify.main([str(_retar(top, tmp_path / archive.name)), "--results", str(results)])
    out = capsys.readouterr().out
    assert status == 0  # the results compared are equal; the warning says what changed
    assert ("warning: 1 file(s) of the archive do not match the SHA-256 of ro-crate-metadata.json "
            f"(changed after it was written): {table}") in out.splitlines()


def _crate_file(top, graph):
    (top / "ro-crate-metadata.json").write_text(json.dumps({"@context": [], "@graph": graph}))


def test_verify_takes_config_lock_commit_and_versions_from_the_crate(tmp_path, monkeypatch, capsys):
    top = tmp_path / "top"
    (top / "results").mkdir(parents=True)
    for name, text in (("run.yaml", "skip: [train]\n"), ("pins/pip.lock", "pins/pip.lock")):
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text(text)
    _crate_file(top, [
        {"@id": "./", "@type": "Dataset", "mainEntity": {"@id": "Snakefile"}},
        {"@id": "Snakefile", "@type": ["File", "ComputationalWorkflow"], "version": "abc123-dirty",
         "buildInstructions": [{"@id": "pins/pip.lock"}]},
        {"@id": "pins/pip.lock", "@type": "File", "conformsTo": {"@id": verify_crate.PIP_LOCK}},
        {"@id": "run.yaml", "@type": "File", "sha256": "0" * 64},
        {"@id": "#run", "@type": "CreateAction", "instrument": {"@id": "Snakefile"},
         "object": [{"@id": "#p"}, {"@id": "run.yaml"}]},
        {"@id": "https://pypi.org/project/numpy/0.1/", "@type": "SoftwareApplication",
         "alternateName": "numpy", "version": "0.1"}])
    assert verify_crate.path(top, "config") == top / "run.yaml"
    assert verify_crate.path(top, "lock") == top / "pins/pip.lock"
    with pytest.raises(ValueError, match="no such file of a crate: 'environment'"):
        verify_crate.path(top, "environment")
    ran = []

    def snakemake(cmd, workdir, remove):
        assert remove is None  # no temporary folder of verify's to remove
        ran.append(cmd)
        (workdir / verify_rerun.LOG).write_text("")
        return 0

    with monkeypatch.context() as patch:  # the rerun's Snakemake command, not run
        patch.setattr(verify_rerun, "run", snakemake)
        assert verify.rerun(top, tmp_path / "rerun", 1) == tmp_path / "rerun/results"
    assert ran[0][-2:] == ["--configfile", str(tmp_path / "rerun" / verify_rerun.CONFIG_JSON)]
    handed = json.loads((tmp_path / "rerun" / verify_rerun.CONFIG_JSON).read_text())
    assert handed == {"skip": ["train"], "articles": verify_rerun.texts_here({})["articles"]}
    said = verify_warnings.warnings(top)
    assert "the archive's commit (abc123) is not this checkout's HEAD" in " ".join(said)
    assert "the archive's run had uncommitted changes to tracked files" in said
    assert any(s.startswith("requirements/runtime.lock differs: archive ['pins/pip.lock']") for s in said)
    assert any(s.startswith("package versions differ: archive numpy 0.1 here ") for s in said)
    assert ("1 file(s) of the archive do not match the SHA-256 of ro-crate-metadata.json (changed after it "
            "was written): run.yaml") in said
    assert "1 file(s) described in ro-crate-metadata.json are missing from the archive: Snakefile" in said

    (top / "ro-crate-metadata.json").write_text("{not json")
    said = verify_warnings.warnings(top)
    unreadable = "the archive's ro-crate-metadata.json cannot be read (JSONDecodeError"
    assert any(s.startswith(unreadable) for s in said)
    assert verify_crate.path(top, "config") is None  # read as before: config.resolved.yaml


def test_a_parquet_files_slot_is_its_table_even_when_its_case_holds_a_dot():
    folder = "results/data/001/grad_check"
    assert crate._slot(f"{folder}/post_ln-false_eps-0.0001.parquet") == "main"
    assert crate._slot(f"{folder}/post_ln-false_eps-0.0001.tensors.parquet") == "tensors"
    assert crate._slot("results/other/file.parquet") == "main"  # not an experiment's table: its provenance's
