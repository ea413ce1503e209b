"""Huge strings and big states in a diff: block-compared text deltas, windows around changes."""

from __future__ import annotations

import base64
import os
import tracemalloc

from inspector.diff import diff_values
from inspector.diff.text import ELIDED, HUGE_TEXT, KEEP, elided, render_delta, text_delta
from inspector.diff.window import is_big, window


def _text(chars: int) -> str:
    return base64.b64encode(os.urandom(chars * 3 // 4)).decode()


def test_a_huge_string_with_a_changed_tail_keeps_only_context() -> None:
    old = _text(3 * HUGE_TEXT)
    new = old[:-1000] + "tail changed " * 10
    tracemalloc.start()
    delta = text_delta(old, new)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < len(old) // 4          # no token list, no copy of the unchanged head
    tags = [tag for tag, _ in delta.segments]
    assert tags[0] == ELIDED and "-" in tags and "+" in tags and elided(delta)
    assert int(delta.segments[0][1]) + sum(len(t) for tag, t in delta.segments if tag in "=-") == len(old)
    assert "".join(t for tag, t in delta.segments if tag == "+").endswith("tail changed ")
    assert sum(len(t) for tag, t in delta.segments if tag != ELIDED) < 3 * KEEP + 2000
    assert "unchanged chars" in render_delta(delta)


def test_a_huge_multi_line_string_diffs_lines_in_the_middle() -> None:
    lines = [f"line {i} " + "x" * 40 + "\n" for i in range(60_000)]
    old = "".join(lines)
    new = "".join(lines[:30_000] + ["an inserted line\n"] + lines[30_000:])
    delta = text_delta(old, new)
    assert delta.unit == "line" and delta.added == 1 and delta.removed == 0
    assert [t for tag, t in delta.segments if tag == "+"] == ["an inserted line\n"]
    assert [tag for tag, _ in delta.segments] == [ELIDED, "=", "+", "=", ELIDED]


def test_small_strings_still_rebuild_both_sides() -> None:
    old, new = "the quick brown fox " * 20, "the quick red fox " * 20
    delta = text_delta(old, new)
    assert not elided(delta)
    assert "".join(t for tag, t in delta.segments if tag != "+") == old
    assert "".join(t for tag, t in delta.segments if tag != "-") == new


def test_a_window_shows_changed_items_with_neighbours_and_maps_paths_back() -> None:
    old = {"items": list(range(300_000)), "index": {f"k{i:06d}": i for i in range(100_000)}, "step": 1}
    new = {"items": list(old["items"]), "index": dict(old["index"]), "step": 2}
    new["items"][150_000] = -1
    new["index"]["k000007"] = "changed"
    assert is_big(old) and not is_big({"a": list(range(100))})
    changes = diff_values(old, new)
    shown = window(new, changes, "new")
    items = shown.value["items"]
    assert items[0] == "⋯ 149,997 unchanged items ⋯" and -1 in items and len(items) < 10
    position = items.index(-1)
    assert shown.real_path(("items", position)) == ("items", 150_000)
    assert shown.real_path(("items", 0)) == ("items",)     # a placeholder: its container
    index = shown.value["index"]
    assert index["k000007"] == "changed" and "k000004" in index and "k000011" not in index
    assert any(k.startswith("⋯ 99,989 unchanged keys") for k in index)
    assert shown.value["step"] == 2


def test_a_window_of_a_huge_string_shows_the_changed_region() -> None:
    old = {"text": _text(2 * HUGE_TEXT)}
    new = {"text": old["text"][:-500] + "NEW ENDING"}
    changes = diff_values(old, new)
    shown_old, shown_new = window(old, changes, "old", wrap=60), window(new, changes, "new", wrap=60)
    left, right = shown_old.value["text"], shown_new.value["text"]
    assert isinstance(left, list) and isinstance(right, list)      # the lines of the window
    assert shown_old.wrapped and shown_new.wrapped
    assert all(len(line) <= 60 for line in left + right if "unchanged characters" not in line)
    left_text, right_text = "".join(left), "".join(right)
    assert len(left_text) < 4 * KEEP and len(right_text) < 4 * KEEP
    assert right_text.endswith("NEW ENDING") and "unchanged characters" in right[0]
    assert old["text"][-500:] in left_text
    # every line of the string maps back to the string (scroll to change lands on it)
    assert shown_new.real_path(("text", len(right) - 1)) == ("text",)
    # the context before the change reads the same on both sides, line by line
    assert left[:len(left) - 10] == right[:len(left) - 10]


def test_a_window_of_a_short_changed_string_stays_a_string() -> None:
    old = {"items": list(range(60_000)), "note": "a short note"}
    new = {"items": old["items"], "note": "a shorter note"}
    shown = window(new, diff_values(old, new), "new")
    assert shown.value["note"] == "a shorter note" and not shown.wrapped


def test_a_window_of_a_string_grown_by_megabytes_shows_the_ends_of_what_was_added() -> None:
    """A 1 MB text grown to 50 MB made 800,000 lines in the window, and the Diff tab ran out
    of memory drawing them: a changed passage shows its two ends, and the changes shown stop
    after ``SIDE_CHARS``, both sides at the same place."""
    from inspector.diff.model import TextDelta
    from inspector.diff.window import CHANGED_CHARS, SIDE_CHARS, STRING_CHARS, _text_side
    line = "a line of some words of a document\n"
    old = {"text": line * 30_000}                                   # ~1 MB
    grown = {"text": old["text"] * 5}                               # one passage of ~4 MB added
    many = {"text": "".join(f"{line[:-1]} {i}\n" if i % 50 == 0 else line for i in range(30_000))}   # one replace
    for new in (grown, many):
        changes = diff_values(old, new)
        for side, value in (("old", old), ("new", new)):
            shown = window(value, changes, side, wrap=60).value["text"]
            assert isinstance(shown, list) and sum(map(len, shown)) < SIDE_CHARS + 4 * CHANGED_CHARS
    right = window(grown, diff_values(old, grown), "new", wrap=60).value["text"]
    assert any("more changed characters" in ln for ln in right)
    assert "".join(right).endswith(grown["text"][-STRING_CHARS:])
    # many changed passages, each short: the lines stop after SIDE_CHARS, at the same segment on both sides
    delta = TextDelta("line", (("=", "same line\n" * 300), ("-", "old line\n" * 300), ("+", "new line\n" * 300)) * 300)
    left, right = _text_side(delta, "old", 60), _text_side(delta, "new", 60)
    assert "more characters" in left[-1] and "more characters" in right[-1]
    assert max(len(left), len(right)) < 2 * SIDE_CHARS // 9
    assert [ln for ln in left if ln.startswith("same")] == [ln for ln in right if ln.startswith("same")]


def test_a_window_around_some_of_many_changes_does_not_call_the_rest_unchanged() -> None:
    """A map whose 60,000 keys were all replaced: the window is built around the first
    ``MAX_CHANGES`` changes, and what it leaves out was labelled "unchanged keys" (every one of
    them was removed; found by fuzzing)."""
    from inspector.diff.window import MAX_CHANGES
    old = {"m": {f"k{i}": i for i in range(60_000)}}
    new = {"m": {f"j{i}": i for i in range(60_000)}}
    changes = diff_values(old, new)
    assert len(changes) > MAX_CHANGES
    for side, value in (("old", old), ("new", new)):
        shown = window(value, changes, side)
        gaps = [k for k in shown.value["m"] if k.startswith("⋯")]
        assert gaps and all("not shown" in k and "unchanged" not in k for k in gaps), gaps
    few = window(old, changes[:3], "old")        # around every change: what is left out is unchanged
    assert all("unchanged" in k for k in few.value["m"] if k.startswith("⋯"))
