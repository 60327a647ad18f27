"""config/published.yaml against workflow/schemas/published.schema.yaml (report/ledger/schema.py):
closed objects, an enum for the class, the keys each class needs and no others; a misspelt key is
refused naming the file, the claim and the key, before any claim is built."""

import pytest
import yaml

from attnrepro.dag import validator
from attnrepro.report.ledger import claims as claims_, schema, verdicts

from conftest import REPO
from test_captions import undescribed

PUBLISHED = REPO / "config" / "published.yaml"


@pytest.fixture(scope="module")
def data():
    return yaml.load(PUBLISHED.read_text(), Loader=yaml.CSafeLoader)


def test_the_published_claims_follow_the_schema(data):
    assert schema.problems(data) == []
    assert len(verdicts.load_claims(PUBLISHED)) == len(data["claims"])


def test_the_schema_is_the_codes_and_every_key_is_described():
    tree = yaml.safe_load(schema.SCHEMA.read_text())
    claim = tree["$defs"]["claim"]
    assert tuple(claim["properties"]["class"]["enum"]) == claims_.CLASSES
    assert tree["$defs"]["reduce"]["enum"] == list(claims_.REDUCERS)
    fields = set(claims_.Claim.__dataclass_fields__) - {"cls", "rationale"}  # rationale: from why
    assert set(claim["properties"]) == fields | {"class"}
    needs_why = {rule["if"]["properties"]["class"]["const"] for rule in claim["allOf"]
                 if "why" in rule.get("then", {}).get("required", [])}
    assert needs_why == set(claims_.JUSTIFIED)
    assert tuple(claim["dependentSchemas"]["tolerance"]["properties"]["class"]["enum"]) == claims_.TOLERATED
    assert undescribed(tree) == []


def _written(tmp_path, text):
    path = tmp_path / "published.yaml"
    path.write_text(text)
    return path


def _refused(path, *words):
    """The error of load_claims (and of load_speed: the same check) on ``path``, holding ``words``."""
    for load in (verdicts.load_claims, claims_.load_speed):
        with pytest.raises(ValueError) as info:
            load(path)
        message = str(info.value)
        assert str(path) in message and all(w in message for w in words), message
    return message


def test_a_misspelt_tolerance_is_refused_naming_file_claim_and_key(tmp_path):
    text = PUBLISHED.read_text()
    line = next(t for t in text.splitlines() if "tolerance: 1.0e-14" in t)
    claim = yaml.safe_load(line.strip()[2:])["id"]
    path = _written(tmp_path, text.replace(line, line.replace("tolerance: 1.0e-14", "tolerence: 1.0e-14")))
    message = _refused(path, f"claim {claim}", "unknown key 'tolerence'",
                       "'tolerance' is a required property")
    assert len(message.splitlines()) == 3  # the file, then the two problems of that claim


@pytest.mark.parametrize("change, words", [
    ({"class": "exactly"}, ["key class", "'exactly' is not one of"]),
    ({"tolerance": None}, ["'tolerance' is a required property", "a round-off claim names its tolerance"]),
    ({"why": None}, ["'why' is a required property"]),
    ({"class": "exact"}, ["key class", "'exact' is not one of ['round-off', 'finite-difference'] (a claim "
                                       "with a tolerance is a round-off or finite-difference claim)"]),
    ({"class": "echo"}, ["key class", "(a claim with a tolerance is a round-off or finite-difference "
                                      "claim)"]),
    ({"class": "finite-difference", "tolerance": None},
     ["'tolerance' is a required property", "a finite-difference claim names its tolerance"]),
    ({"band": [1, 2]}, ["key class", "'round-off' is not one of ['machine-bound', 'exact', 'echo']"]),
    ({"raw_time": True}, ["key class", "(a raw time is a machine-bound claim)"]),
    ({"location": {"line": 3, "colum": 4}}, ["key location", "unknown key 'colum'",
                                              "'column' is a required"]),
    ({"location": {"line": 0, "column": 4}}, ["key location.line", "0 is less than the minimum of 1"]),
    ({"location": {"line": 3, "column": 4, "text": " "}}, ["key location.text", "does not match"]),
    ({"printed": {"table": "t", "column": "c"}}, ["key printed", "'row' is a required property"]),
    ({"source": {"experiment": "e", "column": "c", "wher": {}}}, ["key source", "unknown key 'wher'"]),
    ({"source": {"experiment": "e", "column": "c", "reduce": "median"}},
     ["key source.reduce", "'median'"]),
    ({"source": {"experiment": "e", "column": "c", "over": {"column": "d", "were": {}}}},
     ["key source.over", "unknown key 'were'"]),
    ({"published": 0.5}, ["key published", "0.5 is not of type 'string'"]),
    ({"decimals": 1.0}, ["key decimals", "1.0 is not of type 'integer'"]),
])
def test_each_class_has_its_keys_and_no_other(tmp_path, data, change, words):
    entry = next(c for c in data["claims"] if c["class"] == "round-off")
    changed = {k: v for k, v in {**entry, **change}.items() if v is not None}
    path = _written(tmp_path, yaml.safe_dump({**data, "claims": [changed]}))
    _refused(path, f"claim {entry['id']} (claims[0])", *words)


def test_what_the_schema_does_not_say_is_refused_naming_the_file_and_claim(tmp_path, data):
    """A per (a range judged row by row) on a claim that is not stochastic; a why: naming no rationale."""
    entry = next(c for c in data["claims"] if c["class"] == "round-off")
    for change, words in (({"source": {**entry["source"], "per": "L"}}, "only a stochastic range"),
                          ({"why": "roundoff-x"}, "why: 'roundoff-x' is not one of the rationales")):
        path = _written(tmp_path, yaml.safe_dump({**data, "claims": [{**entry, **change}]}))
        with pytest.raises(ValueError) as info:
            verdicts.load_claims(path)
        assert all(w in str(info.value) for w in (str(path), f"claim {entry['id']}", words)), info.value


def test_each_class_needs_its_keys(tmp_path, data):
    """An echo names its rationale; a machine-bound claim its band unless it is a raw time (judged
    against its article's speed factor); a stochastic claim needs neither."""
    first = {klass: next(c for c in data["claims"] if c["class"] == klass and not c.get("raw_time"))
             for klass in ("echo", "machine-bound", "stochastic")}
    raw = next(c for c in data["claims"] if c.get("raw_time"))
    cases = [({**first["echo"], "why": None}, "'why' is a required property"),
             ({**first["machine-bound"], "band": None}, "'band' is a required property"),
             ({**first["stochastic"], "why": "article-interval"}, None),
             ({**raw, "band": None}, None)]
    for entry, words in cases:
        entry = {k: v for k, v in entry.items() if v is not None}
        found = schema.problems({**data, "claims": [entry]})
        assert (found == []) if words is None else (words in " ".join(found)), (entry["id"], found)


def test_the_top_level_speed_and_rationales_are_closed(tmp_path, data):
    for change, words in (({"speeds": {}}, "unknown key 'speeds'"),
                          ({"speed": {**data["speed"], "bands": 2}}, "key speed"),
                          ({"speed": {**data["speed"], "band": 1}}, "1 is less than or equal to the minimum"),
                          ({"rationales": {**data["rationales"], "Echo config": "x"}}, "key rationales"),
                          ({"environment": {"0001": {}}}, "key environment"),
                          # the texts' SHA-256 are config/config.yaml's (articles), no longer here
                          ({"articles": {"000": "ab"}}, "(top level): unknown key 'articles'")):
        found = schema.problems({**data, **change})
        assert found and words in " ".join(found), (change, found)


def test_a_claim_refuses_an_unknown_key_when_built_alone():
    entry = {"id": "x", "article": "000", "section": "s", "claim": "c", "published": "1", "class": "exact",
             "source": {"experiment": "e", "column": "c"}}
    assert verdicts.Claim.from_dict(entry).id == "x"
    with pytest.raises(ValueError, match="claim x: unknown key"):
        verdicts.Claim.from_dict({**entry, "tolerence": 1e-14})


def test_a_file_is_validated_once_per_process(monkeypatch, data):
    """load_claims and load_speed of one file check the schema once (about 0.2 s for 574 claims)."""
    calls = []
    real = validator.validator
    monkeypatch.setattr(validator, "validator", lambda path: calls.append(path) or real(path))
    monkeypatch.setattr(schema, "_FOLLOWED", set())
    verdicts.load_claims(PUBLISHED)
    claims_.load_speed(PUBLISHED)
    verdicts.load_claims(PUBLISHED)
    assert calls == [schema.SCHEMA]


def test_each_problem_names_its_place_and_says_its_rule_word_for_word(data):
    entry = next(c for c in data["claims"] if c["class"] == "round-off")
    named = f"claim {entry['id']} (claims[0])"
    cases = [
        ({"environment": {"001": {"python": "3", "pyhton": "3", "numyp": "1"}}},
         "key environment.001: unknown keys 'pyhton', 'numyp' (the keys are: numpy, python, torch)"),
        ({"environment": {"0001": {}}},
         "key environment: '0001' does not match any of the regexes: '^[0-9]{3}$'"),
        ({"claims": [{**entry, "location": {"line": 0, "column": 4}}]},
         f"{named}, key location.line: 0 is less than the minimum of 1"),
        ({"claims": [{**entry, "location": {"line": 3}}]},
         f"{named}, key location: 'column' is a required property"),
        ({"claims": [{k: v for k, v in entry.items() if k != "tolerance"}]},
         f"{named}: 'tolerance' is a required property (a round-off claim names its tolerance and the "
         "rationale of it (why))"),
        ({"claims": ["oops"]}, "claims[0]: 'oops' is not of type 'object'"),
        ({"claims": [{k: v for k, v in entry.items() if k != "id"}]},
         "claims[0]: 'id' is a required property"),
    ]
    for change, said in cases:
        assert schema.problems({**data, **change}) == [said]
    assert schema.problems({k: v for k, v in data.items() if k != "claims"}) == [
        "(top level): 'claims' is a required property"]


def test_a_schema_given_is_the_one_followed(tmp_path):
    """Patterned keys are known keys; a boolean schema and an undescribed enum: the validator's words."""
    given = tmp_path / "given.schema.yaml"
    given.write_text("type: object\nadditionalProperties: false\n"
                     "properties: {a: {type: integer}, b: false, c: {enum: [1, 2]}}\n"
                     "patternProperties: {'^x': {}}\n")
    found = schema.problems({"a": 1, "x1": 2, "zz": 3, "b": 4, "c": 3}, given)
    assert found[0] == "(top level): unknown key 'zz' (the keys are: a, b, c)"
    assert found[1].endswith(": False schema does not allow 4")
    assert found[2] == "key c: 3 is not one of [1, 2]"
    path = tmp_path / "data.yaml"
    path.write_bytes(b"zz: 3\n")
    with pytest.raises(ValueError) as info:
        schema.check({"zz": 3}, path, given)
    assert str(info.value) == (f"{path} does not follow {given}:\n"
                               "  (top level): unknown key 'zz' (the keys are: a, b, c)")


def test_a_refusal_lists_twenty_problems_in_file_order_and_counts_the_rest(tmp_path, monkeypatch, data):
    monkeypatch.setattr(schema, "_FOLLOWED", set())
    nameless = {k: v for k, v in data["claims"][0].items() if k != "id"}
    for count, more in ((20, []), (21, ["  and 1 more"]), (23, ["  and 3 more"])):
        changed = {**data, "claims": [nameless] * count}
        path = _written(tmp_path, yaml.safe_dump(changed))
        with pytest.raises(ValueError) as info:
            schema.check(changed, path)
        assert str(info.value).splitlines() == [
            f"{path} does not follow workflow/schemas/published.schema.yaml:",
            *(f"  claims[{i}]: 'id' is a required property" for i in range(20)), *more]


def test_problems_at_an_index_and_a_name_of_one_place_are_ordered_without_a_type_error():
    from attnrepro.report.ledger import schema

    paths = [["rationales", "x"], ["claims", 10], ["rationales", 1], ["claims", 2], ["articles", "001"]]
    assert sorted(paths, key=schema._order) == [
        ["articles", "001"], ["claims", 2], ["claims", 10], ["rationales", 1], ["rationales", "x"]]
