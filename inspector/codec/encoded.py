"""What the encoder returns for a value, and the copy it keeps of a chunked container."""

from __future__ import annotations

from typing import Any, NamedTuple


class Encoded(NamedTuple):
    """One encoded value: what its parent embeds, its logical size, and a private copy."""

    form: Any       # the value itself, a Ref or a table marker
    size: int
    copy: Any       # compared with the next state's value (``UNSEEN`` for a chunked container)


class Bulk(NamedTuple):
    """Values encoded together: per value its form, size, copy and msgpack encoding."""

    forms: list
    sizes: list
    copies: list
    encoded: list


class _Unseen:
    """The copy of a chunked container kept in its parent: equal to nothing, so the parent
    always visits it again (the container then checks its own chunks, cheaply)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return False

    def __ne__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "UNSEEN"


UNSEEN = _Unseen()
