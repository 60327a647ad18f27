"""The form of an article, by its file's suffix, and the one parser that reads it.

:data:`FORMS` maps a suffix to a form: plain text (the seeds' form, :mod:`~attnrepro.articles.plain`),
Markdown (:mod:`~attnrepro.articles.markdown`) or a Jupyter notebook
(:mod:`~attnrepro.articles.notebook`). :func:`read` reads a file into a
:class:`~attnrepro.articles.blocks.Document`; every form gives the same kinds of blocks, so what
reads an article's listings and numbers never asks which form it was. A file of another suffix,
not UTF-8, or above :data:`attnrepro.articles.notebook.MAX_BYTES` is refused in one line naming it.
"""

from pathlib import Path

from attnrepro.articles import markdown, notebook, plain

FORMS = {".txt": "plain", ".md": "markdown", ".markdown": "markdown", ".ipynb": "notebook"}


def form_of(path):
    """The form of the article at ``path``, by its suffix (:data:`FORMS`)."""
    form = FORMS.get(Path(path).suffix.lower())
    if form is None:
        raise ValueError(f"{path}: not an article's form (the known suffixes: {', '.join(sorted(FORMS))})")
    return form


def document(text, form, name="article"):
    """The :class:`~attnrepro.articles.blocks.Document` of ``text`` written in ``form``."""
    if form == "notebook":
        return notebook.parse(text, name)
    if form == "markdown":
        return markdown.document(text)
    if form == "plain":
        return plain.document(text)
    raise ValueError(f"{name}: unknown form {form!r} (the forms: {', '.join(sorted(set(FORMS.values())))})")


def read(path):
    """The :class:`~attnrepro.articles.blocks.Document` of the article at ``path``, read in the
    form its suffix names; at most :data:`~attnrepro.articles.notebook.MAX_BYTES` are read."""
    form = form_of(path)
    try:
        notebook.check_size(Path(path).stat().st_size, path)
        with open(path, "rb") as fh:
            data = fh.read(notebook.MAX_BYTES + 1)
    except OSError as error:
        raise ValueError(f"{path}: cannot be read ({error.strerror or error})") from None
    notebook.check_size(len(data), path)  # grown since
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text (byte {error.start})") from None
    return document(text, form, str(path))
