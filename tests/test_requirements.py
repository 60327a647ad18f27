"""conftest.missing: a test whose tool (chromium, SLURM, an OpenBLAS kernel) is absent skips,
and fails with the same reason under ATTNREPRO_REQUIRE_ALL=1, as CI runs `make test` (.ci/run)."""

import os
import subprocess
import sys

import pytest

from conftest import REPO, REQUIRE_ALL, missing

REASON = "frobnicator is not installed (apt-get install frobnicator)"


def test_missing_skips_without_the_switch(monkeypatch):
    monkeypatch.delenv(REQUIRE_ALL, raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"frobnicator is not installed"):
        missing(REASON)
    monkeypatch.setenv(REQUIRE_ALL, "0")
    with pytest.raises(pytest.skip.Exception):
        missing(REASON)


def test_missing_fails_with_the_same_reason_under_the_switch(monkeypatch):
    monkeypatch.setenv(REQUIRE_ALL, "1")
    with pytest.raises(pytest.fail.Exception, match=r"frobnicator is not installed \(apt-get") as info:
        missing(REASON)
    assert REQUIRE_ALL in str(info.value)


MODULE = f'''
import pytest

pytestmark = pytest.mark.needs({REASON!r})


@pytest.fixture
def expensive():
    raise AssertionError("a fixture ran: the requirement is checked before the fixtures")


def test_needs_a_tool(expensive):
    pass


@pytest.mark.needs(None)
def test_needs_nothing_more():
    pass


def test_present():
    pass
'''


@pytest.mark.parametrize("switch", ["", "1"], ids=["unset", "set"])
def test_the_needs_mark_goes_through_missing(tmp_path, switch):
    """A module marked as the chromium and SLURM tests are: skipped, or failed under the switch
    (`needs(None)` does not cancel the module's mark), before any fixture runs."""
    (tmp_path / "test_tool.py").write_text(MODULE)
    env = {**os.environ, "PYTHONPATH": str(REPO / "tests"), REQUIRE_ALL: switch}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-rA", "-q", "-p", "no:cacheprovider",
         "test_tool.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    out = proc.stdout + proc.stderr
    assert "a fixture ran" not in out, out
    if switch:
        assert proc.returncode == 1, out
        assert "3 errors" in out and "frobnicator is not installed (apt-get" in out, out
        assert REQUIRE_ALL in out
    else:
        assert proc.returncode == 0, out
        assert "3 skipped" in out and "frobnicator is not installed" in out, out
