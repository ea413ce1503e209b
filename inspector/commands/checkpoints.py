"""``checkpoint-inspector checkpoints STORE RUN``: list a run's checkpoints."""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from inspector.commands._common import (_record_lines, add_json_arg, add_run_arg, add_store_arg, fmt_size, fmt_times,
                                        note_store, print_columns, print_damaged, write_json_lines)
from inspector.commands._jsonlines import RecordTemplate
from inspector.store import open_reader
from inspector.store.base import CHECKPOINT_ROW
from inspector.store.refs import resolve_run

if TYPE_CHECKING:
    import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``checkpoints`` sub-command."""
    parser = sub.add_parser("checkpoints", help="list a run's checkpoints")
    add_store_arg(parser)
    add_run_arg(parser)
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
    # only the columns the table shows, each taken out of the rows in one C loop (a transpose
    # of all sixteen took twice as long)
    ids, seqs, kinds, names, created, sizes, ops, passed, total, changes, damaged = (
        list(map(itemgetter(n), rows)) for n in _TABLE_COLUMNS)
    size_text = _Memo(fmt_size)
    scores = _Memo(lambda s: f"{s[0]}/{s[1]}")
    print_columns(HEADERS, [seqs, ids, kinds, names, fmt_times(created), list(map(size_text.__getitem__, sizes)), ops,
                            list(map(scores.__getitem__, zip(passed, total, strict=True))), changes])
    if any(damaged):            # (one C call where naming every row cost 50 ms on 100,000)
        print_damaged((f"#{seq}", why) for seq, why in zip(seqs, damaged, strict=True))
    return 0


HEADERS = ("SEQ", "ID", "KIND", "NAME", "TIME", "SIZE", "OPS", "SCORE", "CHANGE")
_TABLE_COLUMNS = [CHECKPOINT_ROW.index(name) for name in ("id", "seq", "kind", "name", "created", "size", "ops",
                                                          "checks_passed", "checks_total", "change", "damaged")]


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


_TEMPLATE = RecordTemplate([
    ("id", "int"), ("seq", "int"), ("kind", "str"), ("name", "str"), ("created", "float"), ("parent", "int?"),
    ("size", "int"), ("size_delta", "int"), ("ops", "int"), (("tasks", "done"), "int"), (("tasks", "total"), "int"),
    (("score", "passed"), "int"), (("score", "total"), "int"), ("change", "str"), ("lane", "str"),
    ("damaged", "null")])      # json_record's fields, in CHECKPOINT_ROW's order


def json_lines(rows: list[tuple]) -> list[str]:
    """Each row as its line of ``checkpoints --json`` (``json_record`` encoded): from one
    text template when every value is plain (``_jsonlines``), else record by record."""
    if rows and len(rows[0]) == len(CHECKPOINT_ROW):
        lines = _TEMPLATE.lines(list(zip(*rows, strict=True)))
        if lines is not None:
            return lines
    return _record_lines([json_record(r) for r in rows])
