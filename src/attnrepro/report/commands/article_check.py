"""``python -m attnrepro article check FILE``: any article checked from its text alone.

    python -m attnrepro article check post.md --out /tmp/post-check
    python -m attnrepro article check notebook.ipynb --out /tmp/nb --time-limit 300 --memory-limit 2048

The article (plain text as the seeds are, Markdown, or a Jupyter notebook: :mod:`attnrepro.articles.forms`)
is read into blocks; its listings run in order, twice, each time in a fresh interpreter bounded in time,
memory and working folder (:mod:`attnrepro.articles.bounded`), under the numerics pin. Running an article
runs its code with your rights: check only what you would run yourself. Every number the listings print
is set beside the published one; a claim is drafted for each (:mod:`attnrepro.articles.draft`) and judged
by the ledger's rules (:func:`attnrepro.report.ledger.verdicts.evaluate`). Under ``--out DIR``, as a run
lays them out under ``results/``:

- ``claims/<id>.yaml``: the drafted claims (published.yaml's schema; confirm them by copying them into
  the article's claims file), ``claims/<id>.unclaimed.yaml``: the prose's numbers that restate none;
- ``data/<id>/listings/numbers.parquet``: every number each listing printed, with its provenance;
- ``ledger.csv`` and ``LEDGER.md`` in the run's columns, one row per claim and per listing that did not run;
- ``articles/<id>.html``: the edition, every judged number marked.

Exit status: 0 when every number reproduces (a number an unseeded draw moves, or a time of another
machine, is not a difference), 1 when some differ or a listing did not run, 2 for a usage error.
"""

import argparse
import logging
import re
import sys
from pathlib import Path

import pandas as pd

from attnrepro import paths
from attnrepro.articles import bounded, draft, forms, listings
from attnrepro.evidence import listings_run
from attnrepro.numerics import canonical
from attnrepro.report import ledger_io
from attnrepro.report.editions import edition
from attnrepro.report.ledger import claims as published, verdicts
from attnrepro.run import digests, harness, io, provenance, usage

log = logging.getLogger("attnrepro")
FAILING = ("differs", "missing")  # the verdicts that make the check fail (status 1)
SPEED_RULE = "config/published.yaml"  # its `speed:` entry judges raw times, as in the run's ledger
_ID = re.compile(r"[^A-Za-z0-9_-]+")


def parser():
    """The command line of ``article check`` (``python -m attnrepro article check -h``)."""
    top = usage.Parser(prog="attnrepro article", description=__doc__.split("\n")[0])
    actions = top.add_subparsers(dest="action", required=True)
    command = actions.add_parser("check", help="run an article's listings and judge every number it prints",
                                 description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_options(command)
    return top


def add_options(parser):
    """The options of ``article check``."""
    parser.add_argument("file", help="the article: .txt (plain, as the seeds), .md or .ipynb")
    parser.add_argument("--out", required=True, metavar="DIR", help="where the check writes (a folder)")
    parser.add_argument("--id", help="the article's id in the claims and the ledger (default: from the "
                                     "file's name)")
    parser.add_argument("--title", help="its title (default: its first heading)")
    parser.add_argument("--time-limit", type=float, default=bounded.TIME_LIMIT_S, metavar="S",
                        help=f"seconds for all its listings, each run (default {bounded.TIME_LIMIT_S:g})")
    parser.add_argument("--listing-time-limit", type=float, default=None, metavar="S",
                        help="seconds for one listing (default: the article's limit)")
    parser.add_argument("--memory-limit", type=int, default=bounded.MEMORY_LIMIT_MIB, metavar="MIB",
                        help=f"memory of its interpreter (default {bounded.MEMORY_LIMIT_MIB} MiB)")
    parser.add_argument("--pin", choices=canonical.PINS, default=canonical.SETTING,
                        help="the numerics its listings run under (attnrepro.numerics.canonical)")


def article_id(path, given=None):
    """The article's id: ``given``, else the file's stem with every other character than letters,
    digits, ``_`` and ``-`` replaced by ``-``."""
    found = given if given is not None else _ID.sub("-", Path(path).stem).strip("-")
    if not found or _ID.search(found) or len(found) > 32:
        raise usage.UsageError(f"--id {found!r}: letters, digits, _ and - only, at most 32 characters")
    return found


def title_of(document, path):
    """The text of the document's first heading, else the file's name."""
    heading = next((b for b in document.blocks if b.kind == "heading"), None)
    return " ".join(heading.lines).strip().lstrip("#").strip() if heading is not None else Path(path).name


def under(out, path):
    """A path of :mod:`attnrepro.paths` (under ``results/``) moved under ``out``."""
    return Path(out) / Path(path).relative_to(paths.RESULTS)


def run_twice(given, options):
    """The records of two runs of the listings ({name: record}), each in a fresh interpreter."""
    env, _ = listings_run.session_environment(options.pin)
    runs = []
    for _ in range(2):
        outcome = bounded.run_listings(given, time_limit_s=options.time_limit,
                                       listing_limit_s=options.listing_time_limit,
                                       memory_limit_mib=options.memory_limit, env=env)
        runs.append({r["name"]: r for r in outcome.results})
    return runs


def failure_rows(article, result, blocks):
    """One ledger row per listing that did not run, with its one line."""
    headings = [(b.first, " ".join(b.lines).strip()) for b in blocks if b.kind == "heading"]
    rows = []
    for failed in result.failures:
        rows.append({"id": f"{article}.listing-{failed['listing']}", "article": article,
                     "section": draft.section(headings, failed["line"]),
                     "claim": f"listing {failed['listing']} (line {failed['line']}) and what it prints",
                     "published": "its output", "reproduced": "", "class": "exact", "verdict": "missing",
                     "reason": f"listing {failed['listing']}: {failed['error']}",
                     "accepted_low": float("nan"), "accepted_high": float("nan")})
    return rows


def judge(result, numbers):
    """(claims, ledger table) of a draft: its claims judged by the ledger's rules on ``numbers`` (the
    printed numbers' table), raw times by the speed rule of the run's ledger."""
    claims = [published.Claim.from_dict(c) for c in result.claims]
    for claim in claims:
        claim.rationale = draft.RATIONALES.get(claim.why) if claim.why else None

    def load(experiment, table):
        if (experiment, table) != (draft.LISTINGS, "main"):
            raise FileNotFoundError(f"{experiment}/{table}: not a table of an article's check")
        return numbers

    table = verdicts.evaluate(claims, load, rule=published.load_speed(paths.REPO / SPEED_RULE))
    return claims, table


def write(out, article, document, title, result, claims, table, record):
    """Every file of the check under ``out`` (the module's docstring lists them)."""
    import yaml

    drafted = {"rationales": dict(draft.RATIONALES), "claims": result.claims}
    io.write_text(under(out, paths.drafted_claims(article)),
                  f"# {draft.HEADER}\n" + yaml.safe_dump(drafted, sort_keys=False, allow_unicode=True))
    io.write_text(under(out, paths.unclaimed_numbers(article)),
                  yaml.safe_dump({"unclaimed": result.unclaimed}, sort_keys=False, allow_unicode=True))
    io.write_parquet(pd.DataFrame(draft.table_rows(result), columns=draft.TABLE_COLUMNS),
                     under(out, paths.data_path(article, draft.LISTINGS, "numbers")), record)
    table.to_csv(under(out, paths.LEDGER_CSV), index=False)
    io.write_text(under(out, paths.LEDGER_MD), ledger_io.markdown(table) + "\n")
    notes = edition.notes(claims, table, None, document.text.split("\n"))
    page = edition.render(article, document.text, notes, title, blocks=document.blocks)
    io.write_text(under(out, paths.edition_path(article)), page)


def check(path, out, options):
    """Check the article at ``path``, writing under ``out``; the ledger table."""
    article = article_id(path, options.id)
    try:
        document = forms.read(path)
    except (OSError, ValueError) as error:
        raise usage.UsageError(f"{path}: {usage.one_line(error)}") from None
    title = options.title or title_of(document, path)
    found = listings.extract(document, article)
    log.info("article %s (%s, %s): %d listings", article, path, document.form, len(found))
    given = [{"name": item.name, "first": item.first, "code": item.code, "display": item.display}
             for item in found]
    started = provenance.now()
    first, second = run_twice(given, options)
    result = draft.draft(article, document.blocks, found, first, second)
    numbers = pd.DataFrame(draft.table_rows(result), columns=draft.TABLE_COLUMNS)
    claims, table = judge(result, numbers)
    table = pd.concat([table, pd.DataFrame(failure_rows(article, result, document.blocks))],
                      ignore_index=True) if result.failures else table
    record = {"article": article, "text": str(path), "sha256": digests.file_sha256(path),
              "form": document.form, "started": started, "finished": provenance.now(),
              "git": provenance.git_state(), "interpreter": listings_run.versions(), "pin": options.pin,
              "limits": {"time_s": options.time_limit, "listing_time_s": options.listing_time_limit,
                         "memory_mib": options.memory_limit},
              "listings": [{k: r.get(k) for k in ("name", "status", "error", "seconds")} for r in first.values()]}
    Path(out).mkdir(parents=True, exist_ok=True)
    write(out, article, document, title, result, claims, table, record)
    return table


def main(argv=None):
    """``python -m attnrepro article check ...``: its status (the module's docstring)."""
    args = parser().parse_args(argv)
    harness.setup_logging()
    try:
        return run(args)
    except usage.UsageError as error:
        return usage.refuse(error, "attnrepro article check")


def run(args):
    """The command: status 0 when every number reproduces, 1 when some differ or a listing did not run."""
    table = check(args.file, args.out, args)
    failing = table[table["verdict"].isin(FAILING)]
    counts = table["verdict"].value_counts().to_dict()
    print(f"{args.file}: {len(table)} claims, " + ", ".join(f"{n} {v}" for v, n in counts.items())
          + f"; written under {args.out}", file=sys.stderr)
    return 1 if len(failing) else 0
