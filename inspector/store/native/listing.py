"""Listings of a native SQLite store as plain rows, the type checks done by SQLite.

``runs`` and ``checkpoints`` print every row of a listing (100,000 for a long run): checking
each value's type in Python and building a model object per row cost more than fetching the
rows. Here SQLite checks the types (``typeof``) and ranges of every column as it returns the
row and marks a row that passes with ``damaged = ''``; the rows are handed on as fetched.
The checks are those the model's fast path makes (``rows.run_from_row``,
``rows.checkpoint_from_row``), so a row that passes is one they take as it is. A listing with
any row that does not pass (or with text that is not UTF-8) is left to the model path, which
says what is wrong: these functions then return None.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from inspector.errors import CorruptDataError
from inspector.model import ACTIVE_STATUSES
from inspector.store.base import CHECKPOINT_ROW, RUN_ROW, RunRows
from inspector.store.native.rows import COUNT_MAX, TIME_MAX, json_field, row_type, run_from_row


def _count(column: str) -> str:
    return f"(typeof({column}) = 'integer' AND {column} BETWEEN -{COUNT_MAX} AND {COUNT_MAX})"


def _time(column: str) -> str:
    return f"(typeof({column}) = 'real' AND {column} > -{TIME_MAX:.0f} AND {column} < {TIME_MAX:.0f})"


def _is(kind: str, column: str) -> str:
    return f"typeof({column}) = '{kind}'"


def _or_null(check: str, column: str) -> str:
    return f"({column} IS NULL OR {check})"


def _digest(column: str) -> str:
    return f"(typeof({column}) = 'blob' AND length({column}) = 16)"


def _natural(column: str) -> str:
    return f"(typeof({column}) = 'integer' AND {column} BETWEEN 0 AND {COUNT_MAX})"


def _score(done: str, total: str) -> str:
    """A score no task state gives (a negative count, more done than there are) is damage."""
    return f"{_natural(done)} AND {_natural(total)} AND {done} <= {total}"


# what rows._fast_checkpoint takes as it is
CHECKPOINT_CLEAN = " AND ".join([
    _is("integer", "id"), _is("text", "run_id"), _count("seq"), _is("text", "kind"), _is("text", "name"),
    _time("created"), _or_null(_is("integer", "parent_id"), "parent_id"), _is("integer", "size"),
    _is("integer", "size_delta"), _natural("ops"), _score("tasks_done", "tasks_total"),
    _score("checks_passed", "checks_total"), _is("text", "change"), _digest("state_hash"),
    _or_null(_digest("tasks_hash"), "tasks_hash"), "size >= 0"])

# what rows.run_from_row takes as it is (but for its two JSON columns, checked in Python)
RUN_CLEAN = " AND ".join([
    _is("text", "id"), _is("text", "name"), _is("text", "agent"), _is("text", "status"), _time("created"),
    _time("updated"), _natural("checkpoint_count"), _count("head_seq"), _or_null(_is("text", "owner_host"), "owner_host"),
    _or_null(_count("owner_pid"), "owner_pid"), _or_null(_time("heartbeat"), "heartbeat"), _count("epoch"),
    _is("integer", "resumable"),
    *(_or_null(_is("text", c), c) for c in ("not_resumable_reason", "resume_spec", "parent_run", "fork_reason",
                                            "labels", "last_error")),
    _or_null(_is("integer", "parent_checkpoint"), "parent_checkpoint"),
    _score("tasks_done", "tasks_total"), _score("checks_passed", "checks_total"),
    "head_seq = checkpoint_count - 1"])     # (what the writer and prune keep)


def _clean_mark(clean: str) -> str:
    return f"CASE WHEN {clean} THEN '' END AS damaged"


_CHECKPOINT_ROWS = (f"SELECT {', '.join(CHECKPOINT_ROW[:-2])}, '' AS lane, {_clean_mark(CHECKPOINT_CLEAN)} "
                    "FROM ci_checkpoints WHERE run_id = ? AND seq > -1 ORDER BY seq")   # as list_checkpoints
_RUN_REST = ("head_seq", "owner_host", "owner_pid", "heartbeat", "epoch", "resumable", "not_resumable_reason",
             "resume_spec", "fork_reason", "labels")
_RUN_ROWS = f"SELECT {', '.join(RUN_ROW[:-1])}, {_clean_mark(RUN_CLEAN)}, {', '.join(_RUN_REST)} FROM ci_runs"
_DAMAGED = RUN_ROW.index("damaged")


def _fetch(cur: Any, sql: str, params: tuple) -> tuple[tuple[str, ...], list[tuple]] | None:
    """The columns and rows of ``sql``; None when a row holds text that is not UTF-8 (the
    connection decodes text in C, see ``SqliteNativeReader._fetch``)."""
    try:
        cur.execute(sql, params)
        return tuple(d[0] for d in cur.description), cur.fetchall()
    except sqlite3.OperationalError:
        if cur.connection.text_factory is not str:
            raise
        return None


def checkpoint_rows(cur: Any, run_id: str) -> list[tuple] | None:
    """The run's checkpoints as ``CHECKPOINT_ROW`` rows, or None (some row is damaged)."""
    fetched = _fetch(cur, _CHECKPOINT_ROWS, (run_id,))
    if fetched is None:
        return None
    rows = fetched[1]
    damaged = CHECKPOINT_ROW.index("damaged")
    if any(row[damaged] is None for row in rows):
        return None
    return rows


def _json_ok(values: set[Any], default: Any, none_ok: bool) -> bool:
    """True when every text of a run's JSON column reads as ``run_from_row``'s fast path takes it."""
    for text in values:
        try:
            value = json_field(text, default)
        except CorruptDataError:
            return False
        if not (type(value) is dict or (none_ok and value is None)):
            return False
    return True


def run_rows(cur: Any, where: str, params: list[Any]) -> RunRows | None:
    """The runs (``where``: the filter, '' or `` WHERE …``) as ``RUN_ROW`` rows, most recently
    updated first, with the active runs and forks in full; None when some row is damaged."""
    fetched = _fetch(cur, _RUN_ROWS + where + " ORDER BY updated DESC, id", tuple(params))
    if fetched is None:
        return None
    names, rows = fetched
    if any(row[_DAMAGED] is None for row in rows):
        return None
    labels, spec = names.index("labels"), names.index("resume_spec")
    if not (_json_ok({r[labels] for r in rows}, {}, False) and _json_ok({r[spec] for r in rows}, None, True)):
        return None
    status, parent_run, parent_cp = (RUN_ROW.index(n) for n in ("status", "parent_run", "parent_checkpoint"))
    make = row_type(names)._make
    runs = [run_from_row(make(r)) for r in rows
            if r[status] in ACTIVE_STATUSES or (r[parent_run] is not None and r[parent_cp] is not None)]
    return RunRows(rows, runs)
