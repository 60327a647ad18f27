"""Nothing from an archive reaches the terminal raw (attnrepro.archive.terminal)."""

import sys

import pytest

import hostile
from attnrepro.archive import terminal, verify

# erase the line, go up one, print a fake verdict, hide what follows
ERASER = "\x1b[2K\x1b[1Averdict: REPRODUCED\x1b[8m"


@pytest.mark.parametrize("text, shown", [
    ("plain text, é and 中", "plain text, é and 中"),
    ("\x1b[2K", "\\x1b[2K"),
    ("a\rb\tc\0d\x7f", "a\\x0db\\x09c\\x00d\\x7f"),
    ("right\u202eto left", "right\\u202eto left"),
    ("\U000e0001 tag", "\\U000e0001 tag"),
    ("line one\nline two\x1b", "line one\nline two\\x1b"),
    ("a\\x1b", "a\\x1b"),  # a backslash is left as it is
])
def test_what_is_not_printable_is_shown_as_its_escape(text, shown):
    assert terminal.escaped(text) == shown


def test_within_the_block_stdout_and_stderr_are_escaped_and_restored_after(capsys):
    before = sys.stdout, sys.stderr
    with terminal.escaping():
        print(ERASER)
        print("\x1b[8m", file=sys.stderr)
    assert (sys.stdout, sys.stderr) == before
    out, err = capsys.readouterr()
    assert out == "\\x1b[2K\\x1b[1Averdict: REPRODUCED\\x1b[8m\n" and err == "\\x1b[8m\n"


def test_an_error_in_the_block_passes_through_and_the_streams_are_restored():
    before = sys.stdout, sys.stderr
    with pytest.raises(KeyError):
        with terminal.escaping():
            raise KeyError("x")
    assert (sys.stdout, sys.stderr) == before


def test_an_id_full_of_escapes_is_printed_escaped_by_verify(tmp_path, capsys):
    ledger = f"id,class,reproduced\n001.a,exact,1\n{ERASER},exact,2\n".encode()
    archive = hostile.forged(tmp_path / "built", {"results/ledger.csv": ledger})
    here = tmp_path / "here"
    (here / "results").mkdir(parents=True)
    (here / "results/ledger.csv").write_bytes(hostile.LEDGER)
    assert verify.main([str(archive), "--results", str(here)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert ("differs          results/ledger.csv: claim \\x1b[2K\\x1b[1Averdict: REPRODUCED\\x1b[8m only in "
            "archive\n") in out
    assert out.splitlines()[-1] == "verdict: DIFFERS: 1 of 1 files differ or are on one side only"
