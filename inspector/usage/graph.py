"""Walking the content-addressed piece graph of a native store: who added which piece, and
which pieces only one checkpoint refers to (pure; pieces come from a ``fetch`` callable).

Checkpoints are walked in order. A checkpoint's walk starts at its roots and stops at every
piece an earlier checkpoint already reached (its whole subtree was reached then), so the
whole walk costs about one visit per distinct piece plus one per checkpoint — not the sum of
every state's size. A piece reached again by a later checkpoint is *shared*; sharing spreads
down to the pieces that were first stored together with it (the ones stored earlier were
already seen as shared when it was stored). What stays unshared is *unique* to the
checkpoint that stored it: removing that checkpoint alone frees it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

import msgpack

from inspector import codec as pieces
from inspector.errors import StoreError

Fetch = Callable[[Collection[bytes]], dict[bytes, Any]]   # digest -> (stored bytes, raw bytes)
MAX_PIECES = 4_000_000    # pieces the walk keeps in memory (about 1 GB); more is refused with a sentence
ROOT = ""                  # label of the part of a root piece no field claims


class PieceCache:
    """Stored size and children of every piece read so far (each piece is read once)."""

    def __init__(self, fetch: Fetch, max_pieces: int = MAX_PIECES) -> None:
        self.fetch = fetch
        self.max_pieces = max_pieces
        self.stored: dict[bytes, int] = {}
        self.children: dict[bytes, tuple[bytes, ...]] = {}
        self.split: dict[bytes, dict[str, tuple[int, tuple[bytes, ...]]]] = {}   # root -> field -> (inline, children)
        self.missing: set[bytes] = set()

    def load(self, digests: Iterable[bytes], roots: Collection[bytes] = ()) -> None:
        """Read the pieces not read yet; roots are also split by top-level field."""
        wanted = [d for d in set(digests) if d not in self.stored]
        if not wanted:
            return
        if len(self.stored) + len(wanted) > self.max_pieces:
            raise StoreError(f"The store holds more than {self.max_pieces:,} distinct pieces; the piece-by-piece "
                             "report needs too much memory for it (use --no-pieces for the totals).")
        found = self.fetch(wanted)
        for digest in wanted:
            piece = found.get(digest)
            if piece is None:
                self.missing.add(digest)
                self.stored[digest] = 0
                self.children[digest] = ()
                continue
            stored, raw = piece
            self.stored[digest] = stored
            if digest in roots:
                value = pieces.unpack(raw)
                self.children[digest] = tuple(pieces.iter_digests(value))
                if isinstance(value, dict):
                    self.split[digest] = _split(value)
            elif pieces.may_hold_markers(raw):
                self.children[digest] = tuple(pieces.iter_digests(pieces.unpack(raw)))
            else:
                self.children[digest] = ()


def _split(value: dict) -> dict[str, tuple[int, tuple[bytes, ...]]]:
    """A root piece's fields: bytes each takes inside the root, and the pieces it refers to."""
    out: dict[str, tuple[int, tuple[bytes, ...]]] = {}
    for key, form in value.items():
        try:
            inline = len(pieces.pack(form))
        except (TypeError, ValueError, msgpack.PackException):
            inline = 0
        out[str(key)] = (inline, tuple(pieces.iter_digests(form)))
    return out


def apportion(stored: int, split: dict[str, tuple[int, tuple[bytes, ...]]]) -> list[int]:
    """A root piece's stored bytes shared among its fields by the bytes each takes inside it,
    in whole bytes that add up to ``stored`` (the largest remainders get the leftover bytes:
    rounding every share down lost up to a byte per field of every new root, which over a
    long history left the fields tens of KB short of the content they split)."""
    weights = [inline for inline, _ in split.values()]
    total = sum(weights)
    if total <= 0:
        weights, total = [1] * len(weights), len(weights)
    shares = [stored * w // total for w in weights]
    left = stored - sum(shares)
    for n in sorted(range(len(weights)), key=lambda n: -(stored * weights[n] % total))[:left]:
        shares[n] += 1
    return shares


class Walk:
    """One ordered walk over checkpoints (see the module docstring)."""

    def __init__(self, cache: PieceCache) -> None:
        self.cache = cache
        self.intro: dict[bytes, int] = {}       # piece -> ordinal of the checkpoint that added it
        self.shared: set[bytes] = set()
        self.field_bytes: dict[str, int] = {}

    def visit(self, ordinal: int, state: bytes, tasks: bytes | None, tasks_label: str,
              fields: dict[str, int] | None = None) -> int:
        """Walk one checkpoint's roots; the stored bytes it added (by field also into ``fields``)."""
        cache, intro = self.cache, self.intro
        seen_state = intro.get(state)
        seen_tasks = intro.get(tasks) if tasks else -1
        if seen_state is not None and seen_tasks is not None and seen_state != ordinal and seen_tasks != ordinal:
            # the common case: the same state as an earlier checkpoint (nothing new is stored)
            if state not in self.shared:
                self._mark(state)
            if tasks and tasks not in self.shared:
                self._mark(tasks)
            return 0
        self._fields = fields
        roots = [state] + ([tasks] if tasks else [])
        cache.load([d for d in roots if d not in intro], roots={state})
        added = 0
        frontier: list[tuple[bytes, str]] = []
        for digest, label in ((state, None), (tasks, tasks_label)):
            if digest is None:
                continue
            if digest in intro:
                if intro[digest] != ordinal:
                    self._mark(digest)
                continue
            intro[digest] = ordinal
            stored = cache.stored[digest]
            added += stored
            split = cache.split.get(digest) if label is None else None
            if not split:        # (an empty map: its bytes are the root's own)
                self._count(label or ROOT, stored)
                frontier.extend((c, label or ROOT) for c in cache.children[digest])
                continue
            for (key, (_inline, kids)), share in zip(split.items(), apportion(stored, split), strict=True):
                self._count(key, share)
                frontier.extend((c, key) for c in kids)
        while frontier:
            # a piece no field claims yet (a chunked map's chunks under the root) is split by key
            cache.load([d for d, _ in frontier if d not in intro],
                       roots={d for d, label in frontier if label == ROOT})
            following: list[tuple[bytes, str]] = []
            for digest, label in frontier:
                seen = intro.get(digest)
                if seen is not None:
                    if seen != ordinal:
                        self._mark(digest)
                    continue
                intro[digest] = ordinal
                stored = cache.stored[digest]
                added += stored
                split = cache.split.get(digest) if label == ROOT else None
                if not split:
                    self._count(label, stored)
                    following.extend((c, label) for c in cache.children[digest])
                    continue
                for (key, (_inline, kids)), share in zip(split.items(), apportion(stored, split), strict=True):
                    self._count(key, share)
                    following.extend((c, key) for c in kids)
            frontier = following
        return added

    _fields: dict[str, int] | None = None

    def _count(self, label: str, n: int) -> None:
        self.field_bytes[label] = self.field_bytes.get(label, 0) + n
        if self._fields is not None:
            self._fields[label] = self._fields.get(label, 0) + n

    def _mark(self, digest: bytes) -> None:
        stack = [digest]
        intro, shared, children = self.intro, self.shared, self.cache.children
        while stack:
            d = stack.pop()
            if d in shared:
                continue
            shared.add(d)
            own = intro.get(d)
            stack.extend(c for c in children.get(d, ()) if intro.get(c) == own)

    def unique_by_ordinal(self) -> dict[int, int]:
        """Bytes of unshared pieces per checkpoint ordinal."""
        out: dict[int, int] = {}
        stored = self.cache.stored
        for digest, ordinal in self.intro.items():
            if digest not in self.shared:
                out[ordinal] = out.get(ordinal, 0) + stored[digest]
        return out
