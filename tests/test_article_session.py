"""An article's listings in the bounded interpreter (attnrepro.articles.session, .bounded), run as
a notebook's kernel runs its cells, and their IPython lines made Python (attnrepro.articles.listings).

Every listing here is a few lines written for the test. Each test starts one to three interpreters
(a tenth of a second each); the time limits are 2 s and the memory limit 512 MiB, so that the
whole file runs in about 10 s.
"""

import json
import time
from pathlib import Path

import pytest

from attnrepro import paths
from attnrepro.articles import bounded, forms, listings
from attnrepro.run import usage

FAST = {"time_limit_s": 30, "memory_limit_mib": 512}


def article(*codes, display="print"):
    """Listings named as an article's: [{name, first, code, display}], ``display`` for all unless a
    code is given as (code, display)."""
    out = []
    for i, code in enumerate(codes, 1):
        code, shown = code if isinstance(code, tuple) else (code, display)
        out.append({"name": f"t.listing-{i}", "first": 10 * i, "code": code, "display": shown})
    return out


def table(outcome, *keys):
    return [tuple(r[k] for k in keys) for r in outcome.results]


def test_the_listings_run_in_order_in_one_namespace(tmp_path):
    outcome = bounded.run_listings(article(
        "import sys\nx = 3\nprint('x is', x)\nprint('a warning', file=sys.stderr)",
        "def twice(v):\n    return 2 * v\ny = twice(x)\nprint(y)",
        "x = x + 1\nprint(x, y)",
    ), workdir=tmp_path, **FAST)
    assert table(outcome, "status", "stdout", "stderr", "defined") == [
        ("ran", "x is 3\n", "a warning\n", ["sys", "x"]),
        ("ran", "6\n", "", ["twice", "y"]),
        ("ran", "4 6\n", "", ["x"]),
    ]
    assert outcome.problems == [] and outcome.interpreters == 1
    assert all(r["seconds"] >= 0 and r["error"] == "" for r in outcome.results)


def test_a_jupyter_cell_shows_its_last_expression_and_a_transcript_each_one(tmp_path):
    outcome = bounded.run_listings(article(
        ("a = [1, 'two']\nprint('printed')\na[1]", "last"),
        ("b = len(a)\nb;  # the semicolon hides it", "last"),
        ("c = {'k': b}", "last"),
        ("None", "last"),
        ("a\nprint('between')\nNone\nc['k'] * 10\n_ + 1\nfor i in range(2):\n    i", "each"),
        ("import numpy as np\nnp.float64(0.5)", "last"),
        ("a[0]\n_", "print"),
    ), workdir=tmp_path, **FAST)
    assert [r["stdout"] for r in outcome.results] == [
        "printed\n'two'\n", "", "", "", "[1, 'two']\nbetween\n20\n21\n0\n1\n", "np.float64(0.5)\n", ""]
    assert outcome.results[4]["defined"] == ["i"]  # `_` is the display's, not the listing's
    assert outcome.problems == []


def test_a_failed_listing_is_one_line_and_the_next_ones_run_with_their_own_errors(tmp_path):
    outcome = bounded.run_listings(article(
        "data = [1, 2]",
        "total = sum(data)\ntotal / (len(data) - 2)\nmodel = {'w': total}",
        "print('independent', len(data))",
        "out = model['w']",
        "print(out)",
        "print(total if 'total' in globals() else 'undone')",
        "import tiktoken",
    ), workdir=tmp_path, **FAST)
    assert table(outcome, "status", "error") == [
        ("ran", ""),
        ("failed", "ZeroDivisionError: division by zero (line 2)"),
        ("ran", ""),
        ("failed", "NameError: name 'model' is not defined (line 1)"),
        ("failed", "NameError: name 'out' is not defined (line 1)"),
        ("ran", ""),
        ("failed", "ModuleNotFoundError: No module named 'tiktoken' (line 1)"),
    ]
    assert [r["stdout"] for r in outcome.results] == ["", "", "independent 2\n", "", "", "3\n", ""]
    assert outcome.results[1]["defined"] == ["total"]
    assert outcome.problems == [
        "listing 2: ZeroDivisionError: division by zero (line 2)",
        "listing 4: NameError: name 'model' is not defined (line 1)",
        "listing 5: NameError: name 'out' is not defined (line 1)",
        "listing 7: ModuleNotFoundError: No module named 'tiktoken' (line 1)",
    ]
    assert outcome.interpreters == 1


def test_a_failed_listing_keeps_what_it_bound_before_its_error(tmp_path):
    outcome = bounded.run_listings(article(
        "kept = 1",
        "kept = 2\nhalf = 1\nraise RuntimeError('first line\\nsecond line')\nnever = 1",
        "print(kept, 'half' in globals(), 'never' in globals())",
        "def broken(:\n    pass",
    ), workdir=tmp_path, **FAST)
    assert table(outcome, "status", "error", "stdout", "defined") == [
        ("ran", "", "", ["kept"]),
        ("failed", "RuntimeError: first line second line (line 3)", "", ["kept", "half"]),
        ("ran", "", "2 True False\n", []),
        ("failed", "SyntaxError: invalid syntax (line 1)", "", []),
    ]


def test_a_failed_cells_imports_stay_for_the_cells_after_it(tmp_path):
    """A: imports, then reads a file that is not there; B: imports more, then reads what A never
    bound; C: uses A's import. Each runs, as in the notebook."""
    outcome = bounded.run_listings(article(
        "import json\ntext = open('data.txt').read()",
        "import json.decoder as decoder\nn = len(text)",
        "print(json.dumps([1, 2]), decoder.__name__)",
        display="last"), workdir=tmp_path, **FAST)
    assert table(outcome, "status", "error", "stdout", "defined") == [
        ("failed", "FileNotFoundError: [Errno 2] No such file or directory: 'data.txt' (line 2)", "",
         ["json"]),
        ("failed", "NameError: name 'text' is not defined (line 2)", "", ["decoder"]),
        ("ran", "", "[1, 2] json.decoder\n", []),
    ]


def test_a_listing_past_its_time_limit_ends_and_a_new_interpreter_goes_on(tmp_path):
    started = time.monotonic()
    outcome = bounded.run_listings(article(
        "x = 5\nprint('once')",
        "y = 7\nraise ValueError('after y')",
        "lost = 1\nwhile True:\n    pass",
        "print('x and y are still', x, y, 'lost' in globals())",
    ), workdir=tmp_path, listing_limit_s=2, **FAST)
    assert time.monotonic() - started < 8
    assert table(outcome, "status", "error", "stdout") == [
        ("ran", "", "once\n"),  # run again in the new interpreter, its output not kept twice
        ("failed", "ValueError: after y (line 2)", ""),  # run again too: it binds y before its error
        ("failed", "exceeded its time limit of 2 s", ""),  # never run again
        ("ran", "", "x and y are still 5 7 False\n"),
    ]
    assert 2 <= outcome.results[2]["seconds"] < 4
    assert outcome.interpreters == 2
    assert outcome.problems == ["listing 2: ValueError: after y (line 2)",
                                "listing 3: exceeded its time limit of 2 s"]


def test_a_listing_killed_when_run_again_is_not_run_a_third_time(tmp_path):
    """Listing 1 is fast the first time and past its limit when run again (it reads a mark it left);
    the interpreter that ran it again is lost, the next one goes on without it."""
    outcome = bounded.run_listings(article(
        "import os\nif os.path.exists('mark'):\n    while True:\n        pass\nopen('mark', 'w').close()\n"
        "first = 1",
        "second = 2",
        "while True:\n    pass",
        "print('first' in globals(), second)",
    ), workdir=tmp_path, listing_limit_s=1, **FAST)
    assert table(outcome, "status", "error", "stdout") == [
        ("ran", "", ""),
        ("ran", "", ""),
        ("failed", "exceeded its time limit of 1 s", ""),
        ("ran", "", "False 2\n"),
    ]
    assert outcome.interpreters == 3


def test_the_articles_budget_ends_the_listings_left(tmp_path):
    outcome = bounded.run_listings(article("while True:\n    pass", "print('late')"), workdir=tmp_path,
                                   time_limit_s=2, memory_limit_mib=None)
    assert table(outcome, "status", "error") == [
        ("failed", "exceeded the article's time limit of 2 s"),
        ("skipped", "the article's time limit of 2 s was spent before it"),
    ]
    assert outcome.interpreters == 1


def test_memory_without_bound_ends_at_the_limit_and_the_rest_runs(tmp_path):
    started = time.monotonic()
    outcome = bounded.run_listings(article(
        "import resource\nkeep = 'small'\nprint(resource.getrlimit(resource.RLIMIT_DATA)[0] // 2**20)",
        "x = []\nwhile True:\n    x.append(bytearray(10**7))",
        "print(keep, len(x) > 10)\ndel x",
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
        "print('after the kill', keep, 'x' in globals())",
    ), workdir=tmp_path, **FAST)
    assert time.monotonic() - started < 10
    assert table(outcome, "status", "error", "stdout") == [
        ("ran", "", "512\n"),
        ("failed", "MemoryError (line 3)", ""),
        ("ran", "", "small True\n"),  # what the failed listing bound stays, as in a notebook
        ("failed", "the interpreter was killed by signal 9 (memory limit 512 MiB?)", ""),
        ("ran", "", "after the kill small False\n"),
    ]
    assert outcome.interpreters == 2


def test_each_article_has_its_own_working_folder_removed_afterwards(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scratch").mkdir()
    code = "import os\nopen('note.txt', 'w').write('x')\nprint(os.getcwd())"
    first, second = (bounded.run_listings(article(code), workdir=tmp_path / "scratch", **FAST)
                     for _ in range(2))
    folders = [Path(o.results[0]["stdout"].strip()) for o in (first, second)]
    assert folders[0] != folders[1]
    assert all(f.parent.parent == tmp_path / "scratch" and not f.exists() for f in folders)
    assert list((tmp_path / "scratch").iterdir()) == [] and not (tmp_path / "note.txt").exists()
    assert not (Path(paths.REPO) / "note.txt").exists()


def test_a_file_past_its_limit_fails_its_listing_and_the_rest_runs(monkeypatch):
    monkeypatch.setattr(bounded, "FILE_LIMIT_MIB", 1)  # read in the child, before it runs Python
    big = "with open('big.bin', 'wb') as fh:\n    fh.write(bytes(2 * 2**20))"
    outcome = bounded.run_listings(article(big, "print('after')"), **FAST)
    assert table(outcome, "status", "error", "stdout") == [
        ("failed", "OSError: [Errno 27] File too large (line 2)", ""), ("ran", "", "after\n")]


def test_a_killed_interpreters_folder_is_removed_too(tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    outcome = bounded.run_listings(article("open('left.txt', 'w').write('x')\nwhile True:\n    pass"),
                                   workdir=scratch, time_limit_s=2, memory_limit_mib=None)
    assert outcome.results[0]["status"] == "failed" and list(scratch.iterdir()) == []


def test_an_unknown_display_is_refused_naming_the_listing():
    with pytest.raises(ValueError, match=r"^listing 2 \(t.listing-2\): display 'html' is not one of "
                                         r"print, last, each$"):
        bounded.run_listings(article("a = 1", ("a", "html")), **FAST)


@pytest.mark.parametrize("code, python, notes", [
    ("%matplotlib inline\nimport json",
     "pass  # %matplotlib inline: an IPython magic, not run here\nimport json",
     ["line 1: IPython magic not run: %matplotlib inline"]),
    ("for k in range(2):\n    %time f(k)\n!wget https://example.org/data.txt",
     "for k in range(2):\n    f(k)\n"
     "pass  # !wget https://example.org/data.txt: a shell command, not run here",
     ["line 2: %time ran its statement once, its timing is not reproduced",
      "line 3: shell command not run: !wget https://example.org/data.txt"]),
    ("  !pip install x", "  pass  # !pip install x: a shell command, not run here",
     ["line 1: shell command not run: !pip install x"]),
    ("%timeit -n 10 -r 3 f(x)  # slow", "f(x);  # slow",
     ["line 1: %timeit ran its statement once, its timing is not reproduced"]),
    ("%timeit y = f(x)", "y = f(x)",
     ["line 1: %timeit ran its statement once, its timing is not reproduced"]),
    ("%time", "pass  # %time: an IPython magic, not run here", ["line 1: IPython magic not run: %time"]),
    ("\n%%time\ny = 1\ny", "\npass  # %%time: the cell runs once, its timing is not reproduced\ny = 1\ny",
     ["line 2: %%time ran the cell once, its timing is not reproduced"]),
    ("%%timeit -n 2 a = 3\na + 1", "a = 3\na + 1",
     ["line 1: %%timeit ran the cell once, its timing is not reproduced"]),
    ("x = (10\n     % 3)\ns = '''\n!not a command\n'''\ny = 1 + \\\n    %2", None, []),
])
def test_ipython_lines_become_python_of_as_many_lines(code, python, notes):
    assert listings.runnable(code) == (code if python is None else python, notes)


@pytest.mark.parametrize("code, message", [
    ("%%bash\nls -l", "cell magic %%bash: not Python, not run"),
    ("%%writefile model.py\nx = 1", "cell magic %%writefile: not Python, not run"),
    ("x = 1\n%%time\ny = 2", "cell magic %%time on line 2: not on the cell's first line, not run"),
])
def test_a_cell_in_another_language_is_refused_in_one_line(code, message):
    with pytest.raises(listings.NotPython) as refused:
        listings.runnable(code)
    assert str(refused.value) == message


def test_a_notebooks_magics_and_shell_lines_run_as_jupyter_runs_them(tmp_path):
    cells = ["%matplotlib inline\nimport json",
             "!wget https://example.org/data.txt\nprint(json.dumps({'a': 1}))",
             "%%time\nsquares = [k * k for k in range(4)]\nsquares",
             "%timeit sum(squares)\n%time total = sum(squares)",
             "total", "%%bash\nls", "print('still', total)"]
    notebook = {"cells": [{"cell_type": "code", "source": cell, "outputs": []} for cell in cells],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "demo.ipynb").write_text(json.dumps(notebook))
    found = listings.extract(forms.read(tmp_path / "demo.ipynb"), "demo")
    given = [{"name": item.name, "first": item.first, "code": item.code, "display": item.display}
             for item in found]
    assert found[0].code == "%matplotlib inline\nimport json\n"  # the code as printed
    outcome = bounded.run_listings(given, workdir=tmp_path, **FAST)
    assert table(outcome, "status", "error", "stdout", "notes") == [
        ("ran", "", "", ["line 1: IPython magic not run: %matplotlib inline"]),
        ("ran", "", '{"a": 1}\n', ["line 1: shell command not run: !wget https://example.org/data.txt"]),
        ("ran", "", "[0, 1, 4, 9]\n", ["line 1: %%time ran the cell once, its timing is not reproduced"]),
        ("ran", "", "", ["line 1: %timeit ran its statement once, its timing is not reproduced",
                         "line 2: %time ran its statement once, its timing is not reproduced"]),
        ("ran", "", "14\n", []),
        ("failed", "cell magic %%bash: not Python, not run", "", []),
        ("ran", "", "still 14\n", []),
    ]
    assert outcome.problems == ["listing 6: cell magic %%bash: not Python, not run"]


def test_nothing_the_article_prints_or_raises_reaches_the_terminal_raw(capfd):
    """An error an article raises is shown escaped in the progress line; what it writes past Python's
    stdout (to the interpreter's file descriptor 1) goes nowhere."""
    fake = "raise ValueError('\\x1b[2K\\x1b[1Adone')"
    raw = "import os\nos.write(1, b'\\x1b[2Kraw')\nprint('kept')"
    outcome = bounded.run_listings(article(fake, raw), **FAST)
    shown = capfd.readouterr()
    assert "\x1b" not in shown.out + shown.err
    assert "ValueError: \\x1b[2K\\x1b[1Adone (line 1)" in shown.err
    assert table(outcome, "status", "stdout") == [("failed", ""), ("ran", "kept\n")]
    assert outcome.results[0]["error"] == "ValueError: \x1b[2K\x1b[1Adone (line 1)"  # the record keeps it
    assert usage.printable("a\rb\x00c √") == "a\\rb\\x00c √"
