"""What the encoder returns for a value, and the exact fingerprints it compares next states with."""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec


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


_encode_fp = msgspec.msgpack.Encoder().encode
_FP_ERRORS = (TypeError, ValueError, OverflowError, msgspec.EncodeError)   # not RecursionError: too deep is an error


def fingerprint(value: Any) -> bytes | None:
    """The msgpack encoding of ``value`` (byte for byte what ``pack`` writes for a plain value),
    or None when it has none. Equal fingerprints mean the same stored value exactly: types
    (1, True, 1.0), float signs (0.0, -0.0) and key order included, which ``==`` ignores."""
    try:
        return _encode_fp(value)
    except _FP_ERRORS:
        return None


class FingerprintBuffer:
    """Compares fingerprints without allocating one per comparison (one per encoder: not
    shared between threads)."""

    __slots__ = ("_buffer", "_encode_into")

    def __init__(self) -> None:
        self._buffer = bytearray(64 * 1024)
        self._encode_into = msgspec.msgpack.Encoder().encode_into

    def matches(self, value: Any, fp: bytes) -> bool:
        """Whether ``value``'s fingerprint is ``fp``."""
        buffer = self._buffer
        try:
            self._encode_into(value, buffer)
        except _FP_ERRORS:
            return False
        return buffer == fp


def fingerprints(values: list) -> list:
    """``fingerprint`` of each value (one C call unless one of them has none)."""
    try:
        return list(map(_encode_fp, values))
    except _FP_ERRORS:
        return list(map(fingerprint, values))
