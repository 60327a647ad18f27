"""Every number the articles print is a claim or is listed as not a claim, with a reason.

The scan (:func:`numbers`) reads every line of an article that is not the Python source of a
listing: prose, headings, lists, formulas laid out by hand and the published outputs. A line is
source when :func:`attnrepro.articles.plain.parse` puts it in a ``code`` block: the longest
leading run of a listing's lines that compiles as Python (less a printed value ending it), up to a
``# Output:`` comment (000 prints its outputs as such comments); the lines after it, up to the
next prose, are its output.

What counts as a number (:data:`NUMBER`, :data:`WORD`):

- digits, with thousands separators ("48,000"), decimals, dotted parts read as one token (a
  version 2.12.0, a section 3.2.1, an arXiv id), an exponent ("2.56e-06"), superscript digits
  glued on ("20⁶", "10⁻¹⁶", "512²") and a "· 10⁷" factor ("6.4 · 10⁷"), and a date 2026-11-13;
  digits glued to a letter or an underscore before them are part of a name (float32, W_1, k₇),
  except a factor "x16" after a space or "×";
- number words: a cardinal ("three", "twenty-four", "two hundred", "billions"), a time unit after
  it read with it ("one millisecond": 0.001, a claim's seconds), a fraction after "a" or a cardinal
  ("a sixth", "two thirds"; "the third" is an ordinal), "zero", "dozen", "twice", "double" and
  "doubles" (not "double precision", a name), "quadruples", "half" and "halves" (x 2, x 4, / 2 said
  as verbs: "doubling n quadruples the cells"). "one" right after a determiner (the, each, this,
  that, no, any, every, which) is a pronoun ("the one drawn"): not scanned. A word that states no result is
  listed as a digit would be (``wording``, ``prose-count``: config/unclaimed.yaml).

A number is covered when it lies inside the printed span of a claim of ``config/published.yaml``
(its ``location``: line, column and the published string or ``location.text``), or when
``config/unclaimed.yaml`` lists it: article, line, column, the number's text and a reason (the
name of one of that file's ``reasons``; ``same_as``: the claim that judges a number printed again).
"""

import math
import re
from dataclasses import dataclass

from attnrepro.dag import yamlfile
from attnrepro.articles import plain

UNCLAIMED = "config/unclaimed.yaml"
_SUPER = "⁰¹²³⁴⁵⁶⁷⁸⁹⁻"
_DIGITS = "one|two|three|four|five|six|seven|eight|nine"
_UNITS = rf"{_DIGITS}|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen"
_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_SCALE = "hundreds?|thousands?|millions?|billions?"
_CARDINAL = rf"(?:(?:{_TENS})-(?:{_DIGITS})|{_UNITS}|{_TENS})(?:\s+(?:{_SCALE}))?|{_SCALE}"
_FRACTION = "halves|thirds?|quarters?|fifths?|sixths?|sevenths?|eighths?|ninths?|tenths?"
_TIME = "microseconds?|milliseconds?|seconds?|minutes?|hours?"  # read with the number before it
_PRONOUN = "".join(rf"(?<!\b{w} )" for w in ("the", "each", "this", "that", "no", "any", "every", "which"))
# a date; or digits not inside a name (no letter, digit or "d." before them; "x16" and "×16" are
# factors), with separators, dotted parts, an exponent, glued superscripts, a "· 10⁷" factor
NUMBER = re.compile(
    r"\d{4}-\d{2}-\d{2}(?!\d)"
    r"|(?:(?<=\sx)|(?<=×)|(?<![\w.])|(?<=\D\.))"
    rf"\d+(?:,\d{{3}})*(?:\.\d+)*(?:[eE][-+]?\d+)?[{_SUPER}]*(?:\s?·\s?10[{_SUPER}]+)?")
# a fraction ("a sixth", "two thirds"); a cardinal ("twenty-four", "two hundred"), with a time unit
# after it ("one millisecond"), "one" not after a determiner ("the one drawn": a pronoun); a dozen,
# zero, twice, double(s) (not "double precision", a name), quadruples, half and halves
WORD = re.compile(
    rf"\b(?:(?:a|{_CARDINAL})[\s-]+(?:{_FRACTION})\b"
    rf"|(?:{_PRONOUN}(?=one\b)|(?!one\b))(?:{_CARDINAL})(?:\s+(?:{_TIME}))?\b"
    r"|zero\b|dozens?\b|twice\b|doubles?\b(?!\s+precision)|quadruples?\b|half\b|halves\b)", re.IGNORECASE)


@dataclass(frozen=True)
class Number:
    """One printed number: its line and column (from 1, as in published.yaml) and its text."""

    article: str
    line: int
    column: int
    text: str

    def __str__(self):
        return f"article {self.article}, line {self.line}, column {self.column}: {self.text!r}"


def source_lines(text, blocks=None):
    """The numbers (from 1) of the lines of ``text`` that are the Python source of a listing
    (``blocks``: the text's, when it is not plain text: attnrepro.articles.forms)."""
    blocks = plain.parse(text) if blocks is None else blocks
    return {n for block in blocks if block.kind == "code" for n in block.numbers}


def numbers(article, text, blocks=None):
    """Every :class:`Number` of an article's ``text`` outside its listings' source, in order."""
    skip = source_lines(text, blocks)
    found = []
    for n, line in enumerate(text.split("\n"), start=1):
        if n in skip:
            continue
        spans = [(m.start(), m.group()) for m in NUMBER.finditer(line)]
        spans += [(m.start(), m.group()) for m in WORD.finditer(line)]
        found += [Number(article, n, start + 1, token) for start, token in sorted(spans)]
    return found


def claim_spans(claims):
    """{(article, line): [(first column, last column)]} of the claims' printed strings."""
    spans = {}
    for c in claims:
        text = c.location.get("text", c.published)
        first = c.location["column"]
        spans.setdefault((c.article, c.location["line"]), []).append((first, first + len(text) - 1))
    return spans


def claimed(number, spans):
    """Whether ``number`` lies inside one claim's printed span."""
    last = number.column + len(number.text) - 1
    return any(a <= number.column and last <= b for a, b in spans.get((number.article, number.line), ()))


def load(path=UNCLAIMED):
    """(reasons {name: sentence}, entries [{article, line, column, text, why[, same_as]}]) of
    ``config/unclaimed.yaml``; refused, naming the file and the entry, when one is malformed, and
    naming the file and the line when it is not plain data or gives a key twice (yamlfile.Refused)."""
    data = yamlfile.load(path, fast=True) or {}
    reasons = data.get("reasons") or {}
    entries = []
    for group in data.get("unclaimed") or []:
        keys = set(group) if isinstance(group, dict) else set()
        if not ({"article", "why", "at"} <= keys <= {"article", "why", "at", "same_as"}):
            raise ValueError(f"{path}: an unclaimed group must be {{article, why, at[, same_as]}}; "
                             f"got {group!r}")
        if group["why"] not in reasons:
            raise ValueError(f"{path}: why: {group['why']!r} is not one of the reasons "
                             f"({', '.join(reasons)})")
        for at in group["at"]:
            entries.append({"article": str(group["article"]), **_position(path, at), "why": group["why"],
                            "same_as": group.get("same_as")})
    return reasons, entries


def _position(path, at):
    """{line, column, text} of an ``at`` string 'line:column:text'."""
    m = re.fullmatch(r"(\d+):(\d+):(.+)", str(at))
    if m is None:
        raise ValueError(f"{path}: {at!r} is not 'line:column:text' (the number as printed)")
    return {"line": int(m.group(1)), "column": int(m.group(2)), "text": m.group(3)}


def problems(texts, claims, entries):
    """What keeps the articles from being covered: a number neither claimed nor listed, a listed
    entry that names no number of the text (stale), one listed twice or also claimed, a
    ``same_as`` that names no claim printing that number. ``texts``: {article: text}."""
    spans, by_id = claim_spans(claims), {c.id: c for c in claims}
    found = {(n.article, n.line, n.column, n.text): n for a, t in texts.items() for n in numbers(a, t)}
    out, listed = [], set()
    for e in entries:
        key = (e["article"], e["line"], e["column"], e["text"])
        where = f"article {e['article']}, line {e['line']}, column {e['column']}: {e['text']!r}"
        if key in listed:
            out.append(f"{UNCLAIMED}: {where} is listed twice")
        listed.add(key)
        if key not in found:
            out.append(f"{UNCLAIMED}: {where} is no number of the text "
                       "(stale entry: the scan finds none there)")
        elif claimed(found[key], spans):
            out.append(f"{UNCLAIMED}: {where} is a claim's number: listed and claimed")
        same = by_id.get(e["same_as"]) if e["same_as"] else None
        if e["same_as"] and (same is None or not same_number(e["text"], same.published)):
            out.append(f"{UNCLAIMED}: {where}: same_as {e['same_as']} is no claim that prints {e['text']!r}")
    for key, n in found.items():
        if key not in listed and not claimed(n, spans):
            out.append(f"{n}: neither a claim of config/published.yaml nor listed in {UNCLAIMED}")
    return out


_WORDS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
          "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
          "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
          "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
          "thousand": 1000, "million": 1e6, "billion": 1e9, "dozen": 12, "twice": 2, "double": 2,
          "quadruple": 4, "zero": 0}
_PARTS = {"half": 2, "halves": 2, "third": 3, "quarter": 4, "fifth": 5, "sixth": 6, "seventh": 7,
          "eighth": 8, "ninth": 9, "tenth": 10}
_SECONDS = {"microsecond": 1e-6, "millisecond": 1e-3, "second": 1, "minute": 60, "hour": 3600}


def value(text):
    """(value, significant digits) of a printed number ("1,048,576", "2.56 · 10⁻⁶", "20⁶", "two
    thirds", "one millisecond": 0.001, in seconds); a power or a word is exact (digits: None)."""
    text = str(text).strip().lower()
    if _singular(text.split("-")[0].split()[0]) in _WORDS.keys() | _PARTS.keys():
        return _words_value(text.split()), None
    flat = text.translate(str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻−", "0123456789--"))
    if (m := re.fullmatch(r"([\d.,]+)\s?·\s?10(-?\d+)", flat)) is not None:
        mantissa, digits = value(m.group(1))
        return mantissa * 10.0 ** int(m.group(2)), digits
    if (m := re.fullmatch(r"(\d+)([⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)", text)) is not None:
        return float(int(m.group(1)) ** int(flat[len(m.group(1)):])), None
    number = flat.replace(",", "")
    mantissa = re.split(r"e", number)[0]
    return float(number), len(mantissa.replace(".", "").lstrip("0").lstrip("-")) or 1


def _words_value(words):
    """The value of a number in words: the product of its cardinals ("two hundred", "twenty-four":
    20 + 4), over a fraction's parts ("a sixth", "two thirds"), times a time unit's seconds."""
    last = _singular(words[-1])
    parts, seconds = _PARTS.get(last, 1), _SECONDS.get(last, 1)
    cardinals = words[:-1] if last in _PARTS or last in _SECONDS else words
    number = math.prod(sum(_WORDS[_singular(w)] for w in c.split("-")) for c in cardinals)
    return number / parts * seconds


def _singular(word):
    """A number word without its plural "s" ("thirds", "billions", "seconds"); "halves" as it is."""
    return word if word in _PARTS else word.removesuffix("s")


def same_number(printed, published):
    """Whether the number ``printed`` states the ``published`` value of a claim (or one end of its
    range, "%" and unit aside): the one printed with more digits, rounded to the other's significant
    digits, equals it (signs aside: "−6" is scanned as "6")."""
    a, a_digits = value(printed)
    for number in re.findall(r"\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?", str(published)):
        b, b_digits = value(number)
        digits = min(d for d in (a_digits, b_digits, 17) if d is not None)
        if math.isclose(_round(abs(a), digits), _round(abs(b), digits), rel_tol=1e-9):
            return True
    return False


def _round(x, digits):
    return 0.0 if x == 0 else round(x, digits - 1 - math.floor(math.log10(x)))
