"""``checkpoint-inspector checkpoints STORE RUN``: list a run's checkpoints."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Any

from inspector.commands._common import (_record_lines, add_json_arg, add_store_arg, fmt_size, fmt_times, note_store,
                                        print_columns, print_damaged, write_json_lines)
from inspector.store import open_reader
from inspector.store.base import CHECKPOINT_ROW
from inspector.store.refs import resolve_run


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``checkpoints`` sub-command."""
    parser = sub.add_parser("checkpoints", help="list a run's checkpoints")
    add_store_arg(parser)
    parser.add_argument("run", metavar="RUN", help="run id, unique id prefix or name (a LangGraph thread id)")
    add_json_arg(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the checkpoints of one run."""
    with open_reader(args.store) as store:
        note_store(store)
        rows = store.checkpoint_rows(resolve_run(store, args.run).id)
    if args.json:
        write_json_lines(json_lines(rows))
        return 0
    if not rows:
        print_columns(HEADERS, [[] for _ in HEADERS])
        return 0
    (ids, seqs, kinds, names, created, _parents, sizes, _deltas, ops, _done, _tasks, passed, total, changes,
     _lanes, damaged) = (list(c) for c in zip(*rows, strict=True))
    size_text = _Memo(fmt_size)
    scores = _Memo(lambda s: f"{s[0]}/{s[1]}")
    print_columns(HEADERS, [seqs, ids, kinds, names, fmt_times(created), list(map(size_text.__getitem__, sizes)), ops,
                            list(map(scores.__getitem__, zip(passed, total, strict=True))), changes])
    print_damaged((f"#{seq}", why) for seq, why in zip(seqs, damaged, strict=True))
    return 0


HEADERS = ("SEQ", "ID", "KIND", "NAME", "TIME", "SIZE", "OPS", "SCORE", "CHANGE")


class _Memo(dict):
    """``fn`` of each value, worked out once per distinct value (a long run repeats sizes and
    scores)."""

    def __init__(self, fn: Callable[[Any], str]) -> None:
        super().__init__()
        self.fn = fn

    def __missing__(self, key: Any) -> str:
        value = self[key] = self.fn(key)
        return value


def json_record(row: tuple) -> dict[str, Any]:
    """One checkpoint of ``checkpoints --json`` from its ``CHECKPOINT_ROW`` row."""
    (ident, seq, kind, name, created, parent, size, delta, ops, done, tasks, passed, total, change, lane,
     damaged) = row[:16]
    return {"id": ident, "seq": seq, "kind": kind, "name": name, "created": created, "parent": parent,
            "size": size, "size_delta": delta, "ops": ops, "tasks": {"done": done, "total": tasks},
            "score": {"passed": passed, "total": total}, "change": change, "lane": lane, "damaged": damaged or None}


# ``json_record``'s text for a row of plain values: ints (the parent may be None), a finite
# float, text that json writes as it is (no quote, backslash or control character), no lane,
# no damage
_PLAIN = ('{"id": %s, "seq": %s, "kind": "%s", "name": "%s", "created": %r, "parent": %s, "size": %s, '
          '"size_delta": %s, "ops": %s, "tasks": {"done": %s, "total": %s}, "score": {"passed": %s, '
          '"total": %s}, "change": "%s", "lane": "", "damaged": null}%.0s%.0s')
def json_lines(rows: list[tuple]) -> list[str]:
    """Each row as its line of ``checkpoints --json`` (``json_record`` encoded).

    A run of 100,000 checkpoints spent most of its time building and encoding a dict per row:
    a listing of plain values is written by one text template per row instead, which gives
    the same bytes (see ``_PLAIN``); any other listing is encoded record by record.
    """
    parents = _plain_parents(rows)
    if parents is None:
        return _record_lines([json_record(r) for r in rows])
    lines = list(map(_PLAIN.__mod__, rows))
    # no text in a plain row holds a quote: this is the parent field, and json writes None as null
    for i in (i for i, p in enumerate(parents) if p is None):
        lines[i] = lines[i].replace('"parent": None,', '"parent": null,', 1)
    return lines


def _plain_parents(rows: list[tuple]) -> tuple | None:
    """The parent ids when ``_PLAIN`` writes every row as json writes ``json_record`` (plain
    values, see ``_PLAIN``); None when it does not."""
    if not rows or len(rows[0]) != len(CHECKPOINT_ROW):
        return None
    column = dict(zip(CHECKPOINT_ROW, zip(*rows, strict=True), strict=True))
    if set(column["lane"]) != {""} or set(column["damaged"]) != {""} or len(column) != len(CHECKPOINT_ROW):
        return None
    created = column["created"]
    if set(map(type, created)) != {float} or not all(map(math.isfinite, created)):
        return None
    if set(map(type, column["parent_id"])) - {int, type(None)}:
        return None
    if any(set(map(type, column[name])) != {int} for name in _INT_COLUMNS):
        return None
    for name in ("kind", "name", "change"):
        if set(map(type, column[name])) != {str}:
            return None
        text = " ".join(column[name])
        if len(encode_basestring(text)) != len(text) + 2:      # json escapes something in it
            return None
    return column["parent_id"]


_INT_COLUMNS = ("id", "seq", "size", "size_delta", "ops", "tasks_done", "tasks_total", "checks_passed",
                "checks_total")
