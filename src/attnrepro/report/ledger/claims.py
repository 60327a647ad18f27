"""The published claims and how a run's value is read and written like them.

Published values live in ``config/published.yaml`` (read by :func:`load_claims`; judged by
:mod:`attnrepro.report.ledger.verdicts`). Each claim names where its reproduced value is found (experiment,
table, row filter, column, reduction: :func:`reproduced`), its class, where the article prints it
(``location``) and, when a report table prints it too, that cell (``printed``).

A published string is a number as printed ("0.367", "2.56e-06", "27,253", "1.",
"True", "[0 1 2 3 4 5]"), optionally with a unit ("35 s", "3 GiB", "97%"), or an
interval from the prose ("1.99-2.04", "8.3-13.0 s", "about 30 to 65", "95-98%").
The reproduced value is written in the same style (:func:`format_like`); a "%" multiplies it
by 100.

Selectors: ``where`` values may be lists (any of them); ``over`` (a second
selector, on the same experiment and table unless it names others) divides the
value, for the prose's ratios of two reproduced figures ("a factor of 9.6"); ``per`` splits the
selection into rows, one statistic each; ``reduce`` is one of
:data:`attnrepro.report.products.statistics.REDUCERS`, over the rows in seed order.
``decimals`` (optional) is the rounding a NumPy array printer applied before it
dropped trailing zeros: "0.54" printed from ``x.round(3)`` is compared at 3 decimals.
"""

import re
from dataclasses import dataclass

import numpy as np

from attnrepro.dag import yamlfile
from attnrepro.report.ledger import schema
from attnrepro.report.products import disturbance, statistics

CLASSES = ("exact", "echo", "round-off", "finite-difference", "stochastic", "machine-bound")
# the headline's: an echo is counted apart
COMPUTED = ("exact", "round-off", "finite-difference", "stochastic", "machine-bound")
JUSTIFIED = ("echo", "round-off", "finite-difference", "machine-bound")  # they name their rationale (why:)
TOLERATED = ("round-off", "finite-difference")  # judged by a tolerance: both values below it
VERDICTS = ("reproduced", "within tolerance", "disturbed", "inconclusive", "differs", "missing",
            "other parameters")
# each verdict's symbol, the same in the annotated editions and beside a table's cells
SYMBOLS = {"reproduced": "✓", "within tolerance": "≈", "disturbed": disturbance.MARK, "inconclusive": "◐",
           "differs": "✗", "missing": "?", "other parameters": "○"}
# what *within tolerance* means in each class, one meaning per class (LEDGER.md's legend)
WITHIN = {
    "exact": "never: the printed digits must come out",
    "echo": "never: judged as exact, counted apart",
    "round-off": "both values below the claim's tolerance (1e-16 level)",
    "finite-difference": ("both values below the claim's tolerance, sized for the difference quotient's "
                          "truncation and cancellation error at its step"),
    "stochastic": ("the published statistic lies in the 95% interval of the 3-seed statistics of the seed "
                   "distribution (without one: in the 95% prediction interval from the run's own seeds); a "
                   "published range, each row's 3-seed mean inside it"),
    "machine-bound": ("the value lies within the spread of the passes (at least ÷× 1.05; a slope ± 0.035) "
                      "around the same statistic of the article's own code, timed here beside it, pass by "
                      "pass (the machine factor, published / the article's code here, is information); "
                      "without that code, the value and every pass lie in the claim's band"),
}
# the verdicts that are neither a match nor a difference, in words
UNDECIDED = {
    "disturbed": "read from a timing that another process slowed",
    "inconclusive": "its repeats straddle the band, or too few seeds to predict the statistic",
}
REDUCERS = statistics.REDUCERS  # the article's arithmetic, shared with the tables and the evidence
_SCI = re.compile(r"[-+]?\d+(?:\.(\d*))?e([-+]?)(\d+)")
_FIXED = re.compile(r"[-+]?\d+(?:\.(\d*))?")
_THOUSANDS = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.(\d*))?")
_NUM = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:e[-+]?\d+)?"
_UNIT = r"(?P<space>\s*)(?P<unit>%|[A-Za-z]+)"
_SINGLE = re.compile(rf"(?P<num>{_NUM})(?:{_UNIT})?")
_INTERVAL = re.compile(rf"(?:about\s+)?(?P<low>{_NUM})\s*(?:-|–|to)\s*"
                       rf"(?:about\s+)?(?P<num>{_NUM})(?:{_UNIT})?")


@dataclass
class Claim:
    id: str
    article: str
    section: str
    claim: str
    published: str
    cls: str
    source: dict
    tolerance: float = None  # round-off, finite-difference (TOLERATED): both values below it
    band: list = None  # machine-bound: [low, high] accepted for the reproduced value
    note: str = ""  # why a value that is not an exact match differs
    decimals: int = None  # the rounding of a NumPy printer that drops trailing zeros
    location: dict = None  # where it is printed in the article: {line, column[, text]} (check_location)
    printed: dict = None  # the report table cell that prints it: {table, row: {column: value}, column}
    raw_time: bool = False  # machine-bound: a raw time, judged against its article's speed factor
    about: bool = False  # machine-bound: the band's ends are loose words ("about 30"): loosened()
    why: str = None  # the name of its rationale (published.yaml rationales:): why its class, band, tolerance
    rationale: str = None  # that rationale's sentence, quoted in the reason (load_claims)

    @classmethod
    def from_dict(cls, d):
        d = dict(d)
        known = {k: d.pop(k) for k in list(d) if k in cls.__dataclass_fields__ and k != "cls"}
        klass = d.pop("class")
        if "here" in d:  # computed by the listings, never transcribed
            raise ValueError(f"claim {known.get('id')}: 'here' is not a key of a claim: what the article's "
                             "own code gives here is computed by `snakemake --cores 2 listings`")
        if klass not in CLASSES:
            raise ValueError(f"claim {known.get('id')}: class must be one of {CLASSES}, got {klass!r}")
        if known.get("raw_time") is not None and (known["raw_time"] is not True or klass != "machine-bound"):
            raise ValueError(f"claim {known.get('id')}: raw_time: true marks a machine-bound raw time only")
        if known.get("about") is not None and (known["about"] is not True or klass != "machine-bound"
                                               or known.get("band") is None):
            raise ValueError(f"claim {known.get('id')}: about: true marks a machine-bound band in "
                             "loose words")
        if (known.get("source") or {}).get("per") and klass != "stochastic":
            raise ValueError(f"claim {known.get('id')}: only a stochastic range is judged row by row (per)")
        if known.get("location") is not None:
            check_location(known.get("id"), known["location"])
        if known.get("printed") is not None:
            check_printed(known.get("id"), known["printed"])
        if d:  # a misspelt key is refused, never kept aside (the schema names it first: load_claims)
            raise ValueError(f"claim {known.get('id')}: unknown key(s) {', '.join(map(repr, d))}")
        return cls(cls=klass, **known)


def check_location(claim_id, location):
    """A claim's ``location``: {line, column} (integers from 1) and, when the article prints the
    claim otherwise than its published string, ``text`` (that printed form); nothing else."""
    keys = set(location) if isinstance(location, dict) else set()
    if not ({"line", "column"} <= keys <= {"line", "column", "text"}
            and all(type(location[k]) is int and location[k] >= 1 for k in ("line", "column"))
            and (isinstance(location.get("text", "-"), str) and location.get("text", "-").strip())):
        raise ValueError(f"claim {claim_id}: location must be {{line, column[, text]}}, line and column "
                         f"integers from 1, text the printed string; got {location!r}")


def check_printed(claim_id, printed):
    """A claim's ``printed``: {table (a report table's name), row ({column: value} that singles
    out its row; {} for a one-row table), column}; nothing else."""
    if not (isinstance(printed, dict) and set(printed) == {"table", "row", "column"}
            and isinstance(printed["table"], str) and isinstance(printed["row"], dict)
            and isinstance(printed["column"], str)):
        raise ValueError(f"claim {claim_id}: printed must be {{table, row: {{column: value}}, column}}; "
                         f"got {printed!r}")


def load_speed(path):
    """The speed rule of ``config/published.yaml`` (its ``speed`` entry, a speed.Rule), or None;
    the file read as :func:`load_claims` reads it."""
    from attnrepro.report.ledger import speed

    data = yamlfile.load(path, fast=True)
    schema.check(data, path)
    entry = data.get("speed")
    return None if entry is None else speed.Rule.from_dict(entry)


def load_claims(path):
    """The claims of ``config/published.yaml``: each with its location in the article, refused
    when the file does not follow its schema (schema.check: an unknown key, a class's key missing,
    naming file, claim and key), two share an id, a why: names no rationale, a claim gives a
    key twice (yamlfile.DuplicateKey: YAML would keep the last value silently), or the file is
    not plain data: an anchor, alias, tag or template (yamlfile.NotData: nine nested aliases
    make 10^9 values). Both are a yamlfile.Refused, one line each naming file and line."""
    # libyaml's parser when PyYAML has it: the same data, 8 times faster
    data = yamlfile.load(path, fast=True)
    schema.check(data, path)
    try:
        claims = [Claim.from_dict(e) for e in data["claims"]]
    except ValueError as error:  # what the schema does not say (per on a stochastic claim only)
        raise ValueError(f"{path}: {error}") from error
    rationales = data.get("rationales") or {}
    for claim in claims:  # the schema has refused a claim of a JUSTIFIED class without a why:
        if claim.why is not None:
            if claim.why not in rationales:
                raise ValueError(f"claim {claim.id} in {path}: why: {claim.why!r} is not one of the "
                                 f"rationales ({', '.join(rationales)})")
            claim.rationale = " ".join(str(rationales[claim.why]).split())
    ids = [c.id for c in claims]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ValueError(f"duplicated claim ids in {path}: {', '.join(duplicated)}")
    return claims


def _normalise(text):
    text = str(text).strip()
    if text.endswith("."):
        text = text[:-1]
    return "0" + text[2:] if text.startswith("-0") and set(text[1:]) <= set("0.e+-") else text


def _number_text(value, number, decimals=None):
    """``value`` written like the printed ``number`` (no unit): sci, thousands or fixed."""
    if decimals is not None:
        text = f"{float(value):.{decimals}f}"
        return _normalise(text.rstrip("0").rstrip(".") if "." in text else text)
    if (m := _SCI.fullmatch(number)) is not None:
        mantissa, _, exponent = f"{float(value):.{len(m.group(1) or '')}e}".partition("e")
        sign = "-" if int(exponent) < 0 else m.group(2).replace("-", "")
        return _normalise(f"{mantissa}e{sign}{str(abs(int(exponent))).zfill(len(m.group(3)))}")
    if (m := _THOUSANDS.fullmatch(number)) is not None:
        return _normalise(f"{float(value):,.{len(m.group(1) or '')}f}")
    if (m := _FIXED.fullmatch(number)) is not None:
        return _normalise(_zero_padded(f"{float(value):.{len(m.group(1) or '')}f}", number))
    return None


def _zero_padded(text, number):
    """``text`` with its integer part padded with zeros as the printed ``number`` pads its own
    (``Epoch 001/003``: 1 written as 001)."""
    whole = number.lstrip("+-").partition(".")[0]
    if len(whole) < 2 or not whole.startswith("0"):
        return text
    sign, digits = ("-", text[1:]) if text.startswith("-") else ("", text)
    integer, dot, fraction = digits.partition(".")
    return sign + integer.zfill(len(whole)) + dot + fraction


def _parse(published):
    """(number, space, unit, interval) of a published number or interval, or None for text."""
    published = str(published).strip()
    for pattern, interval in ((_SINGLE, False), (_INTERVAL, True)):
        if (m := pattern.fullmatch(published)) is not None:
            return m.group("num"), m.group("space") or "", m.group("unit") or "", interval
    return None


def _to_float(number):
    return float(number.replace(",", ""))


def published_range(published):
    """(low, high) of a published number or interval in the units of the reproduced value."""
    parsed = _parse(published)
    if parsed is None:
        raise ValueError(f"not a number: {published!r}")
    number, _, unit, interval = parsed
    high = _to_float(number)
    low = _to_float(_INTERVAL.fullmatch(str(published).strip()).group("low")) if interval else high
    scale = 100.0 if unit == "%" else 1.0
    return low / scale, high / scale


def loosened(band):
    """[low, high] of a band whose ends the article writes as "about X": each end widened by half a
    unit of its last significant digit (about 30: 25; about 65: 65.5), what rounds to it at the
    digits it is written with (published.schema.yaml, ``about``)."""
    return [end + side * _half_unit(end) for end, side in zip(band, (-1, 1))]


def _half_unit(number):
    """Half a unit of the last significant digit of ``number`` as written (30: 5; 65: 0.5; 0.25: 0.005)."""
    digits = f"{number:.15g}".lstrip("-")
    whole, _, fraction = digits.partition(".")
    if fraction:
        return 0.5 * 10.0 ** -len(fraction)
    return 0.5 * 10.0 ** (len(whole) - len(whole.rstrip("0")))


def format_like(value, published, decimals=None):
    """``value`` written with the precision and style of the ``published`` string."""
    published = str(published).strip()
    if published in ("True", "False"):
        return str(bool(value))
    if isinstance(value, (bool, np.bool_)):
        return str(int(value)) if published in ("0", "1") else str(bool(value))
    if isinstance(value, str) or (parsed := _parse(published)) is None:
        return str(value)
    number, space, unit, _ = parsed
    if unit == "%":
        value = float(value) * 100
    text = _number_text(value, number, decimals)
    if text is None:
        return str(value)
    return f"{text}{space}{unit}"


def _published_text(claim):
    """The published string normalised like a reproduced one (trailing zeros, when printed by NumPy)."""
    text = _normalise(claim.published)
    if claim.decimals is not None and _FIXED.fullmatch(text) and "." in text:
        text = _normalise(text.rstrip("0").rstrip("."))
    return text


def _matching(frame, source):
    """The rows of ``frame`` matching ``source['where']`` (refused when none, or no column)."""
    rows = frame
    for key, wanted in (source.get("where") or {}).items():
        rows = rows[rows[key].isin(wanted) if isinstance(wanted, list) else rows[key] == wanted]
    if source["column"] not in rows.columns:
        raise KeyError(source["column"])
    if rows.empty:
        raise ValueError(f"no row matches {source.get('where')}")
    return rows


def select(frame, source):
    """The values of ``source['column']`` in the rows matching ``source['where']``, in seed order
    where the rows have seeds (the order the article's loop visits them: statistics)."""
    return statistics.in_seed_order(_matching(frame, source))[source["column"]].to_numpy()


def reduce(values, how):
    if how in (None, "single"):
        if len(values) != 1:
            raise ValueError(f"expected exactly one row, found {len(values)}")
        return values[0]
    return REDUCERS[how](values)


def reproduced(source, load):
    """(value, per-row values) of a selector; with ``over``, the ratio of two selections; with
    ``per``, ({row: statistic}, {row: values}): the selection split by that column."""
    frame = load(source["experiment"], source.get("table", "main"))
    if source.get("per"):
        groups = {key: statistics.in_seed_order(rows)[source["column"]].to_numpy()
                  for key, rows in _matching(frame, source).groupby(source["per"])}
        return {key: reduce(v, source.get("reduce")) for key, v in groups.items()}, groups
    values = select(frame, source)
    value = reduce(values, source.get("reduce"))
    if source.get("over"):
        over = {"experiment": source["experiment"], "table": source.get("table", "main"), **source["over"]}
        value, values = value / reproduced(over, load)[0], None
    return value, values


def cases_read(source, load):
    """[(experiment, table, case)] of the files whose rows a selector reads (``over``'s too)."""
    table = source.get("table", "main")
    frame = load(source["experiment"], table)
    found = [(source["experiment"], table, case) for case in dict.fromkeys(_matching(frame, source)["case"])]
    if source.get("over"):
        found += cases_read({"experiment": source["experiment"], "table": table, **source["over"]}, load)
    return list(dict.fromkeys(found))
