"""What the inspector must show for a value LangGraph hands back (its documented display form).

``display(obj)`` converts a Python object returned by LangGraph's own API into the JSON form
the LangGraph adapter shows: typed values keep their type as ``{"__type__": "module.Name",
…}`` (datetime, date, time, timedelta, UUID, Decimal, Enum, dataclasses, pydantic models and
LangChain messages; sets as ``builtins.set``/``builtins.frozenset`` with their items in
``set_order``), bytes as ``{"__bytes__", "size"}``, numpy arrays with dtype, shape and a
bounded value preview. ``numpy_preview`` is the preview rule (shared with the adapter's tests).
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import enum
import uuid
from decimal import Decimal
from typing import Any

from inspector.store.langgraph.ext import NUMPY_PREVIEW_ITEMS, set_order


def _name(obj: Any) -> str:
    cls = type(obj)
    return f"{cls.__module__}.{cls.__name__}"


def numpy_preview(array: Any) -> dict:
    """The adapter's form of a numpy array: dtype, shape, order, nbytes and values (at most
    ``NUMPY_PREVIEW_ITEMS`` of them; beyond that the first ones, flat, and ``truncated``)."""
    order = "F" if array.flags.f_contiguous and not array.flags.c_contiguous else "C"
    out = {"__type__": "numpy.ndarray", "dtype": array.dtype.str, "shape": list(array.shape),
           "order": order, "nbytes": int(array.nbytes)}
    if array.size <= NUMPY_PREVIEW_ITEMS:
        out["values"] = display(array.tolist())
    else:
        out["values"] = display(array.reshape(-1, order=order)[:NUMPY_PREVIEW_ITEMS].tolist())
        out["truncated"] = True
    return out


def display(obj: Any) -> Any:
    """The inspector's display form of a value from LangGraph's API."""
    if obj is None or isinstance(obj, (str, bool, int)) and not isinstance(obj, enum.Enum):
        return obj
    if isinstance(obj, float):
        return obj                  # NaN and the infinities too, as native stores hold them
    if isinstance(obj, enum.Enum):
        return {"__type__": _name(obj), "value": display(obj.value)}
    if isinstance(obj, dt.datetime):
        return {"__type__": "datetime.datetime", "value": obj.isoformat()}
    if isinstance(obj, dt.date):
        return {"__type__": "datetime.date", "value": obj.isoformat()}
    if isinstance(obj, dt.time):
        return {"__type__": "datetime.time", "value": obj.isoformat()}
    if isinstance(obj, dt.timedelta):
        return {"__type__": "datetime.timedelta", "value": str(obj)}
    if isinstance(obj, uuid.UUID):
        return {"__type__": "uuid.UUID", "value": str(obj)}
    if isinstance(obj, Decimal):
        return {"__type__": "decimal.Decimal", "value": str(obj)}
    if isinstance(obj, (bytes, bytearray)):
        return {"__bytes__": base64.b64encode(bytes(obj)).decode("ascii"), "size": len(obj)}
    if type(obj).__module__ == "numpy" and type(obj).__name__ == "ndarray":
        return numpy_preview(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {"__type__": _name(obj),
                **{f.name: display(getattr(obj, f.name)) for f in dataclasses.fields(obj)}}
    if hasattr(obj, "model_dump") and hasattr(type(obj), "model_fields"):
        return {"__type__": _name(obj), **display(obj.model_dump())}
    if isinstance(obj, (set, frozenset)):
        return {"__type__": _name(obj), "value": set_order([display(v) for v in obj])}
    if isinstance(obj, dict):
        return {k: display(v) for k, v in obj.items()}     # keys keep their types (101 is not "101")
    if isinstance(obj, (list, tuple)):
        return [display(v) for v in obj]
    raise TypeError(f"no display form for {type(obj).__name__}")
