"""The recording library refuses what it cannot store with its own exceptions."""

from __future__ import annotations

import pytest

from inspector.errors import NotResumableError, ResumeSpecError, StateTooDeepError, UnstorableStateError
from inspector.record import Checkpointer
from inspector.resume.resume import plan_resume
from inspector.store import open_store
from inspector.store.native.writer import NativeWriter


def _nested(levels: int) -> object:
    value: object = 1
    for _ in range(levels):
        value = [value]
    return value


def test_too_deep_and_foreign_states_are_refused_and_the_run_goes_on(tmp_path) -> None:
    path = tmp_path / "s.db"
    with Checkpointer(path, name="deep") as cp:
        with pytest.raises(StateTooDeepError):
            cp.save({"a": _nested(600)})
        with pytest.raises(UnstorableStateError, match="type object"):
            cp.save({"a": object()})
        with pytest.raises(TypeError):          # still a TypeError for callers catching that
            cp.save({"a": {1, 2}})
        cp.save({"a": 1})
    with open_store(path) as store:
        run = store.list_runs()[0]
        assert [c.seq for c in store.list_checkpoints(run.id)] == [0]
        assert store.load(f"{run.id}:0").state == {"a": 1}


def _common_values() -> list:
    import dataclasses
    import datetime
    import decimal
    import enum
    import uuid

    from pydantic import BaseModel

    class Task(BaseModel):
        title: str

    @dataclasses.dataclass
    class Step:
        name: str

    class Colour(enum.Enum):
        RED = "red"

    return [
        (Task(title="t"), "a pydantic model: save its model_dump()"),
        (Step(name="s"), "a dataclass: save dataclasses.asdict() of it"),
        (Colour.RED, "an Enum: save its .value"),
        ({"a", "b"}, "a set: save it as a list"),
        (datetime.datetime(2026, 12, 7), "save its isoformat()"),
        (uuid.UUID(int=7), "save str() of it"),
        (decimal.Decimal("1.5"), "save str() of it"),
        (object(), "a state holds dicts, lists, strings, numbers, booleans, None and bytes"),
    ]


@pytest.mark.parametrize(("value", "hint"), _common_values(), ids=lambda v: type(v).__name__ if not isinstance(v, str) else "")
@pytest.mark.parametrize("where", ["top", "in a long list", "deep"])
def test_a_common_type_a_state_cannot_hold_says_what_to_save_instead(tmp_path, value, hint, where) -> None:
    path = tmp_path / "s.db"
    state: dict = {"a": value} if where == "top" else (
        {"items": [{"n": i} for i in range(40)] + [{"v": value}]} if where == "in a long list"
        else {"a": {"b": [{"c": value, "pad": "x" * 600}]}})
    with Checkpointer(path, name="typed") as cp:
        with pytest.raises(UnstorableStateError) as info:
            cp.save(state)
        assert f"({hint})" in str(info.value) and type(value).__name__ in str(info.value)
        assert "nothing was saved" in str(info.value)
        cp.save({"a": 1})
    with open_store(path) as store:
        run = store.list_runs()[0]
        assert [c.seq for c in store.list_checkpoints(run.id)] == [0]


def test_a_foreign_value_put_in_place_of_an_equal_encoding_is_refused_after_reuse(tmp_path) -> None:
    """The encoder reuses unchanged parts; a UUID put where its string was (equal msgpack
    forms under a lenient encoder) is still refused, nothing is written, and the run goes on."""
    import uuid
    path = tmp_path / "s.db"
    ident = uuid.uuid4()
    state = {"messages": [{"id": str(ident) if i == 30 else f"m{i}", "text": "x" * 600} for i in range(60)]}
    with Checkpointer(path, name="foreign") as cp:
        cp.save(state)
        state["messages"][30]["id"] = ident
        with pytest.raises(UnstorableStateError, match="UUID"):
            cp.save(state)
        state["messages"][30]["id"] = str(ident)
        cp.save(state)
    with open_store(path) as store:
        run = store.list_runs()[0]
        assert [c.seq for c in store.list_checkpoints(run.id)] == [0, 1]
        assert store.load(f"{run.id}:1").state == state


@pytest.mark.parametrize("spec", [{"argv": "python agent.py"}, {"argv": ["python", 3]},
                                  {"argv": ["python"], "env": {"A": 1}}, ["python"]])
def test_a_malformed_resume_spec_is_refused_when_written(tmp_path, spec) -> None:
    with Checkpointer(tmp_path / "s.db", name="ok") as cp:
        writer = NativeWriter(cp.store)
        with pytest.raises(ResumeSpecError):
            writer.create_run(name="bad", resume_spec=spec)
        with pytest.raises(ResumeSpecError):
            writer.update_run(cp.run_id, resume_spec=spec if isinstance(spec, dict) else {"argv": spec[0]})


def test_a_stored_argv_that_is_a_string_is_not_resumable(tmp_path) -> None:
    import sqlite3
    path = tmp_path / "s.db"
    with Checkpointer(path, name="r") as cp:
        cp.save({"a": 1})
        run_id = cp.run_id
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE ci_runs SET resume_spec=? WHERE id=?", ('{"argv": "nope", "cwd": "."}', run_id))
    with open_store(path) as store, pytest.raises(NotResumableError, match="argv is not a non-empty list of strings"):
        plan_resume(store, f"{run_id}:0")


@pytest.mark.parametrize("shape", ["lists", "maps", "in a chunked list", "small items of a chunked list"])
def test_a_state_deeper_than_the_read_default_is_refused_at_write(tmp_path, shape) -> None:
    """256 levels are stored and read back with the default budget; 257 are refused with the
    library's exception (never stored-but-unreadable, never RecursionError)."""
    def state(levels: int) -> object:
        if shape == "lists":
            return _nested(levels)
        if shape == "maps":
            value: object = 1
            for _ in range(levels):
                value = {"k": value}
            return value
        if shape == "in a chunked list":     # items of 600+ bytes go through the walk
            return {"messages": [[_nested(levels - 3), "x" * 600] for _ in range(20)]}
        return {"messages": [_nested(levels - 2) for _ in range(20)]}   # packed whole (< 512 bytes)

    path = tmp_path / "s.db"
    with Checkpointer(path, name="deep") as cp:
        cp.save(state(256))
        with pytest.raises(StateTooDeepError, match=r"more than 256 levels deep.*nothing was saved"):
            cp.save(state(257))
        cp.save({"after": True})
    with open_store(path) as store:
        run = store.list_runs()[0]
        assert [c.seq for c in store.list_checkpoints(run.id)] == [0, 1]
        assert store.load(f"{run.id}:0").state == state(256)
        assert store.load(f"{run.id}:1").state == {"after": True}
