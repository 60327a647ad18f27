"""Bounded reads of someone else's files (attnrepro.run.bounded): a cap is reached, never passed
unread; JSON nesting is checked without recursion."""

import json
import resource
import time

import pytest

from attnrepro.run import bounded
from attnrepro.run.bounded import Exceeded, MiB


def refusal(call, *args):
    with pytest.raises(Exceeded) as raised:
        call(*args)
    return str(raised.value)


def test_a_file_is_read_up_to_its_cap_not_a_byte_more(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"0123456789")
    assert bounded.read_bytes(path, 10) == b"0123456789"
    assert refusal(bounded.read_bytes, path, 9) == "f.txt holds more than 9 bytes"
    assert refusal(bounded.read_bytes, path, 9, "its file") == "its file holds more than 9 bytes"


def test_a_huge_file_costs_its_cap_to_refuse(tmp_path):
    path = tmp_path / "huge"
    with open(path, "wb") as fh:
        fh.truncate(4 << 30)  # 4 GiB, sparse: nothing on disk
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    assert refusal(bounded.read_bytes, path, MiB) == "huge holds more than 1.0 MiB"
    assert time.perf_counter() - start < 2
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024  # kB: not 4 GiB


@pytest.mark.parametrize("data, lines", [(b"", []), (b"a", ["a"]), (b"a\n", ["a"]), (b"a\nb", ["a", "b"]),
                                         (b"a\nb\n", ["a", "b"]), (b"\n\n", ["", ""])])
def test_lines_are_counted_as_splitlines_gives_them(tmp_path, data, lines):
    path = tmp_path / "f"
    path.write_bytes(data)
    assert bounded.read_lines(path, 100, len(lines)) == lines
    if lines:
        assert refusal(bounded.read_lines, path, 100, len(lines) - 1) == (
            f"f holds more than {len(lines) - 1:,} lines")


def test_lines_are_capped_in_bytes_before_they_are_counted_and_decoded_as_utf8(tmp_path):
    path = tmp_path / "lock"
    path.write_bytes(b"\n" * 3_000_000)
    assert refusal(bounded.read_lines, path, 2_999_999, 10**9, "its lock") == (
        "its lock holds more than 2.9 MiB")
    assert refusal(bounded.read_lines, path, 3_000_000, 2_999_999) == "lock holds more than 2,999,999 lines"
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(UnicodeDecodeError):
        bounded.read_lines(path, 10, 10)


@pytest.mark.parametrize("value, depth", [
    (1, 0), ("[[[", 0), (None, 0), ([], 1), ({}, 1), ({"a": [1]}, 2), ([[], [[]]], 3), ({"a": {"b": {}}}, 3),
    ([1, {"a": [[2]]}, []], 4)])
def test_depth_counts_lists_and_objects_inside_one_another(value, depth):
    assert bounded.depth(value) == depth


def test_depth_walks_a_deep_value_without_recursion():
    deep = []
    for _ in range(100_000):
        deep = [deep]
    assert bounded.depth(deep) == 100_001


@pytest.mark.parametrize("levels", [1, 3, 64])
def test_json_may_nest_its_cap_not_a_level_more(levels):
    text = "[" * levels + "]" * levels
    assert bounded.depth(bounded.loads_json(text, levels)) == levels
    assert refusal(bounded.loads_json, text, levels - 1) == (
        f"JSON nests lists or objects more than {levels - 1} deep")


@pytest.mark.parametrize("levels", [2_000, 100_000, 1_000_000])
def test_json_deeper_than_the_interpreters_stack_is_refused_in_one_sentence(levels):
    data = ('{"a": ' * levels + "1" + "}" * levels).encode()
    start = time.perf_counter()
    assert refusal(bounded.loads_json, data, 64, "its crate") == (
        "its crate nests lists or objects more than 64 deep")
    assert time.perf_counter() - start < 5


def test_json_that_is_not_json_is_a_plain_value_error(tmp_path):
    with pytest.raises(ValueError) as raised:
        bounded.loads_json("{not json", 64)
    assert not isinstance(raised.value, Exceeded)
    assert bounded.loads_json("1e999", 64) == float("inf")  # as JSON reads it: the caller checks


def test_a_json_file_is_bounded_in_size_and_depth(tmp_path):
    path = tmp_path / "environment.json"
    path.write_text(json.dumps({"git": {"commit": "abc"}}))
    assert bounded.read_json(path, 100, 2) == {"git": {"commit": "abc"}}
    assert refusal(bounded.read_json, path, 100, 1) == (
        "environment.json nests lists or objects more than 1 deep")
    assert refusal(bounded.read_json, path, 10, 2) == "environment.json holds more than 10 bytes"
    assert refusal(bounded.read_json, path, 10, 2, "its env") == "its env holds more than 10 bytes"
