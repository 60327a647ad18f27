"""An article in each form people write in gives the same blocks and the same listings.

- One short NumPy article written three times (tests/data/articles/demo.txt, demo.md, demo.ipynb;
  its output is what its code prints here, checked by running it): a heading, prose with a
  number, a listing with a blank line inside and a one-line ``return``, its output with a
  bulleted printed line and a blank line, a LaTeX formula that is no output, a one-line
  ``tensor([[...]])`` output, a ``>>>`` transcript showing NumPy 2's ``np.float64(...)``. Each
  form's blocks are asserted exactly (kind, lines, display, offset), and the three give the same
  listings: code, output texts and numbers; only the line numbers differ.
- The plain parser reads the seeds as before (tests/data/seed_parse.json: their blocks, listings
  and output tokens, computed with the parser before the forms existed), and reads what it used
  to misread: a one-line ``return`` or output, output that is valid Python, ``# outputs:``
  comments, transcripts, printed lines long or bulleted, LaTeX.
- Markdown's fences and notebooks' cells by their rules; a file of no known form, not a
  notebook, or too large is refused in one line naming it.
"""

import json
import subprocess
import sys

import pytest

from attnrepro.articles import blocks, forms, listings, markdown, notebook, outputs, plain
from attnrepro.report.ledger import verdicts

from conftest import REPO, article_text, missing, seed_articles

DATA = REPO / "tests" / "data"
DEMO = DATA / "articles"
SEEDS = REPO.parent / "shared" / "seeds"

# the demo's listings, the same in every form
SOFTMAX = ('import numpy as np\n\ndef softmax(z):\n    e = np.exp(z - z.max())\n\n    return e / e.sum()\n\n'
           'rng = np.random.default_rng(0)\nx = rng.normal(size=3).round(2)\np = softmax(x)\n'
           'print("• scores:", x, end="\\n\\n")\nprint(p.round(4))\nprint(f"sum = {p.sum():.1f}")\n')
PRODUCT = 'import torch\n\nm = np.array([[1.0, 2.0]]) @ np.diag([0.5, 0.25])\nprint(torch.tensor(m))\n'
MEAN, STD = "v = np.array([1.0, 2.0, 4.0])\nv.mean()\n", "print(v.std().round(3))\n"
PRINTED = [  # per listing: its output lines, each with its numbers and their columns
    [("• scores: [ 0.13 -0.13  0.64]", [("0.13", 13), ("-0.13", 18), ("0.64", 25)]),
     ("[0.291  0.2244 0.4846]", [("0.291", 2), ("0.2244", 9), ("0.4846", 16)]),
     ("sum = 1.0", [("1.0", 7)])],
    [("tensor([[0.5000, 0.5000]], dtype=torch.float64)", [("0.5000", 10), ("0.5000", 18)])],
    [("np.float64(2.3333333333333335)", [("2.3333333333333335", 12)])],
    [("1.247", [("1.247", 1)])],
]
# per form: each block's (kind, first line, last line, display, offset), and each listing's output lines
BLOCKS = {
    "demo.txt": [("heading", 1, 1, "", 0), ("paragraph", 3, 3, "", 0), ("code", 5, 17, "print", 0),
                 ("output", 19, 22, "", 0), ("paragraph", 24, 24, "", 0), ("paragraph", 26, 26, "", 0),
                 ("code", 28, 31, "print", 0), ("output", 33, 33, "", 0), ("paragraph", 35, 35, "", 0),
                 ("code", 37, 38, "each", 4), ("output", 39, 39, "", 0), ("code", 40, 40, "each", 4),
                 ("output", 41, 41, "", 0)],
    "demo.md": [("heading", 1, 1, "", 0), ("paragraph", 3, 4, "", 0), ("code", 7, 19, "last", 0),
                ("output", 23, 26, "", 0), ("paragraph", 29, 29, "", 0), ("paragraph", 31, 31, "", 0),
                ("code", 34, 37, "last", 0), ("paragraph", 40, 40, "", 0), ("output", 43, 43, "", 0),
                ("paragraph", 46, 46, "", 0), ("code", 49, 50, "each", 4), ("output", 51, 51, "", 0),
                ("code", 52, 52, "each", 4), ("output", 53, 53, "", 0)],
    "demo.ipynb": [("heading", 1, 1, "", 0), ("paragraph", 3, 4, "", 0), ("code", 6, 18, "last", 0),
                   ("output", 20, 23, "", 0), ("paragraph", 25, 25, "", 0), ("paragraph", 27, 27, "", 0),
                   ("code", 29, 32, "last", 0), ("output", 34, 34, "", 0), ("paragraph", 36, 36, "", 0),
                   ("code", 38, 39, "last", 0), ("output", 41, 41, "", 0), ("code", 43, 43, "last", 0),
                   ("output", 45, 45, "", 0)],
}
OUTPUT_LINES = {"demo.txt": [[19, 21, 22], [33], [39], [41]], "demo.md": [[23, 25, 26], [43], [51], [53]],
                "demo.ipynb": [[20, 22, 23], [34], [41], [45]]}


def summary(document):
    return [(b.kind, b.first, b.numbers.stop - 1, b.display, b.offset) for b in document.blocks]


def assert_lines_stand_in_the_text(document):
    """Every block's lines are the text's lines at its place, less its offset."""
    text = document.text.split("\n")
    for block in document.blocks:
        assert [line[block.offset:] for line in text[block.first - 1:block.numbers.stop - 1]] == block.lines


# --- the demo article in three forms ---------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_each_form_gives_the_blocks_of_the_demo(name):
    document = forms.read(DEMO / name)
    assert document.form == {"demo.txt": "plain", "demo.md": "markdown", "demo.ipynb": "notebook"}[name]
    assert summary(document) == BLOCKS[name]
    assert_lines_stand_in_the_text(document)
    code = [b for b in document.blocks if b.kind == "code"]
    assert code[0].lines[4:6] == ["", "    return e / e.sum()"]  # whole across its blank line
    latex = next(b for b in document.blocks if "$$" in b.lines[0])
    assert latex.kind == "paragraph"


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_each_form_gives_the_listings_of_the_demo_with_their_numbers(name):
    found = listings.extract(forms.read(DEMO / name), "demo")
    assert [item.code for item in found] == [SOFTMAX, PRODUCT, MEAN, STD]
    assert [[line.number for line in item.lines()] for item in found] == OUTPUT_LINES[name]
    assert [[(line.text, [(t.text, t.column) for t in line.tokens()]) for line in item.lines()]
            for item in found] == PRINTED
    assert all(line.offset == 0 for item in found for line in item.lines())
    assert [item.display for item in found] == {"demo.txt": ["print", "print", "each", "each"],
                                                "demo.md": ["last", "last", "each", "each"],
                                                "demo.ipynb": ["last"] * 4}[name]


def test_the_demo_prints_what_it_publishes():
    """The demo's listings, run in one interpreter as their display says, print its output lines."""
    found = listings.extract(forms.read(DEMO / "demo.txt"), "demo")
    script = r"""
import ast, contextlib, io, json, sys
namespace, shown = {"__name__": "__main__"}, []
for code, display in json.load(sys.stdin):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for statement in ast.parse(code).body:
            if display == "each" and isinstance(statement, ast.Expr):
                value = eval(compile(ast.Expression(statement.value), "<demo>", "eval"), namespace)
                if value is not None:
                    print(repr(value))
            else:
                exec(compile(ast.Module([statement], []), "<demo>", "exec"), namespace)
    shown.append([line for line in out.getvalue().splitlines() if line.strip()])
print(json.dumps(shown))
"""
    given = json.dumps([(item.code, item.display) for item in found])
    proc = subprocess.run([sys.executable, "-c", script], input=given, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == [[line.text for line in item.lines()] for item in found]


def test_the_notebook_view_is_its_cells_and_what_they_showed():
    raw = (DEMO / "demo.ipynb").read_text(encoding="utf-8")
    view = notebook.view(raw)
    assert view == forms.read(DEMO / "demo.ipynb").text
    lines = view.split("\n")
    assert len(lines) == 45 and lines[5] == "import numpy as np" and lines[18] == ""
    assert lines[40] == "np.float64(2.3333333333333335)"  # a result's text/plain


# --- plain text: the seeds as before, and what it used to misread -------------------------------

@pytest.fixture(scope="module")
def seeds():
    if not SEEDS.is_dir():
        missing(f"the articles are not in {SEEDS}")
    return {a: article_text(a) for a in seed_articles()}


# digits glued to a name, numbers to the parser before the forms: R_5, float32 (000); cu130, W_1,
# b_1, W_2, b_2, float64, float16 twice (001); no claim stands on one
GLUED = {"000": [[237, 17, "5"], [307, 33, "32"]],
         "001": [[113, 16, "130"], [476, 5, "1"], [477, 5, "1"], [478, 5, "2"], [479, 5, "2"],
                 [652, 38, "64"], [653, 50, "16"], [654, 50, "16"]],
         "003": []}


def test_the_seeds_give_the_blocks_listings_and_numbers_they_gave(seeds):
    before = json.loads((DATA / "seed_parse.json").read_text(encoding="utf-8"))
    for article, text in seeds.items():
        document = plain.document(text)
        found = [[b.kind, b.first, len(b.lines)] for b in document.blocks]
        assert found == before[article]["blocks"], article
        assert all(b.offset == 0 and b.display in ("", "print") for b in document.blocks)
        found = listings.extract(document, article)
        assert [[item.index, item.first, [[line.number for line in block] for block in item.blocks]]
                for item in found] == before[article]["listings"], article
        numbers = [[line.number, t.column, t.text]
                   for item in found for line in item.lines() for t in line.tokens()]
        assert numbers == [n for n in before[article]["tokens"] if n not in GLUED[article]], article
        lines = text.split("\n")
        assert all(lines[n - 1][c - 2].isalpha() or lines[n - 1][c - 2] == "_" for n, c, _ in GLUED[article])
    claimed = {(c.article, c.location["line"], c.location["column"])
               for c in verdicts.load_claims(REPO / "config" / "published.yaml")}
    assert not claimed & {(a, n, c) for a, glued in GLUED.items() for n, c, _ in glued}


def test_a_one_line_return_or_output_and_output_that_compiles_stay_with_their_listing():
    text = ("Title\n\ndef f(x):\n    y = 2 * x\n\n    return y\n\nprint(f(21))\n\n42\n\n"
            "import torch\nprint(torch.eye(2))\ntensor([[1., 0.],\n        [0., 1.]])\n\n"
            "A closing sentence, long enough.\n")
    found = plain.parse(text)
    assert [(b.kind, b.first, len(b.lines)) for b in found] == [
        ("heading", 1, 1), ("code", 3, 6), ("output", 10, 1), ("code", 12, 2), ("output", 14, 2),
        ("paragraph", 17, 1)]
    assert found[1].lines[-1] == "print(f(21))" and found[2].lines == ["42"]


def test_output_comments_in_any_case_and_with_text_after_the_colon():
    text = "x = 0.25\nprint(x)\n# OUTPUT: 0.25\nprint(x * 2)\n# outputs:\n#  0.5\n"
    found = plain.document(text)
    assert [(b.kind, b.first, len(b.lines)) for b in found.blocks] == [
        ("code", 1, 2), ("output", 3, 1), ("code", 4, 1), ("output", 5, 2)]
    published = [[(line.number, line.text, line.offset) for line in item.lines()]
                 for item in listings.extract(found, "x")]
    assert published == [[(3, "0.25", 10)], [(6, " 0.5", 2)]]
    assert [(t.text, t.column) for t in listings.extract(found, "x")[1].lines()[0].tokens()] == [("0.5", 4)]


def test_a_transcript_is_code_without_its_prompts_and_the_output_of_each_statement():
    text = ("Try it:\n\n>>> import math\n>>> for k in (1, 2):\n...     print(k)\n...\n1\n\n2\n"
            ">>> math.pi\n3.141592653589793\n\nprint(round(math.e, 3))\n2.718\n")
    found = plain.parse(text)
    assert [(b.kind, b.first, b.lines, b.display, b.offset) for b in found[1:]] == [
        ("code", 3, ["import math", "for k in (1, 2):", "    print(k)"], "each", 4),
        ("output", 7, ["1", "", "2"], "", 0),
        ("code", 10, ["math.pi"], "each", 4),
        ("output", 11, ["3.141592653589793"], "", 0),
        ("code", 13, ["print(round(math.e, 3))"], "print", 0),  # the transcript ended: a script again
        ("output", 14, ["2.718"], "", 0)]


def test_printed_lines_long_or_bulleted_and_latex_are_read_by_what_the_code_prints():
    said = "The largest weight goes to the last score, as the exponential favours the largest input by far"
    text = (f'import numpy as np\nw = np.array([0.2, 0.8])\nprint("-", w)\nprint("{said}:", w.max())\n\n'
            f"- [0.2 0.8]\n\n{said}: 0.8\n\n$$ w_i = e^{{s_i}} / Z $$\n\n• a bulleted point of prose\n")
    found = plain.parse(text)
    assert [(b.kind, b.first, len(b.lines)) for b in found] == [
        ("code", 1, 4), ("output", 6, 3), ("paragraph", 10, 1), ("list", 12, 1)]


# --- Markdown and notebooks by their rules ------------------------------------------------------------

def test_markdown_fences_by_their_language_and_what_precedes_them():
    text = ("```python\nprint(1)\n# Output: 1\n```\n\nThen:\n\n```\nprint(2)\n```\n\n"
            "```bash\npip install numpy\n```\n\n```\nhello world\n```\n\n"
            "- an item\n\n  ~~~py\n  x = 3\n  ~~~\n\nOut[2]:\n\n```python\n[3]\n```\n\n"
            "```python\nnever closed\n")
    found = markdown.parse(text)
    assert [(b.kind, b.first, b.lines, b.display, b.offset) for b in found] == [
        ("code", 2, ["print(1)"], "last", 0),  # before an output comment: its last value shows
        ("output", 3, ["# Output: 1"], "", 0),
        ("paragraph", 6, ["Then:"], "", 0),
        ("code", 9, ["print(2)"], "print", 0),  # no language, not after code: code, as it compiles
        ("lines", 13, ["pip install numpy"], "", 0), ("lines", 17, ["hello world"], "", 0),
        ("list", 20, ["- an item"], "", 0),
        ("code", 23, ["x = 3"], "last", 2),  # its output fence is labelled
        ("paragraph", 26, ["Out[2]:"], "", 0), ("output", 29, ["[3]"], "", 0),
        ("code", 33, ["never closed"], "print", 0)]
    assert [(b.kind, b.first) for b in markdown.parse("```x``` is no fence\n")] == [("paragraph", 1)]
    first = listings.extract(blocks.Document("markdown", text, found), "m")[0]
    assert [(line.number, line.text, line.offset) for line in first.lines()] == [(3, "1", 10)]


def test_a_notebook_leaves_out_errors_stderr_and_images():
    cells = [{"cell_type": "code", "source": ["import sys\n", "print('a')"], "outputs": [
        {"output_type": "stream", "name": "stdout", "text": ["a\n"]},
        {"output_type": "stream", "name": "stderr", "text": "warned\n"},
        {"output_type": "display_data", "data": {"image/png": "iVBOR", "text/plain": "<Figure>"}},
        {"output_type": "execute_result", "data": {"text/plain": ["array([1., 2.])"]}},
        {"output_type": "error", "ename": "ValueError", "evalue": "x", "traceback": []}]},
        {"cell_type": "code", "source": "", "outputs": []},
        {"cell_type": "raw", "source": "raw text\n\n"}]
    raw = json.dumps({"cells": cells, "nbformat": 4})
    assert notebook.view(raw) == "import sys\nprint('a')\n\na\narray([1., 2.])\n\nraw text"
    assert summary(notebook.parse(raw)) == [("code", 1, 2, "last", 0), ("output", 4, 5, "", 0),
                                            ("lines", 7, 7, "", 0)]


def test_what_is_no_article_is_refused_in_one_line_naming_it(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match=r"^x\.ipynb: not a notebook \(not JSON: "):
        notebook.parse("{", "x.ipynb")
    with pytest.raises(ValueError, match=r"^x\.ipynb: not a notebook \(no list of cells\)$"):
        notebook.parse('{"worksheets": []}', "x.ipynb")
    with pytest.raises(ValueError, match=r"^x\.ipynb: not a notebook \(JSON nested too deep to read\)$"):
        notebook.parse('{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}", "x.ipynb")
    with pytest.raises(ValueError, match=r"^x\.ipynb: not a notebook \(cell 1's source is neither"):
        notebook.parse('{"cells": [{"cell_type": "code", "source": 3}]}', "x.ipynb")
    with pytest.raises(ValueError, match=r"^notes\.rst: not an article's form \(the known suffixes: "
                                         r"\.ipynb, \.markdown, \.md, \.txt\)$"):
        forms.form_of("notes.rst")
    assert [forms.form_of(f"a{s}") for s in (".txt", ".MD", ".markdown", ".ipynb")] == [
        "plain", "markdown", "markdown", "notebook"]
    big = tmp_path / "big.ipynb"
    big.write_text(json.dumps({"cells": [{"cell_type": "raw", "source": "x" * 3 * 2**20}]}))
    monkeypatch.setattr(notebook, "MAX_BYTES", 2 * 2**20)
    with pytest.raises(ValueError, match=rf"^{big}: 3\.0 MiB, above the limit of 2 MiB for an article$"):
        forms.read(big)
    with pytest.raises(ValueError, match=r"^x: 3\.0 MiB, above the limit of 2 MiB"):
        notebook.parse(big.read_text(), "x")
    latin = tmp_path / "latin.txt"
    latin.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(ValueError, match=rf"^{latin}: not UTF-8 text \(byte 3\)$"):
        forms.read(latin)
    with pytest.raises(ValueError, match=r"^display 'last' of a output block"):
        blocks.Block("output", 1, ["1"], display="last")


# --- numbers -------------------------------------------------------------------------------------------

def test_a_number_is_found_inside_a_repr_and_not_inside_a_name():
    def found(text):
        return [(t.text, t.column) for t in listings.tokens(text)]

    assert found("np.float64(0.5)") == [("0.5", 12)]
    assert found("tensor(0.5000)") == [("0.5000", 8)]
    assert found("tensor([[0.1, -0.2]])") == [("0.1", 10), ("-0.2", 15)]
    assert found("array([1., 2.])") == [("1.", 8), ("2.", 12)]
    assert found("eps 1e-05, rate -3.2E+04, share 95%") == [("1e-05", 5), ("-3.2E+04", 17), ("95", 33)]
    assert found("float64 d_k8 x2 = 3, W_1") == [("3", 19)]
    assert found("length x4, time x14.2, flag True") == [("4", 9), ("14.2", 18), ("True", 29)]
    assert listings.shape("np.float64(0.5)  tensor([[0.1, -0.2]])") == "np.float64(#)tensor([[#,#]])"


def test_a_printed_value_is_told_from_code():
    assert all(map(outputs.value_line, ["42", "-0.5", "[1, 2, 3]", "(5, 4)", "np.float64(0.5)", "True",
                                        "{'a': 1}", "array([nan, 1.], dtype=float32)",
                                        "tensor([[0.1]], dtype=torch.float64)"]))
    assert not any(map(outputs.value_line, ["x", "x.mean()", "print(3)", "torch.manual_seed(0)", "a b"]))
