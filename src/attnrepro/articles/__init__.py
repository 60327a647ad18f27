"""Articles as input: any article, in the form its author wrote it, read into listings and numbers.

An article is data, named by an entry of config ``articles`` (its id, the text's path, its SHA-256,
its title, its claims file if it has one); nothing of it is code until its listings run, in a fresh
and bounded interpreter. The modules, from the text to the claims:

- ``blocks``: what every form gives, the same blocks (heading, paragraph, list, lines, code,
  output) with their places (line from 1, column from 1 of the text as read);
- ``plain``, ``markdown``, ``notebook``: one parser per form (plain text as the seeds are,
  Markdown with fenced code, a Jupyter notebook's cells and saved outputs); ``forms`` picks one by
  the file's suffix; ``outputs``: how output is told from code inside a listing, in every form
  (``# Output:`` comments, ``>>>`` transcripts, a printed value);
- ``listings``: each listing with the published output lines after it, the numbers of a line,
  and the Python that runs for a listing's IPython lines (magics, shell commands);
- ``session`` and ``bounded``: the interpreter that runs an article's listings in order, as a
  notebook's kernel runs its cells (a failed listing keeps what it bound, the next runs), and
  what bounds it (time, memory, its own working folder);
- ``catalog``: the articles of a run's config;
- ``draft``: a claim drafted for every printed number, classed by stated rules.

Below :mod:`attnrepro.report`, which judges the claims and renders the editions, and apart from the
seeds' experiments. Pure Python at import: NumPy loads only in the listings' interpreter.
"""
