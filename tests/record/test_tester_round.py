"""The recording library on values a tester found stored wrong or refused badly: str subclasses
and (str, Enum) members, keys nested deep, checks passed as 1, fields outside the task-state
model, a held-back save changed after it was made, NaN and True/1.0 in the change summary,
numpy scalars. Real Checkpointers writing real SQLite stores, read back through open_store."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

import pytest

from inspector import limits
from inspector.errors import StateTooDeepError, TaskStateError, UnstorableStateError
from inspector.record import Checkpointer, Interval
from inspector.store import open_store


class Color(str, enum.Enum):  # noqa: UP042  # on purpose: a (str, Enum) member, str() "Color.RED"
    RED = "red"


class Status(str, enum.Enum):  # noqa: UP042  # (as an agent's own status enum is often written)
    DONE = "done"


class Level(enum.IntEnum):
    HIGH = 3


class Tag(str):
    def __str__(self) -> str:
        return "<tag>"


def _nested_key(depth: int) -> tuple:
    key: tuple = ("leaf",)
    for _ in range(depth - 1):
        key = (key,)
    return key


def test_a_str_enum_member_or_str_subclass_is_stored_as_the_string_it_holds(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    state = {"color": Color.RED, "items": [Color.RED] * 40, Color.RED: "as key", "level": Level.HIGH,
             "big": {f"k{i}": Color.RED for i in range(100)}, "tag": Tag("plain"), "long": Tag("x" * 20_000)}
    with Checkpointer(store, name="enum") as cp:
        first = cp.save(state)
        again = cp.save(dict(state, tag=Tag("other")))        # the encoder's kept forms, compared
    with open_store(store) as st:
        got = st.load(first.id).state
        assert got == {"color": "red", "items": ["red"] * 40, "red": "as key", "level": 3,
                       "big": {f"k{i}": "red" for i in range(100)}, "tag": "plain", "long": "x" * 20_000}
        assert type(got["level"]) is int
        assert st.load(again.id).state["tag"] == "other"


def test_a_str_enum_status_is_validated_scored_and_stored_as_its_value(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    with Checkpointer(store, name="tasks") as cp:
        info = cp.save({"x": 1}, tasks={"goal": "g", "tasks": [
            {"id": "t1", "status": Status.DONE, "checks": [{"name": Color.RED, "passed": True}]}]})
    assert info is not None and (info.tasks_done, info.checks_passed, info.checks_total) == (1, 1, 1)
    with open_store(store) as st:
        snap = st.load(info.id)
    assert snap.problems == ()
    assert snap.tasks is not None
    task = snap.tasks["tasks"][0]
    assert task["status"] == "done" and task["checks"][0]["name"] == "red"


@pytest.mark.parametrize("where", ["top", "list item", "big map", "task"])
def test_a_key_nested_past_the_depth_budget_is_refused_with_the_depth_sentence(tmp_path: Path, where: str) -> None:
    """The depth budget counts a tuple key's own levels: what is stored always reads back."""
    key = _nested_key(300)
    state: Any = {"top": {key: 1}, "list item": {"l": [{key: i} for i in range(40)]},
                  "big map": {"m": {**{f"k{i}": i for i in range(100)}, key: 1}}, "task": None}[where]
    store = tmp_path / "s.db"
    with Checkpointer(store, name="deep") as cp:
        cp.save({"a": 1})
        if where == "task":
            with pytest.raises(TaskStateError, match="nests more than 256 levels deep"):
                cp.save({"a": 2}, tasks={"goal": "g", "tasks": [{"id": "t", "extra": {key: 1}}]})
        else:
            with pytest.raises(StateTooDeepError, match=r"^The state nests more than 256 levels deep, deeper "
                                                        r"than a store is read by default \(CHECKPOINT_INSPECTOR"):
                cp.save(state)
        with pytest.raises(StateTooDeepError, match="nests more than 256 levels deep"):
            cp.save({_nested_key(10_000): 1})       # no RecursionError, no "recursion limit" sentence
        shallow = cp.save({"a": 1, _nested_key(250): [1]})      # within the budget: stored, and read
    with open_store(store) as st:
        assert st.load(shallow.id).state == {"a": 1, _nested_key(250): [1]}
        assert st.get_run(shallow.run_id).head_seq == 1


def test_a_deep_key_is_named_briefly_in_the_change_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the depth budget raised, keys a thousand levels deep are stored; the change
    summary names them briefly (their repr whole was a RecursionError out of ``save``)."""
    monkeypatch.setattr(limits, "_current", limits.current()._replace(depth=5000))
    with Checkpointer(tmp_path / "s.db", name="deep") as cp:
        cp.save({_nested_key(1000): 1})
        info = cp.save({_nested_key(1001): 1})
    assert info is not None and info.change == "+((((...),),),) · -((((...),),),)"


@pytest.mark.parametrize("passed", [1, 1.0, 0, "yes"])
def test_a_check_passed_that_is_not_a_boolean_is_refused(tmp_path: Path, passed: Any) -> None:
    with Checkpointer(tmp_path / "s.db", name="checks") as cp, \
            pytest.raises(TaskStateError, match=r"tasks\[0\]\.checks\[0\]\.passed: must be true, false or null, "
                                                rf"not {type(passed).__name__}$"):
        cp.save({}, tasks={"goal": "g", "tasks": [{"id": "t", "checks": [{"name": "c", "passed": passed}]}]})


def test_fields_outside_the_task_model_are_kept_round_trip(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    tasks = {"goal": "g", "owner": "bob", "tasks": [
        {"id": "t1", "status": "pending", "assignee": "ana", "depends_on": ["t0"],
         "review": {"status": "requested", "due": "friday"},
         "checks": [{"name": "c", "passed": None, "weight": 3}]}]}
    with Checkpointer(store, name="extras") as cp:
        info = cp.save({}, tasks=tasks)
        again = cp.save({}, tasks=tasks)       # the memo's path: the same state again
    with open_store(store) as st:
        got = st.load(info.id).tasks
        assert st.load(again.id).tasks == got
    assert got is not None and got["owner"] == "bob"
    task = got["tasks"][0]
    assert (task["assignee"], task["depends_on"]) == ("ana", ["t0"])
    assert task["review"]["due"] == "friday" and task["checks"][0]["weight"] == 3
    assert list(task)[:6] == ["id", "title", "status", "progress", "review", "checks"]   # the model's first


def test_a_held_back_save_holds_the_state_as_it_was_at_that_save(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    log: list = []
    with Checkpointer(store, name="interval", interval=Interval.every(3)) as cp:
        for i in range(5):
            log.append(i)
            cp.save({"log": log, "big": "y" * 2000 if i % 2 else None}, name=f"s{i}")
        log.append("after last save")
    with open_store(store) as st:
        states = {c.name: st.load(c.id).state for c in st.list_checkpoints(cp.run_id)}
    assert states == {"s2": {"log": [0, 1, 2], "big": None}, "s4": {"log": [0, 1, 2, 3, 4], "big": None}}


def test_pieces_of_a_held_back_save_a_later_save_names_again_are_written(tmp_path: Path) -> None:
    """A piece encoded for a save held back and not written then (its key was gone at the
    next written save) is written when a later save names it again."""
    store = tmp_path / "s.db"
    big = {"text": "z" * 5000, "items": list(range(50))}
    with Checkpointer(store, name="interval", interval=Interval.every(2)) as cp:
        cp.save({"a": big}, name="held")
        cp.save({}, name="written")
        cp.save({"a": big}, name="held again")
        cp.save({"a": big, "b": 1}, name="written again")
    with open_store(store) as st:
        states = {c.name: st.load(c.id).state for c in st.list_checkpoints(cp.run_id)}
    assert states == {"written": {}, "written again": {"a": big, "b": 1}}


def test_an_interval_save_refuses_an_unstorable_state_at_once(tmp_path: Path) -> None:
    with Checkpointer(tmp_path / "s.db", name="interval", interval=Interval.every(3)) as cp, \
            pytest.raises(UnstorableStateError, match="type set"):
        cp.save({"s": {1, 2}})


def test_the_change_column_compares_values_exactly(tmp_path: Path) -> None:
    nan = float("nan")
    with Checkpointer(tmp_path / "s.db", name="nan") as cp:
        cp.save({"n": nan, "flag": True, "z": 0.0, 7: "a"})
        info = cp.save({"n": float("nan"), "flag": 1.0, "z": 0.0, 7: "b"})
    assert info is not None and info.change == "flag · 7"


def test_a_numpy_bool_is_refused_naming_its_type_and_what_to_pass() -> None:
    np = pytest.importorskip("numpy")
    from inspector.codec import PieceEncoder
    with pytest.raises(TypeError, match=r"type numpy\.bool_? in a state \(a numpy scalar: pass bool\(x\)\)"):
        PieceEncoder().encode({"v": np.True_})
    with pytest.raises(TypeError, match=r"type numpy\.int64 in a state \(a numpy scalar: pass int\(x\)\)"):
        PieceEncoder().encode({"v": np.int64(5)})
