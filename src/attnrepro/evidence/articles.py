"""The articles' text (``../shared/seeds/<file>``): which they are, where, and their digests.

The articles are plain text as a browser copies a web page; :mod:`attnrepro.articles.plain`
splits one into blocks (heading, paragraph, list, code, output) for the annotated editions
(:mod:`attnrepro.report.editions.edition`), the coverage scan and the listings; the lines keep
their numbers, the columns of ``config/published.yaml``'s locations count characters of those lines.

Pure Python (no pandas): Snakemake reads :data:`ARTICLES` to build the DAG.
"""

from pathlib import Path

from attnrepro import paths
from attnrepro.run import digests

# the folder of the articles, relative to the repository (the working directory of a run): the
# default of config `articles.folder`
ARTICLES_DIR = "../shared/seeds"
PUBLISHED = "config/published.yaml"  # its `articles:` entry holds each file's SHA-256
ARTICLES = {  # article id -> its file in ARTICLES_DIR, and its title (shared/seeds/README.md)
    "000": ("000_75179352abf5523f.txt", "01 - Transformer Architecture: attention, encoder, decoder"),
    "001": ("001_4eed2fe571f53353.txt", "95 - Attention, Derived in Full"),
    "003": ("003_87e93f4f85180611.txt", "Attention & Transformers"),
}


def article_path(article, folder=ARTICLES_DIR):
    """The path of an article's text: ``../shared/seeds/<file>`` by default."""
    return f"{folder}/{ARTICLES[article][0]}"


def folder_of(config):
    """The articles' folder of a run's config (``articles.folder``, default :data:`ARTICLES_DIR`)."""
    return (config.get("articles") or {}).get("folder") or ARTICLES_DIR


def expected_hashes(published=PUBLISHED):
    """{article: SHA-256} that ``config/published.yaml`` records for the articles' files (read
    without the strict check of a key given twice: every Snakemake start reads them, and the
    ledger job reads the whole file strictly, :func:`attnrepro.report.ledger.claims.load_claims`)."""
    import yaml

    section = _top_level_section(Path(published).read_text(encoding="utf-8"), "articles")
    data = yaml.load(section, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    return {str(k): v for k, v in (data.get("articles") or {}).items()}


def _top_level_section(text, key):
    """The lines of the YAML ``text``'s top-level mapping entry ``key`` (its line, and those after
    it up to the next top-level line): a few lines of a file of many claims, read at every start."""
    lines, inside = [], False
    for line in text.splitlines():
        top = line[:1] not in ("", " ", "\t", "#", "-")
        if top:
            inside = line.startswith(f"{key}:")
        if inside:
            lines.append(line)
    return "\n".join(lines)


sha256 = digests.file_sha256  # the articles' digests (config/published.yaml, articles:)


def problem(article, folder=ARTICLES_DIR, hashes=None):
    """Why ``article``'s edition cannot be built (its file is missing, or is not the text the
    locations were read against: another SHA-256), or None."""
    path = article_path(article, folder)
    if not Path(path).is_file():
        where = "" if Path(folder).is_dir() else f" (no folder {folder}; config articles.folder)"
        return f"{path}: not found{where}"
    expected = (hashes if hashes is not None else expected_hashes()).get(article)
    found = sha256(path)
    if expected is None:
        return f"{path}: {PUBLISHED} records no SHA-256 for article {article} (found {found})"
    if found != expected:
        return (f"{path}: SHA-256 {found}, but {PUBLISHED} records {expected}: another text than the "
                "one every location was read against")
    return None


def problems(folder=ARTICLES_DIR, hashes=None):
    """{article: why its edition cannot be built} of the articles that cannot (:func:`problem`)."""
    hashes = expected_hashes() if hashes is None else hashes
    found = {a: problem(a, folder, hashes) for a in ARTICLES}
    return {a: why for a, why in found.items() if why}


def edition_link(article, claim_id):
    """The link from ``results/`` (LEDGER.md) to a claim's number in its article's edition."""
    return f"{paths.relative(paths.edition_path(article))}#{claim_id}"


def read(article, folder=ARTICLES_DIR):
    """The text of an article (UTF-8)."""
    with open(article_path(article, folder), encoding="utf-8") as fh:
        return fh.read()
