"""What the encoder returns for a value, and the exact fingerprints it compares next states with."""

from __future__ import annotations

from typing import Any, NamedTuple

import ormsgpack


class Encoded(NamedTuple):
    """One encoded value: what its parent embeds, its logical size, and its fingerprint."""

    form: Any       # the value itself, a Ref or a table marker
    size: int
    fp: bytes | tuple | None    # the value's msgpack encoding, or its ``heavy_print`` when it names long
                                # pieces (None: holds a chunked container, or such a value, always revisited)


class Bulk(NamedTuple):
    """Values encoded together: per value its form (None for a small value, stored as it is),
    size, fingerprint and the encoding its chunk frames (``pack(form)``)."""

    forms: list
    sizes: list
    fps: list
    encoded: list


def _foreign(obj: Any) -> Any:
    raise TypeError(f"{type(obj).__name__} has no fingerprint")


# Strict: only the exact plain types have a fingerprint. ormsgpack would otherwise encode a
# UUID, date, set, Enum, dataclass or subclass as a plain value, and one whose encoding equals
# the value it replaced would be taken as unchanged instead of refused as a fresh save refuses
# it (the passthrough options hand every such object to ``_foreign``).
_OPTIONS = (ormsgpack.OPT_NON_STR_KEYS | ormsgpack.OPT_PASSTHROUGH_BIG_INT | ormsgpack.OPT_PASSTHROUGH_DATACLASS
            | ormsgpack.OPT_PASSTHROUGH_DATETIME | ormsgpack.OPT_PASSTHROUGH_ENUM | ormsgpack.OPT_PASSTHROUGH_SUBCLASS
            | ormsgpack.OPT_PASSTHROUGH_TUPLE | ormsgpack.OPT_PASSTHROUGH_UUID)
_packb = ormsgpack.packb


def _encode_fp(value: Any) -> bytes:
    """The strict encoding (raises for what has no fingerprint). ``packb`` takes ``default`` and
    ``option`` positionally: a third less per call than a ``partial`` passing them by keyword,
    which a dense save pays once per item."""
    return _packb(value, _foreign, _OPTIONS)



_FP_ERRORS = (TypeError, ValueError, OverflowError, ormsgpack.MsgpackEncodeError)   # not RecursionError


def fingerprint(value: Any) -> bytes | None:
    """The msgpack encoding of ``value`` (byte for byte what ``pack`` writes for a plain value),
    or None when it has none: a value holding anything but the exact plain types (a subclass,
    a tuple, a UUID, a date, a set, an Enum …), too deep or too big an int. Equal fingerprints
    mean the same stored value exactly: types (1, True, 1.0), float signs (0.0, -0.0) and key
    order included, which ``==`` ignores; None means "look at it afresh" (``pack`` then stores
    it as a plain value or refuses it)."""
    try:
        return _encode_fp(value)
    except _FP_ERRORS:
        return None


def matches(value: Any, fp: bytes) -> bool:
    """Whether ``value``'s fingerprint is ``fp``."""
    try:
        return _encode_fp(value) == fp
    except _FP_ERRORS:
        return False


def fingerprints(values: list) -> list:
    """``fingerprint`` of each value (one C call each, no Python step unless one has none)."""
    try:
        return list(map(_encode_fp, values))
    except _FP_ERRORS:
        return list(map(fingerprint, values))


JOIN_MAX = 4 * 1024 * 1024   # bytes: a chunk this big keeps no fingerprint of its values as one list


def joined(header: bytes, fps: list, size: int) -> bytes | None:
    """The fingerprint of a chunk's values as one list (``header`` is its array header); None
    when one of them is a heavy print, or the chunk is ``size`` >= ``JOIN_MAX`` bytes (the
    values' own are compared then)."""
    if size >= JOIN_MAX:
        return None
    try:
        return header + b"".join(fps)
    except TypeError:
        return None


# -- values holding long strings -------------------------------------------------------------
HEAVY = 64 * 1024      # characters of long strings in a value fingerprinted by ``heavy_print``
HEAVY_NODES = 256      # … when it holds at most this many values
_LONG = 4096           # a string or bytes this long is left out of the skeleton (compared as it is)
_STR_SLOT = ormsgpack.Ext(0x7E, b"s")      # where one was (a value walked never holds an Ext)
_BYTES_SLOT = ormsgpack.Ext(0x7E, b"b")
_HEAVY = object()      # first in a heavy print: never equal to a ``fingerprint`` (bytes)
_WALKED = frozenset({int, float, bool, type(None)})
_KEYS = frozenset({str, int})


class _NotHeavy(Exception):
    pass


def heavy_print(value: Any, nodes: int = HEAVY_NODES) -> tuple | None:
    """A fingerprint of a value holding long strings (a document in a list item, a file in a
    map) that does not copy them, as ``fingerprint`` does: ``(_HEAVY, the strict encoding of
    the value with each string or bytes of ``_LONG`` or more replaced by a slot, those values
    in order)``. Equal prints mean the same value exactly (the skeleton's types, key order and
    slots by its encoding, the long values by ``==`` on their exact types, the very same object
    at once). Packing a 10 MB text to compare it cost 3.5 ms (the buffer's pages faulted in
    afresh each time) where its edit costs 5; 300 items of 200 KB, 33 ms a save.

    None when the value holds fewer than ``HEAVY`` characters of long strings, more than
    ``nodes`` values, nests deeper than 32 or holds anything but dicts (keys str or
    int), lists and plain scalars: ``fingerprint`` is then the one that says."""
    longs: list = []
    count = 0

    def walk(v: Any, depth: int) -> Any:
        nonlocal count
        count += 1
        if count > nodes or depth > 32:
            raise _NotHeavy
        kind = type(v)
        if kind is str or kind is bytes:
            if len(v) < _LONG:
                return v
            longs.append(v)
            return _STR_SLOT if kind is str else _BYTES_SLOT
        if kind in _WALKED:
            return v
        if kind is dict:
            if not _KEYS.issuperset(map(type, v)):
                raise _NotHeavy
            return {k: walk(x, depth + 1) for k, x in v.items()}
        if kind is list:
            return [walk(x, depth + 1) for x in v]
        raise _NotHeavy

    try:
        skeleton = walk(value, 0)
    except _NotHeavy:
        return None
    if sum(map(len, longs)) < HEAVY:
        return None
    fp = fingerprint(skeleton)
    return None if fp is None else (_HEAVY, fp, tuple(longs))
