"""Frozen value objects that cross layers: store info, runs, checkpoints, snapshots."""

from __future__ import annotations

import _thread
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast, dataclass_transform

if TYPE_CHECKING:
    from dataclasses import Field

_T = TypeVar("_T")
_R = TypeVar("_R", bound="Record")
_MISSING: Any = object()


class _Factory:
    """A field's default factory, as ``field(default_factory=…)`` declares it."""

    __slots__ = ("factory",)

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory


def field(*, default_factory: Callable[[], _T]) -> _T:
    """A field whose default is made by ``default_factory`` for each instance (as in dataclasses)."""
    return cast(_T, _Factory(default_factory))


class _DataclassAttr:
    """``__dataclass_fields__`` / ``__dataclass_params__`` of a record, made the first time they
    are asked for (by ``dataclasses.fields``, ``replace``, ``asdict``, ``is_dataclass`` …): the
    same class declared as a frozen dataclass gives them, so they are dataclasses' own objects."""

    def __init__(self, attr: str) -> None:
        self.attr = attr

    def __get__(self, obj: object, owner: type) -> Any:
        import dataclasses
        cls = cast("type[Record]", owner)
        ns: dict[str, Any] = {"__annotations__": dict(cls._field_types), "__module__": cls.__module__,
                              "__qualname__": cls.__qualname__, **cls._field_defaults}
        for name, factory in cls._field_factories.items():
            ns[name] = dataclasses.field(default_factory=factory)
        twin: type = dataclasses.dataclass(frozen=True)(type(cls.__name__, (), ns))
        for attr in ("__dataclass_fields__", "__dataclass_params__"):
            setattr(cls, attr, getattr(twin, attr))
        return getattr(twin, self.attr)


_repr_running: set[tuple[int, int]] = set()


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class Record:
    """A frozen dataclass, declared as one (annotated fields, defaults, ``field(default_factory=…)``)
    by subclassing, whose methods are not compiled at every import.

    A frozen dataclass compiles its ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
    ``__setattr__`` and ``__delattr__`` from source each time its module is imported (about
    0.4 ms a class; every command paid that for the model's types, and the import of
    ``dataclasses`` with ``inspect``, ``ast`` and ``dis``, about 4 ms more). A record behaves
    the same: keyword or positional ``__init__`` in field order, equality and hash over the
    fields, the dataclass ``repr``, ``dataclasses.FrozenInstanceError`` on assignment; and
    ``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass`` work on it (its
    ``__dataclass_fields__`` are made, by dataclasses itself, when first asked for).
    """

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()
    _field_names: ClassVar[tuple[str, ...]] = ()
    _field_types: ClassVar[dict[str, Any]] = {}
    _field_defaults: ClassVar[dict[str, Any]] = {}
    _field_factories: ClassVar[dict[str, Callable[[], Any]]] = {}
    _field_values: ClassVar[Callable[[Any], tuple]]
    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        types = dict(cls._field_types)
        defaults = dict(cls._field_defaults)
        factories = dict(cls._field_factories)
        for name, kind in cls.__dict__.get("__annotations__", {}).items():
            if str(kind).startswith(("ClassVar", "typing.ClassVar")):
                continue
            types[name] = kind
            value = cls.__dict__.get(name, _MISSING)
            defaults.pop(name, None)
            factories.pop(name, None)
            if isinstance(value, _Factory):
                factories[name] = value.factory
                delattr(cls, name)
            elif value is not _MISSING:
                defaults[name] = value
        names = tuple(types)
        required = [n for n in names if n not in defaults and n not in factories]
        if required and names.index(required[-1]) >= len(required):
            raise TypeError(f"non-default argument {required[-1]!r} follows default argument")
        cls._field_names, cls._field_types = names, types
        cls._field_defaults, cls._field_factories = defaults, factories
        type.__setattr__(cls, "__match_args__", names)
        for attr in ("__dataclass_fields__", "__dataclass_params__"):   # each class its own
            type.__setattr__(cls, attr, _DataclassAttr(attr))
        cls._field_values = (attrgetter(*names) if len(names) > 1 else
                             (lambda o: (getattr(o, names[0]),)) if names else (lambda o: ()))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        names = self._field_names
        values = dict(zip(names, args))
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}() takes {len(names)} arguments but {len(args)} were given")
        if len(values) < len(names) or kwargs:
            for name in names[len(args):]:
                if name in kwargs:
                    values[name] = kwargs.pop(name)
                elif name in self._field_defaults:
                    values[name] = self._field_defaults[name]
                elif name in self._field_factories:
                    values[name] = self._field_factories[name]()
                else:
                    raise TypeError(f"{type(self).__name__}() missing required argument: {name!r}")
            if kwargs:
                name = next(iter(kwargs))
                raise TypeError(f"{type(self).__name__}() got multiple values for argument {name!r}"
                                if name in names else
                                f"{type(self).__name__}() got an unexpected keyword argument {name!r}")
        object.__setattr__(self, "__dict__", values)

    def __repr__(self) -> str:
        key = (id(self), _thread.get_ident())
        if key in _repr_running:
            return "..."
        _repr_running.add(key)
        try:
            return (f"{type(self).__qualname__}("
                    f"{', '.join(f'{name}={value!r}' for name, value in zip(self._field_names, type(self)._field_values(self)))})")
        finally:
            _repr_running.discard(key)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(type(self)._field_values(self) == type(self)._field_values(other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(type(self)._field_values(self))

    def __setattr__(self, name: str, value: Any) -> None:
        from dataclasses import FrozenInstanceError
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        from dataclasses import FrozenInstanceError
        raise FrozenInstanceError(f"cannot delete field {name!r}")


def replace(record: _R, /, **changes: Any) -> _R:
    """``dataclasses.replace`` for a record, without importing dataclasses."""
    return type(record)(**{**record.__dict__, **changes})

RUN_STATUSES = ("running", "completed", "failed", "crashed", "interrupted", "stuck", "forked")
ACTIVE_STATUSES = ("running", "stuck", "crashed")   # runs whose owner may still be at work
CHECKPOINT_KINDS = ("input", "llm", "tool", "step", "fork", "resume", "final", "update", "loop")


class Capability(Record):
    """Whether a store's adapter offers one action; ``reason`` says why not (one sentence),
    or, when offered, how it is done (e.g. "through the crewai package in your environment")."""

    available: bool
    reason: str = ""


OFFERED = Capability(True)


class Capabilities(Record):
    """The optional actions a store adapter declares: fork, resume, live updates.

    The GUI and CLI offer exactly these; an action that is absent says ``reason``.
    """

    fork: Capability = Capability(False, "This kind of store cannot be forked from here.")
    resume: Capability = Capability(False, "This kind of store cannot be resumed from here.")
    live: Capability = Capability(False, "This kind of store does not report changes.")

    def get(self, action: str) -> Capability:
        """The capability named ``action`` ("fork", "resume" or "live")."""
        return getattr(self, action)


NATIVE_CAPABILITIES = Capabilities(OFFERED, OFFERED, OFFERED)
LANGGRAPH_CAPABILITIES = Capabilities(
    Capability(True, "A raw fork here, or through your graph (update_state) when one is set."),
    Capability(True, "Through your graph (module:attr), run in your environment."),
    OFFERED)


class StoreInfo(Record):
    """What is open: a display name, its kind and backend, whether it is read-only, and what
    its adapter can do (``capabilities``; ``label`` is the kind's name for people)."""

    url: str
    display: str
    kind: str  # "native" | "langgraph" | "openai-agents" | "crewai" | "google-adk" | a third party's
    backend: str  # "sqlite" | "postgresql" | "folder"
    format_version: int | None
    read_only: bool
    notice: str = ""  # what the user should know about how it is read ('' when nothing)
    capabilities: Capabilities = Capabilities()
    label: str = ""


class RunInfo(Record):
    """One run (a LangGraph thread) as listed: identity, status, owner, lineage and score."""

    id: str
    name: str
    agent: str
    status: str
    created: float
    updated: float
    checkpoint_count: int = 0
    head_seq: int = -1
    owner_host: str | None = None
    owner_pid: int | None = None
    heartbeat: float | None = None
    epoch: int = 0
    resumable: bool = True
    not_resumable_reason: str | None = None
    resume_spec: dict | None = None
    parent_run: str | None = None
    parent_checkpoint: int | str | None = None
    fork_reason: str | None = None
    labels: dict = field(default_factory=dict)
    last_error: str | None = None
    tasks_done: int = 0
    tasks_total: int = 0
    checks_passed: int = 0
    checks_total: int = 0
    damaged: str = ""  # why this row is damaged ('' when it is not); the rest still lists

    @property
    def score(self) -> tuple[int, int]:
        """Cumulative binary score: (checks passed, checks total)."""
        return (self.checks_passed, self.checks_total)


class CheckpointInfo(Record):
    """One checkpoint as listed in a timeline (no state loaded)."""

    id: int | str
    run_id: str
    seq: int
    kind: str
    name: str
    created: float
    parent_id: int | str | None = None
    size: int = 0
    size_delta: int = 0
    ops: int = 1
    tasks_done: int = 0
    tasks_total: int = 0
    checks_passed: int = 0
    checks_total: int = 0
    change: str = ""
    state_hash: bytes | None = None
    tasks_hash: bytes | None = None
    lane: str = ""  # subgraph namespace ("" for the main lane)
    branch_count: int = 0  # runs forked from this checkpoint (or LangGraph children - 1)
    damaged: str = ""  # why this row is damaged ('' when it is not); the rest still lists
    pinned: bool = False   # prune never removes it (native stores: ``ci_pins``)


class Snapshot(Record):
    """One checkpoint with its decoded state, task state and metadata."""

    info: CheckpointInfo
    state: Any
    tasks: dict | None
    meta: dict = field(default_factory=dict)
    problems: tuple[str, ...] = ()  # parts that could not be read (a damaged task state…)


class ChangeSet(Record):
    """What changed in a store since a cursor: runs touched and checkpoints added."""

    cursor: Any
    run_ids: tuple[str, ...] = ()
    new_checkpoints: tuple[CheckpointInfo, ...] = ()

    @property
    def empty(self) -> bool:
        """True when nothing changed."""
        return not self.run_ids and not self.new_checkpoints
