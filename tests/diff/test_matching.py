"""The junk-free matcher gives difflib's opcodes exactly (text, list and chunk diffs rely on it)."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.diff.matching import matcher

# few distinct tokens, so some are everywhere (like spaces between words)
tokens = st.lists(st.sampled_from(["a", "b", " ", " ", " ", "\n", "c", "dd"]), max_size=120)


@settings(max_examples=400, deadline=None)
@given(tokens, tokens)
def test_opcodes_are_difflibs(a, b) -> None:
    expected = difflib.SequenceMatcher(None, a, b, autojunk=False)
    ours = matcher(a, b)
    assert ours.get_opcodes() == expected.get_opcodes()
    assert ours.find_longest_match(0, len(a), 0, len(b)) == expected.find_longest_match(0, len(a), 0, len(b))


@settings(max_examples=200, deadline=None)
@given(tokens, tokens, st.data())
def test_longest_match_in_any_range_is_difflibs(a, b, data) -> None:
    alo = data.draw(st.integers(0, len(a)))
    ahi = data.draw(st.integers(alo, len(a)))
    blo = data.draw(st.integers(0, len(b)))
    bhi = data.draw(st.integers(blo, len(b)))
    expected = difflib.SequenceMatcher(None, a, b, autojunk=False).find_longest_match(alo, ahi, blo, bhi)
    assert matcher(a, b).find_longest_match(alo, ahi, blo, bhi) == expected


def test_junk_asks_difflib_itself() -> None:
    a, b = [" "] * 300 + ["x"], ["x"] + [" "] * 300
    assert matcher(a, b, junk=True).get_opcodes() == difflib.SequenceMatcher(None, a, b).get_opcodes()
