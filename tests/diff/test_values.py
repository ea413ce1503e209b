"""diff_values on plain Python values: dicts, aligned lists, moves, text and number details."""

from __future__ import annotations

from inspector import limits
from inspector.limits import BudgetExceeded

import copy

import pytest

from inspector.diff import (ADDED, CHANGED, MOVED, REMOVED, DiffCancelled, DiffError, Move, NumberDelta,
                            TextDelta, apply, diff_values, format_path)


def history(n: int) -> list[dict]:
    return [{"role": "user" if i % 2 else "assistant", "content": f"message {i}"} for i in range(n)]


def ops(changes) -> list[tuple[str, str]]:
    return [(c.op, c.display_path) for c in changes]


def test_equal_values_have_no_changes() -> None:
    state = {"messages": history(50), "n": 1, "nested": {"a": [1, 2, {"b": None}]}}
    assert diff_values(state, state) == ()
    assert diff_values(state, copy.deepcopy(state)) == ()


def test_dict_keys_added_removed_changed() -> None:
    changes = diff_values({"a": 1, "b": "x", "c": True}, {"a": 1, "b": "y", "d": [1]})
    assert ops(changes) == [(CHANGED, "b"), (ADDED, "d"), (REMOVED, "c")]
    assert changes[0].old == "x" and changes[0].new == "y"
    assert changes[1].new == [1] and changes[2].old is True


def test_appending_three_messages_to_500_is_three_additions_at_the_end() -> None:
    old = {"messages": history(500)}
    new = copy.deepcopy(old)
    new["messages"] += [{"role": "tool", "content": f"new {i}"} for i in range(3)]
    changes = diff_values(old, new)
    assert ops(changes) == [(ADDED, "messages[500]"), (ADDED, "messages[501]"), (ADDED, "messages[502]")]
    assert changes[2].new == {"role": "tool", "content": "new 2"}


def test_inserting_one_message_in_the_middle_is_one_insertion() -> None:
    old = history(500)
    new = old[:250] + [{"role": "tool", "content": "inserted"}] + old[250:]
    changes = diff_values(old, copy.deepcopy(new))
    assert ops(changes) == [(ADDED, "[250]")]


def test_removing_one_item_in_the_middle_is_one_removal_at_its_old_index() -> None:
    old = history(100)
    new = old[:40] + old[41:]
    changes = diff_values(old, new)
    assert ops(changes) == [(REMOVED, "[40]")]
    assert changes[0].old == old[40]


def test_edited_item_in_a_list_gives_a_nested_change_at_its_new_index() -> None:
    old = {"messages": history(20)}
    new = copy.deepcopy(old)
    new["messages"].insert(0, {"role": "system", "content": "be nice"})
    new["messages"][11]["content"] = "edited"
    changes = diff_values(old, new)
    assert ops(changes) == [(ADDED, "messages[0]"), (CHANGED, "messages[11].content")]
    assert changes[1].old == "message 10"


def test_an_item_moved_within_a_list_is_reported_as_moved() -> None:
    old = [{"id": i, "text": f"item {i}"} for i in range(10)]
    new = old[:2] + old[3:8] + [old[2]] + old[8:]
    changes = diff_values(old, new)
    assert len(changes) == 1
    change = changes[0]
    assert change.op == MOVED and change.detail == Move(2, 7) and change.path == (7,)
    assert change.new == old[2] and apply(old, changes) == new


def test_long_strings_get_a_word_level_diff() -> None:
    old = "The quick brown fox jumps over the lazy dog and keeps running through the forest at night."
    new = old.replace("lazy", "sleepy")
    (change,) = diff_values({"t": old}, {"t": new})
    assert isinstance(change.detail, TextDelta) and change.detail.unit == "word"
    assert ("-", "lazy") in change.detail.segments and ("+", "sleepy") in change.detail.segments
    assert "".join(t for tag, t in change.detail.segments if tag != "+") == old
    assert "".join(t for tag, t in change.detail.segments if tag != "-") == new


def test_multiline_strings_get_a_line_level_diff() -> None:
    old = "".join(f"line {i} of a long report with some words in it\n" for i in range(20))
    lines = old.splitlines(keepends=True)
    new = "".join(lines[:5] + ["a new line\n"] + lines[5:])
    (change,) = diff_values(old, new)
    assert change.detail.unit == "line" and change.detail.added == 1 and change.detail.removed == 0


def test_short_strings_have_no_text_detail() -> None:
    (change,) = diff_values({"s": "draft"}, {"s": "final"})
    assert change.detail is None


def test_numbers_show_their_delta() -> None:
    changes = diff_values({"score": 4, "ratio": 0.5, "flag": True}, {"score": 6, "ratio": 0.25, "flag": False})
    assert [c.detail for c in changes] == [NumberDelta(2), NumberDelta(-0.25), None]
    assert [NumberDelta(d).text() for d in (2, -0.25, -3_000_000, 1.5e6, 1e20)] == \
        ["+2", "-0.25", "-3,000,000", "+1,500,000", "+1e+20"]
    (big,) = diff_values({"n": 1_500_000}, {"n": -1_500_000})
    assert big.describe().endswith("(-3,000,000)")


def test_type_change_is_one_change() -> None:
    (change,) = diff_values({"x": [1, 2]}, {"x": {"a": 1}})
    assert change.op == CHANGED and change.old == [1, 2] and change.new == {"a": 1}


def test_root_scalar_change() -> None:
    (change,) = diff_values(1, 2)
    assert change.path == () and change.display_path == "(root)"


def test_tuples_and_lists_are_not_the_same_type() -> None:
    (change,) = diff_values({"x": (1, 2)}, {"x": [1, 2]})
    assert change.op == CHANGED


def test_format_path() -> None:
    assert format_path(("messages", 501, "content")) == "messages[501].content"
    assert format_path(("odd key", 0)) == "['odd key'][0]"
    assert format_path((3, "a")) == "[3].a"


def test_deep_nesting_does_not_raise_recursion_error() -> None:
    def chain(depth: int, leaf: int) -> list:
        value: list = [leaf]
        for _ in range(depth):
            value = [value, "x"]
        return value
    old, new = chain(5000, 1), chain(5000, 2)
    with pytest.raises(BudgetExceeded, match="--max-depth"):    # over the default budget: one sentence
        diff_values(old, new)
    limits.configure(depth=10_000)
    try:
        changes = diff_values(old, new)
    finally:
        limits.reset()
    assert len(changes) == 1 and len(changes[0].path) == 5001
    assert changes[0].old == 1 and changes[0].new == 2
    node = apply(old, changes)
    for _ in range(5000):
        node = node[0]
    assert node == [2]


def test_absurd_depth_is_a_clear_error() -> None:
    from inspector.diff.engine import Engine

    old: list = [1]
    new: list = [2]
    for _ in range(50):
        old, new = [old], [new]
    with pytest.raises(DiffError, match="deeper than 10 levels"):
        Engine(max_depth=10).run(old, new)


def test_cancel_stops_a_running_diff() -> None:
    old = {f"k{i}": {"v": i} for i in range(5000)}
    new = {f"k{i}": {"v": i + 1} for i in range(5000)}
    calls = []

    def cancel() -> bool:
        calls.append(1)
        return len(calls) > 2

    with pytest.raises(DiffCancelled):
        diff_values(old, new, cancel=cancel)
    assert len(calls) == 3


def test_progress_reports_growing_counts_and_may_abort() -> None:
    old = {f"k{i}": {"v": i} for i in range(3000)}
    new = {f"k{i}": {"v": -i} for i in range(3000)}
    seen: list[tuple[str, int]] = []
    diff_values(old, new, progress=lambda stage, done: seen.append((stage, done)))
    assert seen and all(stage == "diffing" for stage, _ in seen)
    assert [d for _, d in seen] == sorted(d for _, d in seen)

    class Stop(Exception):
        pass

    def abort(stage: str, done: int) -> None:
        raise Stop

    with pytest.raises(Stop):
        diff_values(old, new, progress=abort)


def test_inputs_are_not_modified() -> None:
    old = {"a": [1, 2, 3], "b": {"c": 1}}
    new = {"a": [1, 3, 4], "b": {"c": 2}, "d": 1}
    frozen_old, frozen_new = copy.deepcopy(old), copy.deepcopy(new)
    result = apply(old, diff_values(old, new))
    assert result == new
    assert old == frozen_old and new == frozen_new


def test_an_edited_line_gets_a_word_diff_inside_it() -> None:
    old = "# Report\n\nThe body says one thing about bees and honey.\n\n## End\n"
    new = "# Report\n\nThe body says another thing about bees and honey.\nA new line.\n\n## End\n"
    (change,) = diff_values(old, new)
    segments = change.detail.segments
    assert ("-", "one") in segments and ("+", "another") in segments
    assert any(tag == "+" and "A new line." in text for tag, text in segments)
    assert "".join(t for tag, t in segments if tag != "+") == old
    assert "".join(t for tag, t in segments if tag != "-") == new


def test_concurrent_diffs_in_threads_restore_the_garbage_collector() -> None:
    import gc
    import threading

    old = {f"k{i}": {"v": list(range(20))} for i in range(2000)}
    new = {f"k{i}": {"v": list(range(21))} for i in range(2000)}
    results: list = []
    threads = [threading.Thread(target=lambda: results.append(diff_values(old, new))) for _ in range(3)]
    assert gc.isenabled()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 3 and all(len(r) == 2000 for r in results)
    assert gc.isenabled()


def test_swapped_items_are_two_moves_not_two_edits() -> None:
    a = {"name": "tests", "passed": False}
    b = {"name": "tests", "passed": True}
    lint = {"name": "lint", "passed": True}
    changes = diff_values([a, lint, b], [b, lint, a])
    assert [(c.op, c.detail) for c in changes] == [(MOVED, Move(2, 0)), (MOVED, Move(0, 2))]
    assert apply([a, lint, b], changes) == [b, lint, a]
