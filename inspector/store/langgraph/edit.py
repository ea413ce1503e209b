"""Editing a stored LangGraph checkpoint without LangGraph: values, versions and new ids.

* ``merge_edit`` puts an edited *plain* value (what the inspector shows and the user edits)
  back over the *lossless* stored value (``decode.unpack``): every part whose plain form did
  not change keeps its stored form — msgpack extension values included — so it re-encodes
  byte-identically. Edited parts of known extension types are rebuilt in their own encoding
  (a message's ``content``, an Enum's value, a datetime's ISO text, a set's items, a
  dataclass field); anything else becomes plain msgpack data.
  A map keeps its keys' types (``{101: …}`` stays int-keyed; the display holds the keys
  as they are, ``decode.plain_key``).
* Values are compared type-exactly (``inspector.codec.exact.canonical``: ``1``, ``1.0`` and
  ``True`` differ, ``{1: …}`` is not ``{"1": …}``).
* ``runner_form`` is a plain value as JSON carries it to the graph runner, typed keys
  included.
* ``next_version`` bumps a channel version the way the SQLite/Postgres savers do.
* ``new_checkpoint_id`` makes a UUIDv6 like LangGraph's (step in the clock sequence) that
  sorts after a given id.
"""

from __future__ import annotations

import random
import secrets
import time
from typing import Any

import msgpack

from inspector.codec.exact import canonical
from inspector.store.langgraph.decode import BlobError, bytes_marker, pack, plain_key, plain_or_error, unpack

_UUID_EPOCH = 0x01B21DD213814000
_KWARGS_EXT = (2, 4, 5)      # dataclass / pydantic payloads: (module, name, fields, …)


_MISSING: Any = object()


def _same(a: Any, b: Any) -> bool:
    return a is b or canonical(a) == canonical(b)


def _payload(ext: msgpack.ExtType) -> list | None:
    try:
        payload = unpack(ext.data)
    except BlobError:
        return None
    ok = isinstance(payload, list) and len(payload) >= 3 and all(isinstance(p, str) for p in payload[:2])
    return payload if ok else None


def _rebuild(ext: msgpack.ExtType, payload: list, arg: Any) -> msgpack.ExtType:
    return msgpack.ExtType(ext.code, pack([payload[0], payload[1], arg, *payload[3:]]))


def _merge_ext(old: msgpack.ExtType, old_plain: Any, new: Any) -> Any:
    """An edited extension value rebuilt in its own encoding when its shape allows."""
    payload = _payload(old)
    if payload is None:
        return new
    type_name = f"{payload[0]}.{payload[1]}"
    arg = payload[2]
    if isinstance(old_plain, dict) and "__type__" in old_plain:
        if not isinstance(new, dict) or new.get("__type__") != type_name:
            return new
        fields = {k: v for k, v in new.items() if k != "__type__"}
        if old.code in _KWARGS_EXT and isinstance(arg, dict) and set(fields) == set(arg):
            plain_fields = {k: v for k, v in old_plain.items() if k != "__type__"}
            return _rebuild(old, payload, merge_edit(arg, plain_fields, fields))
        if old.code == 0 and set(fields) == {"value"} and set(old_plain) == {"__type__", "value"}:
            return _rebuild(old, payload, merge_edit(arg, old_plain["value"], fields["value"]))
        return new
    if old.code == 3 and isinstance(new, str) and isinstance(arg, str):      # datetime ISO text
        return _rebuild(old, payload, new)
    if old.code == 0 and isinstance(new, str) and isinstance(arg, (str, int)) \
            and isinstance(old_plain, str):                                     # UUID, Decimal, …
        return _rebuild(old, payload, new)
    if old.code == 0 and isinstance(new, list) and isinstance(arg, list):     # set, frozenset, deque
        return _rebuild(old, payload, merge_edit(arg, plain_or_error(arg), new))
    return new


def _merge_list(old: list, old_plain: list, new: list) -> list:
    """Items equal to an old item keep its stored form (deletions and moves included)."""
    pool: dict[Any, list[int]] = {}
    for i, item in enumerate(old_plain):
        pool.setdefault(canonical(item), []).append(i)
    out = []
    for i, item in enumerate(new):
        same = pool.get(canonical(item))
        if same:
            out.append(old[same.pop(0)])
        elif i < len(old):
            out.append(merge_edit(old[i], old_plain[i], item))
        else:
            out.append(item)
    return out


def _merge_map(old: dict, old_plain: dict, new: dict) -> dict | None:
    """A map's keys as stored (101 stays an int, an array key an array) and each value
    merged; None when two stored keys show as one (then ``new`` is taken as it is)."""
    stored = {plain_key(k): k for k in old}      # the key shown → the key as stored
    if len(stored) != len(old):
        return None
    out = {}
    for shown, value in new.items():
        key = stored.get(shown, _MISSING)
        if key is _MISSING:
            out[shown] = value
        else:
            out[key] = merge_edit(old[key], old_plain.get(shown), value)
    return out


def merge_edit(old: Any, old_plain: Any, new: Any) -> Any:
    """``new`` (plain) in the stored form of ``old`` (lossless) wherever it is unchanged."""
    if _same(old_plain, new):
        return old
    if isinstance(old, msgpack.ExtType):
        return _merge_ext(old, old_plain, new)
    if isinstance(old, dict) and isinstance(old_plain, dict) and isinstance(new, dict):
        merged = _merge_map(old, old_plain, new)
        if merged is not None:
            return merged
    if isinstance(old, list) and isinstance(old_plain, list) and isinstance(new, list) \
            and len(old) == len(old_plain):
        return _merge_list(old, old_plain, new)
    return new


def _runner_key(key: Any) -> Any:
    if isinstance(key, tuple):
        return [_runner_key(k) for k in key]
    return bytes_marker(key) if isinstance(key, bytes) else key


def runner_form(value: Any) -> Any:
    """A plain value as JSON carries it to the graph runner: a map with a key that is not a
    string becomes ``{"__type__": "builtins.dict", "items": [[key, value], …]}`` (a tuple key
    a list, a bytes key its ``__bytes__`` marker), which the runner's ``revive`` rebuilds with
    the keys' types — ``json.dumps`` would make ``{101: …}`` ``{"101": …}`` and keep one of
    ``1`` and ``"1"``. NaN and the infinities go as JSON's ``NaN``/``Infinity`` (Python's
    ``json`` reads them back)."""
    if isinstance(value, dict):
        if all(type(k) is str for k in value):
            return {k: runner_form(v) for k, v in value.items()}
        return {"__type__": "builtins.dict",
                "items": [[_runner_key(k), runner_form(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return [runner_form(v) for v in value]
    return value


def is_primitive(value: Any) -> bool:
    """Values PostgresSaver keeps inline in the checkpoint JSONB (others go to checkpoint_blobs)."""
    return value is None or isinstance(value, (str, int, float, bool))


def next_version(current: Any) -> str:
    """The next channel version after ``current`` (``f"{n+1:032}.{random:016}"``)."""
    if current is None:
        number = 0
    elif isinstance(current, int):
        number = current
    else:
        try:
            number = int(str(current).split(".")[0])
        except ValueError:
            number = 0
    return f"{number + 1:032}.{random.random():016}"


def _ticks(checkpoint_id: str) -> int | None:
    text = checkpoint_id.replace("-", "")
    try:
        value = int(text, 16)
    except ValueError:
        return None
    if len(text) != 32 or (value >> 76) & 0xF != 6:
        return None
    return ((value >> 96) << 28) | (((value >> 80) & 0xFFFF) << 12) | ((value >> 64) & 0x0FFF)


def new_checkpoint_id(step: int, after: str | None = None, now: float | None = None) -> str:
    """A UUIDv6 for a checkpoint at ``step`` (in the clock sequence, as LangGraph does), whose
    text sorts after ``after`` even when this machine's clock is behind."""
    ticks = int((time.time() if now is None else now) * 1e7) + _UUID_EPOCH
    floor = _ticks(after) if after else None
    if floor is not None and ticks <= floor:
        ticks = floor + 1
    value = ((ticks >> 12) & 0xFFFFFFFFFFFF) << 80
    value |= (0x6000 | (ticks & 0x0FFF)) << 64
    value |= (0x8000 | (step & 0x3FFF)) << 48
    value |= secrets.randbits(48)
    text = f"{value:032x}"
    made = f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"
    if after and made <= after:  # ``after`` is not a UUIDv6 (foreign ids): stay above it anyway
        raise ValueError(f"cannot make a checkpoint id after {after!r}")
    return made
