"""``inspector.model.Record``: the model's frozen types behave as the frozen dataclasses they
were (the same declaration under ``@dataclass(frozen=True)`` is the reference), and cost no
``dataclasses`` import until something asks for their dataclass fields."""

from __future__ import annotations

import copy
import inspect
import dataclasses
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector import model, taskstate
from inspector.commands._common import to_jsonable
from inspector.model import Record, field


class Point(Record):
    """A record with every kind of field."""

    x: int
    label: str
    tags: list = field(default_factory=list)
    weight: float = 1.5
    note: str | None = None

    @property
    def twice(self) -> int:
        return self.x * 2


@dataclasses.dataclass(frozen=True)
class RefPoint:
    """The same declaration as a frozen dataclass."""

    x: int
    label: str
    tags: list = dataclasses.field(default_factory=list)
    weight: float = 1.5
    note: str | None = None


class Empty(Record):
    pass


class One(Record):
    only: Any = None


@dataclasses.dataclass(frozen=True)
class RefOne:
    only: Any = None


def _same_repr(record: object, ref: object) -> None:
    assert repr(record).replace(type(record).__qualname__, "X") == repr(ref).replace(type(ref).__qualname__, "X")


@pytest.mark.parametrize("args, kwargs", [
    ((1, "a"), {}), ((2, "b", [1, 2]), {"note": "n"}), ((), {"x": 3, "label": "c", "weight": 2.0}),
    ((4,), {"label": "d", "tags": ("t",), "note": None}), ((5, "e", [], 0.0, "z"), {}),
])
def test_a_record_is_built_compared_hashed_and_shown_as_the_dataclass(args: tuple, kwargs: dict) -> None:
    record, ref = Point(*args, **kwargs), RefPoint(*args, **kwargs)
    assert dataclasses.astuple(record) == dataclasses.astuple(ref)
    assert dataclasses.asdict(record) == dataclasses.asdict(ref)
    _same_repr(record, ref)
    assert record == Point(*args, **kwargs) and record != ref and (record == ref) is False
    assert record != model.replace(record, note="other") and record != model.replace(record, x=-1)
    frozen, ref_frozen = model.replace(record, tags=tuple(record.tags)), dataclasses.replace(ref, tags=tuple(ref.tags))
    assert hash(frozen) == hash(ref_frozen)
    assert Point.__match_args__ == RefPoint.__match_args__
    assert list(vars(record)) == [f.name for f in dataclasses.fields(RefPoint)]   # field order


def test_bad_arguments_raise_type_errors_as_the_dataclass_does() -> None:
    for args, kwargs in [((), {}), ((1,), {}), ((1, "a", [], 1.0, None, "extra"), {}), ((1, "a"), {"x": 2}),
                         ((1, "a"), {"nope": 1}), ((), {"label": "a"})]:
        with pytest.raises(TypeError):
            RefPoint(*args, **kwargs)
        with pytest.raises(TypeError) as err:
            Point(*args, **kwargs)
        assert "Point()" in str(err.value)
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        Point(1, "a", x=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        Point(1, "a", nope=1)
    with pytest.raises(TypeError, match="missing required argument: 'label'"):
        Point(1)
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        type("Bad", (Record,), {"__annotations__": {"a": "int", "b": "int"}, "a": 0})


def test_a_record_is_frozen_with_dataclasses_error() -> None:
    record = Point(1, "a")
    for attempt in (lambda: setattr(record, "x", 2), lambda: setattr(record, "new", 2),
                    lambda: delattr(record, "x")):
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot (assign to|delete) field"):
            attempt()
    assert record.x == 1 and not hasattr(record, "new")


def test_defaults_factories_and_class_attributes_are_the_dataclass_ones() -> None:
    a, b = Point(1, "a"), Point(2, "b")
    assert a.tags == [] and a.tags is not b.tags            # a fresh list per instance
    assert Point.weight == 1.5 and Point.note is None       # defaults stay class attributes
    assert not hasattr(Point, "tags") and not hasattr(RefPoint, "tags")   # factories do not
    assert Point(3, "c").twice == 6                         # methods and properties as declared


def test_dataclasses_functions_work_on_records() -> None:
    record = Point(1, "a", [1], note="n")
    assert dataclasses.is_dataclass(record) and dataclasses.is_dataclass(Point)
    assert not dataclasses.is_dataclass(Record)
    ours, ref = dataclasses.fields(Point), dataclasses.fields(RefPoint)
    assert [(f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.compare, f.hash) for f in ours] == \
           [(f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.compare, f.hash) for f in ref]
    assert dataclasses.fields(record) == ours
    changed = dataclasses.replace(record, label="b")
    assert type(changed) is Point and changed == Point(1, "b", [1], note="n") and record.label == "a"
    assert model.replace(record, label="b") == changed
    with pytest.raises(TypeError):
        dataclasses.replace(record, nope=1)
    with pytest.raises(TypeError):
        model.replace(record, nope=1)
    assert dataclasses.asdict(Empty()) == {} and repr(Empty()) == "Empty()" and hash(Empty()) == hash(())
    assert hash(One(3)) == hash(RefOne(3)) and One(3) == One(3) and One(3) != One(4)
    _same_repr(One([1]), RefOne([1]))


class Point3(Point):
    z: int = 0


@dataclasses.dataclass(frozen=True)
class RefPoint3(RefPoint):
    z: int = 0


def test_a_subclass_adds_fields_after_its_bases() -> None:
    assert [f.name for f in dataclasses.fields(Point)] == [f.name for f in dataclasses.fields(RefPoint)]
    assert [f.name for f in dataclasses.fields(Point3)] == [f.name for f in dataclasses.fields(RefPoint3)]
    _same_repr(Point3(1, "a", z=3), RefPoint3(1, "a", z=3))
    assert Point3(1, "a") != Point(1, "a") and Point3(1, "a", z=2).twice == 2


def test_copies_pickles_and_matches() -> None:
    record = Point(1, "a", [2], note="n")
    for clone in (copy.copy(record), copy.deepcopy(record), pickle.loads(pickle.dumps(record))):
        assert clone == record and type(clone) is Point
    assert copy.deepcopy(record).tags is not record.tags
    match record:
        case Point(x, label):
            assert (x, label) == (1, "a")
        case _:
            pytest.fail("no match")


def test_a_record_holding_itself_shows_as_the_dataclass_does() -> None:
    record, ref = One([]), RefOne([])
    record.only.append(record)
    ref.only.append(ref)
    assert repr(record) == "One(only=[...])" and repr(ref) == "RefOne(only=[...])"


MODEL_TYPES = [model.Capability, model.Capabilities, model.StoreInfo, model.RunInfo, model.CheckpointInfo,
               model.Snapshot, model.ChangeSet, taskstate.Score]


@pytest.mark.parametrize("cls", MODEL_TYPES, ids=lambda c: c.__name__)
def test_every_model_type_is_a_complete_dataclass(cls: type) -> None:
    fields = dataclasses.fields(cls)
    assert [f.name for f in fields] == list(cls.__match_args__) and fields
    required = [f.name for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    values = {name: i for i, name in enumerate(required)}
    a = cls(**values)
    assert dataclasses.replace(a) == a and model.replace(a) == a == cls(**values)
    assert list(to_jsonable(a)) == list(cls.__match_args__) and json.dumps(to_jsonable(a), default=str)
    assert eval(repr(a), vars(model) | vars(taskstate)) == a   # the repr is the constructor call


def test_the_model_types_load_without_dataclasses() -> None:
    code = ("import sys\nimport inspector.model, inspector.taskstate\n"
            "r = inspector.model.RunInfo('a', 'b', 'c', 'running', 1.0, 2.0)\n"
            "print(repr(r) != '', r == r, hash(inspector.model.NATIVE_CAPABILITIES) != 0,"
            " 'dataclasses' in sys.modules, 'inspect' in sys.modules)\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, timeout=60)
    assert out.stdout.split() == ["True", "True", "True", "False", "False"]


class Slotted(Record, slots=True):
    """A slotted record, as ``@dataclass(frozen=True, slots=True)``."""

    path: tuple
    op: str
    old: Any = None
    items: list = field(default_factory=list)

    @property
    def depth(self) -> int:
        return len(self.path)


@dataclasses.dataclass(frozen=True, slots=True)
class RefSlotted:
    path: tuple
    op: str
    old: Any = None
    items: list = dataclasses.field(default_factory=list)


class SlottedMore(Slotted, slots=True):
    extra: int = 0


def test_a_slotted_record_is_the_slotted_dataclass() -> None:
    for args, kwargs in [(((1,), "added"), {}), (((1, "k"), "removed", 5), {"items": [1]}), ((), {"path": (), "op": "x"})]:
        record, ref = Slotted(*args, **kwargs), RefSlotted(*args, **kwargs)
        _same_repr(record, ref)
        assert dataclasses.asdict(record) == dataclasses.asdict(ref) and record == Slotted(*args, **kwargs)
        assert not hasattr(record, "__dict__") and not hasattr(ref, "__dict__")
        assert set(Slotted.__slots__) == set(RefSlotted.__slots__)
        for clone in (copy.copy(record), copy.deepcopy(record), pickle.loads(pickle.dumps(record))):
            assert clone == record and type(clone) is Slotted
        assert dataclasses.replace(record, op="moved") == model.replace(record, op="moved") != record
        with pytest.raises(dataclasses.FrozenInstanceError):
            record.op = "y"  # type: ignore[misc]
    assert Slotted((1,), "a").items is not Slotted((1,), "a").items and Slotted((1, 2), "a").depth == 2
    assert hash(Slotted((1,), "a", 3, ())) == hash(RefSlotted((1,), "a", 3, ()))
    for args, kwargs in [((), {}), (((1,),), {}), (((1,), "a", 1, [], 9), {}), (((1,), "a"), {"op": "b"}),
                         (((1,), "a"), {"nope": 1})]:
        with pytest.raises(TypeError):
            RefSlotted(*args, **kwargs)
        with pytest.raises(TypeError):
            Slotted(*args, **kwargs)
    more = SlottedMore((1,), "a", extra=2)
    assert more.extra == 2 and more.items == [] and not hasattr(more, "__dict__")
    assert [f.name for f in dataclasses.fields(SlottedMore)] == ["path", "op", "old", "items", "extra"]
    assert str(inspect.signature(Slotted)) == str(inspect.signature(RefSlotted))


def test_a_slotted_record_compiles_its_init_once() -> None:
    class Fresh(Record, slots=True):
        a: int
        b: int = 2

    placeholder = Fresh.__dict__["__init__"]
    assert Fresh(1) == Fresh(1, 2) == Fresh(a=1, b=2)
    assert Fresh.__dict__["__init__"] is not placeholder and Fresh.__init__.__qualname__.endswith("Fresh.__init__")
    compiled = Fresh.__dict__["__init__"]
    Fresh(5)
    assert Fresh.__dict__["__init__"] is compiled


def test_a_record_under_a_slotted_one_must_be_slotted() -> None:
    with pytest.raises(TypeError, match="slotted too"):
        type("Loose", (Slotted,), {"__annotations__": {"z": "int"}, "z": 0})
