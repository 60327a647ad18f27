"""The work of ``python -m attnrepro article check FILE``: any article checked from its text alone.

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

Its options are :mod:`attnrepro.report.commands.article_check`'s.
Exit status: 0 when every number reproduces (a number an unseeded draw moves, or a time of another
machine, is not a difference), 1 when some differ or a listing did not run, 2 for a usage error.
"""

import logging
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from attnrepro import paths
from attnrepro.articles import bounded, draft, forms, listings, printed
from attnrepro.evidence import listings_run
from attnrepro.numerics import threads
from attnrepro.report.ledger import ledger_md
from attnrepro.report.editions import edition
from attnrepro.report.ledger import claims as published, coverage, verdicts
from attnrepro.run import digests, io, provenance, usage

log = logging.getLogger("attnrepro")
FAILING = ("differs", "missing")  # the verdicts that make the check fail (status 1)
# the notes of what the session does not run as written (listings.runnable): a shell command, a
# magic, a timing
NOT_RUN = ("not run", "not reproduced")
SPEED_RULE = "config/published.yaml"  # its speed: entry judges raw times, as the run's ledger does
NOT_READ = ("a number the draft does not read as one (a word, a version, a date, a thousands "
            "separator)")
_ID = re.compile(r"[^A-Za-z0-9_-]+")


def article_id(path, given=None):
    """The article's id: ``given``, else the file's stem with every other character than letters,
    digits, ``_`` and ``-`` replaced by ``-``."""
    found = given if given is not None else _ID.sub("-", Path(path).stem).strip("-")
    if not found or _ID.search(found) or len(found) > 32:
        raise usage.UsageError(f"--id {found!r}: letters, digits, _ and - only, at most 32 characters")
    return found


def title_of(document, path):
    """The text of the document's first heading, else the file's name."""
    headings = draft.heading_lines(document.blocks)
    return headings[0][1] if headings else Path(path).name


def under(out, path):
    """A path of :mod:`attnrepro.paths` (under ``results/``) moved under ``out``."""
    return Path(out) / Path(path).relative_to(paths.RESULTS)


def session_environment(options):
    """(environment, threads) of the listings' interpreter: the pin's, and ``options.threads`` BLAS
    and OpenMP threads (at most the CPUs this job may use) or, without it, the libraries' own."""
    env, _ = listings_run.session_environment(options.pin)
    if options.threads is None:
        return env, "the libraries' own (no limit set)"
    used = min(options.threads, threads.available())
    env.update({name: str(used) for name in threads.VARIABLES})
    return env, used


def run_twice(given, options):
    """(records, numerics, threads): the records of two runs of the listings ({name: record}), each
    in a fresh interpreter, what the first one's libraries ran, and its thread limit."""
    env, limit = session_environment(options)
    runs, numerics = [], {}
    for _ in range(2):
        outcome = bounded.run_listings(given, time_limit_s=options.time_limit,
                                       listing_limit_s=options.listing_time_limit,
                                       memory_limit_mib=options.memory_limit, env=env)
        runs.append({r["name"]: r for r in outcome.results})
        numerics = numerics or outcome.numerics
    return runs, numerics, limit


def failure_rows(article, result, blocks):
    """One ledger row per listing that did not run (*missing*, with its one line; *inconclusive* when
    the article shows no output for it: no number is lost) or printed other lines than the
    published ones (*differs*: their numbers are compared nowhere else; *inconclusive* when what
    printed them is a shell command or magic the session does not run)."""
    headings = draft.heading_lines(blocks)
    rows = []
    for failed in result.failures:
        k, n = failed["listing"], failed["published"]
        if failed["status"] != "ran":
            verdict = "missing" if n else "inconclusive"
            reason = f"listing {k}: {failed['error']}" + ("" if n else "; the article shows no output for it")
        else:
            shown = ", ".join(map(str, failed["unpaired_lines"]))
            unrun = [note for note in failed["notes"] if any(words in note for words in NOT_RUN)]
            verdict, reason = "inconclusive" if unrun else "differs", (
                f"listing {k} printed no line like the article's line(s) {shown}: their numbers are compared "
                "with nothing it prints" + (f"; what it does not run printed them ({'; '.join(unrun)})"
                                            if unrun else ""))
        rows.append({"id": f"{article}.listing-{k}", "article": article,
                     "section": draft.section(headings, failed["line"]),
                     "claim": f"listing {k} (line {failed['line']}) and what it prints",
                     "published": f"{n} numbers", "reproduced": "", "class": "exact", "verdict": verdict,
                     "reason": reason, "accepted_low": float("nan"), "accepted_high": float("nan")})
    return rows


def drafted(result):
    """The draft's claims as the ledger reads a claims file's, each with its rationale."""
    claims = [published.Claim.from_dict(c) for c in result.claims]
    for claim in claims:
        claim.rationale = draft.RATIONALES.get(claim.why) if claim.why else None
    return claims


def confirmed(path, article):
    """The claims of ``article`` in the claims file ``path`` (a person's, confirmed from a draft)."""
    try:
        return [c for c in published.load_claims(path) if c.article == article]
    except (OSError, ValueError) as error:
        raise usage.UsageError(f"--claims {path}: {usage.one_line(error)}") from None


def judge(claims, numbers, rule):
    """The ledger table of ``claims`` judged by the ledger's rules on ``numbers`` (the printed
    numbers' table), raw times by the speed rule of the run's ledger."""

    def load(experiment, table):
        if (experiment, table) != (draft.LISTINGS, "main"):
            raise FileNotFoundError(f"{experiment}/{table}: not a table of an article's check")
        return numbers

    return verdicts.evaluate(claims, load, rule=rule)


def speed_rule_of(path):
    """The speed rule of the claims file ``path`` (default: this checkout's config/published.yaml)."""
    path = path or paths.REPO / SPEED_RULE
    try:
        return published.load_speed(path)
    except (OSError, ValueError) as error:
        raise usage.UsageError(f"--speed-rule {path}: {usage.one_line(error)}") from None


def coverage_gaps(article, document, claims, unclaimed):
    """The unclaimed entries of the numbers the coverage scan finds in the text (words, versions,
    dates, separated thousands: :mod:`attnrepro.report.ledger.coverage`) that no claim covers and
    the draft did not list: every number of the article is a claim or listed, as for the seeds."""
    spans, listed = coverage.claim_spans(claims), {(u["line"], u["column"]) for u in unclaimed}
    return [{"line": n.line, "column": n.column, "text": n.text, "reason": NOT_READ}
            for n in coverage.numbers(article, document.text, document.blocks)
            if not coverage.claimed(n, spans) and (n.line, n.column) not in listed]


def refuse_other_text(path, expected):
    """A usage error when the text at ``path`` is not the one whose SHA-256 is ``expected``."""
    found = digests.file_sha256(path)
    if expected and found != expected:
        raise usage.UsageError(f"{path}: SHA-256 {found}, but its entry (config articles, sha256) records "
                               f"{expected}: another text than the one it names; not checked")


@dataclass(frozen=True)
class Outputs:
    """Where a check writes: under ``--out DIR`` as a run lays out ``results/`` (:meth:`under`), or,
    in a run, beside the run's own ledger (:meth:`of_run`: its rows go into results/ledger.csv)."""

    claims: Path
    unclaimed: Path
    numbers: Path
    ledger_csv: Path
    ledger_md: Path | None
    edition: Path

    @classmethod
    def under(cls, out, article):
        return cls(under(out, paths.drafted_claims(article)), under(out, paths.unclaimed_numbers(article)),
                   under(out, paths.checked_numbers(article)), under(out, paths.LEDGER_CSV),
                   under(out, paths.LEDGER_MD), under(out, paths.edition_path(article)))

    @classmethod
    def of_run(cls, article):
        return cls(*map(Path, (paths.drafted_claims(article), paths.unclaimed_numbers(article),
                               paths.checked_numbers(article), paths.checked_ledger(article))),
                   None, Path(paths.edition_path(article)))

    def all(self):
        return [p for p in (self.claims, self.unclaimed, self.numbers, self.ledger_csv, self.ledger_md,
                            self.edition) if p is not None]


def write(outputs, article, document, title, result, claims, table, numbers, record):
    """Every file of the check (``outputs``: an :class:`Outputs`; ``numbers``: the printed numbers'
    table, with its provenance ``record``)."""
    import yaml

    for path in outputs.all():
        path.parent.mkdir(parents=True, exist_ok=True)
    io.write_text(outputs.claims, f"# {draft.HEADER}\n"
                  + yaml.safe_dump(result.document(), sort_keys=False, allow_unicode=True))
    io.write_text(outputs.unclaimed,
                  yaml.safe_dump({"unclaimed": result.unclaimed}, sort_keys=False, allow_unicode=True))
    io.write_parquet(numbers, outputs.numbers, record)
    with io.atomic_path(outputs.ledger_csv) as tmp:
        table.to_csv(tmp, index=False)
    if outputs.ledger_md is not None:
        io.write_text(outputs.ledger_md, ledger_md.markdown(table) + "\n")
    notes = edition.notes(claims, table, None, document.text.split("\n"))
    page = edition.render(article, document.text, notes, title, blocks=document.blocks)
    io.write_text(outputs.edition, page)


def check(path, options, outputs=None):
    """Check the article at ``path``, writing its :class:`Outputs` (by default under ``options.out``);
    the ledger table."""
    article = article_id(path, options.id)
    outputs = outputs or Outputs.under(options.out, article)
    try:
        refuse_other_text(path, options.sha256)
        document = forms.read(path)
    except (OSError, ValueError) as error:
        raise usage.UsageError(f"{path}: {usage.one_line(error)}") from None
    rule = speed_rule_of(options.speed_rule)  # every file it reads refused, if it must be, before the work
    confirmed_claims = confirmed(options.claims, article) if options.claims else None
    title = options.title or title_of(document, path)
    found = listings.extract(document, article)
    log.info("article %s (%s, %s): %d listings", article, path, document.form, len(found))
    given = [{"name": item.name, "first": item.first, "code": item.code, "display": item.display}
             for item in found]
    started = provenance.now()
    (first, second), ran_with, limit = run_twice(given, options)
    result = draft.draft(article, document.blocks, found, first, second)
    numbers = pd.DataFrame(printed.table_rows(result.printed), columns=printed.TABLE_COLUMNS)
    claims = confirmed_claims if confirmed_claims is not None else drafted(result)
    table = judge(claims, numbers, rule)
    result.unclaimed = sorted(result.unclaimed + coverage_gaps(article, document, claims, result.unclaimed),
                              key=lambda u: (u["line"], u["column"]))
    table = pd.concat([table, pd.DataFrame(failure_rows(article, result, document.blocks))],
                      ignore_index=True) if result.failures else table
    record = {"article": article, "text": str(path), "sha256": digests.file_sha256(path),
              "form": document.form, "started": started, "finished": provenance.now(),
              "git": provenance.git_state(), "interpreter": listings_run.versions(), "pin": options.pin,
              "numerics": ran_with, "threads": limit,
              "limits": {"time_s": options.time_limit, "listing_time_s": options.listing_time_limit,
                         "memory_mib": options.memory_limit},
              "listings": [{k: r.get(k) for k in ("name", "status", "error", "seconds", "notes")}
                           for r in first.values()]}
    write(outputs, article, document, title, result, claims, table, numbers, record)
    return table


def check_limits(args):
    """A usage error for a limit that bounds nothing (what a check may cost is bounded before it runs)."""
    limits = (("--time-limit", args.time_limit, 1), ("--memory-limit", args.memory_limit, 64),
              ("--listing-time-limit", args.listing_time_limit, 1), ("--threads", args.threads, 1))
    for option, value, least in limits:
        if value is not None and value < least:
            raise usage.UsageError(f"{option} {value:g}: at least {least}")


def run(args):
    """The command: status 0 when every number reproduces, 1 when some differ or a listing did not run."""
    if not args.in_run and not args.out:
        raise usage.UsageError("--out DIR: where the check writes (or --in-run, as a job of the run)")
    check_limits(args)
    outputs = Outputs.of_run(article_id(args.file, args.id)) if args.in_run else None
    table = check(args.file, args, outputs)
    failing = table[table["verdict"].isin(FAILING)]
    counts = table["verdict"].value_counts().to_dict()
    where = args.out or paths.RESULTS
    print(f"{args.file}: {len(table)} claims, " + ", ".join(f"{n} {v}" for v, n in counts.items())
          + f"; written under {where}", file=sys.stderr)
    return 1 if len(failing) else 0
