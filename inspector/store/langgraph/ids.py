"""Checkpoint ids for LangGraph stores and time/step read from LangGraph's UUIDv6 ids.

A LangGraph checkpoint is identified by (thread_id, checkpoint_ns, checkpoint_id). Our id
string is ``THREAD@CHECKPOINT_ID`` for the root namespace and ``THREAD@NS@CHECKPOINT_ID``
for a subgraph. The checkpoint part is percent-encoded so that it never holds ``@``, ``%`` or
``:`` (so ``parse_ref`` never mistakes an id for ``RUN:SEQ``), the namespace so that it never
holds ``@`` or ``%`` and always holds ``:`` or ``%`` (LangGraph's own always hold ``:``:
``node:task``). The thread is shown as the user wrote it (``ana@example.com@1f1e…``,
``ünïcode@…``) unless that could be misread — a ``%``, a character that is not printable,
a space at either end, ASCII punctuation outside the plain set, or an ``@`` followed by text
holding ``:`` (which would read as a namespace) — and percent-encoded then. Reading splits the
checkpoint part at the last ``@``; a part before it that holds ``:`` or ``%`` after the
previous ``@`` is the namespace. Example: ``thread-A@1f1ec390-ef7c-69d9-8002-42ed79031485``.
"""

from __future__ import annotations

import re
import urllib.parse
from typing import NamedTuple

_SAFE = "-_.~!$&'()*+,;=:|/"
_SAFE_ID = "-_.~!$&'()*+,;=|/"
_UUID_EPOCH = 0x01B21DD213814000  # 100-ns intervals from 1582-10-15 to 1970-01-01


class CheckpointKey(NamedTuple):
    """Where a LangGraph checkpoint lives."""

    thread_id: str
    ns: str
    checkpoint_id: str


_PLAIN = re.compile(r"[A-Za-z0-9_.~!$&'()*+,;=|/-]*")        # = _SAFE_ID + alphanumerics
_PLAIN_COLON = re.compile(r"[A-Za-z0-9_.~!$&'()*+,;=|/:-]*")  # = _SAFE + alphanumerics


def _quote(text: str, safe: str, plain: re.Pattern) -> str:
    return text if plain.fullmatch(text) else urllib.parse.quote(text, safe=safe)


def _as_written(thread: str) -> bool:
    """True when a thread id reads back unchanged without encoding (see the module docstring)."""
    if not thread or thread != thread.strip(" ") or "%" in thread:
        return False
    if not all(_PLAIN_COLON.fullmatch(c) or c in "@ " or (ord(c) > 127 and c.isprintable()) for c in thread):
        return False
    return "@" not in thread or ":" not in thread.rsplit("@", 1)[1]


def _quote_ns(ns: str) -> str:
    """The namespace encoded to hold ``:`` or ``%`` (one LangGraph wrote always holds ``:``)."""
    text = _quote(ns, _SAFE, _PLAIN_COLON)
    return text if ":" in text or "%" in text else f"%{ord(text[0]):02X}{text[1:]}"   # all ASCII here


def make_id(thread_id: str, ns: str, checkpoint_id: str) -> str:
    """The inspector id of a LangGraph checkpoint."""
    parts = [thread_id if _as_written(thread_id) else urllib.parse.quote(thread_id, safe=_SAFE)]
    if ns:
        parts.append(_quote_ns(ns))
    parts.append(_quote(checkpoint_id, _SAFE_ID, _PLAIN))
    return "@".join(parts)


def parse_id(text: str) -> CheckpointKey | None:
    """The key inside an id made by ``make_id``; None when ``text`` is not such an id."""
    rest, sep, cid = text.rpartition("@")
    if not sep or not rest or not cid:
        return None
    thread, sep, ns = rest.rpartition("@")
    if not sep or not (":" in ns or "%" in ns):
        thread, ns = rest, ""                # a thread as written, '@' and all
    elif not thread or not ns:
        return None
    return CheckpointKey(urllib.parse.unquote(thread), urllib.parse.unquote(ns), urllib.parse.unquote(cid))


def _uuid_int(checkpoint_id: str) -> int | None:
    text = checkpoint_id.replace("-", "")
    if len(text) != 32:
        return None
    try:
        return int(text, 16)
    except ValueError:
        return None


def id_time(checkpoint_id: str) -> float:
    """Unix time encoded in a UUIDv6 (or v1/v7) checkpoint id; 0.0 when there is none."""
    value = _uuid_int(checkpoint_id)
    if value is None:
        return 0.0
    version = (value >> 76) & 0xF
    if version == 7:
        return (value >> 80) / 1000.0
    if version not in (1, 6):
        return 0.0
    time_low, time_mid = value >> 96, (value >> 80) & 0xFFFF
    time_hi = (value >> 64) & 0x0FFF
    ticks = (time_low << 28) | (time_mid << 12) | time_hi if version == 6 \
        else (time_hi << 48) | (time_mid << 32) | time_low
    return max(0.0, (ticks - _UUID_EPOCH) / 1e7)


def id_step(checkpoint_id: str) -> int | None:
    """The step LangGraph encodes in the clock sequence of a UUIDv6 id (−1 for input)."""
    value = _uuid_int(checkpoint_id)
    if value is None or (value >> 76) & 0xF != 6:
        return None
    seq = (value >> 48) & 0x3FFF
    return seq - 0x4000 if seq >= 0x3FFE else seq
