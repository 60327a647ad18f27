"""Captions, notes and subtitles say what the ledger says: a product never asserts that a quantity
transfers between machines (the ledger judges that), it says what can transfer; where it states a
verdict, the verdict is the ledger's (formats.transfer_sentence, formats.ledger_verdicts).

The texts scanned: every string of the report's products (the builders' notes, the figures'
subtitles), the captions workflow/report/*.rst, and the claims' notes in config/published.yaml (the
ledger quotes them in its reasons). The built notes and subtitles of the timing products are
scanned too, in tests/test_report_timing.py.
"""

import ast
import re

import pandas as pd
import yaml

from attnrepro.report.products import formats

from conftest import REPO

PRODUCTS = REPO / "src" / "attnrepro" / "report" / "products"
CAPTIONS = REPO / "workflow" / "report"
TRANSFER = re.compile(r"\btransfer(?:s|able|red)?\b", re.IGNORECASE)
HEDGE = re.compile(r"\b(?:can|could|may|might|cannot)\s+$", re.IGNORECASE)  # "what can transfer"


def asserted_transfers(text):
    """The phrases of ``text`` that say a quantity transfers between machines, rather than that it
    can: each as the 40 characters around the word."""
    found = []
    for match in TRANSFER.finditer(text):
        if not HEDGE.search(text[max(0, match.start() - 12):match.start()]):
            found.append(" ".join(text[max(0, match.start() - 40):match.end() + 20].split()))
    return found


def _strings(path):
    """Every string constant of a Python file (docstrings, literals, the parts of f-strings)."""
    return [n.value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Constant)
            and isinstance(n.value, str)]


def product_texts():
    """{where: text} of every product text, caption and claim note."""
    texts = {f"{p.name}: {s[:30]!r}": s for p in sorted(PRODUCTS.glob("*.py")) for s in _strings(p)}
    texts.update({p.name: p.read_text() for p in sorted(CAPTIONS.glob("*.rst"))})
    published = yaml.load((REPO / "config" / "published.yaml").read_text(), Loader=yaml.CSafeLoader)
    texts.update({f"published.yaml {c['id']} note": c["note"] for c in published["claims"] if "note" in c})
    return texts


def test_no_product_caption_or_note_asserts_that_a_quantity_transfers():
    texts = product_texts()
    assert len(texts) > 500 and any("can transfer" in t for t in texts.values())  # it reads them all
    asserted = {where: found for where, t in texts.items() if (found := asserted_transfers(t))}
    assert not asserted, asserted


def test_an_asserted_transfer_is_found_and_a_hedged_one_is_not():
    """Positive control: the wordings the products had before (the kv_cache note, a claim's note,
    the figure subtitle) are found; the wording they have now is not."""
    for old in ("the ratio and the memory transfer between machines.", "a slope transfers between machines",
                "(times machine-bound; the ratio transfers)", "Transferable: the slope"):
        assert asserted_transfers(old), old
    for new in (formats.transfer_sentence("the ratio and the memory"),
                "the slopes can transfer between machines: the ledger judges whether they do",
                "what can transfer is the growth"):
        assert asserted_transfers(new) == [], new


def test_a_stated_verdict_is_the_ledgers(tmp_path):
    """A product that states a verdict takes it from results/ledger.csv: the sentence quotes each
    claim's verdict as the ledger gives it, and never says the quantity transfers."""
    ledger = tmp_path / "ledger.csv"
    pd.DataFrame({"id": ["001.kv_cache.speedup", "001.prose.kv_cache.speedup", "001.other"],
                  "verdict": ["differs", "within tolerance", "reproduced"],
                  "reason": ["a", "b", "c"]}).to_csv(ledger, index=False)
    wanted = ["001.prose.kv_cache.speedup", "001.kv_cache.speedup", "001.none"]
    verdicts = formats.ledger_verdicts(ledger, wanted)
    assert verdicts == {"001.prose.kv_cache.speedup": "within tolerance", "001.kv_cache.speedup": "differs"}
    sentence = formats.transfer_sentence("the ratio", verdicts)
    assert sentence == ("what can transfer between machines: the ratio; the ledger judges "
                        "001.prose.kv_cache.speedup 'within tolerance', 001.kv_cache.speedup 'differs'")
    assert asserted_transfers(sentence) == []
    assert formats.transfer_sentence("the ratio").endswith(formats.LEDGER_SAYS)
