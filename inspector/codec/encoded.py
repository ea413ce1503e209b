"""What the encoder returns for a value, and the exact fingerprints it compares next states with."""

from __future__ import annotations

from typing import Any, NamedTuple

import ormsgpack


class Encoded(NamedTuple):
    """One encoded value: what its parent embeds, its logical size, and its fingerprint."""

    form: Any       # the value itself, a Ref or a table marker
    size: int
    fp: bytes | None    # the value's msgpack encoding (None: holds a chunked container, always revisited)


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
