"""The line diff of a changed long string: its counts are the lines that really changed (as
difflib counts them), an edited line's change stays inside the line (a line end both sides
share is not part of it), a word changed in prose is that word, and what the printed form
leaves out says what it was. Stores written by the recording library, diffed for real."""

from __future__ import annotations

import difflib
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.diff import TextDelta, diff_checkpoints
from inspector.diff.text import ELIDED, HUGE_TEXT, render_delta, text_delta
from inspector.record import Checkpointer, Interval
from inspector.store import open_store

ROOT = Path(__file__).resolve().parents[2]
BIG = "\n".join(f"line {i}: def f{i}(x): return x + {i}" for i in range(2000))
PROSE = ("The quick brown fox jumps over the lazy dog. " * 8 + "\n") * 200
LOG = "".join(f"record {i:07d} OK\n" for i in range(80_000))      # over HUGE_TEXT: streamed


def _edit_line(text: str, at: int, line: str) -> str:
    lines = text.split("\n")
    lines[at] = line
    return "\n".join(lines)


CASES = {
    "one line edited": (BIG, _edit_line(BIG, 1234, "line 1234: def f1234(x): return x * 1234  # fixed")),
    "one word in prose": (PROSE, PROSE.replace("lazy dog. The quick", "lazy CAT. The quick", 1)),
    "a huge log": (LOG, LOG.replace("record 0040000 OK", "record 0040000 FAIL")),
}


def difflib_counts(old: str, new: str) -> tuple[int, int]:
    """(added, removed): the lines difflib finds inserted, deleted or replaced."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            removed, added = removed + i2 - i1, added + j2 - j1
    return added, removed


def changed(delta: TextDelta) -> list[tuple[str, str]]:
    return [(tag, text) for tag, text in delta.segments if tag in "-+"]


def rebuilds(delta: TextDelta, old: str, new: str) -> bool:
    return ("".join(t for tag, t in delta.segments if tag in "=-") == old
            and "".join(t for tag, t in delta.segments if tag in "=+") == new)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, TextDelta]]:
    """Each case as a run of two checkpoints, and the text delta its diff found."""
    path = tmp_path_factory.mktemp("lines") / "lines.db"
    runs = {}
    for name, (old, new) in CASES.items():
        with Checkpointer(path, name=name, interval=Interval.every_step()) as cp:
            cp.save({"doc": old})
            cp.save({"doc": new})
            runs[name] = cp.run_id
    deltas = {}
    with open_store(path) as store:
        for name, run in runs.items():
            (change,) = diff_checkpoints(store, f"{run}:0", f"{run}:1").changes
            assert isinstance(change.detail, TextDelta)
            deltas[name] = change.detail
    return path, deltas


def test_one_line_edited_in_two_thousand_is_one_line_removed_and_one_added(recorded) -> None:
    old, new = CASES["one line edited"]
    delta = recorded[1]["one line edited"]
    assert delta.unit == "line" and rebuilds(delta, old, new)
    assert (delta.added, delta.removed) == difflib_counts(old, new) == (1, 1)
    # the change is inside line 1234, the line end both sides share outside it
    assert changed(delta) == [("-", "+ 1234"), ("+", "* 1234  # fixed")]
    assert any(tag == "=" and text.startswith("\nline 1235:") for tag, text in delta.segments)


def test_one_word_changed_in_prose_is_that_word(recorded) -> None:
    old, new = CASES["one word in prose"]
    delta = recorded[1]["one word in prose"]
    assert rebuilds(delta, old, new)
    assert (delta.added, delta.removed) == difflib_counts(old, new) == (1, 1)
    assert changed(delta) == [("-", "dog"), ("+", "CAT")]
    assert "lazy [-dog-]{+CAT+}. The quick" in render_delta(delta)


def test_a_huge_log_keeps_the_line_end_out_of_the_change_and_whole_lines_of_context(recorded) -> None:
    old, new = CASES["a huge log"]
    assert len(old) > HUGE_TEXT
    delta = recorded[1]["a huge log"]
    assert delta == text_delta(old, new)        # streamed from the store: the same as whole
    assert (delta.added, delta.removed) == (1, 1)
    assert changed(delta) == [("-", "OK"), ("+", "FAIL")]
    tags = [tag for tag, _ in delta.segments]
    assert tags == [ELIDED, "=", "-", "+", "=", ELIDED]
    before, after = delta.segments[1][1], delta.segments[4][1]
    assert before.startswith("record ") and before.endswith("record 0040000 ")     # from a line start
    assert after.startswith("\nrecord 0040001 OK\n") and after.endswith(" OK\n")     # to a line end
    kept = sum(len(t) for tag, t in delta.segments if tag in "=-") + sum(int(t) for tag, t in delta.segments
                                                                          if tag == ELIDED)
    assert kept == len(old)


def test_diff_prints_what_it_leaves_out(recorded) -> None:
    path, _ = recorded
    with open_store(path) as store:
        run = next(r.id for r in store.list_runs() if r.name == "one line edited")
    done = subprocess.run([sys.executable, "-m", "inspector", "diff", str(path), f"{run}:0", f"{run}:1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = [line.strip() for line in done.stdout.splitlines()]
    at = out.index("~ doc: text, +1 -1 lines")
    assert out[at + 1:at + 8] == [
        "…(1,232 unchanged lines)…",
        "line 1232: def f1232(x): return x + 1232",
        "line 1233: def f1233(x): return x + 1233",
        "line 1234: def f1234(x): return x [-+ 1234-]{+* 1234  # fixed+}",
        "line 1235: def f1235(x): return x + 1235",
        "line 1236: def f1236(x): return x + 1236",
        "…(763 unchanged lines)…"]


def test_a_huge_text_prints_its_left_out_characters_once() -> None:
    old, new = CASES["a huge log"]
    shown = render_delta(text_delta(old, new)).splitlines()
    assert all(re.fullmatch(r"…\([\d,]+ unchanged chars\)…", line) for line in (shown[0], shown[-1]))
    assert shown[1:-1] == ["record 0039998 OK", "record 0039999 OK", "record 0040000 [-OK-]{+FAIL+}",
                           "record 0040001 OK", "record 0040002 OK"]
    skipped = sum(int(re.sub(r"\D", "", line)) for line in (shown[0], shown[-1]))
    assert skipped + sum(len(line) + 1 for line in shown[1:-1]) - len("[-OK-]{+FAIL+}") + len("OK") == len(old)


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("a\nb b b\nc\n", "a\nb X b b\nc\n", (1, 1)),         # a word inserted in a line
    ("a\nb b b\nc\n", "a\nb b\nc\n", (1, 1)),             # a word deleted
    ("a\nb b b\nc", "a\nb b b\nc\nd", (2, 1)),            # a line after a last line without its end
    ("a\n\nc\n", "a\nfoo\nc\n", (1, 1)),                  # an empty line filled
    ("a\nold line one\nold line two\nc\n", "a\nnew line one\nzzz\nold line twoo\nc\n", (3, 2)),
    ("".join(f"row {i} of it\r\n" for i in range(30)), "".join(f"row {i} of it\r\n" for i in range(30)).replace(
        "row 7 of", "row seven of"), (1, 1)),                          # Windows line ends
])
def test_line_counts_are_difflibs(old: str, new: str, expected: tuple[int, int]) -> None:
    delta = text_delta(old, new)
    assert delta.unit == "line" and rebuilds(delta, old, new)
    assert (delta.added, delta.removed) == difflib_counts(old, new) == expected


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 6), st.booleans())
def test_random_line_edits_count_as_difflib_counts_them(seed: int, edits: int, in_place: bool) -> None:
    rnd = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]
    lines = [f"{i}: " + " ".join(rnd.choices(words, k=rnd.randint(1, 8))) + "\n" for i in range(40)]
    new = list(lines)
    for _ in range(edits):
        at = rnd.randrange(len(new))
        kind = "edit" if in_place else rnd.choice(["edit", "insert", "delete"])
        if kind == "edit":
            parts = new[at][:-1].split(" ")
            parts[rnd.randrange(len(parts))] = rnd.choice(["NEW", "", "two words"])
            new[at] = " ".join(parts) + "\n"
        elif kind == "insert":
            new.insert(at, f"inserted {rnd.random()}\n")
        elif len(new) > 1:
            del new[at]
    old_text, new_text = "".join(lines), "".join(new)
    delta = text_delta(old_text, new_text)
    assert rebuilds(delta, old_text, new_text)
    assert (delta.added, delta.removed) == difflib_counts(old_text, new_text)
    if in_place:        # lines edited where they are: the line ends both sides share stay unchanged
        assert not any(text.endswith("\n") for _, text in changed(delta))
