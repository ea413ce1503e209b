"""Compression of stored pieces (zstd for anything worth compressing)."""

from __future__ import annotations

import threading

import zstandard

from inspector.errors import CorruptDataError

CODEC_RAW = 0
CODEC_ZSTD = 1
MIN_COMPRESS = 96
_local = threading.local()


def _codecs() -> tuple[zstandard.ZstdCompressor, zstandard.ZstdDecompressor]:
    pair = getattr(_local, "pair", None)
    if pair is None:
        pair = (zstandard.ZstdCompressor(level=3), zstandard.ZstdDecompressor())
        _local.pair = pair
    return pair


def compress(raw: bytes) -> tuple[int, bytes]:
    """(codec, data) for a raw piece; small or incompressible pieces stay raw."""
    if len(raw) < MIN_COMPRESS:
        return CODEC_RAW, raw
    data = _codecs()[0].compress(raw)
    return (CODEC_ZSTD, data) if len(data) < len(raw) else (CODEC_RAW, raw)


def decompress(codec: int, data: bytes, size: int) -> bytes:
    """The raw piece bytes; CorruptDataError on a damaged blob."""
    if codec == CODEC_RAW:
        raw = bytes(data)
    elif codec == CODEC_ZSTD:
        try:
            raw = _codecs()[1].decompress(bytes(data), max_output_size=max(size, 1))
        except zstandard.ZstdError as err:
            raise CorruptDataError(f"A stored piece is damaged ({err}).") from err
    else:
        raise CorruptDataError(f"A stored piece uses an unknown codec {codec}.")
    if len(raw) != size:
        raise CorruptDataError("A stored piece has the wrong length (the store is damaged).")
    return raw
