"""List-item identity is canonical: equal items in another key order, or with 1 for 1.0, are the
same item (a move reads as a move), in plain and in stored (hashed, raw-chunk) diffs."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.diff import ADDED, CHANGED, MOVED, REMOVED, apply, diff_values
from inspector.diff.lists import fingerprint

from .strategies import json_values, reordered_histories, respelled
from .test_properties import hashed_diff

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(st.data())
def test_equal_values_have_equal_fingerprints(data) -> None:
    value = data.draw(json_values)
    other = data.draw(respelled(value))
    assert other == value
    assert fingerprint(other) == fingerprint(value)


def test_the_fingerprint_tells_different_values_apart() -> None:
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})
    assert fingerprint([1, 2]) != fingerprint([2, 1])
    assert fingerprint([1]) != fingerprint((1,))
    assert fingerprint({"a": [1]}) != fingerprint({"a": 1})


def test_a_reordered_and_retyped_record_that_moved_is_a_move_and_the_retype_a_change() -> None:
    old = {"items": [{"id": 1, "n": 1, "tags": [1, 2]}, {"id": 2, "n": 2}, {"id": 3, "n": 3}]}
    new = {"items": [{"n": 3.0, "id": 3}, {"tags": [1.0, 2], "n": 1, "id": 1}, {"id": 2, "n": 2}]}
    for changes in (diff_values(old, new), hashed_diff(old, new)):
        assert [(c.op, c.path) for c in changes] == [(MOVED, ("items", 0)), (CHANGED, ("items", 0, "n")),
                                                     (CHANGED, ("items", 1, "tags", 0))]
        assert changes[2].old == 1 and type(changes[2].new) is float      # 1 → 1.0 is a change
        assert type(changes[1].new) is float       # and so is the moved record's 3 → 3.0, after its move
        assert type(apply(old, changes)["items"][0]["n"]) is float


@FAST
@given(reordered_histories())
def test_reordered_respelled_items_are_moves_only(pair) -> None:
    old, new = pair
    for changes in (diff_values(old, new), hashed_diff(old, new)):
        assert not {c.op for c in changes} & {ADDED, REMOVED}
        assert all(c.op == MOVED for c in changes)
        assert apply(old, changes) == new


def test_a_value_that_only_changed_its_type_is_a_change_between_checkpoints(tmp_path) -> None:
    """1 → 1.0 → True and 0.0 → -0.0 → False → 0 are different stored values (they round-trip
    exactly): the diff said "no changes" for each, while the side-by-side view marked them."""
    from inspector.diff import diff_checkpoints
    from inspector.record import Checkpointer
    from inspector.store import open_store
    values = (1, 1.0, True, 0.0, -0.0, False, 0)
    with Checkpointer(tmp_path / "types.db", name="types") as cp:
        ids = [cp.save({"approved": v, "list": [v], "nested": {"v": [v]}}).id for v in values]
    with open_store(tmp_path / "types.db") as store:
        for (a, va), (b, vb) in zip(zip(ids, values), zip(ids[1:], values[1:])):
            changes = diff_checkpoints(store, a, b).changes
            assert {(c.path, c.op) for c in changes} == {(("approved",), CHANGED), (("list", 0), CHANGED),
                                                        (("nested", "v", 0), CHANGED)}, (va, vb)
            assert all(type(c.old) is type(va) and type(c.new) is type(vb) for c in changes)
