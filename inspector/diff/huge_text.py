"""The text change of two huge stored strings, found by streaming their pieces (never whole).

Two pieces of ``HUGE_PIECE`` bytes or more that both hold an ASCII string (base64 data,
logs…) are compared without decoding either: each is streamed once to hash its 64 KB blocks
(aligned from its start and from its end) and keep its first ``HEAD`` characters; the first
and last unequal blocks bound the changed middle, and one more stream of each keeps only
that middle with its context. ``text_delta`` then runs on those excerpts and gives what it
gives for the whole strings (``inspector.diff.text``: the same head, tail and context). The
change's old and new values are ``StreamedText`` (the first characters and the length; the
whole string is read only when asked for). Anything else — a string that is not ASCII, a
middle over ``MAX_MIDDLE`` bytes — returns None, and the caller decodes both as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import xxhash

from inspector.codec import Ref
from inspector.diff.model import CHANGED, Change
from inspector.diff.resolve import FetchMany, StreamPiece
from inspector.diff.text import HUGE_MIDDLE, HUGE_TEXT, KEEP, huge_delta_at
from inspector.lazy import LazyText

BLOCK = 1 << 16
HEAD = HUGE_TEXT            # characters kept from each string's start (the delta looks there for line ends)
MAX_MIDDLE = HUGE_MIDDLE + 4 * KEEP + 4 * BLOCK     # a bigger differing middle: decoded as before


class StreamedText(LazyText):
    """One side of a huge string's change: its first characters, its length, read whole
    (``materialize``) only on demand."""

    __slots__ = ("ref", "fetch")

    def __init__(self, ref: Ref, length: int, prefix: str, fetch: FetchMany) -> None:
        super().__init__(length, ref.size, prefix, length)     # ASCII: characters are bytes
        self.ref, self.fetch = ref, fetch

    def materialize(self) -> Any:
        return self.fetch([self.ref.digest])[self.ref.digest]

    def __len__(self) -> int:
        return self.length


class _Side:
    """What one stream of a piece told: its text's length, head and block hashes."""

    def __init__(self) -> None:
        self.length = 0
        self.head = b""
        self.forward: list[bytes] = []
        self.backward: list[bytes] = []     # blocks aligned on the end, last block first once reversed


def _text_bytes(stream: Iterator[bytes]) -> tuple[int, Iterator[bytes]] | None:
    """(text length, the text's bytes in parts) of a piece holding one msgpack string."""
    first = b""
    for part in stream:
        first += part
        if len(first) >= 5:
            break
    if not first:
        return None
    tag = first[0]
    if 0xA0 <= tag <= 0xBF:
        length, skip = tag & 0x1F, 1
    elif tag in (0xD9, 0xDA, 0xDB):
        width = {0xD9: 1, 0xDA: 2, 0xDB: 4}[tag]
        if len(first) < 1 + width:
            return None
        length, skip = int.from_bytes(first[1:1 + width], "big"), 1 + width
    else:
        return None

    def rest() -> Iterator[bytes]:
        if len(first) > skip:
            yield first[skip:]
        yield from stream
    return length, rest()


class _Cutter:
    """Cuts a stream of parts into blocks of ``BLOCK`` bytes, the first one ``first`` long."""

    def __init__(self, first: int) -> None:
        self.want = first
        self.rest = b""

    def feed(self, part: bytes) -> list[bytes]:
        buffer = self.rest + part if self.rest else part
        out, at = [], 0
        while len(buffer) - at >= self.want:
            out.append(buffer[at:at + self.want])
            at += self.want
            self.want = BLOCK
        self.rest = buffer[at:]
        return out


def _scan(stream: StreamPiece, ref: Ref) -> _Side | None:
    """One pass: the text's length, its head and the hashes of its blocks cut from its start
    and cut from its end (all ASCII, else None)."""
    found = _text_bytes(stream(ref.digest))
    if found is None:
        return None
    side = _Side()
    side.length, parts = found
    forward, backward = _Cutter(BLOCK), _Cutter(side.length % BLOCK or BLOCK)
    seen = 0
    for part in parts:
        if not part.isascii():
            return None
        if seen < HEAD:
            side.head += part[:HEAD - seen]
        seen += len(part)
        side.forward += map(xxhash.xxh3_64_digest, forward.feed(part))
        side.backward += map(xxhash.xxh3_64_digest, backward.feed(part))
    if seen != side.length:
        return None
    for cutter, hashes in ((forward, side.forward), (backward, side.backward)):
        if cutter.rest:
            hashes.append(xxhash.xxh3_64_digest(cutter.rest))
    side.backward.reverse()      # the end's block first
    return side


def _excerpt(stream: StreamPiece, ref: Ref, lo: int, hi: int) -> bytes:
    """The text's bytes ``lo``..``hi`` (another pass over the piece)."""
    found = _text_bytes(stream(ref.digest))
    assert found is not None     # the first pass read the same piece as a string
    out, at = [], 0
    for part in found[1]:
        end = at + len(part)
        if end > lo and at < hi:
            out.append(part[max(0, lo - at):hi - at])
        at = end
        if at >= hi:
            break
    return b"".join(out)


class Excerpt:
    """A huge string known only in parts (its head and its middle): the slicing, ``find`` and
    ``rfind`` that ``huge_delta_at`` uses, answered from those parts (LookupError outside them)."""

    def __init__(self, length: int, parts: list[tuple[int, str]]) -> None:
        self.length, self.parts = length, parts

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, cut: slice | int) -> str:
        if isinstance(cut, int):
            return self[cut:cut + 1]
        lo, hi, _ = cut.indices(self.length)
        if hi <= lo:
            return ""
        start, text = self._part(lo, hi)
        return text[lo - start:hi - start]

    def _part(self, lo: int, hi: int) -> tuple[int, str]:
        for start, text in self.parts:
            if start <= lo and hi <= start + len(text):
                return start, text
        raise LookupError(f"characters {lo}..{hi} were not read")

    def find(self, sub: str, lo: int = 0, hi: int | None = None) -> int:
        hi = self.length if hi is None else min(hi, self.length)
        start, text = self._part(lo, hi)
        at = text.find(sub, lo - start, hi - start)
        return at + start if at >= 0 else -1

    def rfind(self, sub: str, lo: int = 0, hi: int | None = None) -> int:
        hi = self.length if hi is None else min(hi, self.length)
        start, text = self._part(lo, hi)
        at = text.rfind(sub, lo - start, hi - start)
        return at + start if at >= 0 else -1


def _first_unequal(xs: list[bytes], ys: list[bytes]) -> int:
    n = min(len(xs), len(ys))
    return next((k for k in range(n) if xs[k] != ys[k]), n)


def huge_text_change(path: tuple, a: Ref, b: Ref, stream: StreamPiece, fetch: FetchMany) -> Change | None:
    """The change of two huge stored ASCII strings (see the module docstring), or None."""
    old, new = _scan(stream, a), _scan(stream, b)
    if old is None or new is None:
        return None
    same_head = _first_unequal(old.forward, new.forward) * BLOCK      # at least this much in common
    same_tail = _first_unequal(old.backward, new.backward)
    shorter = min(old.length, new.length)
    same_head = min(same_head, shorter)
    tail_blocks = min(same_tail * BLOCK, shorter - same_head)
    margin = KEEP + 2 * BLOCK
    lo = max(0, same_head - margin)
    spans = [(lo, max(lo, min(side.length, side.length - tail_blocks + margin))) for side in (old, new)]
    if any(hi - lo > MAX_MIDDLE for lo, hi in spans):
        return None
    texts = []
    for side, ref, (lo, hi) in zip((old, new), (a, b), spans, strict=True):
        middle = _excerpt(stream, ref, lo, hi).decode("ascii")
        texts.append(Excerpt(side.length, [(0, side.head.decode("ascii")), (lo, middle)]))
    try:
        delta = huge_delta_at(texts[0], texts[1], same_head, tail_blocks)   # type: ignore[arg-type]  # str-like
    except LookupError:     # the delta wanted text that was not read: decode as before
        return None
    return Change(path, CHANGED, StreamedText(a, old.length, old.head.decode("ascii"), fetch),
                  StreamedText(b, new.length, new.head.decode("ascii"), fetch), delta)


__all__ = ["Excerpt", "StreamedText", "huge_text_change"]
