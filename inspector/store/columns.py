"""A SQLite column's value as the type its column names.

SQLite columns are dynamically typed: a crafted or damaged file may hold text or bytes where a
number belongs, and a BLOB or a number where text does. Readers take such values through these
(a number that is not one reads as 0, text that is not UTF-8 with replacement characters), so
that one damaged row stays that row's damage.
"""

from __future__ import annotations

from typing import Any

BINARY = (bytes, bytearray, memoryview)     # what a BLOB column's value may come back as


def as_blob(value: Any) -> Any:
    """A BLOB column's value: a view or bytearray as bytes, anything else as it is (NULL, text, a
    number: the reader that decodes it says what it is). Never ``bytes()`` of a column's value
    as such: of a number that is as many zero bytes (3,000,000,000 in a damaged file's column
    would be 3 GB)."""
    return bytes(value) if isinstance(value, (bytearray, memoryview)) else value


def as_int(value: Any) -> int:
    """An integer column's value (0 when it holds no number)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def as_count(value: Any) -> int | None:
    """A count column's value (a row count, a token count, a turn number): a whole number from
    0 below 2^63, else None (NULL, text, bytes, a real, a negative one)."""
    return value if type(value) is int and 0 <= value < 2 ** 63 else None


def as_real(value: Any, bound: float = 1e12) -> float:
    """A time or other real column's value (0.0 when it holds no number, or one past ``bound``)."""
    return float(value) if type(value) in (int, float) and abs(value) < bound else 0.0


def as_text(value: Any) -> str:
    """A text column's value: bytes decoded with replacement characters, a number as its
    digits, NULL as ``""`` (text stays the very object, a reader's marked text included)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


def as_opt_text(value: Any) -> str | None:
    """``as_text`` keeping NULL as None."""
    return None if value is None else as_text(value)
