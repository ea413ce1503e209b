"""The content codec of the native store: states as content-addressed msgpack pieces.

Pure (no SQL, no store): the diff reads pieces through it, the recording library and
other writers (fork, the LangGraph saver) encode states with ``PieceEncoder``. See
``inspector/store/native/FORMAT.md`` for the layout.

Public API:

* ``PieceEncoder().encode(value) -> (root digest, logical size, {digest: raw piece})`` —
  one encoder per run (it keeps what it wrote last to write only what changed);
  ``forget()`` after a failed transaction. ``encode_flat(value)`` stores a small value as
  one piece (task states).
* Reading: ``unpack(raw)`` decodes one piece leaving markers (``Ref``, ``ChunkedList``,
  ``ChunkedMap``; a text piece decodes to its ``ChunkedText``) in place; ``resolve(value, fetch)`` replaces them; ``iter_digests(value)``
  lists what a piece refers to; ``split_items`` / ``split_map`` split chunks undecoded.
"""

from typing import TYPE_CHECKING, Any

from inspector.codec.content import check_part, iter_digests, resolve, split_items, split_map
from inspector.codec.markers import (DIGEST_SIZE, MARKERS, TABLES, Chunk, ChunkedList, ChunkedMap, ChunkedText, Ref,
                                     digest_of, frame_chunk, frame_map_chunk, may_hold_markers, new_packer, pack,
                                     unpack)

__all__ = ["DIGEST_SIZE", "FORMAT", "INLINE_MAX", "MARKERS", "TABLES", "Chunk", "ChunkedList", "ChunkedMap",
           "ChunkedText", "PieceEncoder", "Ref", "check_part", "digest_of", "encode_flat", "frame_chunk",
           "frame_map_chunk", "iter_digests", "may_hold_markers", "new_packer", "pack", "resolve", "split_items",
           "split_map", "unpack"]

if TYPE_CHECKING:
    from inspector.codec.encoder import FORMAT, INLINE_MAX, PieceEncoder, encode_flat

_ENCODER = ("FORMAT", "INLINE_MAX", "PieceEncoder", "encode_flat")


def __getattr__(name: str) -> Any:
    # the encoder (and ormsgpack with it) loads on first use: readers (``show``, ``diff``) never need it
    if name in _ENCODER:
        from inspector.codec import encoder
        return getattr(encoder, name)
    raise AttributeError(f"module 'inspector.codec' has no attribute {name!r}")
