"""The listings' printed output against the published one, number by number, and claim by claim.

Each article's run (:mod:`attnrepro.evidence.listings_run`: per listing, its status, seconds and
what it printed) is set against the output blocks the article prints after the listing
(:mod:`attnrepro.articles.listings`):

- the printed lines are paired with the published ones by their
  :func:`~attnrepro.articles.listings.shape` (the line with its numbers blanked; difflib's longest
  matching blocks, then, in a stretch that differs, line by line where both hold as many numbers),
  and paired lines are compared number by number (the digits as printed);
- a published block after the first that no printed line pairs with is not the listing's output
  (a formula between two listings) and is left out, named in ``left_out``;
- every claim of ``config/published.yaml`` whose ``location`` stands in a paired published line
  gets the *article code, here* value: what the listing printed at the same place (the same
  numbers of the paired line, with the published string's brackets and unit around them; a word,
  such as "variable", by its field); a claim of the prose that restates a printed number (the
  same ``source``) gets that number, rounded as the prose rounds it.

:func:`evaluate` gives two tables: one row per listing (:data:`LISTING_COLUMNS`) and one row per
claim (:data:`CLAIM_COLUMNS`, the claims no listing prints with an empty ``article_code`` and the
reason); :func:`read` and :func:`article_code` are what the ledger takes from the claims' CSV.
"""

from pathlib import Path

import pandas as pd

from attnrepro.articles import plain
from attnrepro.articles.listings import extract, pair_lines, tokens
from attnrepro.paths import LISTINGS_TABLE
from attnrepro.report.ledger import verdicts

LISTINGS_CSV = LISTINGS_TABLE
LISTING_COLUMNS = ["article", "listing", "first_line", "status", "error", "outside_lock", "seconds",
                   "numbers_published", "numbers_printed", "numbers_equal", "output", "left_out"]
CLAIM_COLUMNS = ["id", "article", "class", "listing", "line", "published", "article_code", "equal", "why"]
EQUAL, DIFFERS, NO_OUTPUT = "equal", "differs", "no published output"


def compare(listing, run):
    """(the listing's row, {published line number: printed text}) for one listing and its run."""
    printed = [text for text in (run.get("stdout") or "").splitlines() if text.strip()]
    lines = listing.lines()
    block_of = [k for k, block in enumerate(listing.blocks) for _ in block]
    pairs = pair_lines(lines, printed)
    matched_blocks = {block_of[i] for i, _ in pairs}
    kept = [i for i in range(len(lines)) if block_of[i] == 0 or block_of[i] in matched_blocks]
    left_out = [listing.blocks[k][0].number for k in range(1, len(listing.blocks)) if k not in matched_blocks]
    partner = {i: j for i, j in pairs}
    published_numbers = sum(len(lines[i].tokens()) for i in kept)
    printed_numbers = sum(len(tokens(text)) for text in printed)
    equal = sum(
        a.text == b.text
        for i in kept if i in partner
        for a, b in zip(lines[i].tokens(), tokens(printed[partner[i]]))
    )
    if run["status"] != "ran":
        output = run["status"]
    elif not kept and not printed:
        output = NO_OUTPUT
    else:
        whole = len(partner) == len(kept) == len(printed)
        output = EQUAL if whole and published_numbers == printed_numbers == equal else DIFFERS
    row = {
        "article": listing.article, "listing": listing.index, "first_line": listing.first,
        "status": run["status"], "error": run.get("error") or "",
        "outside_lock": " ".join(run.get("outside_lock") or []), "seconds": run.get("seconds"),
        "numbers_published": published_numbers, "numbers_printed": printed_numbers,
        "numbers_equal": equal, "output": output,
        "left_out": " ".join(f"line {n}" for n in left_out),
    }
    return row, {lines[i].number: (lines[i], printed[partner[i]]) for i in kept if i in partner}


def printed_form(claim):
    """What the article prints at the claim's location: location.text, or the published string."""
    return str(claim.location.get("text", claim.published))


def value_at(claim, line, printed):
    """What the listing printed at the claim's place in ``line`` (a paired published line): its
    numbers under the claim's span, with the printed form's text around them; a word by its field."""
    text, start = printed_form(claim), claim.location["column"]
    end = start + len(text)
    published, mine = line.tokens(), tokens(printed)
    covered = [k for k, t in enumerate(published) if t.column < end and t.end > start]
    if covered and len(published) == len(mine):
        first, last = published[covered[0]], published[covered[-1]]
        prefix = text[:max(0, first.column - start)]
        suffix = text[last.end - start:] if last.end < end else ""
        return prefix + printed[mine[covered[0]].column - 1:mine[covered[-1]].end - 1] + suffix
    fields, own = _fields(line.text, line.offset), _fields(printed)
    at = [k for k, (column, word) in enumerate(fields) if column <= start < column + len(word)]
    if at and len(fields) == len(own):
        return " ".join(word for _, word in own[at[0]:at[0] + len(text.split())])
    return None


def _fields(text, offset=0):
    """[(column from 1, word)] of the blank-separated fields of a line."""
    out, column = [], None
    for k, char in enumerate(text + " "):
        if not char.isspace() and column is None:
            column = k
        elif char.isspace() and column is not None:
            out.append((column + 1 + offset, text[column:k]))
            column = None
    return out


def claim_rows(claims, listings, paired, status):
    """One row per claim: the article code's value where a listing printed it, else why not."""
    where = {line.number: item for item in listings for line in item.lines()}
    rows = []
    for claim in claims:
        number = claim.location["line"]
        item = where.get(number)
        value, why = None, ""
        if item is None:
            why = "not in a listing's output (the prose)"
        elif status[item.name] != "ran":
            why = f"listing {item.index} {status[item.name]}"
        elif number not in paired:
            why = f"listing {item.index} printed no line like the article's line {number}"
        else:
            value = value_at(claim, *paired[number])
            why = "" if value is not None else f"the printed line {number} has other fields"
        rows.append({
            "id": claim.id, "article": claim.article, "class": claim.cls,
            "listing": item.index if item is not None else None, "line": number,
            "published": claim.published, "article_code": value or "",
            "equal": (value == printed_form(claim)) if value is not None else pd.NA, "why": why,
        })
    return restated(claims, rows)


def restated(claims, rows):
    """``rows`` with the prose's claims that restate a printed number (the same ``source`` as a
    claim a listing printed) given that number, written like the prose writes it."""
    printed = {}
    for claim, row in zip(claims, rows):
        if row["article_code"]:
            printed.setdefault(_key(claim.source), (claim, row["article_code"]))
    for claim, row in zip(claims, rows):
        found = printed.get(_key(claim.source))
        if row["article_code"] or row["listing"] is not None or found is None:
            continue
        other, value = found
        try:
            mine = verdicts.format_like(float(value), claim.published, claim.decimals)
        except ValueError:
            continue
        row.update(article_code=mine, equal=mine == printed_form(claim),
                   why=f"the prose restates {other.id}, printed {value} (rounded as the prose rounds)")
    return rows


def _key(source):
    return repr(sorted(source.items()))


def evaluate(claims, runs, texts):
    """(listings table, claims table) of the runs ({article: run record}) against the articles'
    texts ({article: text}); the claims of articles not run are left out."""
    listing_rows, rows = [], []
    for article in sorted(runs):
        listings = extract(plain.document(texts[article]), article)
        by_name = {r["name"]: r for r in runs[article]["listings"]}
        paired, status = {}, {}
        for item in listings:
            run = by_name.get(item.name, {"status": "not run", "error": "absent from the run's record"})
            row, lines = compare(item, run)
            listing_rows.append(row)
            paired.update(lines)
            status[item.name] = run["status"]
        rows += claim_rows([c for c in claims if c.article == article], listings, paired, status)
    table = pd.DataFrame(rows, columns=CLAIM_COLUMNS).astype({"listing": "Int64"})
    return pd.DataFrame(listing_rows, columns=LISTING_COLUMNS), table


def summary(listings):
    """Per article: listings run, seconds, numbers equal of published, listings whose output is equal."""
    out = []
    for article, g in listings.groupby("article", sort=True):
        with_output = g[g["output"] != NO_OUTPUT]
        out.append({
            "article": article,
            "listings": len(g),
            "ran": int((g["status"] == "ran").sum()),
            "seconds": float(pd.to_numeric(g["seconds"], errors="coerce").sum()),
            "numbers_published": int(g["numbers_published"].sum()),
            "numbers_equal": int(g["numbers_equal"].sum()),
            "outputs_equal": f"{int((with_output['output'] == EQUAL).sum())} of {len(with_output)}",
        })
    return pd.DataFrame(out)


def read(path):
    """The claims' table back from its CSV: texts as printed, ``equal`` as a boolean (NA: none)."""
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    table["equal"] = table["equal"].map({"True": True, "False": False, "": pd.NA}).astype(object)
    return table


def article_code(table):
    """{claim id: what the article's own code printed in this run} for the claims it printed."""
    printed = table[table["article_code"] != ""]
    return dict(zip(printed["id"], printed["article_code"]))


def reasons(table):
    """{claim id: the sentence the ledger appends}: what the article's code printed here (the file
    it cites is report.evidence_tables.citations's to name)."""
    out = {}
    for row in table.itertuples():
        if row.article_code == "":
            out[row.id] = f"the article's own code does not print it here ({row.why})"
        elif row.equal is True:
            out[row.id] = f"the article's own code prints the published {row.article_code} here"
        else:
            out[row.id] = f"the article's own code prints {row.article_code} here"
    return out


def texts_of(paths):
    """{article: its text} read from the runs' ``text`` paths (the folder the run read)."""
    return {article: Path(path).read_text(encoding="utf-8") for article, path in paths.items()}
