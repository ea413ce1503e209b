"""Rows of the native tables as model objects (no SQLAlchemy: the store preview uses them too)."""

from __future__ import annotations

import functools
import json
from collections import _tuplegetter  # type: ignore[attr-defined]  # namedtuple's own field accessor (C)
from keyword import iskeyword
from operator import attrgetter, itemgetter
from typing import Any

from inspector import limits
from inspector.errors import CorruptDataError, ResumeSpecError
from inspector.model import CheckpointInfo, RunInfo, replace
from inspector.store.sqlite_ro import DamagedText


class _Row(tuple):
    """What ``collections.namedtuple`` gives its classes, for ``row_type``'s: the methods are
    shared here instead of made per class (namedtuple compiles a ``__new__`` for each one, a
    tenth of a millisecond or more: a ``show`` met six shapes of row)."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _field_defaults: dict[str, Any] = {}

    def __new__(cls, *values: Any) -> Any:
        if len(values) != len(cls._fields):
            raise TypeError(f"Row takes {len(cls._fields)} values ({len(values)} given)")
        return tuple.__new__(cls, values)

    @classmethod
    def _make(cls, iterable: Any) -> Any:
        result = tuple.__new__(cls, iterable)
        if len(result) != len(cls._fields):
            raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")
        return result

    def _asdict(self) -> dict[str, Any]:
        return dict(zip(self._fields, self, strict=True))

    def _replace(self, **changes: Any) -> Any:
        result = self._make(map(changes.pop, self._fields, self))
        if changes:
            raise ValueError(f"Got unexpected field names: {list(changes)!r}")
        return result

    def __repr__(self) -> str:
        return "Row(" + ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self, strict=True)) + ")"

    def __getnewargs__(self) -> tuple:
        return tuple(self)


def _field_names(names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` as ``namedtuple(..., rename=True)`` renames them (``_3`` for a name that is
    not an identifier, a keyword, starts with ``_`` or repeats an earlier one)."""
    seen: set[str] = set()
    fields = []
    for index, name in enumerate(names):
        if not name.isidentifier() or iskeyword(name) or name.startswith("_") or name in seen:
            fields.append(f"_{index}")
        else:
            fields.append(name)
        seen.add(name)
    return tuple(fields)


@functools.lru_cache(maxsize=64)
def row_type(names: tuple[str, ...]) -> type[Any]:
    """A named-tuple type for rows with these columns (``namedtuple("Row", names,
    rename=True)`` in behaviour; see ``_Row``): attribute access on it is C-level, where
    SQLAlchemy's Row resolves every attribute in Python (listing 10,000 runs spent 0.35 s there)."""
    fields = _field_names(names)
    namespace: dict[str, Any] = {"__slots__": (), "_fields": fields, "__match_args__": fields,
                                 "__module__": __name__}
    for index, name in enumerate(fields):
        namespace[name] = _tuplegetter(index, f"Alias for field number {index}")
    return type("Row", (_Row,), namespace)


def json_field(text: str | None, default: Any) -> Any:
    """A JSON text column decoded (``default`` when empty); CorruptDataError when damaged."""
    if not text:
        return default
    try:
        value = json.loads(text)
    except RecursionError as err:
        raise CorruptDataError("A stored JSON field nests too deep to be read (the store is damaged).") from err
    except (ValueError, TypeError) as err:
        raise CorruptDataError(f"A stored JSON field is damaged ({err}).") from err
    if len(text) < 2 * limits.current().depth:     # each level takes two characters at least
        return value
    return limits.check_depth(value, "A stored JSON field")


TIME_MAX = 1e11          # seconds since 1970 (year 5138): a time beyond is damage
COUNT_MAX = 2**31 - 2    # counts, seqs and scores beyond this are damage (views index rows by 32-bit ints)
ID_FIELDS = ("id", "parent_id", "parent_checkpoint", "size", "size_delta")   # 64-bit columns


class _Fields:
    """Typed access to one row's columns, collecting what is wrong instead of failing."""

    def __init__(self, row: Any) -> None:
        self.row = row
        self.problems: list[str] = []

    def _bad(self, name: str, why: str) -> None:
        self.problems.append(f"{name} {why}")

    def text(self, name: str, default: str | None = "") -> Any:
        value = getattr(self.row, name, None)
        if value is None:
            return default
        if isinstance(value, DamagedText):
            self._bad(name, "is not valid UTF-8")
            return str(value)
        if not isinstance(value, str):
            self._bad(name, f"is {type(value).__name__}, not text")
            return value.hex() if isinstance(value, bytes) else str(value)
        return value

    def number(self, name: str, default: Any = 0, kind: type = int) -> Any:
        value = getattr(self.row, name, None)
        # the common cases first, as the checks below decide them (a listing makes millions)
        if kind is int:
            if type(value) is int and -COUNT_MAX <= value <= COUNT_MAX:
                return value
        elif type(value) is float and -TIME_MAX < value < TIME_MAX:
            return value
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self._bad(name, f"is {type(value).__name__}, not a number")
            return default
        if kind is float:
            value = float(value)
            if not -TIME_MAX < value < TIME_MAX:     # NaN and the infinities too
                self._bad(name, "is not a time")
                return default
            return value
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")) or value != int(value):
                self._bad(name, "is not a whole number")
                return default
            value = int(value)
        if name not in ID_FIELDS and not -COUNT_MAX <= value <= COUNT_MAX:
            self._bad(name, f"is out of range ({value})")
            return default
        return value

    def flag(self, name: str, default: bool = True) -> bool:
        value = getattr(self.row, name, None)
        if value is None:
            return default
        if not isinstance(value, (bool, int)):
            self._bad(name, f"is {type(value).__name__}, not a flag")
            return default
        return bool(value)

    def json(self, name: str, default: Any, kind: type | None = None) -> Any:
        value = getattr(self.row, name, None)
        try:
            decoded = json_field(value if not isinstance(value, DamagedText) else None, default)
        except CorruptDataError as err:
            self._bad(name, str(err).rstrip(".").replace("A stored JSON field ", ""))
            return default
        if isinstance(value, DamagedText):
            self._bad(name, "is not valid UTF-8")
        if kind is not None and decoded is not None and not isinstance(decoded, kind):
            self._bad(name, f"is a JSON {type(decoded).__name__}, not an {kind.__name__}")
            return default
        return decoded

    def digest(self, name: str) -> bytes | None:
        value = getattr(self.row, name, None)
        if type(value) is bytes and len(value) == 16:
            return value
        if value is None:
            return None
        if not isinstance(value, (bytes, bytearray, memoryview)) or len(value) != 16:
            self._bad(name, "is not a 16-byte digest")
            return None
        return bytes(value)

    def readable(self, *names: str) -> bool:
        """True when none of these columns was found damaged (so their values are the row's)."""
        return not any(p.split(" ", 1)[0] in names for p in self.problems)

    def score(self, fields: dict[str, Any], done: str, total: str) -> None:
        """A score (``done`` of ``total``) that no task state gives — a negative count, more
        done than there are — is damage, shown as 0/0."""
        if self.readable(done, total) and not 0 <= fields[done] <= fields[total]:
            self._bad(done, f"is {fields[done]} of {total} {fields[total]}, not a score")
            fields.update({done: 0, total: 0})

    def natural(self, fields: dict[str, Any], *names: str) -> None:
        """A size or count below zero is damage, shown as 0."""
        for name in names:
            if fields[name] < 0 and self.readable(name):
                self._bad(name, f"is negative ({fields[name]})")
                fields[name] = 0

    @property
    def damaged(self) -> str:
        """'' or the reasons this row is damaged, for the user."""
        return "; ".join(self.problems)


# frozen dataclasses built without their __init__ (a listing of 100,000 checkpoints spent a
# third of its time in its ``__setattr__``s): every field given, the instance dict set at once
_new = object.__new__
_set = object.__setattr__
_RUN_NAMES = RunInfo.__match_args__
_RUN_VALUES = attrgetter(*(n for n in _RUN_NAMES if n != "damaged"))


def run_from_row(row: Any) -> RunInfo:
    """A RunInfo from a ci_runs row; a damaged row still gives one, with ``damaged`` saying why."""
    try:
        (ident, name, agent, status, created, updated, count, head, host, pid, beat, epoch, resumable,
         reason, spec, parent, parent_cp, fork_reason, labels, error, td, tt, cp, ct) = _RUN_VALUES(row)
    except AttributeError:
        return _run_from_fields(row)
    m, t = COUNT_MAX, TIME_MAX
    # the common case, decided as _Fields decides it (anything else: the full check below)
    if not (type(ident) is str and type(name) is str and type(agent) is str and type(status) is str
            and type(created) is float and -t < created < t and type(updated) is float and -t < updated < t
            and type(count) is int and 0 <= count <= m and type(head) is int and -m <= head <= m
            and (host is None or type(host) is str) and (pid is None or (type(pid) is int and -m <= pid <= m))
            and (beat is None or (type(beat) is float and -t < beat < t))
            and type(epoch) is int and -m <= epoch <= m and type(resumable) in (int, bool)
            and (reason is None or type(reason) is str) and (spec is None or type(spec) is str)
            and (parent is None or type(parent) is str) and (parent_cp is None or type(parent_cp) is int)
            and (fork_reason is None or type(fork_reason) is str) and (labels is None or type(labels) is str)
            and (error is None or type(error) is str) and type(td) is int and -m <= td <= m
            and type(tt) is int and -m <= tt <= m and type(cp) is int and -m <= cp <= m
            and type(ct) is int and -m <= ct <= m
            and head == count - 1 and 0 <= td <= tt and 0 <= cp <= ct):
        return _run_from_fields(row)
    try:
        labels = json_field(labels, {})
        spec = json_field(spec, None)
    except CorruptDataError:
        return _run_from_fields(row)
    if type(labels) is not dict or not (spec is None or type(spec) is dict):
        return _run_from_fields(row)
    obj: Any = _new(RunInfo)
    _set(obj, "__dict__", {
        "id": ident, "name": name, "agent": agent, "status": status, "created": created, "updated": updated,
        "checkpoint_count": count, "head_seq": head, "owner_host": host, "owner_pid": pid, "heartbeat": beat,
        "epoch": epoch, "resumable": bool(resumable), "not_resumable_reason": reason, "resume_spec": spec,
        "parent_run": parent, "parent_checkpoint": parent_cp, "fork_reason": fork_reason, "labels": labels,
        "last_error": error, "tasks_done": td, "tasks_total": tt, "checks_passed": cp, "checks_total": ct,
        "damaged": ""})
    return obj


def _run_from_fields(row: Any) -> RunInfo:
    """``run_from_row`` checking every field."""
    f = _Fields(row)
    fields = dict(
        id=f.text("id"), name=f.text("name"), agent=f.text("agent"), status=f.text("status"),
        created=f.number("created", 0.0, float), updated=f.number("updated", 0.0, float),
        checkpoint_count=f.number("checkpoint_count"), head_seq=f.number("head_seq", -1),
        owner_host=f.text("owner_host", None), owner_pid=f.number("owner_pid", None),
        heartbeat=f.number("heartbeat", None, float), epoch=f.number("epoch"),
        resumable=f.flag("resumable"), not_resumable_reason=f.text("not_resumable_reason", None),
        resume_spec=f.json("resume_spec", None, dict), parent_run=f.text("parent_run", None),
        parent_checkpoint=f.number("parent_checkpoint", None), fork_reason=f.text("fork_reason", None),
        labels=f.json("labels", {}, dict), last_error=f.text("last_error", None),
        tasks_done=f.number("tasks_done"), tasks_total=f.number("tasks_total"),
        checks_passed=f.number("checks_passed"), checks_total=f.number("checks_total"))
    f.natural(fields, "checkpoint_count")
    if fields["head_seq"] < -1 and f.readable("head_seq"):
        f._bad("head_seq", f"is out of range ({fields['head_seq']})")
        fields["head_seq"] = -1
    elif f.readable("checkpoint_count", "head_seq") and fields["head_seq"] != fields["checkpoint_count"] - 1:
        # the writer, prune and a lane keep a run's seqs 0 … count - 1
        f._bad("checkpoint_count", f"is {fields['checkpoint_count']} but head_seq is {fields['head_seq']}")
    f.score(fields, "tasks_done", "tasks_total")
    f.score(fields, "checks_passed", "checks_total")
    info = RunInfo(**fields)
    return replace(info, damaged=f.damaged) if f.problems else info


def miscounted(run: RunInfo) -> bool:
    """True when the run's row says its checkpoint count or head impossibly (the store then
    counts its checkpoint rows: ``recount``)."""
    return bool(run.damaged) and any(p.startswith(("checkpoint_count ", "head_seq "))
                                     for p in run.damaged.split("; "))


def recount(run: RunInfo, count: int, last: int | None) -> RunInfo:
    """``run`` with the checkpoint count and head its checkpoint rows give (``count`` rows,
    the last readable seq ``last``): a row whose counters contradict them is damaged, and the
    rows are the truth (every checkpoint stays reachable as RUN:N and RUN:-1)."""
    head = last if type(last) is int else -1
    if (run.checkpoint_count, run.head_seq) == (count, head):
        return run
    said = "" if miscounted(run) else (f"checkpoint_count is {run.checkpoint_count} and head_seq "
                                       f"{run.head_seq}, but ")
    stored = f"{count} checkpoint is stored" if count == 1 else f"{count} checkpoints are stored"
    truth = said + stored + (f", the last #{head}" if head >= 0 else "")
    return replace(run, checkpoint_count=count, head_seq=head,
                   damaged="; ".join(p for p in (run.damaged, truth) if p))


_CHECKPOINT_FIELDS = ("id", "run_id", "seq", "kind", "name", "created", "parent_id", "size", "size_delta", "ops",
                      "tasks_done", "tasks_total", "checks_passed", "checks_total", "change", "state_hash",
                      "tasks_hash")


def _fast_checkpoint(values: tuple, branches: dict | None) -> CheckpointInfo | None:
    """The CheckpointInfo of a row's ``_CHECKPOINT_FIELDS`` in the common case, decided as
    _Fields decides it; None for anything else (the full check then says what is wrong)."""
    (ident, run_id, seq, kind, name, created, parent, size, size_delta, ops, td, tt, cp, ct, change,
     state_hash, tasks_hash) = values
    m, t = COUNT_MAX, TIME_MAX
    if not (type(ident) is int and type(run_id) is str and type(seq) is int and -m <= seq <= m
            and type(kind) is str and type(name) is str and type(created) is float and -t < created < t
            and (parent is None or type(parent) is int) and type(size) is int and type(size_delta) is int
            and type(ops) is int and -m <= ops <= m and type(td) is int and -m <= td <= m
            and type(tt) is int and -m <= tt <= m and type(cp) is int and -m <= cp <= m
            and type(ct) is int and -m <= ct <= m and type(change) is str
            and type(state_hash) is bytes and len(state_hash) == 16
            and (tasks_hash is None or (type(tasks_hash) is bytes and len(tasks_hash) == 16))
            and size >= 0 and ops >= 0 and 0 <= td <= tt and 0 <= cp <= ct):
        return None
    obj: Any = _new(CheckpointInfo)
    _set(obj, "__dict__", {
        "id": ident, "run_id": run_id, "seq": seq, "kind": kind, "name": name, "created": created,
        "parent_id": parent, "size": size, "size_delta": size_delta, "ops": ops, "tasks_done": td,
        "tasks_total": tt, "checks_passed": cp, "checks_total": ct, "change": change, "state_hash": state_hash,
        "tasks_hash": tasks_hash, "lane": "", "branch_count": branches.get(ident, 0) if branches else 0,
        "damaged": "", "pinned": False})
    return obj


_CHECKPOINT_VALUES = attrgetter(*_CHECKPOINT_FIELDS)


def checkpoint_from_row(row: Any, branches: dict | None = None) -> CheckpointInfo:
    """A CheckpointInfo from a ci_checkpoints row (meta not needed); a damaged row still gives
    one, with ``damaged`` saying why."""
    try:
        values = _CHECKPOINT_VALUES(row)
    except AttributeError:
        return _checkpoint_from_fields(row, branches)
    return _fast_checkpoint(values, branches) or _checkpoint_from_fields(row, branches)


def checkpoints_from_tuples(names: tuple[str, ...], rows: list[tuple], branches: dict | None = None
                            ) -> list[CheckpointInfo]:
    """``checkpoint_from_row`` of many plain rows with columns ``names`` (a listing: no named
    tuple per row but for a damaged one)."""
    if not set(_CHECKPOINT_FIELDS) <= set(names):
        make = row_type(names)._make
        return [_checkpoint_from_fields(make(row), branches) for row in rows]
    values = itemgetter(*(names.index(n) for n in _CHECKPOINT_FIELDS))
    fast = _fast_checkpoint
    out = []
    for row in rows:
        info = fast(values(row), branches)
        if info is None:
            info = _checkpoint_from_fields(row_type(names)._make(row), branches)
        out.append(info)
    return out


def _checkpoint_from_fields(row: Any, branches: dict | None = None) -> CheckpointInfo:
    """``checkpoint_from_row`` checking every field."""
    f = _Fields(row)
    ident = f.number("id", 0)
    fields = dict(
        id=ident, run_id=f.text("run_id"), seq=f.number("seq", -1), kind=f.text("kind"), name=f.text("name"),
        created=f.number("created", 0.0, float), parent_id=f.number("parent_id", None),
        size=f.number("size"), size_delta=f.number("size_delta"), ops=f.number("ops", 1),
        tasks_done=f.number("tasks_done"), tasks_total=f.number("tasks_total"),
        checks_passed=f.number("checks_passed"), checks_total=f.number("checks_total"),
        change=f.text("change") or "", state_hash=f.digest("state_hash"), tasks_hash=f.digest("tasks_hash"),
        branch_count=(branches or {}).get(ident, 0))
    f.natural(fields, "size", "ops")
    f.score(fields, "tasks_done", "tasks_total")
    f.score(fields, "checks_passed", "checks_total")
    if fields["state_hash"] is None and "state_hash" not in " ".join(f.problems):
        f._bad("state_hash", "is missing")
    info = CheckpointInfo(**fields)
    return replace(info, damaged=f.damaged) if f.problems else info

def check_spec(spec: object) -> dict:
    """``spec`` itself when it is a well-formed resume spec (``argv`` a non-empty list of
    strings, ``cwd`` a string, ``env`` a map of strings to strings, ``inherit`` a list of
    strings); ResumeSpecError saying what is wrong otherwise. Checked when a spec is written
    and again when one is read (a stored argv that is a string must not run letter by letter)."""
    if not isinstance(spec, dict):
        raise ResumeSpecError("The resume spec is not an object.")
    argv = spec.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise ResumeSpecError("The resume spec's argv is not a non-empty list of strings.")
    if not isinstance(spec.get("cwd", ""), str):
        raise ResumeSpecError("The resume spec's cwd is not a string.")
    env = spec.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ResumeSpecError("The resume spec's env is not a map of strings to strings.")
    inherit = spec.get("inherit") or []
    if not isinstance(inherit, list) or not all(isinstance(k, str) for k in inherit):
        raise ResumeSpecError("The resume spec's inherit is not a list of names.")
    return spec
