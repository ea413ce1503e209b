"""Display forms of LangGraph's msgpack extension types (codes 0–7), read without running code.

LangGraph encodes a non-JSON object as an ext whose payload is itself msgpack:
``(module, name, arg…)``. LangGraph's own reader imports ``module`` and calls ``name`` —
the remote-code-execution hazard. Here the names are only *compared* against a fixed table
of harmless types to choose a friendly form; nothing named in the data is imported or called.

Forms (all JSON-able):

* datetime / date / time → ``{"__type__": "datetime.datetime", "value": ISO text}`` (and
  ``datetime.date`` / ``datetime.time``); timedelta → ``{"__type__": "datetime.timedelta",
  "value": str(td)}`` (``"1 day, 0:00:30.000005"``); UUID, Decimal, ip addresses, ZoneInfo →
  ``{"__type__": "uuid.UUID", "value": text}`` and so on — typed, never plain strings, so the
  type column, ``--json`` and an edit that goes back keep the type. Path → text; set /
  frozenset → ``{"__type__": "builtins.set", "value": [items]}`` (items in ``set_order``:
  numbers by value, then the rest by their JSON text — a set has no order of its own);
  deque → list.
* dataclasses, namedtuples, pydantic models (LangChain messages, ``Interrupt``…), i.e. ext
  2, 4 and 5 → ``{"__type__": "module.Name", **fields}``.
* other ext 0/1 (Enum, custom constructors) → ``{"__type__": "module.Name", "value": arg}``.
* ext 6 numpy → ``{"__type__": "numpy.ndarray", "dtype", "shape", "order", "nbytes",
  "values"}``: ``values`` nested by ``shape`` (numbers and booleans, read from the buffer with
  ``struct``), at most ``NUMPY_PREVIEW_ITEMS`` of them — a larger array gives its first
  ones in memory order, flat, with ``"truncated": true``; dtypes other than bool/int/uint/
  float give no values and a ``note``.
* ext 7 delta-channel snapshot → ``{"__delta_snapshot__": value}``.
* unknown code → ``{"__ext__": code, "__bytes__": base64, "note"}``; a malformed payload →
  ``{"__ext__": code, "__error__": reason}``.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import struct
from typing import Any
from collections.abc import Callable

EXT_NAMES = {0: "constructor (single arg)", 1: "constructor (positional args)",
             2: "constructor (keyword args)", 3: "method call", 4: "pydantic v1 model",
             5: "pydantic v2 model", 6: "numpy array", 7: "delta-channel snapshot"}
LIST_TYPES = {("collections", "deque")}
SET_TYPES = {("builtins", "set"), ("builtins", "frozenset")}
TEXT_TYPES = {("uuid", "UUID"), ("decimal", "Decimal"), ("zoneinfo", "ZoneInfo"),
              ("ipaddress", "IPv4Address"), ("ipaddress", "IPv4Interface"),
              ("ipaddress", "IPv4Network"), ("ipaddress", "IPv6Address"),
              ("ipaddress", "IPv6Interface"), ("ipaddress", "IPv6Network")}
PATH_MODULES = {"pathlib", "pathlib._local"}
SECRET_MASK = "**********"
NUMPY_PREVIEW_ITEMS = 1000   # values of a numpy array shown (the first ones, flat, beyond that)

Unpack = Callable[[bytes], Any]
Plain = Callable[[Any], Any]


def _raw(code: int, data: bytes, note: str) -> dict:
    return {"__ext__": code, "__bytes__": base64.b64encode(data).decode("ascii"),
            "size": len(data), "note": note}


def _named(payload: Any, arity: int) -> tuple[str, str] | None:
    ok = (isinstance(payload, (list, tuple)) and len(payload) >= arity
          and isinstance(payload[0], str) and isinstance(payload[1], str))
    return (payload[0], payload[1]) if ok else None


def _typed(name: tuple[str, str], fields: Any, plain: Plain) -> dict:
    type_name = f"{name[0]}.{name[1]}"
    if isinstance(fields, dict) and all(isinstance(k, str) for k in fields):
        body = {k: plain(v) for k, v in fields.items() if k != "__type__"}
        return {"__type__": type_name, **body}
    return {"__type__": type_name, "value": plain(fields)}


def tagged(type_name: str, value: Any) -> dict:
    """A typed scalar's display form."""
    return {"__type__": type_name, "value": value}


def _uuid_text(arg: Any) -> Any:
    if isinstance(arg, str) and len(arg) == 32:
        try:
            int(arg, 16)
        except ValueError:
            return arg
        return f"{arg[:8]}-{arg[8:12]}-{arg[12:16]}-{arg[16:20]}-{arg[20:]}"
    return arg


def _set_key(item: Any) -> tuple:
    if isinstance(item, (int, float)) and not isinstance(item, bool):
        return (0, item, "")
    return (1, 0, json.dumps(item, sort_keys=True, default=str))


def set_order(items: list) -> list:
    """A set's items in the order shown: numbers ascending, then everything else by JSON text."""
    return sorted(items, key=_set_key)


def _single(name: tuple[str, str], arg: Any, plain: Plain) -> Any:
    if name in SET_TYPES and isinstance(arg, (list, tuple)):
        return tagged(f"{name[0]}.{name[1]}", set_order([plain(a) for a in arg]))
    if name in LIST_TYPES:
        return plain(list(arg)) if isinstance(arg, (list, tuple)) else plain(arg)
    if name == ("uuid", "UUID"):
        return tagged("uuid.UUID", _uuid_text(arg))
    if name in TEXT_TYPES and isinstance(arg, (str, int)):
        return tagged(f"{name[0]}.{name[1]}", str(arg))
    if "Secret" in name[1]:
        return {"__type__": f"{name[0]}.{name[1]}", "value": SECRET_MASK}
    return {"__type__": f"{name[0]}.{name[1]}", "value": plain(arg)}


def _ints(args: Any, count: int) -> list[int] | None:
    ok = (isinstance(args, (list, tuple)) and len(args) == count
          and all(isinstance(a, int) and not isinstance(a, bool) for a in args))
    return list(args) if ok else None


def _positional(name: tuple[str, str], args: Any, plain: Plain) -> Any:
    if name[0] in PATH_MODULES and isinstance(args, (list, tuple)) and all(isinstance(a, str) for a in args):
        parts = list(args)
        if not parts:
            return "."
        head = parts[0] if parts[0].endswith(("/", "\\")) else parts[0] + "/"
        return head + "/".join(parts[1:]) if len(parts) > 1 else parts[0]
    if name == ("datetime", "date") and (ymd := _ints(args, 3)):
        try:
            return tagged("datetime.date", dt.date(*ymd).isoformat())
        except ValueError:
            pass
    if name == ("datetime", "timedelta") and (dsu := _ints(args, 3)):
        try:
            return tagged("datetime.timedelta", str(dt.timedelta(*dsu)))
        except OverflowError:
            pass
    if name == ("re", "compile") and isinstance(args, (list, tuple)) and args:
        return {"__type__": "re.Pattern", "pattern": plain(args[0]),
                "flags": plain(args[1]) if len(args) > 1 else 0}
    if name[1] == "Send" and isinstance(args, (list, tuple)) and len(args) >= 2:
        out = {"__type__": f"{name[0]}.{name[1]}", "node": plain(args[0]), "arg": plain(args[1])}
        if len(args) > 2:
            out["timeout"] = plain(args[2])
        return out
    return {"__type__": f"{name[0]}.{name[1]}", "value": plain(args)}


_STRUCT_CODES = {("b", 1): "?", ("i", 1): "b", ("i", 2): "h", ("i", 4): "i", ("i", 8): "q",
                 ("u", 1): "B", ("u", 2): "H", ("u", 4): "I", ("u", 8): "Q",
                 ("f", 2): "e", ("f", 4): "f", ("f", 8): "d"}


def _nest(flat: list, shape: list[int], fortran: bool) -> Any:
    """Flat values (memory order) nested by ``shape`` (row-major lists, as ``tolist``)."""
    if not shape:
        return flat[0] if flat else None
    strides, step = [0] * len(shape), 1
    for axis in (range(len(shape)) if fortran else reversed(range(len(shape)))):
        strides[axis] = step
        step *= shape[axis]

    def level(axis: int, offset: int) -> list:
        if axis == len(shape) - 1:
            return [flat[offset + i * strides[axis]] for i in range(shape[axis])]
        return [level(axis + 1, offset + i * strides[axis]) for i in range(shape[axis])]
    return level(0, 0)


def numpy_values(dtype: Any, shape: Any, order: Any, buf: Any) -> dict:
    """``{"values": …}`` (and ``truncated``) of a numpy ext payload, or ``{"note": …}``."""
    if not (isinstance(dtype, str) and len(dtype) >= 3 and isinstance(buf, (bytes, bytearray))
            and isinstance(shape, (list, tuple))
            and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape)):
        return {"note": "values not shown: unexpected array payload"}
    endian, kind, size_text = dtype[0], dtype[1], dtype[2:]
    code = _STRUCT_CODES.get((kind, int(size_text))) if size_text.isdigit() else None
    if code is None or endian not in "<>|=":
        return {"note": f"values not shown for dtype {dtype}"}
    count = math.prod(shape)
    size = struct.calcsize(code)
    if count * size != len(buf):
        return {"note": "values not shown: the buffer does not match the shape"}
    fmt = (">" if endian == ">" else "<" if endian in "<|" else "=")
    shown = min(count, NUMPY_PREVIEW_ITEMS)
    flat = list(struct.unpack_from(f"{fmt}{shown}{code}", buf))
    if count > NUMPY_PREVIEW_ITEMS:
        return {"values": flat, "truncated": True}
    return {"values": _nest(flat, list(shape), order == "F")}


def _time_text(fields: Any) -> str | None:
    if not isinstance(fields, dict):
        return None
    parts = [fields.get(k, 0) for k in ("hour", "minute", "second", "microsecond")]
    if not all(isinstance(p, int) and not isinstance(p, bool) for p in parts):
        return None
    try:
        return dt.time(*parts).isoformat()
    except ValueError:
        return None


def _decoded(code: int, payload: Any, plain: Plain) -> Any:
    if code == 7:
        return {"__delta_snapshot__": plain(payload)}
    if code == 6:
        if isinstance(payload, (list, tuple)) and len(payload) == 4:
            buf = payload[3]
            out = {"__type__": "numpy.ndarray", "dtype": plain(payload[0]),
                   "shape": plain(payload[1]), "order": plain(payload[2]),
                   "nbytes": len(buf) if isinstance(buf, (bytes, bytearray)) else None}
            out.update(numpy_values(payload[0], payload[1], payload[2], buf))
            return out
        return {"__ext__": code, "value": plain(payload)}
    arity = 4 if code in (3,) else 3
    name = _named(payload, arity)
    if name is None:
        return {"__ext__": code, "value": plain(payload)}
    arg = payload[2]
    if code == 0:
        return _single(name, arg, plain)
    if code == 1:
        return _positional(name, arg, plain)
    if code == 3:
        if name == ("datetime", "datetime") and payload[3] == "fromisoformat" and isinstance(arg, str):
            return tagged("datetime.datetime", arg)
        return {"__type__": f"{name[0]}.{name[1]}", "value": plain(arg), "method": plain(payload[3])}
    if code == 2 and name == ("datetime", "time") and (text := _time_text(arg)):
        return tagged("datetime.time", text)
    return _typed(name, arg, plain)  # 2 (kwargs), 4 (pydantic v1), 5 (pydantic v2)


def ext_to_plain(code: int, data: bytes, unpack: Unpack, plain: Plain) -> Any:
    """The display form of one ext value; ``unpack`` decodes its nested msgpack payload."""
    if code not in EXT_NAMES:
        return _raw(code, data, f"unknown msgpack extension type {code}")
    try:
        payload = unpack(data)
    except ValueError as err:
        return {"__ext__": code, "__error__": f"malformed {EXT_NAMES[code]} payload: {err}"}
    return _decoded(code, payload, plain)
