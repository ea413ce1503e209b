"""Frozen value objects that cross layers: store info, runs, checkpoints, snapshots."""

from __future__ import annotations

import _thread
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast, dataclass_transform

if TYPE_CHECKING:
    from dataclasses import Field

_T = TypeVar("_T")
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
    """``__dataclass_fields__``, ``__dataclass_params__`` and ``__signature__`` of a record, made
    the first time they are asked for (by ``dataclasses.fields``, ``replace``, ``asdict``,
    ``is_dataclass``, ``inspect.signature`` …): the same class declared as a frozen dataclass
    gives them, so they are dataclasses' own objects."""

    def __init__(self, attr: str) -> None:
        self.attr = attr

    def __get__(self, obj: object, owner: type) -> Any:
        import dataclasses
        cls = cast("type[Record]", owner)
        ns: dict[str, Any] = {"__annotations__": dict(cls._field_types), "__module__": cls.__module__,
                              "__qualname__": cls.__qualname__, **cls._field_defaults}
        for name, factory in cls._field_factories.items():
            ns[name] = dataclasses.field(default_factory=factory)
        twin: Any = dataclasses.dataclass(frozen=True)(type(cls.__name__, (), ns))
        import inspect
        made = {"__dataclass_fields__": twin.__dataclass_fields__, "__dataclass_params__": twin.__dataclass_params__,
                "__signature__": inspect.signature(twin)}
        for attr, value in made.items():
            type.__setattr__(cls, attr, value)
        return made[self.attr]


_repr_running: set[tuple[int, int]] = set()
_set = object.__setattr__


class _RecordType(type):
    """Makes a ``Record`` subclass's fields from its annotations as ``@dataclass`` would, in one
    pass over them (no code compiled; ``slots=True`` declares ``__slots__`` in the class made)."""

    def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any], slots: bool = False) -> _RecordType:
        if not any(isinstance(base, _RecordType) for base in bases):   # Record itself
            return super().__new__(mcls, name, bases, ns)
        types: dict[str, Any] = {}
        defaults: dict[str, Any] = {}
        factories: dict[str, Callable[[], Any]] = {}
        for base in reversed(bases):   # inherited fields first, as dataclasses orders them
            types.update(getattr(base, "_field_types", {}))
            defaults.update(getattr(base, "_field_defaults", {}))
            factories.update(getattr(base, "_field_factories", {}))
        for field_name, kind in ns.get("__annotations__", {}).items():
            if str(kind).startswith(("ClassVar", "typing.ClassVar")):
                continue
            types[field_name] = kind
            value = ns.get(field_name, _MISSING)
            defaults.pop(field_name, None)
            factories.pop(field_name, None)
            if isinstance(value, _Factory):
                factories[field_name] = value.factory
                del ns[field_name]
            elif value is not _MISSING:
                defaults[field_name] = value
                if slots:
                    del ns[field_name]    # a slot and a class attribute cannot share a name
        names = tuple(types)
        required = [n for n in names if n not in defaults and n not in factories]
        if required and names.index(required[-1]) >= len(required):
            raise TypeError(f"non-default argument {required[-1]!r} follows default argument")
        if slots:
            ns["__slots__"] = tuple(n for n in names if n not in getattr(bases[0], "_field_names", ()))
            ns.setdefault("__init__", _compiled_init_on_first_call)
        elif any(getattr(b, "_field_slots", False) for b in bases):
            raise TypeError(f"{name}: a record under a slotted record is slotted too (slots=True)")
        ns.update(_field_names=names, _field_slots=slots, _field_types=types, _field_defaults=defaults,
                  _field_factories=factories, __match_args__=names,
                  __dataclass_fields__=_DataclassAttr("__dataclass_fields__"),
                  __dataclass_params__=_DataclassAttr("__dataclass_params__"),
                  __signature__=_DataclassAttr("__signature__"),
                  _field_values=(attrgetter(*names) if len(names) > 1 else
                                 (lambda o: (getattr(o, names[0]),)) if names else (lambda o: ())))
        return super().__new__(mcls, name, bases, ns)

    def __init__(cls, name: str, bases: tuple[type, ...], ns: dict[str, Any], slots: bool = False) -> None:
        super().__init__(name, bases, ns)


def _compiled_init_on_first_call(self: Any, *args: Any, **kwargs: Any) -> None:
    """A slotted record's ``__init__``, compiled when the class is first instantiated (as
    ``@dataclass`` compiles it at import): its instances are built in hot loops (a diff's
    changes), where one generic ``__init__`` would take twice as long."""
    cls = type(self)
    params, body = [], []
    for name in cls._field_names:
        if name in cls._field_defaults:
            params.append(f"{name}=_defaults[{name!r}]")
        elif name in cls._field_factories:
            params.append(f"{name}=_MISSING")
            body.append(f"    if {name} is _MISSING: {name} = _factories[{name!r}]()")
        else:
            params.append(name)
        body.append(f"    _set(self, {name!r}, {name})")
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"
    scope: dict[str, Any] = {"_set": _set, "_MISSING": _MISSING, "_defaults": dict(cls._field_defaults),
                             "_factories": dict(cls._field_factories)}
    exec(source, scope)   # the source is made above from the class's own field names
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    type.__setattr__(cls, "__init__", init)   # every slotted record declares its own placeholder
    init(self, *args, **kwargs)


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class Record(metaclass=_RecordType):
    """A frozen dataclass, declared as one (annotated fields, defaults, ``field(default_factory=…)``;
    ``class X(Record, slots=True)`` for ``@dataclass(frozen=True, slots=True)``) by subclassing,
    whose methods are not compiled at every import.

    A frozen dataclass compiles its ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
    ``__setattr__`` and ``__delattr__`` from source each time its module is imported (about
    0.4 ms a class, twice that with slots, which makes the class twice; every command paid that
    for the model's types, and the import of ``dataclasses`` with ``inspect``, ``ast`` and
    ``dis``, about 4 ms more). A record behaves the same: keyword or positional ``__init__`` in
    field order, equality and hash over the fields, the dataclass ``repr``,
    ``dataclasses.FrozenInstanceError`` on assignment, copies and pickles; and
    ``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass`` work on it (its
    ``__dataclass_fields__`` are made, by dataclasses itself, when first asked for).
    """

    __slots__ = ()
    _field_names: ClassVar[tuple[str, ...]]
    _field_types: ClassVar[dict[str, Any]]
    _field_defaults: ClassVar[dict[str, Any]]
    _field_factories: ClassVar[dict[str, Callable[[], Any]]]
    _field_values: ClassVar[Callable[[Any], tuple]]
    _field_slots: ClassVar[bool]
    if TYPE_CHECKING:
        __match_args__: ClassVar[tuple[str, ...]]
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

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
        _set(self, "__dict__", values)

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

    def __getstate__(self) -> Any:
        return dict(zip(self._field_names, type(self)._field_values(self)))

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():   # copies and pickles of a frozen record
            _set(self, name, value)


_R = TypeVar("_R", bound=Record)   # the class, not its name: see inspector/limits.py


def replace(record: _R, /, **changes: Any) -> _R:
    """``dataclasses.replace`` for a record, without importing dataclasses."""
    return type(record)(**{**dict(zip(record._field_names, type(record)._field_values(record))), **changes})


RUN_STATUSES = ("running", "completed", "failed", "crashed", "interrupted", "stuck", "forked")


def parse_statuses(parts: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Run statuses as ``--status`` takes them (repeated, or comma-separated); StoreError (one
    sentence) for a word that is none."""
    statuses = tuple(s.strip() for part in parts for s in part.split(",") if s.strip())
    unknown = [s for s in statuses if s not in RUN_STATUSES]
    if unknown:
        from inspector.errors import StoreError
        raise StoreError(f"{unknown[0]!r} is not a run status (use {', '.join(RUN_STATUSES)}).")
    return statuses
ACTIVE_STATUSES = ("running", "stuck", "crashed")   # runs whose owner may still be at work


def ownerless_running(run: RunInfo) -> bool:
    """A run its store says is running that no process ever claimed (no owner, no heartbeat):
    a thread of a LangGraph database or a framework's session, "running" only because it was
    written lately (its adapter decides for how long). No owner of it can be gone or silent."""
    return run.status == "running" and run.owner_pid is None and run.heartbeat is None
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
    """What changed in a store since a cursor: runs touched and checkpoints added, and
    whether rows were deleted (``removed``: a prune or a deleted run): then runs shown may be
    gone and a run's checkpoints fewer or numbered anew, so what is shown is read again."""

    cursor: Any
    run_ids: tuple[str, ...] = ()
    new_checkpoints: tuple[CheckpointInfo, ...] = ()
    removed: bool = False

    @property
    def empty(self) -> bool:
        """True when nothing changed."""
        return not self.run_ids and not self.new_checkpoints and not self.removed
