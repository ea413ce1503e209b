"""Parts of a stored value that are read on demand (the base of every reader's lazy view).

A store that can show a big state without building it puts ``LazyValue`` objects in the
``Snapshot.state`` it gives for showing (``meta["lazy"]`` is then True): the State tab's tree
pages through them (``entries``), and whatever needs a whole value calls ``materialize`` in a
worker. Native pieces: ``inspector.diff.lazy_value``; LangGraph msgpack blobs:
``inspector.store.langgraph.lazy``.
"""

from __future__ import annotations

from typing import Any


class LazyValue:
    """A part of a state that is not built: its ``kind`` (``object``, ``array`` or
    ``string``), ``length`` (entries; a string's UTF-8 bytes) and stored ``size`` in bytes."""

    __slots__ = ("kind", "length", "size")

    def __init__(self, kind: str, length: int, size: int) -> None:
        self.kind, self.length, self.size = kind, length, size

    def entries(self, start: int, stop: int) -> list[tuple[Any, Any]]:
        """(key, value) of the entries ``start``..``stop`` (list keys are positions); values
        are plain, or LazyValues for big parts."""
        return []

    def materialize(self) -> Any:
        """The whole value, built within the read budgets (BudgetExceeded over them)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<lazy {self.kind} of {self.length:,}>"


class Blocked(LazyValue):
    """An array or map kept encoded, in blocks of ``BLOCK`` entries that can be compared
    encoded: two blocks with equal bytes hold equal entries (a diff reads only the others)."""

    __slots__ = ()
    BLOCK = 500

    def raw_blocks(self) -> list[bytes]:
        """The encoded bytes of each block of ``BLOCK`` entries, in order."""
        raise NotImplementedError

    def key_positions(self, keys: Any) -> dict[int, Any]:
        """Position → key for those of ``keys`` (or their ``str``) that a map holds."""
        raise NotImplementedError


class LazyText(LazyValue):
    """A long string: ``prefix`` holds its first characters, ``length`` its UTF-8 bytes,
    ``chars`` its characters when known without decoding it (else None)."""

    __slots__ = ("prefix", "chars")

    def __init__(self, length: int, size: int, prefix: str, chars: int | None = None) -> None:
        super().__init__("string", length, size)
        self.prefix, self.chars = prefix, chars

    def __repr__(self) -> str:
        """What ``repr`` of the string begins with (its first characters, quoted)."""
        return repr(self.prefix[:200] + ("…" if len(self.prefix) > 200 or not self.complete else ""))

    @property
    def complete(self) -> bool:
        """True when ``prefix`` is the whole string."""
        return len(self.prefix.encode("utf-8", "surrogatepass")) >= self.length


def is_lazy(value: Any) -> bool:
    """True when ``value`` is or holds a part read on demand."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, LazyValue):
            return True
        if isinstance(item, dict):
            stack.extend(v for v in item.values() if isinstance(v, (dict, list, LazyValue)))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, (dict, list, LazyValue)))
    return False


def materialize(value: Any) -> Any:
    """``value`` with every LazyValue in it built whole (parts without one are kept)."""
    if isinstance(value, LazyValue):
        return value.materialize()
    if isinstance(value, dict) and is_lazy(value):
        return {k: materialize(v) for k, v in value.items()}
    if isinstance(value, list) and is_lazy(value):
        return [materialize(v) for v in value]
    return value


__all__ = ["Blocked", "LazyText", "LazyValue", "is_lazy", "materialize"]
