"""difflib's sequence matching, with a faster longest-match search when nothing is junk."""

from __future__ import annotations

import difflib
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any


class _RangeMatcher(difflib.SequenceMatcher):
    """A SequenceMatcher without junk (``isjunk=None, autojunk=False``) whose longest-match
    search visits only the positions of a token that lie in the searched range.

    difflib steps over the others one by one; in text where one token is everywhere (a
    space between words) that is most of the work of the narrower searches. The block
    found is the same: the longest, then the one starting earliest in ``a``, then in ``b``
    (with no junk nothing extends it afterwards).
    """

    # set by SequenceMatcher.set_seqs / __chain_b (typeshed does not declare them)
    a: Sequence[Any]
    b: Sequence[Any]
    b2j: dict[Any, list[int]]

    def __init__(self, a: Any, b: Any) -> None:
        super().__init__(None, a, b, autojunk=False)

    def find_longest_match(self, alo: int = 0, ahi: int | None = None, blo: int = 0,
                           bhi: int | None = None) -> difflib.Match:
        ahi = len(self.a) if ahi is None else ahi
        bhi = len(self.b) if bhi is None else bhi
        a, places = self.a, self.b2j
        best_i, best_j, best = alo, blo, 0
        ending: dict[int, int] = {}     # b index -> length of the match ending there and at a[i - 1]
        for i in range(alo, ahi):
            now: dict[int, int] = {}
            js = places.get(a[i])
            if js:
                for j in js[bisect_left(js, blo):bisect_left(js, bhi)]:
                    k = now[j] = ending.get(j - 1, 0) + 1
                    if k > best:
                        best_i, best_j, best = i - k + 1, j - k + 1, k
            ending = now
        return difflib.Match(best_i, best_j, best)


def matcher(a: Any, b: Any, junk: bool = False) -> difflib.SequenceMatcher:
    """difflib's matcher of two token lists (``junk``: let it skip popular tokens)."""
    return difflib.SequenceMatcher(None, a, b, autojunk=True) if junk else _RangeMatcher(a, b)


def word_matcher(a: list[str], b: list[str], junk: bool = False) -> difflib.SequenceMatcher:
    """difflib's matcher of word tokens where whitespace never starts a match, only extends one
    (two rewritten sentences do not pair up on their spaces: one old part, one new part)."""
    return difflib.SequenceMatcher(str.isspace, a, b, autojunk=junk)
