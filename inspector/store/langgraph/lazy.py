"""Big LangGraph values read on demand from their msgpack blob (the State tab's lazy view).

A channel value (or a pending write's value) that is an array or map of more than
``BIG_ITEMS`` entries, or a string of more than ``BIG_BYTES``, is not decoded: it becomes a
``MsgpackList`` / ``MsgpackMap`` / ``MsgpackText`` over its span of the blob. A page of entries
is found by skipping items with msgpack's ``Unpacker.skip`` (the offset of every
``MARK_EVERY``-th item is found when the view is made, so a page costs one block) and decoded with the same
rules and read budgets as a whole checkpoint (``decode.to_plain``: nothing named in the data
is imported or called). ``materialize`` decodes the span whole within the budgets.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import msgpack

from inspector import limits
from inspector.lazy import Blocked, LazyText, LazyValue
from inspector.store.langgraph.decode import BlobError, DecodeBudget, _pairs, plain_key, to_plain, unpack

BIG_ITEMS = 50_000          # an array or map with more entries is read a page at a time
BIG_BYTES = 2_000_000       # a longer string is shown from its start
PREFIX_BYTES = 2_000_000    # … this much of it (the detail pane's limit)
MARK_EVERY = 500            # the offset of every so many items is kept
_ARRAY, _MAP, _STR = "array", "object", "string"


def header(buf: bytes, pos: int) -> tuple[str, int, int] | None:
    """(kind, count, header bytes) of the msgpack array, map or string at ``pos``, else None."""
    if pos >= len(buf):
        return None
    first = buf[pos]
    if 0x90 <= first <= 0x9F:
        return _ARRAY, first & 0x0F, 1
    if 0x80 <= first <= 0x8F:
        return _MAP, first & 0x0F, 1
    if 0xA0 <= first <= 0xBF:
        return _STR, first & 0x1F, 1
    wide = {0xDC: (_ARRAY, 2), 0xDD: (_ARRAY, 4), 0xDE: (_MAP, 2), 0xDF: (_MAP, 4),
            0xD9: (_STR, 1), 0xDA: (_STR, 2), 0xDB: (_STR, 4)}.get(first)
    if wide is None or pos + 1 + wide[1] > len(buf):
        return None
    return wide[0], int.from_bytes(buf[pos + 1:pos + 1 + wide[1]], "big"), 1 + wide[1]


def is_big(head: tuple[str, int, int] | None) -> bool:
    """True for a header (``header``) of a value the lazy view leaves in its blob."""
    return head is not None and head[1] > (BIG_BYTES if head[0] == _STR else BIG_ITEMS)


def _reader(buf: bytes, pos: int) -> msgpack.Unpacker:
    stream = io.BytesIO(buf)      # shares the bytes (no copy); the reader starts at pos
    stream.seek(pos)
    return msgpack.Unpacker(stream, raw=False, strict_map_key=False, timestamp=0, object_pairs_hook=_pairs,
                            max_buffer_size=max(len(buf), 1 << 20))


class _Span(Blocked):
    """A value kept as its span ``start``..``end`` of ``buf`` (``first``: its first item)."""

    __slots__ = ("buf", "start", "end", "first", "marks", "what")
    BLOCK = MARK_EVERY

    def __init__(self, buf: bytes, start: int, end: int, head: tuple[str, int, int], what: str) -> None:
        super().__init__(head[0], head[1], end - start)
        self.buf, self.start, self.end, self.what = buf, start, end, what
        self.first = start + head[2]
        self.marks = self._index()  # offset of item k * MARK_EVERY, never changed after this

    def _index(self) -> list[int]:
        """The offset of every ``MARK_EVERY``-th item, in one pass when the view is made — in
        the worker that reads the checkpoint — so that a page read later (on the GUI thread, by
        the tree) skips within one block only (0.9 s to reach the end of a 3M-item list
        otherwise), and views shared by the State tab and a diff's worker never change. The
        pass stops at damage: pages past it fail when read, each a row that says so."""
        per = 2 if self.kind == _MAP else 1
        marks = [self.first]
        reader = _reader(self.buf, self.first)
        skip = reader.skip
        try:
            for _ in range((self.length - 1) // MARK_EVERY):
                for _ in range(MARK_EVERY * per):
                    skip()
                marks.append(self.first + reader.tell())
        except (ValueError, TypeError, msgpack.UnpackException):
            pass
        return marks

    def materialize(self) -> Any:
        return to_plain(unpack(bytes(self.buf[self.start:self.end])), DecodeBudget(self.what))

    def _seek(self, index: int) -> msgpack.Unpacker:
        """A reader at item ``index`` (every item a key and value in a map)."""
        per = 2 if self.kind == _MAP else 1
        mark = min(index // MARK_EVERY, len(self.marks) - 1)
        reader = _reader(self.buf, self.marks[mark])
        for _ in range((index - mark * MARK_EVERY) * per):
            reader.skip()
        return reader

    def __eq__(self, other: object) -> bool:
        """Equal encodings (what ``==`` on the decoded values would say, for one serializer)."""
        if not isinstance(other, _Span):
            return NotImplemented
        return self.end - self.start == other.end - other.start and \
            self.buf[self.start:self.end] == other.buf[other.start:other.end]

    __hash__ = None     # type: ignore[assignment]  # compared by content, never a key

    def raw_blocks(self) -> list[bytes]:
        if self.length:
            self._seek(self.length - 1)     # damage (where the index stopped) is an error here
        bounds = [*self.marks[:(self.length + MARK_EVERY - 1) // MARK_EVERY], self.end]
        return [self.buf[lo:hi] for lo, hi in zip(bounds, bounds[1:])]

    def key_positions(self, keys: Any) -> dict[int, Any]:
        wanted = set(keys)
        found: dict[int, Any] = {}
        if self.kind != _MAP:
            return found
        reader = _reader(self.buf, self.first)
        try:
            for i in range(self.length):
                key = plain_key(reader.unpack())
                reader.skip()
                if key in wanted:
                    found[i] = key
        except (ValueError, TypeError, msgpack.UnpackException) as err:
            raise BlobError(f"malformed msgpack ({type(err).__name__}: {err})") from err
        return found

    def _items(self, start: int, stop: int) -> Iterator[Any]:
        reader = self._seek(start)
        for _ in range(start, stop):
            yield reader.unpack()

    def entries(self, start: int, stop: int) -> list[tuple[Any, Any]]:
        stop = min(stop, self.length)
        if start >= stop:
            return []
        budget = DecodeBudget(self.what)
        try:
            if self.kind == _ARRAY:
                return [(i, to_plain(v, budget)) for i, v in zip(range(start, stop), self._items(start, stop))]
            out = []
            reader = self._seek(start)
            for _ in range(start, stop):
                key = reader.unpack()
                out.append((plain_key(key), to_plain(reader.unpack(), budget)))
            return out
        except (ValueError, TypeError, msgpack.UnpackException) as err:
            if isinstance(err, limits.BudgetExceeded):
                raise
            raise BlobError(f"malformed msgpack ({type(err).__name__}: {err})") from err


class MsgpackText(LazyText):
    """A long msgpack string kept in its blob; ``prefix``: its first ``PREFIX_BYTES``."""

    __slots__ = ("buf", "start", "end")

    def __init__(self, buf: bytes, start: int, end: int, head: tuple[str, int, int]) -> None:
        body = buf[start + head[2]:min(end, start + head[2] + PREFIX_BYTES)]
        super().__init__(head[1], end - start, _utf8_prefix(body), _chars(buf[start + head[2]:end]))
        self.buf, self.start, self.end = buf, start, end

    def materialize(self) -> Any:
        return to_plain(unpack(bytes(self.buf[self.start:self.end])))


_CONTINUATION = [bytes([c]) for c in range(0x80, 0xC0)]


def _chars(text: bytes) -> int:
    """The characters of UTF-8 ``text`` without decoding it (its bytes less continuation bytes)."""
    if text.isascii():
        return len(text)
    return len(text) - sum(map(text.count, _CONTINUATION))


def _utf8_prefix(body: bytes) -> str:
    for cut in range(4):     # the prefix may end inside a character
        try:
            return body[:len(body) - cut].decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            continue
    return body.decode("utf-8", "replace")


def lazy_span(buf: bytes, start: int, end: int, what: str) -> LazyValue | None:
    """The lazy view of the value at ``buf[start:end]`` when it is big, else None."""
    head = header(buf, start)
    if not is_big(head):
        return None
    assert head is not None
    if head[0] == _STR:
        return MsgpackText(buf, start, end, head)
    return _Span(buf, start, end, head, what)


class EncodedItems:
    """The items of a msgpack array kept in its blob, decoded one at a time as they are
    iterated (plain, as the whole value's decode gives them): what the task state reads of
    a channel left encoded (its goal is the first human message of ``messages``). Iterating
    a value that is not an array yields nothing; damage ends it with a ``BlobError``."""

    __slots__ = ("buf", "start", "what")

    def __init__(self, buf: bytes, start: int, what: str) -> None:
        self.buf, self.start, self.what = buf, start, what

    def __iter__(self) -> Iterator[Any]:
        return self.holding()

    def holding(self, *needles: bytes) -> Iterator[Any]:
        """The items, those whose encoding holds none of ``needles`` left out undecoded (a
        string the decoded item holds, as a key, value or type name, is in its encoding as
        it is: an item without it is none the test of that string would pick)."""
        head = header(self.buf, self.start)
        if head is None or head[0] != _ARRAY:
            return
        reader = _reader(self.buf, self.start + head[2])
        budget = DecodeBudget(self.what)
        at = self.start + head[2]
        try:
            for _ in range(head[1]):
                if needles:
                    reader.skip()
                    end = self.start + head[2] + reader.tell()
                    item = self.buf[at:end]
                    at = end
                    if any(n in item for n in needles):
                        yield to_plain(unpack(item), budget)
                    continue
                yield to_plain(reader.unpack(), budget)
        except (ValueError, TypeError, msgpack.UnpackException) as err:
            if isinstance(err, limits.BudgetExceeded):
                raise
            raise BlobError(f"malformed msgpack ({type(err).__name__}: {err})") from err


def big_channels(blob: bytes, keep: frozenset[str] = frozenset(), every: bool = False) -> dict[str, tuple[int, int]]:
    """Channel → its value's span in a checkpoint body (a msgpack map holding
    ``channel_values``) for the big values (``is_big``; ``every``: all values) of channels
    not in ``keep``; {} when the body is not such a map (then it is decoded as usual)."""
    found: dict[str, tuple[int, int]] = {}
    try:
        reader = _reader(blob, 0)
        for _ in range(reader.read_map_header()):
            key = reader.unpack()
            if key != "channel_values":
                reader.skip()
                continue
            for _ in range(reader.read_map_header()):
                channel = reader.unpack()
                start = reader.tell()
                head = header(blob, start)
                reader.skip()
                if isinstance(channel, str) and channel not in keep and (every or is_big(head)):
                    found[channel] = (start, reader.tell())
    except (ValueError, TypeError, msgpack.UnpackException):
        return {}       # damaged: the whole-body decode says how
    return found


def without_spans(blob: bytes, spans: list[tuple[int, int]]) -> bytes:
    """``blob`` with each span (a whole msgpack value) replaced by nil: a valid body whose
    big values decode to None in no time."""
    parts, at = [], 0
    for start, end in sorted(spans):
        parts += [blob[at:start], b"\xc0"]
        at = end
    parts.append(blob[at:])
    return b"".join(parts)


__all__ = ["BIG_BYTES", "BIG_ITEMS", "EncodedItems", "MsgpackText", "big_channels", "header", "is_big", "lazy_span",
           "without_spans"]
