"""The documentation's shape: a short README, a glossary that defines the project's terms, links
that lead somewhere.

README.md is the front door (at most README_LINES lines); each longer topic is one file under
docs/, and docs/glossary.md defines each term of TERMS once: as a heading of its own (``### case``,
or one of several: ``### tolerance, band, rationale``) or as an item of a list of kinds
(``- *echo*: ...``). Every relative link of README.md, CONTRIBUTING.md and docs/*.md names a file
of the repository, and its ``#anchor``, if any, a heading of that file. The commands of these
files run in tests/test_examples.py.
"""

import re

from conftest import REPO

README_LINES = 150
GLOSSARY = REPO / "docs" / "glossary.md"
# the terms the README and docs/ use without defining them again
TERMS = ("experiment", "case", "grid key", "product", "claim", "class", "verdict", "evidence", "setting",
         "pin", "canonical", "edition", "golden", "echo", "ledger", "heartbeat", "job step", "provenance",
         "fingerprint", "speed factor", "run ownership")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")  # [text](target)


def documents():
    return [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]


def defined_terms(text):
    """The terms a glossary text defines: its ``###`` headings (split at commas) and ``- *term*:``."""
    terms = set()
    for heading in re.findall(r"^###\s+(.+?)\s*$", text, re.MULTILINE):
        terms |= {t.strip().lower() for t in heading.split(",")}
    terms |= {t.strip().lower() for t in re.findall(r"^\s*- \*([^*]+)\*:", text, re.MULTILINE)}
    return terms


def anchors(text):
    """GitHub's anchors of a Markdown text's headings: lower case, punctuation dropped, spaces to -."""
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    out = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*$", text, re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
        out.add(slug.replace(" ", "-"))
    return out


def broken_links(path):
    """[(line, target, what is wrong)] of the relative links of one Markdown file."""
    text = path.read_text()
    prose = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.DOTALL)
    broken = []
    for match in LINK.finditer(prose):
        target = match.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not ours to check
            continue
        line = prose.count("\n", 0, match.start()) + 1
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.is_file():
            broken.append((line, target, "no such file"))
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text()):
            broken.append((line, target, f"no heading #{anchor} in {dest.name}"))
    return broken


def test_the_readme_is_a_front_door():
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= README_LINES, f"README.md has {len(lines)} lines, at most {README_LINES}"
    text = "\n".join(lines)
    for command in ("make reproduce", "make test"):  # the two commands on a fresh machine
        assert re.search(rf"^{command}\b", text, re.MULTILINE), command
    assert "docs/glossary.md" in text


def test_the_glossary_defines_each_term():
    assert GLOSSARY.is_file(), "docs/glossary.md is missing"
    defined = defined_terms(GLOSSARY.read_text())
    missing = [term for term in TERMS if term not in defined]
    assert not missing, f"docs/glossary.md does not define {missing} (it defines {sorted(defined)})"


def test_the_glossary_reader_finds_headings_and_kinds():
    """defined_terms reads both forms, and nothing from prose (a broken pattern would pass anything)."""
    text = "### case\n\nOne job.\n\n### tolerance, band\n\n- *echo*: counted apart.\n\nA claim is a number.\n"
    assert defined_terms(text) == {"case", "tolerance", "band", "echo"}


def test_every_relative_link_leads_to_a_file():
    broken = [f"{path.relative_to(REPO)}:{line}: {target} ({why})"
              for path in documents() for line, target, why in broken_links(path)]
    assert not broken, "\n".join(broken)
    links = sum(len(LINK.findall(path.read_text())) for path in documents())
    assert links >= 20, links  # the README and docs/ link to each other


def test_a_broken_link_is_found(tmp_path):
    (tmp_path / "other.md").write_text("# Title\n\n## The archive's RO-Crate\n")
    page = tmp_path / "page.md"
    page.write_text("[a](other.md) [b](other.md#the-archives-ro-crate) [c](gone.md) [d](other.md#gone)\n"
                    "[e](https://example.org/x.md) [f](#local)\n\n## Local\n")
    assert [(target, why) for _, target, why in broken_links(page)] == [
        ("gone.md", "no such file"), ("other.md#gone", "no heading #gone in other.md")]


def test_no_docs_line_mentions_an_issue():
    """As README.md and CONTRIBUTING.md (tests/test_published.py): the docs say what is, not which
    ticket asked for it."""
    for path in sorted((REPO / "docs").glob("*.md")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            assert not re.search(r"\bissues?\b", line, re.IGNORECASE), f"{path.name}:{n}: {line}"
