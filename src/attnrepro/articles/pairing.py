"""Which printed line is which published one: lines paired by their shape.

A listing's printed lines and the article's published lines are paired by
:func:`~attnrepro.articles.listings.shape` (the line with its numbers blanked): difflib's longest
matching blocks, then, in a stretch that differs, line by line where both hold as many numbers. A
paired line is compared number by number; an unpaired one holds a difference of form, not of digits.
"""

import difflib

from attnrepro.articles import listings


def pair_lines(published, printed):
    """[(index of a published line, index of a printed line)] of the lines paired by shape:
    ``published`` are :class:`~attnrepro.articles.listings.Line` s, ``printed`` texts."""
    a = [listings.shape(line.text) for line in published]
    b = [listings.shape(text) for text in printed]
    pairs = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            pairs += list(zip(range(i1, i2), range(j1, j2)))
        elif tag == "replace":
            pairs += [(i, j) for i, j in zip(range(i1, i2), range(j1, j2))
                      if len(published[i].tokens()) == len(listings.tokens(printed[j]))]
    return pairs
