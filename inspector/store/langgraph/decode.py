"""Safe decoding of LangGraph serialized values: msgpack with our own ext handling, never code.

Two layers:

* ``unpack`` / ``pack`` are lossless: msgpack extension values stay ``msgpack.ExtType``
  (code + raw payload bytes) and map keys that arrive as arrays become tuples, so a value
  that is not edited re-encodes byte-identically (what a raw fork needs).
* ``to_plain`` turns a lossless value into JSON-able Python for display. It interprets the
  LangGraph ext codes (0–7) by *reading* their payloads; it never imports or calls anything
  the data names. Known harmless types get natural forms (datetime → ISO text, set → list,
  UUID → text); everything else becomes ``{"__type__": "module.name", ...}``.

``decode_typed`` applies LangGraph's serializer type tags (``msgpack``, ``json``, ``null``,
``bytes``…); ``pickle`` and encrypted (``…+aes``) rows become opaque markers.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import msgpack

from inspector.store.langgraph.ext import ext_to_plain


class BlobError(ValueError):
    """A stored value could not be decoded (malformed bytes or an unknown shape)."""


def _key(value: Any) -> Any:
    """A hashable form of a map key (arrays → tuples, maps → tuples of pairs)."""
    if isinstance(value, list):
        return tuple(_key(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, _key(v)) for k, v in value.items())
    return value


def _pairs(pairs: list[tuple[Any, Any]]) -> dict:
    try:
        return dict(pairs)
    except TypeError:
        return {_key(k): v for k, v in pairs}


def unpack(data: bytes) -> Any:
    """Decode msgpack losslessly: ExtType values are kept, array keys become tuples."""
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=False, object_pairs_hook=_pairs,
                               timestamp=0)
    except (ValueError, TypeError, msgpack.UnpackException, RecursionError) as err:
        raise BlobError(f"malformed msgpack ({type(err).__name__}: {err})") from err


def pack(value: Any) -> bytes:
    """Encode a value produced by ``unpack`` back to msgpack (byte-identical if untouched)."""
    return msgpack.packb(value, use_bin_type=True, strict_types=False)


def bytes_marker(data: bytes | bytearray | memoryview) -> dict:
    """How raw bytes appear in a plain value."""
    return {"__bytes__": base64.b64encode(bytes(data)).decode("ascii"), "size": len(data)}


def plain_key(key: Any) -> str:
    """A map key as JSON text-compatible string."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(key)
    if isinstance(key, (bytes, bytearray)):
        return bytes(key).hex()
    try:
        return json.dumps(to_plain(key), ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return repr(key)


def to_plain(value: Any) -> Any:
    """JSON-able form of a value from ``unpack`` (never imports or calls named code)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, dict):
        return {plain_key(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, msgpack.ExtType):  # a namedtuple: test before tuple
        return ext_to_plain(value.code, value.data, unpack, to_plain)
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes_marker(value)
    if isinstance(value, msgpack.Timestamp):
        try:
            return value.to_datetime().isoformat()
        except (ValueError, OverflowError, OSError):
            return {"__type__": "msgpack.Timestamp", "seconds": value.seconds, "nanoseconds": value.nanoseconds}
    return {"__opaque__": type(value).__name__}


def plain_or_error(value: Any) -> Any:
    """``to_plain`` that turns a runaway nesting into an error marker instead of raising."""
    try:
        return to_plain(value)
    except RecursionError:
        return {"__error__": "value nested too deeply to display"}


# -- LangGraph serializer type tags ---------------------------------------------------------
OPAQUE_NOTES = {
    "pickle": "not decoded: pickle can run code",
}


def revive_lc(obj: dict) -> Any:
    """Show a LangChain ``lc`` JSON envelope as a typed dict (nothing is constructed)."""
    if obj.get("lc") in (1, 2) and isinstance(obj.get("id"), list) and "type" in obj:
        name = ".".join(str(p) for p in obj["id"])
        kind = obj["type"]
        if kind == "constructor":
            kwargs = obj.get("kwargs")
            if isinstance(kwargs, dict):
                return {"__type__": name, **{k: v for k, v in kwargs.items() if k != "__type__"}}
            return {"__type__": name, "value": obj.get("args", kwargs)}
        if kind == "secret":
            return {"__secret__": name}
        if kind == "not_implemented":
            return {"__type__": name, "__opaque__": "not_implemented", "repr": obj.get("repr")}
    return obj


def decode_typed(type_tag: str | None, data: bytes | None) -> Any:
    """A stored (type, bytes) pair as a lossless value (msgpack) or plain value (others).

    Raises BlobError for malformed data. Opaque kinds return a marker dict.
    """
    tag = (type_tag or "").strip()
    if data is None or tag == "null":
        return None
    if isinstance(data, str):  # SQLite is dynamically typed: a crafted row may hold text
        data = data.encode("utf-8", "surrogatepass")
    data = bytes(data) if not isinstance(data, bytes) else data
    if tag in ("bytes", "bytearray"):
        return data
    if "+" in tag:
        base, _, cipher = tag.partition("+")
        return {"__opaque__": tag, "size": len(data),
                "note": f"not decoded: {base} encrypted with {cipher}"}
    if tag == "msgpack":
        return unpack(data)
    if tag == "json":
        try:
            return json.loads(data.decode("utf-8"), object_hook=revive_lc)
        except (UnicodeDecodeError, ValueError, RecursionError) as err:
            raise BlobError(f"malformed JSON ({err})") from err
    note = OPAQUE_NOTES.get(tag, f"not decoded: unknown serialization type {tag or '(none)'}")
    return {"__opaque__": tag or "unknown", "size": len(data), "note": note}


def decode_plain(type_tag: str | None, data: bytes | None) -> Any:
    """``decode_typed`` then ``to_plain``; malformed data becomes an error marker."""
    try:
        return plain_or_error(decode_typed(type_tag, data))
    except BlobError as err:
        return {"__error__": f"cannot decode {type_tag or 'value'}: {err}"}
