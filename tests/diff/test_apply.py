"""apply(): rebuilding the new value from the old one and a list of changes."""

from __future__ import annotations

import pytest

from inspector.diff import ADDED, CHANGED, MOVED, REMOVED, Change, DiffError, Move, apply, diff_values


def test_apply_dict_changes() -> None:
    old = {"a": 1, "b": 2}
    changes = [Change(("a",), CHANGED, 1, 5), Change(("c",), ADDED, None, 3), Change(("b",), REMOVED, 2, None)]
    assert apply(old, changes) == {"a": 5, "c": 3}
    assert old == {"a": 1, "b": 2}


def test_apply_list_changes_use_old_indices_for_removals_and_new_indices_otherwise() -> None:
    old = ["a", "b", "c", "d"]
    changes = [Change((1,), REMOVED, "b", None), Change((0,), ADDED, None, "z"),
               Change((3,), CHANGED, "d", "D"), Change((2,), MOVED, "a", "a", Move(0, 2))]
    # kept: c, d (in order) -> positions 1 and 3; z at 0, a at 2; then d becomes D
    assert apply(old, changes) == ["z", "c", "a", "D"]


def test_apply_root_replacement() -> None:
    assert apply({"a": 1}, [Change((), CHANGED, {"a": 1}, [1])]) == [1]


def test_untouched_subtrees_are_shared_not_copied() -> None:
    old = {"big": [list(range(100))], "small": {"x": 1}}
    new = apply(old, diff_values(old, {"big": old["big"], "small": {"x": 2}}))
    assert new["big"] is old["big"] and new["small"] is not old["small"]


@pytest.mark.parametrize("value, changes, message", [
    ({"a": 1}, [Change(("missing", "x"), CHANGED, 1, 2)], "does not have"),
    ({"a": 1}, [Change(("a",), REMOVED, 1, None), Change(("a",), REMOVED, 1, None)], "not there"),
    ([1], [Change((9,), REMOVED, 1, None)], "does not have"),
    ([1], [Change((5,), ADDED, None, 2)], "do not fit"),
    ({"a": 1}, [Change((), ADDED, None, 1)], "whole value"),
    ({"a": 1}, [Change(("a", 0), ADDED, None, 1)], "does not fit"),
    ({"a": 1}, [Change(("a",), MOVED, 1, 1, Move(0, 1))], "not in a list"),
])
def test_changes_that_do_not_fit_raise_a_clear_error(value, changes, message) -> None:
    with pytest.raises(DiffError, match=message):
        apply(value, changes)
