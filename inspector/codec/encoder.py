"""``PieceEncoder``: successive states of one run into content-addressed pieces (pure, no SQL).

A container or string whose encoding exceeds ``INLINE_MAX`` bytes is stored as a piece of
its own (a ``Ref`` in its parent). A list of ``CHUNK_MIN_ITEMS`` or more is cut into chunks
at content-defined boundaries, a map of ``MAP_MIN_KEYS`` or more likewise (boundaries decided
by its keys alone), and a table of more than ``TABLE_MAX`` chunks is itself cut into
sub-tables (a tree), so replacing one value of a 50 MB map rewrites its chunk, one small
table per level and the root. A long string edited since the last save is a text piece: its
lines stored as such a list (``_text``), so an edit rewrites the chunk around it. Unchanged
parts are found by comparing exact fingerprints (the values' msgpack encodings, one strict C
call per chunk) with those kept per path — an agent may mutate its state in place, and ``==``
would take 1 for True or 1.0 and ignore key order, so reuse would store the old value. Runs of
many changed items are encoded in bulk (C calls, no Python step per field) and, when an old
layout was mostly dirty, cut into coarse chunks, which compress like one blob: a dense change
costs no more than compressing the whole state would.

A state nested deeper than the read depth budget (``inspector.limits``, 256 levels by
default) is refused with ``StateTooDeepError`` before anything is stored: a level counter
in the container branch of the walk, and for the small values a chunk packs whole, a depth
walk of only those that are long enough to nest past the levels left (``depth_of``; a tuple
key counts its own levels, as it is read back: ``check_keys``).
"""

from __future__ import annotations

import sys
from bisect import bisect_left, bisect_right
from itertools import accumulate, compress
from operator import eq, is_, itemgetter
from typing import Any, NamedTuple
from collections.abc import Callable

import msgpack
import xxhash

from inspector.codec.encoded import HEAVY, Bulk, Encoded, fingerprint, fingerprints, heavy_print, joined, matches
from inspector import limits
from inspector.codec.gcpause import gc_paused
from inspector.codec.maps import MAP_MIN_KEYS, MapChunker
from inspector.codec.markers import (DIGEST_SIZE, Chunk, ChunkedList, ChunkedMap, ChunkedText, Ref, digest_of,
                                     frame_chunk, new_packer, pack, plain_scalar)
from inspector.errors import StateTooDeepError

INLINE_MAX = 512          # bytes: larger children become pieces of their own
CHUNK_MIN_ITEMS = 16      # lists at least this long are chunked
CHUNK_MASK = 0x1F00       # content-defined boundary (low 5 bits of the mark's first byte): about 32 items a chunk
CHUNK_MAX_ITEMS = 128
CHUNK_MAX_BYTES = 64 * 1024
FINE_RULE = (CHUNK_MASK, CHUNK_MAX_ITEMS, CHUNK_MAX_BYTES)
TEXT_RULE = (0x7F00, 1024, CHUNK_MAX_BYTES)   # a text's segments: about 128 a chunk (a few KB, compressed as text)
COARSE_MASK = 0xFF03      # dense rewrites: a zero first byte and 2 more bits zero, about 1,024 items a chunk
COARSE_MAX_ITEMS = 4096
COARSE_MAX_BYTES = 1024 * 1024
RESYNC_SCAN = 4096        # items looked through for the next place of an old chunk's repeated first item
PROBE_CHUNKS = 8          # old chunks searched for a list's new first or last item (a window moved over it)
COARSE_MIN_RUN = 256      # a rewritten run this long, with ...
COARSE_MIN_CHANGED = 16   # ... at least 1 in this many items changed, is dense
TABLE_MAX = 64            # a table with more entries becomes a tree of sub-tables
TABLE_MASK = 0x1F         # sub-table boundaries: about 32 entries each
TEXT_MIN = 16 * 1024      # characters: a string this long that was edited is stored as a text piece (format 4)
TEXT_MAX = 15 * 1024 * 1024   # … up to this long (longer ones stay one piece: the diff streams those)
TEXT_KEEP = 128 * 1024 * 1024   # bytes of long strings a writer keeps to compare the next save's with
ANCHOR = 2048             # characters at either end of a long string by which an edited version is found again
ANCHOR_KEYS = 8           # texts remembered per beginning or end (a heading many share)
SEGMENT_MAX = 120         # characters of a text segment: its encoding (<= 4 bytes a character) stays inline
FORMAT = 4                # the newest piece layout this encoder writes
CACHE_BYTES = 64 * 1024 * 1024   # a writer forgets what it kept per path past this many bytes …
CACHE_PATHS = 100_000            # … or paths (those of earlier states linger: a new key a step)

_SCALARS = frozenset({int, float, bool, type(None)})
_FLAT_KEYS = frozenset({str, int, float, bool, bytes, type(None)})   # keys that nest no level
_array_header = msgpack.Packer().pack_array_header


class _Text(NamedTuple):
    """What a writer keeps of a long string it stored: to compare the next one with."""

    value: str
    result: Encoded
    segments: list | None = None    # its segments, when stored as a text piece …
    chunks: list | None = None      # … the list layout made of them (``PieceEncoder._lists``) …
    chars: list | None = None       # … and the characters of each of those chunks


class _ListChunk(NamedTuple):
    fps: list        # each item's fingerprint (its value's msgpack encoding)
    forms: list      # the marker the chunk piece stores for an item (None: the item as it is)
    sizes: list
    encoded: list    # each item as the chunk piece frames it
    fp: bytes | None  # the fingerprint of the chunk's items as one list (None when one is a heavy
                      # print or past ``JOIN_MAX`` bytes: its items' own are compared)
    chunk: Chunk
    closed: bool     # ended at a boundary of the rule (not at the end of the list)


def encode_flat(value: Any) -> tuple[bytes, int, dict[bytes, bytes]]:
    """Store a small value (a task state) as one piece: (digest, size, {digest: raw})."""
    raw = fingerprint(value) or pack(value)     # the same bytes; ``pack`` converts or refuses the rest
    digest = digest_of(raw)
    return digest, len(raw), {digest: raw}


class PieceEncoder:
    """Encodes successive states of one run; ``encode`` is the whole public interface.

    ``chunk_format`` chooses the layout written: 3 (chunked maps and table trees), 2 (list
    chunks framed, flat tables, maps whole) or 1 (list chunks as plain arrays); tests write
    older layouts with it to check that stores of every format still read.
    """

    chunk_format = FORMAT
    #: the values given are never changed once encoded (InspectorSaver's lowered forms, see
    #: ``inspector.record.lglower.FrozenMatches``): a list holding the very items the last
    #: encoding at its path held keeps those chunks without looking at them one by one
    frozen = False

    def __init__(self) -> None:
        self._cache: dict[tuple, Encoded] = {}
        self._cache_bytes = 0     # of the fingerprints ``_cache`` holds
        self._lists: dict[tuple, list[_ListChunk]] = {}
        self._frozen_lists: dict[tuple, tuple[list, Encoded]] = {}   # path → the list last encoded there and its result (``frozen``)
        self._tables: dict[tuple, Chunk] = {}
        self._texts: dict[tuple, _Text] = {}   # a path (or ("text", n)) → the long string last encoded there, and how
        self._text_ends: dict[tuple, list[tuple]] = {}   # (end, hash of a text's first or last ANCHOR characters) → keys in ``_texts`` of the last texts with it
        self._text_bytes = 0                      # memory of the strings ``_texts`` holds (most are the state's own)
        self._text_serial = 0                     # keys of texts without a path (in a chunked list's items)
        self.new_pieces: dict[bytes, bytes] = {}
        self._pack: Callable[[Any], bytes] = new_packer().pack
        self._maps = MapChunker(self)
        self.matches = matches
        self.top_form: Any = None
        self._top_raw: bytes | None = None    # the root's encoding when the walk made it
        self.mark_memo: dict[bytes, int] = {}   # list chunk marks by item encoding (see ``_marks``)
        self._heavy: dict[int, list] = {}     # id → [an item or map value found heavy, the save it was last seen in]
        self._serial = 0                      # saves encoded
        self._prints = 0                      # heavy prints ``fp`` made this save
        self._level = 0                       # containers open in the walk
        self._max_depth = limits.current().depth

    def encode(self, value: Any) -> tuple[bytes, int, dict[bytes, bytes]]:
        """Store ``value`` as a root piece: (root digest, logical size, new pieces)."""
        self.new_pieces = {}
        self._level, self._max_depth = 0, limits.current().depth
        self._top_raw = None
        self._serial += 1
        self._prints = 0
        if self._heavy:     # those not seen in the last save are let go
            self._heavy = {k: e for k, e in self._heavy.items() if e[1] >= self._serial - 1}
        if self._cache_bytes > CACHE_BYTES or len(self._cache) > CACHE_PATHS:
            # paths of earlier states that are gone (a new key a step) are kept until here
            self._cache.clear()
            self._cache_bytes = 0
        if len(self._lists) + len(self._maps) > CACHE_PATHS:
            self._lists.clear()
            self._frozen_lists.clear()
            self._maps.forget()
        with gc_paused():
            result = self._encode(value, ("$",), top=True)
        self.top_form = result.form
        raw = self._top_raw if self._top_raw is not None else self._pack(result.form)
        digest = digest_of(raw)
        self.new_pieces[digest] = raw
        pieces, self.new_pieces = self.new_pieces, {}
        if len(self._tables) > 20_000:      # (a sub-table's key holds its entries' digests: ~0.6 KB)
            self._tables.clear()
        return digest, max(result.size, len(raw)), pieces

    def forget(self) -> None:
        """Drop the cache (e.g. after a failed transaction), and the packer's buffer (as big
        as the biggest piece it packed)."""
        self._pack = new_packer().pack
        self._cache.clear()
        self._cache_bytes = 0
        self._lists.clear()
        self._frozen_lists.clear()
        self._tables.clear()
        self._forget_texts()
        self._maps.forget()
        self._heavy.clear()

    # -- pieces ----------------------------------------------------------------
    def store(self, raw: bytes) -> bytes:
        """Add the raw bytes of a piece to this save's new pieces; its digest."""
        digest = digest_of(raw)
        self.new_pieces.setdefault(digest, raw)
        return digest

    def table(self, kind: type, entries: list[Chunk]) -> Any:
        """The marker of a chunked list or map over ``entries``: flat up to ``TABLE_MAX``
        entries, else a tree whose sub-tables are cut where an entry's digest says so."""
        height = 0
        if self.chunk_format >= 3:
            while len(entries) > TABLE_MAX:
                entries = [self._sub_table(kind, height, group, digests) for group, digests in _groups(entries)]
                height += 1
        return kind(tuple(entries), height)

    def _sub_table(self, kind: type, height: int, group: list[Chunk], digests: bytes | tuple) -> Chunk:
        key = (kind, height, digests)
        hit = self._tables.get(key)
        if hit is None:
            marker = kind(tuple(group), height)
            hit = Chunk(marker.length, marker.size, self.store(self._pack(marker)))
            self._tables[key] = hit
        return hit

    # -- values ----------------------------------------------------------------
    def _encode(self, value: Any, path: tuple | None, top: bool = False) -> Encoded:
        kind = type(value)
        if kind in _SCALARS:   # the common leaf: no further checks
            return Encoded(value, 9, b"")
        if kind is str or kind is bytes:
            if top or len(value) <= INLINE_MAX:
                return Encoded(value, len(value) + 5, b"")
            if kind is str and len(value) >= TEXT_MIN and self.chunk_format >= 4:
                return self._text(value, path)
            raw = self._pack(value)
            return Encoded(Ref(self.store(raw), len(raw)), len(raw), b"")
        if kind is not dict and kind is not list:
            value = _plain(value)
            if type(value) is not dict and type(value) is not list:
                return self._encode(value, path, top)
        self._level += 1
        if self._level > self._max_depth:
            self._too_deep()
        try:
            return self._container(value, path, top)
        finally:
            self._level -= 1

    def adopt_text(self, path: tuple | None, value: str, ref: Ref) -> None:
        """Take ``ref`` (a piece already stored) as how the long string ``value`` at ``path``
        is stored: a fork encoding its source's state again shares the source's text pieces
        instead of storing each text whole once more. ``path`` is as ``encode`` walks: the
        root is ``("$",)``, a key or an index is appended per level; None inside the items of
        a chunked list (found again by its ends, see ``_text``)."""
        self._keep_text(path if path is not None else self._text_key(), _Text(value, Encoded(ref, ref.size, b"")))

    def _text(self, value: str, path: tuple | None) -> Encoded:
        """A long string: the very text last encoded at ``path`` costs nothing; one edited from
        it (``_shares_an_end``: an insertion, a rewritten passage, an append) is stored as a text
        piece, a chunked list of its lines, so that only the chunks around the edit are new; any
        other (a first one, one written anew) is one piece, as a short string is: cutting a
        text into lines costs more than compressing it whole when no chunk can be kept.

        A text with no path (in an item of a chunked list), or not at its path before (a key
        renamed, an item moved in a short list), is looked up by its first and last
        ``ANCHOR`` characters among the texts this writer encoded (``_related``)."""
        key = path
        last = self._texts.get(path) if path is not None else None
        if last is not None and last.value == value:     # ``==`` on two str is exact
            return last.result
        cut = self._cut(key, last, value)
        if cut is None:
            found = self._related(value)
            if found is not None:
                key, last = found
                if last.value == value:
                    if path is not None:
                        self._keep_text(path, last)
                    return last.result
                cut = self._cut(key, last, value)
            elif path is None:
                key = self._text_key()
        assert key is not None
        segments, same, tail = cut or (None, 0, 0)
        if path is not None and key != path:     # the lines' old chunks are the related text's
            self._lists[path] = self._lists.get(key, [])
            key = path
        if segments is None:
            raw = self._pack(value)
            kept = _Text(value, Encoded(Ref(self.store(raw), len(raw)), len(raw), b""))
            self._lists.pop(key, None)
        else:
            table = self._encode_chunked(segments, key, TEXT_RULE, same, tail).form
            size = len(value) if value.isascii() else len(value.encode("utf-8"))
            size += 3 if size < 0x10000 else 5        # as long as the string's own encoding
            chunks = self._lists[key]
            kept = _Text(value, Encoded(Ref(self.store(self._pack(ChunkedText(table.chunks, table.height))), size),
                                        size, b""), segments, chunks, _chunk_chars(chunks, segments, last))
        self._keep_text(key, kept)
        return kept.result

    def _cut(self, key: tuple | None, last: _Text | None, value: str) -> tuple[list[str] | None, int, int] | None:
        """How ``value``, edited from ``last`` (kept under ``key``), is cut: its segments (None:
        one piece all the same) and how many of ``last``'s it keeps at the start and the end;
        None when it was not edited from it (no third alike at either end, or too long)."""
        if last is None or key is None or len(value) > TEXT_MAX:
            return None
        if last.segments is not None and last.chars is not None and self._lists.get(key) is last.chunks:
            return _edited(last, value)     # the lines around the edit only; the others are the old ones
        return (text_segments(value), 0, 0) if _shares_an_end(last.value, value) else None

    def _related(self, value: str) -> tuple[tuple, _Text] | None:
        """A text this writer encoded that ``value`` is, or was edited from: one of the last
        that began or ended with the same ``ANCHOR`` characters (found by their hash: texts
        under one heading share a beginning) and shares a third at that end; its key in
        ``_texts`` and what ``_texts`` keeps of it."""
        for end in ((0, hash(value[:ANCHOR])), (1, hash(value[-ANCHOR:]))):
            for key in reversed(self._text_ends.get(end, ())):
                last = self._texts.get(key)
                if last is not None and (last.value == value or (len(value) <= TEXT_MAX and _shares_an_end(last.value, value))):
                    return key, last
        return None

    def _text_key(self) -> tuple:
        """A new key in ``_texts`` for a text without a path (never a path: those start "$")."""
        self._text_serial += 1
        return ("text", self._text_serial)

    def _keep_text(self, key: tuple, text: _Text) -> None:
        """Remember how a text was stored under ``key`` and by its two ends; everything is
        forgotten when the texts kept pass ``TEXT_KEEP`` bytes or 10,000, or their ends 40,000 (the states of a
        writer rarely hold that much long text at once: a first edit after is stored whole)."""
        value = text.value
        was = self._texts.get(key)
        self._text_bytes += _kept_bytes(text) - (_kept_bytes(was) if was is not None else 0)
        if self._text_bytes > TEXT_KEEP or len(self._texts) >= 10_000 or len(self._text_ends) >= 40_000:
            self._forget_texts()
            self._text_bytes = _kept_bytes(text)
        self._texts[key] = text
        for end in ((0, hash(value[:ANCHOR])), (1, hash(value[-ANCHOR:]))):
            keys = self._text_ends.setdefault(end, [])
            if key in keys:
                keys.remove(key)
            keys.append(key)
            if len(keys) > ANCHOR_KEYS:
                del keys[0]

    def _forget_texts(self) -> None:
        for key in self._texts:
            if key[0] == "text":
                self._lists.pop(key, None)
        self._texts.clear()
        self._text_ends.clear()
        self._text_bytes = 0

    def _too_deep(self) -> None:
        raise StateTooDeepError(
            f"The state nests more than {self._max_depth:,} levels deep, deeper than a store is read "
            f"by default ({limits.BUDGETS['depth'].env}); nothing was saved.")

    def _container(self, value: Any, path: tuple | None, top: bool) -> Encoded:
        if type(value) is list and len(value) >= CHUNK_MIN_ITEMS:
            return self._encode_chunked(value, path)
        if type(value) is dict and len(value) >= MAP_MIN_KEYS and self.chunk_format >= 3:
            return self._maps.encode(value, path)
        if type(value) is dict and not _FLAT_KEYS.issuperset(map(type, value)):
            self.check_keys(value)
        fp: bytes | tuple | None = None
        cached = path is not None and not top
        if path is not None and cached:
            hit = self._cache.get(path)
            if hit is not None and hit.fp is not None:
                fp = heavy_print(value) if type(hit.fp) is tuple else fingerprint(value)
                if fp is not None and fp == hit.fp:
                    return hit
        # small leaves are their own form (no call, no Encoded each); others are encoded
        extra = 0              # the logical size of the pieces the children name
        nested = False         # a chunked container inside, or one with a heavy print (it checks itself)
        form: Any
        if type(value) is dict:
            form = {}
            for k, v in value.items():
                kind = type(v)
                if kind in _SCALARS or ((kind is str or kind is bytes) and len(v) <= INLINE_MAX):
                    form[k] = v
                    continue
                part = self._encode(v, None if path is None else path + (k,))
                form[k] = part.form
                if type(part.form) in _MARKER_TYPES:
                    extra += part.size
                if type(part.fp) is not bytes:     # None or a heavy print: look at it each time
                    nested = True
        else:
            form = []
            for i, v in enumerate(value):
                kind = type(v)
                if kind in _SCALARS or ((kind is str or kind is bytes) and len(v) <= INLINE_MAX):
                    form.append(v)
                    continue
                part = self._encode(v, None if path is None else path + (i,))
                form.append(part.form)
                if type(part.form) in _MARKER_TYPES:
                    extra += part.size
                if type(part.fp) is not bytes:     # None or a heavy print: look at it each time
                    nested = True
        raw = self._pack(form)
        size = len(raw) + extra
        if top:
            self._top_raw = raw        # ``encode`` stores it as the root piece, not packing it again
        elif len(raw) > INLINE_MAX:
            form = Ref(self.store(raw), size)
        if path is None or not cached:
            return Encoded(form, size, b"")
        if nested:
            fp = None
        elif extra >= HEAVY:
            # it names long pieces: compared by its heavy print next time, not packed again
            # (None: revisited at every save, as a chunked container is)
            fp = fp if type(fp) is tuple else heavy_print(value)
        elif fp is None:
            fp = fingerprint(value)
        result = Encoded(form, size, fp)
        was = self._cache.get(path)
        self._cache_bytes += (len(fp) if fp is not None else 0) - (len(was.fp) if was is not None and was.fp else 0)
        self._cache[path] = result
        return result

    def check_keys(self, keys: Any) -> None:
        """StateTooDeepError when a key of the map open at this level (a tuple, stored as an
        array) nests past the levels left: it is read back at its map's level plus its own."""
        left = self._max_depth - self._level
        for key in keys:
            if isinstance(key, tuple) and limits.depth_of(key, left, keys=True) > left:
                self._too_deep()

    def fp(self, value: Any) -> bytes | tuple | None:
        """The fingerprint of a list item or map value: ``heavy_print`` for the very object
        ``bulk`` found heavy in this save or the last, and for a long string; else
        ``fingerprint``."""
        if self._heavy:
            hit = self._heavy.get(id(value))
            if hit is not None and hit[0] is value:
                hp = heavy_print(value)
                if hp is not None:
                    hit[1] = self._serial
                    self._prints += 1
                    return hp
                del self._heavy[id(value)]
        kind = type(value)
        if (kind is str or kind is bytes) and len(value) >= HEAVY:
            self._prints += 1
            return heavy_print(value)
        return fingerprint(value)

    def fps(self, values: list) -> list:
        """``fp`` of each value: one C call (``fingerprints``) for all but the values found
        heavy (walked), and, in a short run, for strings or bytes long enough."""
        if (len(values) <= _SCAN_LONG and not _SHORT_KINDS.isdisjoint(map(type, values))
                and _may_be_long(values)):
            return list(map(self.fp, values))
        heavy = self._heavy
        if heavy and not heavy.keys().isdisjoint(map(id, values)):     # (one C pass, stopping at the first)
            # the others in one C call (the heavy ones stand in as None), the heavy ones walked
            at = list(compress(range(len(values)), map(heavy.__contains__, map(id, values))))
            rest = list(values)
            for i in at:
                rest[i] = None
            out = fingerprints(rest)
            for i in at:
                out[i] = self.fp(values[i])
            return out
        return fingerprints(values)

    def bulk(self, values: list, base: tuple | None = None, names: list | None = None,
             known: list | None = None) -> Bulk:
        """Encode many values at once: one C call packs each (an encoding is also the value's
        fingerprint); only values over ``INLINE_MAX`` bytes go through ``_encode`` (at path
        ``base + (names[i],)`` when a base is given), their chunk then framing the form that
        names their pieces. ``known``: the values' fingerprints, when the caller just made them."""
        pack = self._pack
        fps = self.fps(values) if known is None else known   # byte for byte what ``pack`` writes, faster
        left = self._max_depth - self._level          # levels the values may still nest
        if None in fps:                # a subclass to store as its plain type, a tuple (key), or a refusal
            for value, fp in zip(values, fps, strict=True):     # (too deep for ``pack``, or to read back)
                if fp is None and limits.depth_of(value, left, keys=True) > left:
                    self._too_deep()
            fps = [pack(v) if fp is None else fp for v, fp in zip(values, fps, strict=True)]
        sizes = list(map(len, fps))
        if self._prints:       # a heavy print (a tuple; ``fp`` made it this save) tells no size: the value is long
            sizes = [size if type(fp) is bytes else HEAVY for fp, size in zip(fps, sizes, strict=True)]
        if left < INLINE_MAX:   # a value packed whole is not walked: only a long one can nest that deep
            for value, size in zip(values, sizes, strict=True):
                if size > left and size <= INLINE_MAX and limits.depth_of(value, left, keys=True) > left:
                    self._too_deep()
        forms: list = [None] * len(values)
        if not sizes or max(sizes) <= INLINE_MAX:
            return Bulk(forms, sizes, fps, fps)
        encoded = list(fps)
        fps = list(fps)      # (``known`` is the caller's)
        for i, size in enumerate(sizes):
            if size > INLINE_MAX:
                value = values[i]
                result = self._encode(value, None if base is None or names is None else base + (names[i],))
                forms[i], sizes[i] = result.form, result.size
                encoded[i] = pack(result.form)
                if size >= HEAVY and type(fps[i]) is bytes:
                    # long strings: compared by ``heavy_print`` while it is this very object
                    hp = heavy_print(value)
                    if hp is not None:
                        fps[i] = hp
                        self._heavy[id(value)] = [value, self._serial]
        return Bulk(forms, sizes, fps, encoded)

    # -- chunked lists -----------------------------------------------------------
    def _encode_chunked(self, value: list, path: tuple | None, rule: tuple = FINE_RULE, same: int = 0,
                        tail: int = 0) -> Encoded:
        """A chunked list; ``same`` and ``tail``: its first and last items are the very objects
        (immutable) the list last encoded at ``path`` began and ended with, so the old chunks
        among them are kept unlooked at."""
        old = self._lists.get(path) if path is not None else None
        last = self._frozen_lists.get(path) if self.frozen and path is not None and old else None
        if last is not None and last[0] is value:
            # the very list encoded here last time, which nothing changes: the same chunks and
            # table (a channel a put stores again as it was, a whole message history)
            return last[1]
        chunks = _ListLayout(self, value, old, last[0] if last is not None else None, rule, same, tail).chunks()
        marker = self.table(ChunkedList, [c.chunk for c in chunks])
        result = Encoded(marker, marker.size, None)
        if path is not None:
            self._lists[path] = chunks
            if self.frozen:
                self._frozen_lists[path] = (value, result)
        return result

    def close_list_chunk(self, fps: list, forms: list, sizes: list, encoded: list, closed: bool) -> _ListChunk:
        """Store one list chunk piece."""
        header = _array_header(len(encoded))
        raw = frame_chunk(encoded) if self.chunk_format >= 2 else header + b"".join(encoded)
        size = max(sum(sizes), len(raw))
        fp = joined(header, fps, size)
        return _ListChunk(fps, forms, sizes, encoded, fp, Chunk(len(fps), size, self.store(raw)), closed)


_MARKER_TYPES = frozenset({Ref, ChunkedList, ChunkedMap})
_SHORT_KINDS = frozenset({str, bytes})
_SCAN_LONG = 64       # a run of values this short is looked at for long strings (``PieceEncoder.fps``)


def _may_be_long(values: list) -> bool:
    """Whether one of ``values`` (strings among them) may be a string of ``HEAVY`` or more:
    one C pass when all have a length (a container's is its count: short), else yes."""
    try:
        return max(map(len, values)) >= HEAVY
    except TypeError:
        return True


ADOPT_READS = 4096    # pieces ``adopt_texts`` reads to find the stored long texts (the load before read them)


def adopt_texts(enc: PieceEncoder, read_piece: Callable[[bytes], Any], root: bytes | None, old: Any, new: Any) -> None:
    """Hand ``enc`` the pieces stored for each long string of ``old`` (the state whose root
    piece is ``root``) that ``new`` still holds at the same place, found by walking the stored
    forms beside both states (maps and lists, and the pieces their references name): a fork,
    or a resumed run's writer, then shares them, where encoding afresh would store each such
    text whole (a writer stores a text it has not seen before as one piece). Only what can
    hold a long string is walked (``_may_hold``); at most ``ADOPT_READS`` pieces are read."""
    if not root or not _may_hold(old):
        return
    stack: list[tuple[tuple | None, Any, Any, Any]] = [(("$",), read_piece(root), old, new)]
    reads = 1
    while stack:
        path, form, was, now = stack.pop()
        if type(form) is Ref:
            if form.size < TEXT_MIN:
                continue
            if type(was) is str:
                if was == now:
                    enc.adopt_text(path, was, form)
                continue
            if reads >= ADOPT_READS:
                continue
            form, reads = read_piece(form.digest), reads + 1
        if type(form) is ChunkedMap and type(was) is dict and type(now) is dict:
            for chunk in form.chunks[:max(0, ADOPT_READS - reads)]:     # a chunk: a dict; a sub-table: a map
                if chunk.size >= TEXT_MIN:
                    stack.append((path, read_piece(chunk.digest), was, now))
                    reads += 1
        elif type(form) is ChunkedList and type(was) is list and type(now) is list:
            items, reads = _list_items(read_piece, form, reads, min(len(was), len(now)))   # the items have no path
            stack.extend((None, f, was[i], now[i]) for i, f in enumerate(items)
                         if i < len(was) and i < len(now) and _may_hold(was[i]))
        elif type(form) is dict and type(was) is dict and type(now) is dict:
            stack.extend((None if path is None else path + (k,), f, was[k], now[k])
                         for k, f in form.items() if k in was and k in now and _may_hold(was[k]))
        elif type(form) is list and type(was) is list and type(now) is list and len(form) == len(was) < CHUNK_MIN_ITEMS:
            stack.extend((None if path is None else path + (i,), f, was[i], now[i])
                         for i, f in enumerate(form) if i < len(now) and _may_hold(was[i]))


def _list_items(read_piece: Callable[[bytes], Any], table: ChunkedList, reads: int, limit: int) -> tuple[list, int]:
    """The stored forms of a chunked list's first ``limit`` items at most, in order (None for
    those of a chunk too small to hold a long string, not read), its chunks and sub-tables read
    up to ``ADOPT_READS`` pieces in all; and the pieces read by then."""
    items: list = []
    for chunk in table.chunks:
        if reads >= ADOPT_READS or len(items) >= limit:
            break
        if chunk.size < TEXT_MIN:
            items += [None] * min(chunk.count, limit - len(items))
            continue
        piece, reads = read_piece(chunk.digest), reads + 1
        if type(piece) is ChunkedList:
            more, reads = _list_items(read_piece, piece, reads, limit - len(items))
            items += more
        elif type(piece) is list:
            items += piece
        else:
            break
    return items, reads


def _may_hold(value: Any) -> bool:
    """Whether ``value`` is, or its values hold, a long string or a container (that may hold one)."""
    kind = type(value)
    if kind is str:
        return len(value) >= TEXT_MIN
    values = value.values() if kind is dict else value if kind is list else ()
    return any(type(v) is dict or type(v) is list or (type(v) is str and len(v) >= TEXT_MIN) for v in values)


def _shares_an_end(old: str, new: str) -> bool:
    """Whether a long string was edited rather than replaced: it begins or ends with the same
    third of the shorter one as the last string at its path did (one edit anywhere leaves at
    least that much alike at one end; a text written anew past a shared heading does not)."""
    n = min(len(old), len(new)) // 3
    return new.startswith(old[:n]) or new.endswith(old[-n:])   # one copy of a third, not two


_LINE_ENDS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")   # what ``str.splitlines`` ends a line at


def _edited(last: _Text, new: str) -> tuple[list[str] | None, int, int] | None:
    """``text_segments(new)`` for ``new``, edited from ``last`` (a text stored as a text piece),
    made from ``last``'s segments: those before the line where the two first differ and after
    the line where they last differ are kept, the lines between cut anew (one more line each
    side: a \r and a \n may meet there). Also how many segments were kept at the start and at
    the end. None when the texts share no third at either end (``_shares_an_end``); a plain cut
    when the segments are many enough that ``text_segments``' rule must decide."""
    old, segments = last.value, last.segments
    assert segments is not None and last.chars is not None and last.chunks is not None
    if len(old) == 0 or len(new) == 0:
        return None
    shorter = min(len(old), len(new))
    head = len(old) if new.startswith(old) else _common_prefix(old, new, shorter)
    back = _common_suffix(old, new, shorter - head)
    if head < shorter // 3 and back < shorter // 3:       # written anew (see ``_shares_an_end``)
        return None
    starts = _SegmentStarts(last.chunks, last.chars, segments)
    if starts.chars[-1] != len(old) or starts.counts[-1] != len(segments):   # (the books disagree: cut it all)
        return text_segments(new), 0, 0
    i = starts.segment_at(head)
    while i > 0 and not _ends_line(segments[i - 1]):      # back to the start of that line …
        i -= 1
    if i > 0:                                             # … and of the one before
        i -= 1
        while i > 0 and not _ends_line(segments[i - 1]):
            i -= 1
    j = starts.segment_at(len(old) - back, after=True)     # the first segment wholly in the shared end
    while 0 < j < len(segments) and not _ends_line(segments[j - 1]):    # on to the start of a line …
        j += 1
    if j < len(segments):                                  # … and one line further
        j += 1
        while j < len(segments) and not _ends_line(segments[j - 1]):
            j += 1
    cut_from, cut_to = starts.offset(i), starts.offset(j)
    if not (_starts_at(old, segments, i, cut_from) and _starts_at(old, segments, j, cut_to)):
        return text_segments(new), 0, 0       # (the offsets are not where the segments are)
    middle = new[cut_from:cut_to + len(new) - len(old)]
    out = segments[:i] + _cut_lines(middle.splitlines(True)) + segments[j:]
    if len(out) > len(new) // 8:
        return text_segments(new), 0, 0
    return out, i, len(segments) - j


def _kept_bytes(text: _Text) -> int:
    """About the memory a kept text holds: the string, and its segments (another copy of its
    characters, and an object each)."""
    size = sys.getsizeof(text.value)
    return size if text.segments is None else 2 * size + 56 * len(text.segments)


def _starts_at(text: str, segments: list[str], index: int, offset: int) -> bool:
    """Whether segment ``index`` of ``text`` starts at character ``offset`` (the segment before
    it ending there): a check of the offsets found through the chunks' character counts."""
    if index == 0:
        before = offset == 0
    else:
        before = text.endswith(segments[index - 1], 0, offset)
    if index >= len(segments):
        return before and offset == len(text)
    return before and text.startswith(segments[index], offset)


def _ends_line(segment: str) -> bool:
    """Whether a segment ends its line: it ends in a line end and is shorter than a slice (a
    slice of a long line may end in the \r of its \r\n)."""
    return len(segment) < SEGMENT_MAX and segment[-1] in _LINE_ENDS


def _common_prefix(a: str, b: str, limit: int) -> int:
    """How many characters ``a`` and ``b`` begin with alike (at most ``limit``): halving, each
    step comparing only the characters not yet known alike (about 2 × the length in all)."""
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if b.startswith(a[lo:mid], lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    """How many characters ``a`` and ``b`` end with alike (at most ``limit``)."""
    lo, hi = 0, limit
    la, lb = len(a), len(b)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if b.endswith(a[la - mid:la - lo], 0, lb - lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


class _SegmentStarts:
    """Where a text's segments start, found through its chunks' characters (one sum per chunk,
    then the segments of one chunk), not by adding up every segment."""

    def __init__(self, chunks: list, chars: list[int], segments: list[str]) -> None:
        self.counts = list(accumulate((c.chunk.count for c in chunks), initial=0))   # the first segment of each chunk
        self.chars = list(accumulate(chars, initial=0))       # … and its first character
        self.segments = segments

    def segment_at(self, pos: int, after: bool = False) -> int:
        """The segment holding character ``pos`` (``after``: the first starting at or after it)."""
        if pos >= self.chars[-1]:
            return len(self.segments)
        c = bisect_right(self.chars, pos) - 1
        at, first = self.chars[c], self.counts[c]
        for k, length in enumerate(map(len, self.segments[first:self.counts[c + 1]])):
            if at == pos or (at < pos < at + length and not after):
                return first + k
            if at > pos:
                return first + k
            at += length
        return self.counts[c + 1]

    def offset(self, index: int) -> int:
        """The first character of segment ``index`` (the text's length past the last)."""
        if index >= len(self.segments):
            return self.chars[-1]
        c = bisect_right(self.counts, index) - 1
        first = self.counts[c]
        return self.chars[c] + sum(map(len, self.segments[first:index]))


def _chunk_chars(chunks: list, segments: list[str], last: _Text | None) -> list[int]:
    """The characters of each chunk of a text's layout: a chunk kept from ``last``'s layout
    (the same object) has its count; the others add up their segments."""
    known = {id(c): n for c, n in zip(last.chunks, last.chars)} if (
        last is not None and last.chunks is not None and last.chars is not None) else {}
    out = []
    at = 0
    for c in chunks:
        count = c.chunk.count
        n = known.get(id(c))
        out.append(n if n is not None else sum(map(len, segments[at:at + count])))
        at += count
    return out


def _cut_lines(lines: list[str]) -> list[str]:
    """Lines longer than ``SEGMENT_MAX`` in slices of that many characters."""
    if not lines or max(map(len, lines)) <= SEGMENT_MAX:
        return lines
    cut: list[str] = []
    for line in lines:
        if len(line) > SEGMENT_MAX:
            cut += [line[i:i + SEGMENT_MAX] for i in range(0, len(line), SEGMENT_MAX)]
        else:
            cut.append(line)
    return cut


def text_segments(text: str) -> list[str] | None:
    """A text cut into segments at its line ends (content-defined: an edit moves no cut
    outside its lines), lines longer than ``SEGMENT_MAX`` in slices of that many characters;
    None when that makes more than one segment per 8 characters (a text of empty lines is
    cheaper stored whole)."""
    lines = text.splitlines(True)
    if len(lines) > len(text) // 8:
        return None
    return _cut_lines(lines)


def _plain(value: Any) -> Any:
    """A value of a subclass or look-alike of a JSON type as the plain type."""
    if isinstance(value, (tuple, list)):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    return plain_scalar(value)


def _groups(entries: list[Chunk]) -> list[tuple[list[Chunk], bytes | tuple]]:
    """Entries cut into sub-tables after an entry whose digest's last byte says so (at most
    ``TABLE_MAX`` entries each), each with its entries' digests joined (the sub-table's key).
    The cuts are found in C: the digests joined once, every 16th byte, a translation to
    cut/no cut and ``find`` (no Python step per entry)."""
    digests = b"".join(map(_DIGEST, entries))
    if len(digests) != DIGEST_SIZE * len(entries):        # not all 16 bytes: entry by entry
        ends = [n + 1 for n, entry in enumerate(entries) if not entry.digest[-1] & TABLE_MASK]
        size = None
    else:
        flags = digests[DIGEST_SIZE - 1::DIGEST_SIZE].translate(_CUT_BYTES)
        ends = []
        at = flags.find(1)
        while at >= 0:
            ends.append(at + 1)
            at = flags.find(1, at + 1)
        size = DIGEST_SIZE
    groups: list[tuple[list[Chunk], bytes | tuple]] = []

    def add(a: int, b: int) -> None:
        part = entries[a:b]
        groups.append((part, digests[a * size:b * size] if size else tuple(map(_DIGEST, part))))
    start = 0
    for end in ends:
        while end - start > TABLE_MAX:
            add(start, start + TABLE_MAX)
            start += TABLE_MAX
        add(start, end)
        start = end
    while start < len(entries):
        add(start, min(start + TABLE_MAX, len(entries)))
        start += TABLE_MAX
    return groups


_DIGEST = itemgetter(2)           # a Chunk's digest
_CUT_BYTES = bytes(0 if b & TABLE_MASK else 1 for b in range(256))   # a last digest byte → cut after it?


def cuts(marks: list[int], lengths: list[int], mask: int, max_items: int, max_bytes: int) -> list[int]:
    """Where the rule closes chunks in a run of items (end indices, ascending): after an
    item whose mark has the ``mask`` bits zero, or when a chunk reaches ``max_items`` items
    or ``max_bytes`` bytes. Items after the last end are not closed."""
    natural = [n + 1 for n, mark in enumerate(marks) if not mark & mask]
    total = list(accumulate(lengths, initial=0))
    ends: list[int] = []
    start = 0
    for end in natural:
        while True:
            cap = min(start + max_items, bisect_left(total, total[start] + max_bytes, start + 1))
            if cap >= end:
                break
            ends.append(cap)
            start = cap
        ends.append(end)
        start = end
    n = len(marks)
    while start < n:
        cap = min(start + max_items, bisect_left(total, total[start] + max_bytes, start + 1))
        if cap > n:
            break
        ends.append(cap)
        start = cap
    return ends


class _ListLayout:
    """One chunked list's new layout: old chunks whose items are unchanged are kept where the
    rule would cut them anyway; the runs between them are encoded in bulk and cut by the rule,
    a run growing into the next old chunk until its last cut meets that chunk's start."""

    def __init__(self, enc: PieceEncoder, value: list, old: list[_ListChunk] | None,
                 before: list | None = None, rule: tuple = FINE_RULE, same: int = 0, tail: int = 0) -> None:
        self.enc = enc
        self.value = value
        self.same = same          # the first items are the old list's own (immutable): their chunks stay
        self.tail = tail          # … and the last ones
        self.rule = rule          # (mask, items, bytes) of the boundaries of runs that are not dense
        self.old = old or []
        self.before = before      # the list the old chunks were made from, when it is never changed
        self.offsets = list(accumulate((c.chunk.count for c in self.old), initial=0))
        self.shift = len(value) - self.offsets[-1]
        self.deltas = [0] if self.shift == 0 else [0, self.shift]   # where old items may be now (new index - old)
        self.known: tuple[int, int, list] | None = None    # fingerprints ``_hints`` made of items start:end
        self.marks: tuple[int, int, list] | None = None    # the boundary marks of the last run's items start:end

    def chunks(self) -> list[_ListChunk]:
        n = len(self.value)
        kept = self._unchanged()
        out: list[_ListChunk] = []
        pos = k = 0
        while pos < n:
            while k < len(kept) and kept[k][0] < pos:
                k += 1
            if k < len(kept) and kept[k][0] == pos:
                out.append(kept[k][1])
                pos += kept[k][1].chunk.count
                k += 1
                continue
            reopened = None
            if out and not out[-1].closed:      # ended by the old list's end: re-open it
                reopened = out.pop()
                pos -= reopened.chunk.count
            end = kept[k][0] if k < len(kept) else n
            while True:
                made, pos = self._run(pos, end, reopened)
                reopened = None
                out.extend(made)
                if pos == end:
                    break
                if k < len(kept):          # the last cut missed the next old chunk: take it in
                    end = kept[k][0] + kept[k][1].chunk.count
                    k += 1
                else:
                    end = n
        return out

    def _unchanged(self) -> list[tuple[int, _ListChunk]]:
        """Old chunks whose items are unchanged, in order and not overlapping: at their old
        place, shifted by the change in length, or moved as the first or last items moved (a
        window over a history: items dropped at the front while others are appended; see
        ``_probe``); when items moved by more than one edit (an item removed in the middle and
        another appended), wherever their first item now is (``_resync``)."""
        value, n, shift = self.value, len(self.value), self.shift
        if (self.before is not None and shift >= 0 and len(self.before) == self.offsets[-1]
                and all(map(is_, value, self.before))):
            # the old items, never changed, start the new list (appends): every old chunk stays
            return list(zip(self.offsets, self.old))
        fps: list | None = None
        if shift == 0 and self.old and self.offsets[-1] > self.rule[1] * len(self.old):
            # coarse chunks (the last save was dense): fingerprint the items once, compare
            # each chunk's slice of them, and hand them on to the runs that are rewritten
            fps = self.enc.fps(value)
            self.known = (0, n, fps)
        deltas = self.deltas
        found: list[tuple[int, _ListChunk]] = []
        pos = 0
        if self.same:
            for o, c in zip(self.offsets, self.old):
                if o + c.chunk.count > self.same:
                    break
                found.append((o, c))
                pos = o + c.chunk.count
        kept_first = len(found)     # old chunks kept as the first items
        probed = False
        last = len(self.old) - 1
        moved = checked = 0   # chunks not found whose items went elsewhere (see ``_moved``), of those looked at
        first_missing = None  # the first old chunk not found (but the last), and the chunks found before it
        for k, (o, c) in enumerate(zip(self.offsets, self.old)):
            if k < kept_first:
                continue
            count = c.chunk.count
            if self.tail and o >= self.offsets[-1] - self.tail and o + shift >= pos:
                found.append((o + shift, c))       # among the last items, moved by the change in length
                pos = o + shift + count
                continue
            at = self._place(o, c, pos, fps)
            if at is None and not probed and k != last:
                # a chunk other than the last (re-opened by appends) not found: where did the
                # first and last items go?
                probed = True
                more = [d for d in self._probe() if d not in deltas]
                if more:
                    deltas += more
                    at = self._place(o, c, pos, fps)
            if at is not None:
                found.append((at, c))
                pos = at + count
            elif k < last:
                if first_missing is None:
                    first_missing = (k, len(found))
                checked += 1
                if fps is None and checked <= 8 and self._moved(o, c):
                    moved += 1
                    if moved == 2:       # more than one edit moved items: look for the rest anywhere
                        k0, f0 = first_missing
                        prefix = found[:f0]
                        start = prefix[-1][0] + prefix[-1][1].chunk.count if prefix else 0
                        return prefix + self._resync(k0, start)
        return found

    def _place(self, o: int, c: _ListChunk, pos: int, fps: list | None) -> int | None:
        """Where old chunk ``c`` (at ``o`` in the old list) is unchanged now, at or after ``pos``,
        trying each offset in ``deltas``; one that finds it is tried first for the next chunks
        (they most likely moved alike). ``fps``: the new items' fingerprints, when made."""
        value, n, count, deltas = self.value, len(self.value), c.chunk.count, self.deltas
        for delta in deltas:
            start = o + delta
            if (start >= pos and start + count <= n
                    and (fps[start:start + count] == c.fps if fps is not None
                         else self.enc.matches(value[start:start + count], c.fp) if c.fp is not None
                         else self._fps(start, start + count) == c.fps)):
                if delta != deltas[0]:
                    deltas.remove(delta)
                    deltas.insert(0, delta)
                return start
        return None

    def _moved(self, o: int, c: _ListChunk) -> bool:
        """Whether an old chunk not found was moved rather than changed: two of its items, at a
        third and two thirds, are not where any offset tried puts them (an edit in place leaves
        most items where they were)."""
        value, n, count = self.value, len(self.value), c.chunk.count
        if count < 3:
            return False
        samples = (count // 3, 2 * count // 3)
        return not any(0 <= o + d + j < n and self.enc.fp(value[o + d + j]) == c.fps[j]
                       for d in self.deltas for j in samples)

    def _resync(self, k0: int, start: int) -> list[tuple[int, _ListChunk]]:
        """The old chunks from the ``k0``-th on, found anywhere from item ``start`` on, in order:
        those items fingerprinted (one C call; the runs rewritten reuse them), each old chunk
        looked for where its first item now is."""
        n = len(self.value)
        fps = self._fps(start, n)
        first = dict(zip(reversed(fps), range(n - 1 - start, -1, -1)))    # a fingerprint → where it first is
        found: list[tuple[int, _ListChunk]] = []
        pos = 0
        for c in self.old[k0:]:
            count = c.chunk.count
            if not count:
                continue
            head = c.fps[0]
            at = first.get(head)
            if at is not None and at < pos:      # a repeated item: its next place, not far on
                try:
                    at = fps.index(head, pos, pos + RESYNC_SCAN)
                except ValueError:
                    at = None
            if at is not None and fps[at:at + count] == c.fps:
                found.append((start + at, c))
                pos = at + count
        return found

    def _probe(self) -> list[int]:
        """Moves of the old items that the new list's first and last items tell: the first
        found among the first ``PROBE_CHUNKS`` old chunks (items dropped at the front), the
        last among the last ones (items dropped at the end); the offsets (new index minus old)."""
        value, old, offsets = self.value, self.old, self.offsets
        if not value or not old:
            return []
        out = []
        fp = self.enc.fp(value[0])
        for idx in range(min(PROBE_CHUNKS, len(old))):
            if fp in old[idx].fps:
                out.append(-(offsets[idx] + old[idx].fps.index(fp)))
                break
        fp = self.enc.fp(value[-1])
        for idx in range(len(old) - 1, max(-1, len(old) - 1 - PROBE_CHUNKS), -1):
            fps = old[idx].fps
            if fp in fps:
                out.append(len(value) - 1 - (offsets[idx] + len(fps) - 1 - fps[::-1].index(fp)))
                break
        return out

    def _hints(self, start: int, end: int) -> _Items | None:
        """Old fingerprints, forms, sizes and encodings of the items ``start:end`` that are
        unchanged (at their old place or shifted by the change in length); ``_NO``
        fingerprint where none is. None when the run is dense (see ``_dense``): it is then
        encoded in bulk, whole."""
        count = end - start
        hints = _Items([_NO] * count, [None] * count, [0] * count, [None] * count)
        old_n = self.offsets[-1]
        if self.shift == 0 and count >= COARSE_MIN_RUN and end <= old_n and self._sampled_dense(start, end):
            return None
        for delta in self.deltas:
            lo = start - delta
            a, b = max(lo, 0), min(end - delta, old_n)
            if a >= b:
                continue
            old = self._old_range(a, b)
            base = a - lo
            # the bulk encoding of the run reuses them when they are the whole run's
            new_fps = self._fps(start + base, start + base + b - a, keep=base == 0 and b - a == count)
            same = list(map(eq, new_fps, old.fps))
            if delta == 0 and self.shift == 0 and b - a == count and _dense(count, count - same.count(True)):
                return None
            for j in [j for j, hit in enumerate(same) if hit]:
                i = j + base
                if hints.fps[i] is _NO:
                    hints.fps[i], hints.forms[i] = old.fps[j], old.forms[j]
                    hints.sizes[i], hints.encoded[i] = old.sizes[j], old.encoded[j]
        return hints

    def _fps(self, start: int, end: int, keep: bool = True) -> list:
        """The fingerprints of items ``start:end``, made only for those this save has not
        made yet: when a run's last cut misses the next kept chunk, the run is done again from
        that cut to further on (``chunks``), and its items up to where the last one ended are
        known. ``keep``: remember them for the run's own bulk encoding (``known``)."""
        known = self.known
        if known is not None and known[0] <= start <= known[1]:
            have = known[2][start - known[0]:end - known[0]]
            if end <= known[1]:
                return have
            fps = have + self.enc.fps(self.value[known[1]:end])
        else:
            fps = self.enc.fps(self.value[start:end])
        if keep:
            self.known = (start, end, fps)
        return fps

    def _run_marks(self, start: int, forms: list, encoded: list) -> list[int]:
        """``_marks`` of a run's items from ``start``; those a run done again from its last cut
        (see ``_fps``) had in the run before are taken from it, not hashed again."""
        last, n = self.marks, len(encoded)
        if last is not None and last[0] <= start <= last[1]:
            have = last[2][start - last[0]:start - last[0] + n]
            k = len(have)
            marks = have + _marks(forms[k:], encoded[k:], self.enc.mark_memo) if k < n else have
        else:
            marks = _marks(forms, encoded, self.enc.mark_memo)
        self.marks = (start, start + n, marks)
        return marks

    def _known(self, start: int, end: int) -> list | None:
        """The fingerprints of items ``start:end`` when this save made them already."""
        known = self.known
        if known is None or start < known[0] or end > known[1]:
            return None
        return known[2][start - known[0]:end - known[0]]

    def _made(self, start: int, end: int, prefix: _ListChunk | None) -> list | None:
        """The fingerprints of items ``start:end`` when this save made them already (those of
        ``prefix``, a kept chunk starting the run, are its own: its items are unchanged)."""
        if prefix is None:
            return self._known(start, end)
        k = prefix.chunk.count
        rest = self._known(start + k, end) if end > start + k else []
        return None if rest is None else prefix.fps + rest

    def _after(self, prefix: _ListChunk, start: int, end: int) -> _Items:
        """Hints for a run that starts with ``prefix``'s items (known unchanged: its own
        columns, not looked up again) and goes on to ``end``."""
        k = prefix.chunk.count
        rest = self._hints(start + k, end) if end > start + k else None
        if rest is None:
            n = end - start - k
            rest = _Items([_NO] * n, [None] * n, [0] * n, [None] * n)
        return _Items(prefix.fps + rest.fps, prefix.forms + rest.forms, prefix.sizes + rest.sizes,
                      prefix.encoded + rest.encoded)

    def _sampled_dense(self, start: int, end: int) -> bool:
        """Whether 64 items spread over ``start:end`` (in place) say the run is dense."""
        step = max(1, (end - start) // 64)
        picks = range(start, end, step)
        offsets, chunks = self.offsets, self.old
        at = [bisect_right(offsets, i) - 1 for i in picks]       # the old chunk of each pick
        old = [chunks[c].fps[i - offsets[c]] for i, c in zip(picks, at)]
        known = self._known(start, end)
        if known is not None:
            changed = sum(1 for i, o in zip(picks, old) if known[i - start] != o)
        else:
            changed = sum(1 for i, o in zip(picks, old) if self.enc.fp(self.value[i]) != o)
        return _dense(end - start, changed * step)

    def _old_range(self, lo: int, hi: int) -> _Items:
        """The old items ``lo:hi``."""
        out = _Items([], [], [], [])
        for idx in range(bisect_right(self.offsets, lo) - 1, len(self.old)):
            base = self.offsets[idx]
            if base >= hi:
                break
            c = self.old[idx]
            a, b = max(lo - base, 0), min(hi - base, c.chunk.count)
            out.fps.extend(c.fps[a:b])
            out.forms.extend(c.forms[a:b])
            out.sizes.extend(c.sizes[a:b])
            out.encoded.extend(c.encoded[a:b])
        return out

    def _run(self, start: int, end: int, prefix: _ListChunk | None = None) -> tuple[list[_ListChunk], int]:
        """Encode items ``start:end`` and close the chunks the rule cuts there (and the rest
        when ``end`` is the list's end); returns them and where the unclosed rest starts.
        ``prefix``: a kept chunk (found unchanged) whose items start the run."""
        enc = self.enc
        count = end - start
        hints = self._hints(start, end) if prefix is None else self._after(prefix, start, end)
        fresh = list(range(count)) if hints is None else [i for i, fp in enumerate(hints.fps) if fp is _NO]
        if hints is None or len(fresh) == count:     # dense, or nothing kept: all in bulk
            forms, sizes, fps, encoded = enc.bulk(self.value[start:end], known=self._fps(start, end))
        else:
            fps, forms, sizes, encoded = hints
            known = self._made(start, end, prefix)      # the fresh items' fingerprints, when made already
            if fresh and fresh[0] == count - len(fresh):     # the fresh items end the run (appends)
                keep = fresh[0]
                bulk = enc.bulk(self.value[start + keep:end], known=None if known is None else known[keep:])
                fps, forms = fps[:keep] + bulk.fps, forms[:keep] + bulk.forms
                sizes, encoded = sizes[:keep] + bulk.sizes, encoded[:keep] + bulk.encoded
            elif fresh:
                bulk = enc.bulk([self.value[start + i] for i in fresh],
                                known=None if known is None else [known[i] for i in fresh])
                taken = [fp is _NO for fp in fps]
                fps = _merge(taken, fps, bulk.fps)
                forms = _merge(taken, forms, bulk.forms)
                sizes = _merge(taken, sizes, bulk.sizes)
                encoded = _merge(taken, encoded, bulk.encoded)
        dense = bool(self.old) and _dense(count, len(fresh))
        rule = (COARSE_MASK, COARSE_MAX_ITEMS, COARSE_MAX_BYTES) if dense else self.rule
        ends = cuts(self._run_marks(start, forms, encoded), sizes, *rule)     # logical sizes, as format 2 counted
        made = []
        a = 0
        for b in ends:
            made.append(enc.close_list_chunk(fps[a:b], forms[a:b], sizes[a:b], encoded[a:b], True))
            a = b
        if end == len(self.value) and a < count:      # the list's end closes the rest
            made.append(enc.close_list_chunk(fps[a:], forms[a:], sizes[a:], encoded[a:], False))
            a = count
        return made, start + a


_NO = object()     # no old form for this item


class _Items(NamedTuple):
    """Items of a list run, column by column (as ``_ListChunk`` keeps them)."""

    fps: list
    forms: list
    sizes: list
    encoded: list


def _marks(forms: list, encoded: list[bytes], memo: dict[bytes, int]) -> list[int]:
    """The 16 bits deciding list chunk boundaries, per item: the first two bytes of the digest
    of the piece a Ref names, else of the digest of the item's encoding, the first byte high
    (the fine rule looks at that byte only, as format 2 cut lists, so an old and a new writer
    cut the same list alike; the coarse rule of dense rewrites at 2 bits more). ``memo`` keeps the marks of the encodings
    of the last run: a list's open tail chunk is cut again at every save, and its items'
    encodings (the same bytes objects) are not hashed again."""
    marks: list
    if len(encoded) > _MEMO_RUN:       # a long (dense) run: hashed, none of it kept
        marks = [h >> 112 for h in map(_hash128, encoded)]
    else:
        marks = [memo.get(e) for e in encoded]
        if None in marks:
            for n, mark in enumerate(marks):
                if mark is None:
                    marks[n] = _hash128(encoded[n]) >> 112
        if len(memo) > 50_000:
            memo.clear()
        memo.update(zip(encoded, marks))
    if Ref in map(type, forms):
        for n, form in enumerate(forms):
            if type(form) is Ref:
                marks[n] = form.digest[0] << 8 | form.digest[1]
    return marks


_hash128 = xxhash.xxh3_128_intdigest     # the digest as an int: its top 16 bits are its first two bytes
_MEMO_RUN = 2 * CHUNK_MAX_ITEMS     # runs up to this long (a re-opened tail and its appends) memoise marks


def _dense(count: int, changed: int) -> bool:
    """Whether a rewritten run of ``count`` items of which ``changed`` changed is dense."""
    return count >= COARSE_MIN_RUN and changed * COARSE_MIN_CHANGED >= count


def _merge(taken: list[bool], old: list, new: list) -> list:
    """``old`` with its ``taken`` slots filled, in order, from ``new``."""
    fill = iter(new)
    return [next(fill) if t else o for t, o in zip(taken, old)]
