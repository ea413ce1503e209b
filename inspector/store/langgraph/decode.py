"""Safe decoding of LangGraph serialized values: msgpack with our own ext handling, never code.

Two layers:

* ``unpack`` / ``pack`` are lossless: msgpack extension values stay ``msgpack.ExtType``
  (code + raw payload bytes) and map keys that arrive as arrays become tuples, so a value
  that is not edited re-encodes byte-identically (what a raw fork needs).
* ``to_plain`` turns a lossless value into plain Python for display. It interprets the
  LangGraph ext codes (0–7) by *reading* their payloads; it never imports or calls anything
  the data names. Known harmless types get natural forms (datetime → ISO text, set → list,
  UUID → text); everything else becomes ``{"__type__": "module.name", ...}``. Two things
  stay as a native store holds them, so that no two different values look the same: a
  non-finite float stays a float (the output layers write it ``NaN``/``Infinity``, never
  like the string ``"nan"``), and a map key that is not a string stays its number, bool,
  None, bytes or tuple (``{1: …, "1": …}`` keeps both keys; output says ``"1 (int)"``).

Both are bounded by the read budgets (``inspector.limits``): a blob larger than the piece
budget is not decoded; ``to_plain`` counts values, bytes (strings, bytes and every ext
payload it unpacks, so nested ext bombs are paid for) and depth against the value count,
state size and depth budgets (one ``DecodeBudget`` may span a whole checkpoint) and raises
``BudgetExceeded`` naming the flag. msgpack itself refuses lengths longer than the blob.

``decode_typed`` applies LangGraph's serializer type tags (``msgpack``, ``json``, ``null``,
``bytes``…); ``pickle`` and encrypted (``…+aes``) rows become opaque markers.
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any

import msgpack

from inspector import limits
from inspector.store.langgraph.ext import ext_to_plain

_SCALARS = frozenset((str, bool, int, type(None)))
_FIXED = frozenset((bool, int, type(None)))
_STR_ONLY = frozenset((str,))
_KEYS = frozenset((str, int, float, bool, bytes, type(None)))
_FRAMES_PER_LEVEL = 6
_MAX_RECURSION = 20_000


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
    """Decode msgpack losslessly: ExtType values are kept, array keys become tuples.

    BudgetExceeded when the blob is larger than the piece budget."""
    budget = limits.current().piece_bytes
    if len(data) > budget:
        raise limits.BudgetExceeded("piece", f"A stored LangGraph value is {len(data):,} bytes")
    try:
        try:    # plain dicts first (C speed); a map with an array key needs the pairs hook
            return msgpack.unpackb(data, raw=False, strict_map_key=False, timestamp=0)
        except TypeError:
            pass
        return msgpack.unpackb(data, raw=False, strict_map_key=False, object_pairs_hook=_pairs,
                               timestamp=0)
    except (ValueError, TypeError, msgpack.UnpackException, RecursionError) as err:
        detail = f": {err}" if str(err) else ""
        raise BlobError(f"malformed msgpack ({type(err).__name__}{detail})") from err


def pack(value: Any) -> bytes:
    """Encode a value produced by ``unpack`` back to msgpack (byte-identical if untouched)."""
    return msgpack.packb(value, use_bin_type=True, strict_types=False)


def bytes_marker(data: bytes | bytearray | memoryview) -> dict:
    """How raw bytes appear in a plain value."""
    return {"__bytes__": base64.b64encode(bytes(data)).decode("ascii"), "size": len(data)}


def plain_key(key: Any) -> Any:
    """A map key as the display holds it: a str, int, float, bool, None or bytes key as it
    is and an array key as a tuple of such (as native stores hold keys); any other key (an
    extension value) as its JSON text."""
    if type(key) in _KEYS:
        return key
    if isinstance(key, (list, tuple)) and not isinstance(key, msgpack.ExtType):
        return tuple(map(plain_key, key))
    try:
        return json.dumps(to_plain(key), ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return repr(key)


class DecodeBudget:
    """Values, bytes and depth one decode has used, checked against the read budgets."""

    __slots__ = ("nodes", "size", "level", "limits", "what")

    def __init__(self, what: str = "A stored LangGraph value") -> None:
        self.nodes = self.size = self.level = 0
        self.limits = limits.current()
        self.what = what

    def add(self, nodes: int, size: int) -> None:
        """Count ``nodes`` values and ``size`` bytes."""
        self.nodes += nodes
        self.size += size
        if self.nodes > self.limits.nodes:
            raise limits.BudgetExceeded("nodes", f"{self.what} decodes to more than {self.limits.nodes:,} values")
        if self.size > self.limits.state_bytes:
            raise limits.BudgetExceeded("state", f"{self.what} decodes to more than {self.size:,} bytes")

    def enter(self) -> None:
        """One level deeper."""
        self.level += 1
        if self.level > self.limits.depth:
            raise limits.BudgetExceeded("depth", f"{self.what} nests more than {self.limits.depth:,} levels deep")


def _scalar_size(values: Any) -> int | None:
    """The bytes of a run of plain scalars (8 a number, a string its length), None when one
    of them is not a str, bool, int or None (at C speed: no Python call per item)."""
    kinds = set(map(type, values))
    if kinds <= _FIXED:
        return 8 * len(values)
    if kinds <= _SCALARS:
        texts = [v for v in values if type(v) is str]
        return sum(map(len, texts)) + 8 * (len(values) - len(texts))
    return None


def to_plain(value: Any, budget: DecodeBudget | None = None) -> Any:
    """The display form of a value from ``unpack`` (never imports or calls named code), within
    ``budget`` (a new one per call by default)."""
    budget = budget or DecodeBudget()
    # an ext level takes a few frames (ext -> payload -> fields): room for the depth budget's
    # levels, so the budget (one sentence) speaks before the interpreter's recursion limit
    wanted = min(_FRAMES_PER_LEVEL * budget.limits.depth + 1000, _MAX_RECURSION)
    if sys.getrecursionlimit() < wanted:
        sys.setrecursionlimit(wanted)
    return _Walk(budget).plain(value)


class _Walk:
    __slots__ = ("budget",)

    def __init__(self, budget: DecodeBudget) -> None:
        self.budget = budget

    def plain(self, value: Any) -> Any:
        budget = self.budget
        kind = type(value)
        if kind is str:
            budget.add(1, len(value))
            return value
        if value is None or isinstance(value, (str, bool, int)):
            budget.add(1, len(value) if isinstance(value, str) else 8)
            return value
        if isinstance(value, float):
            budget.add(1, 8)
            return value
        if isinstance(value, dict):
            budget.enter()
            try:
                keys = value.keys()
                if _STR_ONLY.issuperset(map(type, keys)):
                    size = _scalar_size(value.values())
                    if size is not None:      # a flat map of text keys and scalars: one copy
                        budget.add(1 + len(value), size + sum(map(len, keys)))
                        return dict(value)
                budget.add(1, 0)
                return {plain_key(k): self.plain(v) for k, v in value.items()}
            finally:
                budget.level -= 1
        if isinstance(value, msgpack.ExtType):  # a namedtuple: test before tuple
            budget.enter()
            try:
                budget.add(1, len(value.data))   # every payload unpacked is paid for
                return ext_to_plain(value.code, value.data, unpack, self.plain)
            finally:
                budget.level -= 1
        if isinstance(value, (list, tuple)):
            budget.enter()
            try:
                size = _scalar_size(value)
                if size is not None:          # a flat list of scalars: one copy
                    budget.add(1 + len(value), size)
                    return list(value)
                budget.add(1, 0)
                return [self.plain(v) for v in value]
            finally:
                budget.level -= 1
        if isinstance(value, (bytes, bytearray, memoryview)):
            budget.add(1, len(value))
            return bytes_marker(value)
        budget.add(1, 8)
        if isinstance(value, msgpack.Timestamp):
            try:
                return value.to_datetime().isoformat()
            except (ValueError, OverflowError, OSError):
                return {"__type__": "msgpack.Timestamp", "seconds": value.seconds, "nanoseconds": value.nanoseconds}
        return {"__opaque__": type(value).__name__}


def plain_or_error(value: Any, budget: DecodeBudget | None = None) -> Any:
    """``to_plain`` that turns a runaway nesting into an error marker instead of raising;
    over a budget, the marker holds the budget's sentence unless ``budget`` was given (then
    BudgetExceeded goes up: a checkpoint's state is refused whole, as a native one is)."""
    try:
        return to_plain(value, budget)
    except RecursionError:
        return {"__error__": "value nested too deeply to display"}
    except limits.BudgetExceeded as err:
        if budget is not None:
            raise
        return {"__error__": str(err)}


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
    elif isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    elif not isinstance(data, bytes):   # a number (bytes() of it would be that many zero bytes)
        raise BlobError(f"it is a {type(data).__name__}, not bytes")
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
