"""A listing's JSON records written from one text template, column by column.

``runs --json`` and ``checkpoints --json`` print one record per line (see
``_common.print_json_records``). Building a dict per record and encoding it was most of
their time on big stores; when every value of a column is plain (ints, finite floats, text
that json writes as it is: no quote, backslash or control character), a line is the
template with the values put in, which is byte for byte what json writes. A listing with
any other value returns None here and is encoded record by record as before.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from json.encoder import encode_basestring
from typing import Any

# what a field's column may hold, and how the template writes it:
#   "int"   ints;  "int?" ints or None (null);  "float" finite floats
#   "str"   text;  "str?" text or None (null);  "null" only '' or None, written null
KINDS = ("int", "int?", "float", "str", "str?", "null")

Key = str | tuple[str, str]      # a key, or (outer key, inner key) of a nested record


class RecordTemplate:
    """The text of records with these fields (in order), from columns of plain values."""

    def __init__(self, fields: Sequence[tuple[Key, str]]) -> None:
        assert all(kind in KINDS for _, kind in fields)
        self.kinds = tuple(kind for _, kind in fields)
        entries: list[tuple[str | None, list[str]]] = []     # (outer key or None, its items)
        for key, kind in fields:
            group, name = key if isinstance(key, tuple) else (None, key)
            item = f'"{name}": ' + {"str": '"%s"', "null": "null"}.get(kind, "%s")
            if group is not None and entries and entries[-1][0] == group:
                entries[-1][1].append(item)
            else:
                entries.append((group, [item]))
        self.template = "{" + ", ".join(items[0] if group is None else f'"{group}": {{' + ", ".join(items) + "}"
                                        for group, items in entries) + "}"

    def lines(self, columns: Sequence[Sequence[Any]]) -> list[str] | None:
        """One line per record (``columns``: one per field, in order), or None when some
        value is not plain."""
        values = []
        for kind, column in zip(self.kinds, columns, strict=True):
            ready = _ready(kind, column)
            if ready is None:
                return None
            if kind != "null":
                values.append(ready)
        if not columns or not columns[0]:
            return []
        return list(map(self.template.__mod__, zip(*values, strict=True))) if values else \
            [self.template] * len(columns[0])


def _plain_text(texts: list[str]) -> bool:
    """True when json writes every one of ``texts`` as it is (quoted, nothing escaped)."""
    joined = " ".join(texts)
    return len(encode_basestring(joined)) == len(joined) + 2


def _ready(kind: str, column: Sequence[Any]) -> Sequence[Any] | None:
    """``column`` as the template takes it for ``kind``, or None when a value is not plain."""
    types = set(map(type, column))
    if kind == "int":
        return column if types <= {int} else None
    if kind == "int?":
        if not types <= {int, type(None)}:
            return None
        return ["null" if v is None else v for v in column] if type(None) in types else column
    if kind == "float":
        return column if types <= {float} and all(map(math.isfinite, column)) else None
    if kind == "str":
        return column if types <= {str} and _plain_text(list(column)) else None
    if kind == "str?":
        if not types <= {str, type(None)}:
            return None
        texts = [v for v in column if v is not None]
        if not _plain_text(texts):
            return None
        return [f'"{v}"' if v is not None else "null" for v in column]
    return column if set(column) <= {"", None} else None        # "null"
