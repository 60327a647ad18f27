"""The ledger command: every published claim judged against the run (results/ledger.csv, LEDGER.md)."""

from attnrepro.report.ledger import claims_check

HELP = "judge every published claim against the run (ledger.csv, LEDGER.md)"
OUTPUTS = ("csv", "md", "speed_out")  # --speed writes results/speed.csv, which a table reads with its own


def add_options(parser):
    parser.add_argument("--published", required=True)
    parser.add_argument("--csv", required=True)
    parser.add_argument("--md", required=True)
    parser.add_argument("--speed", dest="speed_out",
                        help="where to write each article's speed factor (results/speed.csv)")
    parser.add_argument("--article", metavar="JSON",
                        help="what the article's config plans "
                             "(attnrepro.report.ledger.comparable.Article): a claim "
                             "computed otherwise is judged 'other parameters'")
    parser.add_argument("--gate", action="store_true", help="exit 1 if an exact claim is not reproduced")
    parser.add_argument("--numerics-evidence", help="the numerics sweep's ledger_numerics.csv, to cite")
    parser.add_argument("--seed-evidence",
                        help="the seed distribution's seed_distribution.csv, to judge stochastic claims by")
    parser.add_argument("--listings-evidence",
                        help="the listings' article_code.csv: what the articles' own code prints here")
    parser.add_argument("--checked", nargs="*", default=[], metavar="CSV",
                        help="the ledger rows of the articles checked from their text (results/claims/<id>."
                             "ledger.csv): they join ledger.csv, counted apart in LEDGER.md")
    parser.add_argument("--inputs", nargs="*", default=[], help="the results files it may read")


def run(args):
    """Write the ledger of ``args.published`` over ``args.inputs`` and the evidence given; its
    status (1 with ``--gate`` when an exact claim is not reproduced)."""
    from attnrepro.report.ledger import comparable  # loads NumPy: after the pin (the harness)
    from attnrepro.report.products import results

    claims_check.check(args.published)
    article = comparable.Article.from_json(args.article) if args.article else None
    return write(
        args.published, results.Loader(args.inputs), args.csv, args.md, gate=args.gate,
        numerics_csv=args.numerics_evidence, seeds_csv=args.seed_evidence, speed_csv=args.speed_out,
        article=article, listings_csv=args.listings_evidence, checked_csvs=args.checked)


def write(published_path, load, csv_path, md_path, gate=False, numerics_csv=None, seeds_csv=None,
          speed_csv=None, article=None, listings_csv=None, checked_csvs=()):
    """Evaluate every claim of ``published_path`` over ``load``, cite its evidence, write the
    ledger's files (:func:`attnrepro.report.ledger.files.write`, which gives the status). The
    stochastic claims are judged against the seed distribution's CSV when given (else the run's own
    seeds, as their reasons say), the raw times against each article's speed factor; a round-off,
    finite-difference or stochastic deviation's reason cites the numerics sweep and the listings
    when given, or says which target makes them, and column article_code says what the articles'
    own code prints here (:mod:`attnrepro.report.evidence_tables.citations`, a layer above the ledger).
    ``article`` (a comparable.Article): what the article's config plans; a claim computed otherwise
    is judged "other parameters"."""
    from attnrepro.report.evidence_tables import citations  # loads NumPy: after the pin (the harness)
    from attnrepro.report.ledger import claims as published, files, verdicts

    claims = verdicts.load_claims(published_path)
    rule = published.load_speed(published_path)
    table = verdicts.evaluate(claims, load, citations.spread(seeds_csv, load), rule, article)
    table["numerics"] = files.numerics_column(claims, load)
    table = citations.cite(table, claims, load, numerics_csv, listings_csv)
    return files.write(table, claims, rule, load, published_path, csv_path, md_path, gate, speed_csv,
                       article, checked_csvs)
