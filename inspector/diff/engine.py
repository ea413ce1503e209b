"""The tree-diff engine: one iterative walk for plain values and for content-addressed pieces.

Equal subtrees are skipped without walking them: two ``Ref`` markers with the same digest
are never read, two plain subtrees are first compared with C-level ``==``. Work that needs
pieces waits until a whole batch of digests can be fetched at once; every change carries
an order key (the ordinals of its ancestors) so the result comes out in document order.
"""

from collections import deque
from operator import itemgetter
from typing import Any, NamedTuple, TypeAlias, cast
from collections.abc import Callable, Sequence

from inspector.codec import (Chunk, ChunkedList, ChunkedMap, ChunkedText, Ref, check_part, split_items, split_map,
                             unpack)
from inspector.codec.gcpause import gc_paused
from inspector.diff.lists import (Added, Moved, Op, Pair, Removed, Replace, align, align_encoded, detect_moves,
                                  equal_exactly, same_exactly, trim, unmove)
from inspector.diff.matching import matcher
from inspector.diff.model import (ADDED, CHANGED, MOVED, REMOVED, CancelFn, Change, Detail, DiffCancelled,
                                  DiffError, Move, NumberDelta, ProgressFn)
from inspector import limits
from inspector.codec import expand as expansion
from inspector.diff.resolve import (FetchMany, FetchRaw, StreamPiece, StreamRaw, expand, has_markers, materialize,
                                    prefetch)
from inspector.diff.text import TEXT_MIN, text_delta
from inspector.errors import CorruptDataError
from inspector.lazy import Blocked, LazyValue

MAX_DEPTH = 20_000
TICK_EVERY = 512
_KNOWN_UNEQUAL = True
_MISSING = object()
# One step of the walk, ``(key, path, a, b, unequal)``: compare ``a`` with ``b``, found at
# ``path``; ``key`` (the ordinals of the ancestors) orders the changes found under it;
# ``unequal`` says ``a != b`` is already known, so the step skips its equality test. The
# fields are the parameters of ``Engine._step``, which the walk calls as ``step(*item)``:
# mypy checks every item built against this type and every call against those parameters.
# A plain tuple, not a NamedTuple: CPython copies a tuple subclass into a new tuple on each
# ``f(*item)`` call and unpacks it through the generic iterator path (measured: +300 ns a
# step, +4% on the nested-state benchmark).
Work: TypeAlias = tuple[tuple, tuple, Any, Any, bool]


class Region(NamedTuple):
    """An unequal run of two chunk tables aligned by digest: the entries and height of each
    side, and the list index of each side's first item."""

    entries_a: list[Chunk]
    height_a: int
    entries_b: list[Chunk]
    height_b: int
    start_a: int
    start_b: int


HUGE_PIECE = 16 << 20       # pieces of this logical size or more are read alone (``_read_huge``)
MAX_UNEQUAL_BLOCKS = 64     # encoded blocks differing beyond this (and 1/8 of them): compared built


class Engine:
    """One diff run; create one per comparison (it caches the pieces it reads)."""

    def __init__(self, fetch_many: FetchMany | None = None, *, fetch_raw: FetchRaw | None = None,
                 stream_raw: StreamRaw | None = None, cancel: CancelFn | None = None,
                 progress: ProgressFn | None = None, text_min: int = TEXT_MIN,
                 max_depth: int | None = None, stream_piece: StreamPiece | None = None) -> None:
        """``stream_piece(digest)``: a piece's raw bytes in parts — two huge strings are then
        compared streamed, never decoded whole (``inspector.diff.huge_text``)."""
        self.fetch_many = fetch_many
        self.stream_piece = stream_piece
        if stream_raw is None and fetch_raw is not None:     # raw pieces all at once: one part
            stream_raw = lambda digests: (fetch_raw(digests),)
        self.stream_raw = stream_raw
        self.raw_chunks = stream_raw is not None    # list chunks are split, their items compared encoded
        self.cancel = cancel
        self.progress = progress
        self.text_min = text_min
        self._depth_budget = max_depth is None    # the read budget, not a caller's own limit
        self.max_depth = max_depth if max_depth is not None else limits.current().depth
        self._node_budget = limits.current().nodes
        self.table: dict[bytes, Any] = {}
        self.items: dict[bytes, Any] = {}      # chunks: encoded items / map entries (or decoded ones)
        self.map_chunks: set[bytes] = set()    # which of the chunks asked for are map chunks
        self.nodes = 0
        self.pieces_read = 0
        self.fetches = 0
        self.items_decoded = 0      # list items decoded out of raw chunks (the others compared encoded)
        self._found: list[tuple[tuple, Change]] = []
        self._ready: list[Work] = []
        self._waiting: list[tuple[list[bytes], list[bytes], Callable[[], None]]] = []
        self._next_tick = TICK_EVERY

    # -- driver ------------------------------------------------------------------
    def run(self, a: Any, b: Any) -> tuple[Change, ...]:
        """All changes turning ``a`` into ``b`` (forms may hold Ref/ChunkedList markers)."""
        with gc_paused():
            try:
                return self._run(a, b)
            finally:
                # freed while the collector still sleeps: it never has to scan them
                self.table, self.items = {}, {}
                self._ready, self._waiting, self._found = [], [], []

    def _run(self, a: Any, b: Any) -> tuple[Change, ...]:
        ready, step = self._ready, self._step
        ready.append(((), (), a, b, False))
        while ready or self._waiting:
            while ready:
                step(*ready.pop())
            if self._waiting:
                self._fetch_waiting()
        self._found.sort(key=itemgetter(0))
        changes = [c for _, c in self._found]
        if self.fetch_many is not None:
            changes = self._materialize(changes)
        return tuple(changes)

    def stats(self) -> dict:
        """Counters for benchmarks and the GUI status line."""
        return {"nodes": self.nodes, "pieces_read": self.pieces_read, "fetches": self.fetches,
                "items_decoded": self.items_decoded}

    def _tick(self) -> None:
        """Every ``TICK_EVERY`` nodes (``_step`` counts them): cancel or report progress."""
        self._next_tick += TICK_EVERY
        self._check_nodes()
        if self.cancel is not None and self.cancel():
            raise DiffCancelled("The diff was cancelled.")
        if self.progress is not None:
            self.progress("diffing", self.nodes)

    def _too_deep(self) -> Exception:
        if self._depth_budget:
            return limits.BudgetExceeded("depth", f"The states nest deeper than {self.max_depth:,} levels")
        return DiffError(f"The states nest deeper than {self.max_depth} levels; they cannot be compared.")

    def _check_nodes(self) -> None:
        if self.nodes > self._node_budget:
            raise limits.BudgetExceeded("nodes", f"Comparing these states visits over {self.nodes:,} values")

    def _emit(self, key: tuple, change: Change) -> None:
        self._found.append((key, change))

    def _push(self, key: tuple, path: tuple, a: Any, b: Any, unequal: bool = False) -> None:
        self._ready.append((key, path, a, b, unequal))

    # -- pieces ------------------------------------------------------------------
    def _after(self, digests: list[bytes], then: Callable[[], None], chunks: Sequence[bytes] = ()) -> None:
        """Run ``then`` once the pieces ``digests`` and the list chunks ``chunks`` are read."""
        if all(d in self.table for d in digests) and all(d in self.items for d in chunks):
            then()
        elif self.fetch_many is None:
            raise DiffError("These values hold references to stored pieces but no store to read them from.")
        else:
            self._waiting.append((digests, list(chunks), then))

    def _read_huge(self, refs: list[Ref]) -> None:
        """Read huge pieces (a 200 MB string) now, decoded and one at a time: never two
        decompressing at once, and one the store already holds decoded (a loaded snapshot's)
        is not decoded again."""
        for ref in refs:
            if ref.digest not in self.table and self.fetch_many is not None:
                self.table.update(self.fetch_many([ref.digest]))
                self.pieces_read += 1

    def _huge_text(self, key: tuple, path: tuple, a: Ref, b: Ref) -> bool:
        """Two huge pieces that hold ASCII strings: their change found by streaming them
        (``huge_text_change``); False when they are something else (then read as usual)."""
        if self.stream_piece is None or self.fetch_many is None or min(a.size, b.size) < HUGE_PIECE:
            return False
        from inspector.diff.huge_text import huge_text_change
        change = huge_text_change(path, a, b, self.stream_piece, self.fetch_many)
        if change is None:
            return False
        self._enter(path)
        self._emit(key, change)
        return True

    def _fetch_waiting(self) -> None:
        waiting, self._waiting = self._waiting, []
        table, items = self.table, self.items
        pieces = list(dict.fromkeys(d for digests, _, _ in waiting for d in digests if d not in table))
        chunks = list(dict.fromkeys(d for _, digests, _ in waiting for d in digests if d not in items))
        if pieces or chunks:
            self.fetches += 1
            self._tick_fetch()
            if self.stream_raw is not None:
                self._stream(pieces, chunks, waiting)
                return
            self._read(pieces, chunks)
        for _, _, then in waiting:
            then()

    def _read(self, pieces: list[bytes], chunks: list[bytes]) -> None:
        """Read pieces and list chunks decoded, in one go (no raw reader)."""
        assert self.fetch_many is not None
        got = self.fetch_many(list(dict.fromkeys(pieces + chunks)))
        self.pieces_read += len(got)
        self.table.update(got)
        for digest in chunks:
            self.items[digest] = got[digest]

    def _text(self, digest: bytes) -> Any:
        """A text piece read raw, as the string it stands for (the store's reader joins it)."""
        if self.fetch_many is None:
            raise CorruptDataError("A stored text cannot be read here.")
        return self.fetch_many([digest])[digest]

    def _stream(self, pieces: list[bytes], chunks: list[bytes], waiting: list) -> None:
        """Read pieces and list chunks raw, part by part, and walk on as each part comes in:
        the steps waiting for it run (and what they queue) while the store decompresses the
        next parts. Digests are asked in the order of the steps waiting for them, so the
        parts complete those steps in order."""
        as_piece, as_chunk = set(pieces), set(chunks)
        order = dict.fromkeys(d for digests, wanted, _ in waiting for d in (*digests, *wanted)
                              if d in as_piece or d in as_chunk)
        pending = deque(waiting)
        ready, step, items, table = self._ready, self._step, self.items, self.table
        assert self.stream_raw is not None
        for part in self.stream_raw(list(order)):
            for digest, piece in part.items():
                if digest in as_chunk:
                    items[digest] = split_map(piece) if digest in self.map_chunks else split_items(piece)
                if digest in as_piece:
                    value = unpack(piece)
                    table[digest] = self._text(digest) if type(value) is ChunkedText else value
            self.pieces_read += len(part)
            while pending and all(d in table for d in pending[0][0]) and all(d in items for d in pending[0][1]):
                pending.popleft()[2]()
            while ready:
                step(*ready.pop())
            self._tick_fetch()
        for _, _, then in pending:      # everything is in now (a store raises for a missing piece)
            then()

    def _tick_fetch(self) -> None:
        if self.cancel is not None and self.cancel():
            raise DiffCancelled("The diff was cancelled.")
        if self.progress is not None:
            self.progress("diffing", self.nodes)

    def _unpack_item(self, raw: bytes) -> Any:
        self.items_decoded += 1
        return unpack(raw)

    def _chunk_items(self, entries: list[Chunk]) -> list:
        """The items (encoded or as forms) of leaf list chunks that are read."""
        items: list = []
        for chunk in entries:
            part = self.items[chunk.digest]
            if not isinstance(part, list) or len(part) != chunk.count:
                raise CorruptDataError("A stored list chunk does not match its table.")
            items.extend(part)
        return items

    def _deref(self, x: Any) -> Any:
        return self.table[x.digest] if type(x) is Ref else x

    def _materialize(self, changes: list[Change]) -> list[Change]:
        """The changes with every marker in their old/new values replaced by its content."""
        marked = [(n, _holds_markers(c.old), _holds_markers(c.new)) for n, c in enumerate(changes)]
        marked = [m for m in marked if m[1] or m[2]]
        if not marked:
            return changes
        assert self.fetch_many is not None   # _run materializes only with a piece reader
        values = [v for n, in_old, in_new in marked
                  for v, held in ((changes[n].old, in_old), (changes[n].new, in_new)) if held]
        self.pieces_read += prefetch(values, self.table, self.fetch_many)
        expansion.check_values(values, self.table, "The changed values of this diff")
        out = list(changes)
        for n, in_old, in_new in marked:
            c = changes[n]
            old = materialize(c.old, self.table, self.max_depth) if in_old else c.old
            new = materialize(c.new, self.table, self.max_depth) if in_new else c.new
            out[n] = Change(c.path, c.op, old, new, c.detail)
        return out

    # -- the walk ------------------------------------------------------------------
    def _step(self, key: tuple, path: tuple, a: Any, b: Any, unequal: bool) -> None:
        self.nodes += 1
        if self.nodes >= self._next_tick:
            self._tick()
        if a is b:
            return
        if len(path) > self.max_depth:
            raise self._too_deep()
        ta, tb = type(a), type(b)
        if ta is Ref or tb is Ref:
            if ta is tb and a.digest == b.digest:
                return
            if ta is tb and self._huge_text(key, path, a, b):
                return
            wanted = [x.digest for x in (a, b) if type(x) is Ref]
            self._read_huge([x for x in (a, b) if type(x) is Ref and x.size >= HUGE_PIECE])
            self._after(wanted, lambda: self._push(key, path, self._deref(a), self._deref(b)))
            return
        if ta in _TABLES or tb in _TABLES:
            self._chunked_any(key, path, a, b)
            return
        if isinstance(a, LazyValue) or isinstance(b, LazyValue):
            self._lazy(key, path, a, b)
            return
        if not unequal and same_exactly(a, b):
            return
        if isinstance(a, dict) and isinstance(b, dict):
            self._dict(key, path, a, b)
        elif isinstance(a, (list, tuple)) and type(a) is type(b):
            self._emit_ops(key, path, align(a, b))
        else:
            self._leaf(key, path, a, b)

    def _dict(self, key: tuple, path: tuple, a: dict, b: dict) -> None:
        common = 0
        for n, (k, vb) in enumerate(b.items()):
            va = a.get(k, _MISSING)
            if va is _MISSING:
                self._emit(key + (n,), Change(path + (k,), ADDED, None, vb))
                continue
            common += 1
            if va is vb:
                continue
            try:
                if va == vb and equal_exactly(va, vb):   # markers compare by digest, plain values in C
                    continue
            except RecursionError:
                pass
            if type(va) in _SCALARS and type(vb) in _SCALARS:
                self._unequal_leaves(key + (n,), path + (k,), va, vb)
            else:
                self._ready.append((key + (n,), path + (k,), va, vb, _KNOWN_UNEQUAL))
        if common < len(a):
            base = len(b)
            for n, (k, va) in enumerate(a.items()):
                if k not in b:
                    self._emit(key + (base + n,), Change(path + (k,), REMOVED, va, None))

    def _unequal_leaves(self, key: tuple, path: tuple, a: Any, b: Any) -> None:
        """What ``_step`` does with two unequal scalars, without a trip through the stack."""
        self._enter(path)
        if not _both_nan(a, b):
            self._found.append((key, _changed(path, a, b, self.text_min)))

    def _unequal_dicts(self, key: tuple, path: tuple, a: dict, b: dict) -> None:
        """What ``_step`` does with two unequal dicts, without a trip through the stack."""
        self._enter(path)
        self._dict(key, path, a, b)

    def _enter(self, path: tuple) -> None:
        """Count a node (``_tick`` every ``TICK_EVERY``) and refuse absurdly deep nesting."""
        self.nodes += 1
        if self.nodes >= self._next_tick:
            self._tick()
        if len(path) > self.max_depth:
            raise self._too_deep()

    def _leaf(self, key: tuple, path: tuple, a: Any, b: Any) -> None:
        if not _both_nan(a, b):
            self._found.append((key, _changed(path, a, b, self.text_min)))

    def _emit_ops(self, key: tuple, path: tuple, ops: list[Op]) -> None:
        for n, op in enumerate(ops):
            if type(op) is Pair:
                _, j, x, y = op     # unpacked in C: the hot case
                tx, ty = type(x), type(y)
                if tx in _SCALARS and ty in _SCALARS and x is not y:
                    self._unequal_leaves(key + (n,), path + (j,), x, y)
                elif tx is dict and ty is dict:     # an edited record: no trip through the stack
                    self._unequal_dicts(key + (n,), path + (j,), x, y)
                else:
                    self._push(key + (n,), path + (j,), x, y, _KNOWN_UNEQUAL)
            elif type(op) is Replace:
                self._emit(key + (n,), Change(path + (op.j,), CHANGED, op.old, op.new))
            elif type(op) is Added:
                self._emit(key + (n,), Change(path + (op.j,), ADDED, None, op.new))
            elif type(op) is Removed:
                self._emit(key + (n,), Change(path + (op.i,), REMOVED, op.old, None))
            else:
                i, j, old, new = cast(Moved, op)    # the last kind (type() checks do not narrow the rest away)
                self._emit(key + (n,), Change(path + (j,), MOVED, old, new, Move(i, j)))
                if old is not new and not same_exactly(old, new):
                    # moved and edited (the same id, or an equal value of another type): its
                    # changes follow the move, at its new place
                    self._push(key + (n, 0), path + (j,), old, new, _KNOWN_UNEQUAL)

    # -- values kept encoded (inspector.lazy) ---------------------------------------
    def _lazy(self, key: tuple, path: tuple, a: Any, b: Any) -> None:
        """Two arrays or two maps kept encoded in blocks (``Blocked``) are compared block by
        block, and only unequal blocks are decoded; when they do not line up (items inserted
        or removed before the end), or for anything else read on demand, both are built."""
        if isinstance(a, Blocked) and isinstance(b, Blocked) and a.kind == b.kind and a.BLOCK == b.BLOCK \
                and self._blocks(key, path, a, b):
            return
        whole_a = a.materialize() if isinstance(a, LazyValue) else a
        whole_b = b.materialize() if isinstance(b, LazyValue) else b
        self._push(key, path, whole_a, whole_b)

    def _blocks(self, key: tuple, path: tuple, a: Blocked, b: Blocked) -> bool:
        """``_lazy`` for two Blocked values of one kind; False (nothing done) when they do not
        line up: too many unequal blocks, or a map's keys out of line before the end."""
        size = a.BLOCK
        blocks_a, blocks_b = a.raw_blocks(), b.raw_blocks()
        shared = min(len(blocks_a), len(blocks_b))
        unequal = [k for k in range(shared) if blocks_a[k] != blocks_b[k]]
        if len(unequal) > max(MAX_UNEQUAL_BLOCKS, shared // 8):
            return False
        common = min(a.length, b.length)
        pairs = []
        for k in unequal:
            self._tick()
            lo, hi = k * size, min((k + 1) * size, common)
            ea, eb = a.entries(lo, hi), b.entries(lo, hi)
            if a.kind == "object" and [x for x, _ in ea] != [y for y, _ in eb]:
                return False
            pairs += [(lo + n, name, x, y) for n, ((name, x), (_, y)) in enumerate(zip(ea, eb)) if not same_exactly(x, y)]
        for position, name, x, y in pairs:
            self._push(key + (position,), path + (name,), x, y, _KNOWN_UNEQUAL)
        if a.length != b.length:     # past the shorter side: added, or removed
            base = max(a.length, b.length)
            for n, (name, y) in enumerate(b.entries(common, b.length)):
                self._emit(key + (common + n,), Change(path + (name,), ADDED, None, y))
            for n, (name, x) in enumerate(a.entries(common, a.length)):
                self._emit(key + (base + n,), Change(path + (name,), REMOVED, x, None))
        return True

    # -- chunked lists and maps ---------------------------------------------------
    def _chunked_any(self, key: tuple, path: tuple, a: Any, b: Any) -> None:
        ta, tb = type(a), type(b)
        if ta is tb:
            if ta is ChunkedList:
                self._chunked(key, path, a, b)
            else:
                self._chunked_map(key, path, a, b)
            return
        chunked = [x for x in (a, b) if type(x) in _TABLES]
        kinds = tuple({list if type(x) is ChunkedList else dict for x in chunked})
        if len(kinds) > 1 or any(not isinstance(x, kinds) for x in (a, b) if type(x) not in _TABLES):
            self._emit(key, Change(path, CHANGED, a, b))    # a list and a map: replaced whole
            return
        got: dict[int, Any] = {}

        def then() -> None:
            self.nodes += sum(len(v) for v in got.values())
            self._check_nodes()
            self._push(key, path, got.get(id(a), a), got.get(id(b), b))
        pending = [len(chunked)]

        def one(x: Any) -> Callable[[Any], None]:
            def done(value: Any) -> None:
                got[id(x)] = value
                pending[0] -= 1
                if not pending[0]:
                    then()
            return done
        for x in chunked:
            self._whole(x, one(x))

    def _whole(self, chunked: Any, then: Callable[[Any], None]) -> None:
        """Call ``then`` with the items (forms) of a chunked list or the entries of a map."""
        self._leaves(list(chunked.chunks), chunked.height, type(chunked),
                     lambda leaves: self._after([c.digest for c in leaves], lambda: then(expand(
                         type(chunked)(tuple(leaves)), self.table))))

    def _leaves(self, entries: list[Chunk], height: int, kind: type,
                then: Callable[[list[Chunk]], None]) -> None:
        """Call ``then`` with the leaf chunks under table ``entries`` of ``height``."""
        if not height:
            then(entries)
            return
        self._after([e.digest for e in entries], lambda: self._leaves(
            self._children(entries, height, kind), height - 1, kind, then))

    def _children(self, entries: list[Chunk], height: int, kind: type) -> list[Chunk]:
        """The entries of the sub-tables ``entries`` (read) of a table of ``height``."""
        parent = kind((), height)
        out: list[Chunk] = []
        for entry in entries:
            sub = self.table[entry.digest]
            check_part(entry, sub, parent)
            out.extend(sub.chunks)
        return out

    def _chunked(self, key: tuple, path: tuple, a: ChunkedList, b: ChunkedList) -> None:
        """Align two chunked lists table by table; read only the sub-tables and chunks that differ."""
        regions = _regions(list(a.chunks), a.height, list(b.chunks), b.height, 0, 0)
        if regions:
            self._refine(key, path, regions)

    def _refine(self, key: tuple, path: tuple, regions: list[Region]) -> None:
        """Open the sub-tables of unequal regions (the higher side first) until both sides of
        every region are leaf chunks, then compare their items."""
        deep = [e.digest for ea, ha, eb, hb, _, _ in regions for entries, h in ((ea, ha), (eb, hb))
                if h and h == max(ha, hb) for e in entries]
        if not deep:
            self._leaf_regions(key, path, regions)
            return

        def then() -> None:
            finer: list[Region] = []
            for ea, ha, eb, hb, pa, pb in regions:
                top = max(ha, hb)
                if top and ha == top:
                    ea, ha = self._children(ea, ha, ChunkedList), ha - 1
                if top and hb == top:
                    eb, hb = self._children(eb, hb, ChunkedList), hb - 1
                finer.extend(_regions(ea, ha, eb, hb, pa, pb) if top else [Region(ea, ha, eb, hb, pa, pb)])
            if finer:
                self._refine(key, path, finer)
        self._after(deep, then)

    def _leaf_regions(self, key: tuple, path: tuple, regions: list[Region]) -> None:
        wanted = [c.digest for ra, _, rb, _, _, _ in regions for c in ra + rb]

        def then() -> None:
            ops: list[Op] = []
            for ra, _, rb, _, start_a, start_b in regions:
                items_a, items_b = self._chunk_items(ra), self._chunk_items(rb)
                self.nodes += len(items_a) + len(items_b)
                self._check_nodes()
                if not self.raw_chunks:         # chunks were read decoded
                    ops.extend(align(items_a, items_b, start_a, start_b))
                else:
                    ops.extend(align_encoded(items_a, items_b, start_a, start_b, self._unpack_item))
            self._emit_ops(key, path, unmove(detect_moves(ops)))
        self._after([], then, chunks=wanted)

    def _chunked_map(self, key: tuple, path: tuple, a: ChunkedMap, b: ChunkedMap) -> None:
        """Compare two chunked maps: chunks (and sub-tables) with equal digests hold the same
        entries and are never read; the entries of the others are compared as two dicts."""
        self._map_refine(key, path, _offsets(a.chunks), a.height, _offsets(b.chunks), b.height, b.length)

    def _map_refine(self, key: tuple, path: tuple, ea: list, ha: int, eb: list, hb: int, length_b: int) -> None:
        common = {e.digest for e, _ in ea} & {e.digest for e, _ in eb}
        if common:
            ea = [x for x in ea if x[0].digest not in common]
            eb = [x for x in eb if x[0].digest not in common]
        if not ea and not eb:
            return
        top = max(ha, hb)
        if not top:
            self._map_leaves(key, path, ea, eb, length_b)
            return
        wanted = [e.digest for entries, h in ((ea, ha), (eb, hb)) if h == top for e, _ in entries]

        def then() -> None:
            na, nb = (self._map_children(ea, ha) if ha == top else ea), (self._map_children(eb, hb) if hb == top else eb)
            self._map_refine(key, path, na, ha - (ha == top), nb, hb - (hb == top), length_b)
        self._after(wanted, then)

    def _map_children(self, entries: list, height: int) -> list:
        parent = ChunkedMap((), height)
        out = []
        for entry, offset in entries:
            sub = self.table[entry.digest]
            check_part(entry, sub, parent)
            out.extend(_offsets(sub.chunks, offset))
        return out

    def _map_leaves(self, key: tuple, path: tuple, ea: list, eb: list, length_b: int) -> None:
        wanted = [e.digest for e, _ in ea + eb]
        self.map_chunks.update(wanted)

        def then() -> None:
            decode = self._unpack_item if self.raw_chunks else None
            old: dict = {}
            for entry, offset in ea:
                for i, (k, v) in enumerate(self._map_part(entry).items()):
                    old[k] = (v, offset + i)
            for entry, offset in eb:
                for i, (k, vb) in enumerate(self._map_part(entry).items()):
                    found = old.pop(k, None)
                    if found is None:
                        self._emit(key + (offset + i,), Change(path + (k,), ADDED, None,
                                                               decode(vb) if decode else vb))
                    elif found[0] != vb:
                        va = found[0]
                        if decode:
                            va, vb = decode(va), decode(vb)
                        self._push(key + (offset + i,), path + (k,), va, vb)
            for k, (va, n) in old.items():
                self._emit(key + (length_b + n,), Change(path + (k,), REMOVED, decode(va) if decode else va, None))
        self._after([], then, chunks=wanted)

    def _map_part(self, entry: Chunk) -> dict:
        part = self.items[entry.digest]
        if not isinstance(part, dict) or len(part) != entry.count:
            raise CorruptDataError("A stored map chunk does not match its table.")
        return part


_TABLES = frozenset({ChunkedList, ChunkedMap})


def _offsets(entries: tuple[Chunk, ...] | list[Chunk], start: int = 0) -> list[tuple[Chunk, int]]:
    """Table entries with the position of their first item."""
    out = []
    for entry in entries:
        out.append((entry, start))
        start += entry.count
    return out


def _regions(ea: list[Chunk], ha: int, eb: list[Chunk], hb: int, a_pos: int, b_pos: int) -> list[Region]:
    """The unequal runs of two tables' entries aligned by digest."""
    da = [c.digest for c in ea]
    db = [c.digest for c in eb]
    prefix, suffix = trim(da, db)
    a_pos += sum(c.count for c in ea[:prefix])
    b_pos += sum(c.count for c in eb[:prefix])
    mid_a, mid_b = ea[prefix:len(da) - suffix], eb[prefix:len(db) - suffix]
    regions: list[Region] = []
    for tag, i1, i2, j1, j2 in chunk_opcodes(da[prefix:len(da) - suffix], db[prefix:len(db) - suffix]):
        a_run, b_run = mid_a[i1:i2], mid_b[j1:j2]
        if tag != "equal":
            regions.append(Region(a_run, ha, b_run, hb, a_pos, b_pos))
        a_pos += sum(c.count for c in a_run)
        b_pos += sum(c.count for c in b_run)
    return regions


def chunk_opcodes(keys_a: list[bytes], keys_b: list[bytes]) -> Sequence[tuple[str, int, int, int, int]]:
    """difflib's opcodes turning the chunk digests ``keys_a`` into ``keys_b``.

    Two common cases need no matching: no chunk in common (one region), and lists of equal
    length whose shared chunks each occur once in both, at the same index (chunks edited
    in place). SequenceMatcher can only match those chunks where they are, so its
    opcodes are the runs of equal and unequal indices, built here directly.
    """
    set_a, set_b = set(keys_a), set(keys_b)
    shared = set_a & set_b
    if not shared:
        return [("replace", 0, len(keys_a), 0, len(keys_b))]
    n = len(keys_a)
    if n == len(keys_b) == len(set_a) == len(set_b):
        equal = [keys_a[i] == keys_b[i] for i in range(n)]
        if sum(equal) == len(shared):
            opcodes = []
            start = 0
            for i in range(1, n + 1):
                if i == n or equal[i] != equal[start]:
                    opcodes.append(("equal" if equal[start] else "replace", start, i, start, i))
                    start = i
            return opcodes
    return matcher(keys_a, keys_b).get_opcodes()


def _changed(path: tuple, a: Any, b: Any, text_min: int) -> Change:
    """The change of a leaf from ``a`` to ``b``, with a text or number delta when they have one."""
    detail: Detail = None
    if isinstance(a, str) and isinstance(b, str):
        if len(a) >= text_min or len(b) >= text_min:
            detail = text_delta(a, b)
    elif _is_number(a) and _is_number(b):
        detail = NumberDelta(b - a)
    return Change(path, CHANGED, a, b, detail)


def _both_nan(a: Any, b: Any) -> bool:
    """Two NaN floats: the same stored value, though ``!=`` says otherwise."""
    return type(a) is float and type(b) is float and a != a and b != b


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


_SCALARS = frozenset({str, int, float, bool, bytes, type(None)})


def _holds_markers(value: Any) -> bool:
    """``has_markers``, without a scan for the common scalar leaf."""
    return type(value) not in _SCALARS and has_markers(value)
