"""Change-list rows: items added or removed together read as one row; the changes stay whole."""

from __future__ import annotations

from hypothesis import given, settings

from inspector.diff import ADDED, REMOVED, apply, diff_values
from inspector.diff.grouping import ItemRange, group_changes

from .strategies import edited, json_values


def _flat(rows) -> list:
    return [c for row in rows for c in (row.changes if isinstance(row, ItemRange) else (row,))]


def test_appended_messages_are_one_row() -> None:
    old = {"messages": [{"role": "user", "content": f"m{i}"} for i in range(500)], "step": 1}
    new = {"messages": old["messages"] + [{"role": "tool", "content": f"t{i}"} for i in range(5)], "step": 2}
    changes = diff_values(old, new)
    rows = group_changes(changes)
    assert len(changes) == 6 and len(rows) == 2
    (added,) = [r for r in rows if isinstance(r, ItemRange)]
    assert (added.op, added.start, added.stop, added.display_path) == (ADDED, 500, 504, "messages[500…504]")
    assert added.path == ("messages", 500) and added.new == new["messages"][500:] and added.old is None
    assert added.describe() == "+ messages[500…504]: 5 items added, first {'role': 'tool', 'content': 't0'}"


def test_a_cut_history_is_one_row_and_short_runs_stay_separate() -> None:
    old = {"log": list("abcdefghij"), "tags": ["x", "y", "z"]}
    new = {"log": list("abc") + list("hij"), "tags": ["x", "y", "z", "u", "v"]}
    rows = group_changes(diff_values(old, new))
    assert [r.describe() for r in rows] == ["- log[3…6]: 4 items removed, first was 'd'",
                                            "+ tags[3] = 'u'", "+ tags[4] = 'v'"]
    assert rows[0].old == ["d", "e", "f", "g"] and rows[0].op == REMOVED


def test_only_consecutive_items_of_one_list_are_grouped() -> None:
    old = {"a": [0] * 10, "b": [1] * 2}
    new = {"a": [0] * 10 + [5, 6, 7], "b": [1] * 2 + [8, 9, 10]}
    rows = group_changes(diff_values(old, new))
    assert [r.display_path for r in rows] == ["a[10…12]", "b[2…4]"]
    gaps = diff_values(list(range(20)), [x for x in range(20) if x % 2])     # every other item removed
    assert group_changes(gaps) == list(gaps)
    root = group_changes(diff_values([], [1, 2, 3]))
    assert [r.display_path for r in root] == ["[0…2]"]


@settings(max_examples=100, deadline=None)
@given(json_values.flatmap(lambda old: edited(old).map(lambda new: (old, new))))
def test_rows_hold_every_change_in_order(pair) -> None:
    old, new = pair
    changes = diff_values(old, new)
    rows = group_changes(changes)
    assert _flat(rows) == list(changes) and apply(old, changes) == new
    for row in rows:
        if isinstance(row, ItemRange):
            indices = [c.path[-1] for c in row.changes]
            assert len(indices) >= 3 and indices == list(range(indices[0], indices[0] + len(indices)))
            assert len({c.op for c in row.changes}) == 1 and len({c.path[:-1] for c in row.changes}) == 1
