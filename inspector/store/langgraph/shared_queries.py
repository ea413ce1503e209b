"""Reads that SqliteSaver and PostgresSaver databases answer with the same SQL but for the
name of the writes table and of its value column (mixed into both readers)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from inspector.store.columns import as_blob, as_text
from inspector.store.langgraph.pregel import NULL_TASK_ID


class SharedWriteQueries:
    """Queries over the pending-writes table, written once for both savers' schemas."""

    WRITES = "writes"        # the pending-writes table (PostgresSaver: checkpoint_writes)
    WRITE_VALUE = "value"    # its value column (PostgresSaver: blob)
    ID_ORDER = ""            # how checkpoint ids compare (PostgresSaver: byte order, COLLATE "C")

    def _all(self, sql: str, **params: Any) -> list[Any]:
        raise NotImplementedError

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """A block whose queries (of this thread) may share one connection: here each takes
        its own (``SqliteReader`` overrides it)."""
        yield

    @staticmethod
    def _in_space(ns: str | None) -> tuple[str, dict[str, Any]]:
        """The condition keeping the writes ``w`` of namespace ``ns`` (none for None), and its
        parameter: with the thread, a range of the writes' primary key."""
        return ("AND w.checkpoint_ns = :ns ", {"ns": ns}) if ns is not None else ("", {})

    def interrupt_rows(self, thread_id: str, lo: str, hi: str,
                       ns: str | None = None) -> list[tuple[str, str, str, str, Any, Any]]:
        """(ns, checkpoint id, task id, channel, type, value) of every write of the tasks that
        wrote ``__interrupt__`` at checkpoints in [lo, hi] (of namespace ``ns`` only, when
        given); values only for the interrupts."""
        space, space_params = self._in_space(ns)
        rows = self._all(
            "SELECT w.checkpoint_ns, w.checkpoint_id, w.task_id, w.channel, "
            "CASE WHEN w.channel = '__interrupt__' THEN w.type END, "
            f"CASE WHEN w.channel = '__interrupt__' THEN w.{self.WRITE_VALUE} END FROM {self.WRITES} w "
            f"WHERE w.thread_id = :thread {space}AND w.checkpoint_id BETWEEN :lo AND :hi AND EXISTS ("
            f"SELECT 1 FROM {self.WRITES} i WHERE i.thread_id = w.thread_id AND i.checkpoint_ns = w.checkpoint_ns "
            "AND i.checkpoint_id = w.checkpoint_id AND i.task_id = w.task_id AND i.channel = '__interrupt__')",
            thread=thread_id, lo=lo, hi=hi, **space_params)
        return [(str(r[0]), str(r[1]), str(r[2]), str(r[3]), r[4], as_blob(r[5])) for r in rows]

    def task_stops(self, thread_id: str, lo: str, hi: str, ns: str | None = None) -> list[tuple[str, str, str, str]]:
        """(ns, checkpoint id, task id, channel) of the tasks' ``__error__`` and ``__interrupt__``
        writes at checkpoints in [lo, hi] (of namespace ``ns`` only, when given): the tasks
        that stopped there, beside those that finished (``task_outputs``)."""
        space, space_params = self._in_space(ns)
        rows = self._all(
            f"SELECT w.checkpoint_ns, w.checkpoint_id, w.task_id, w.channel FROM {self.WRITES} w "
            f"WHERE w.thread_id = :thread {space}AND w.checkpoint_id {self.ID_ORDER} BETWEEN :lo AND :hi "
            "AND w.channel IN ('__error__', '__interrupt__') AND w.task_id <> :null_task",
            thread=thread_id, lo=lo, hi=hi, null_task=NULL_TASK_ID, **space_params)
        return [(str(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    def head_of(self, thread_id: str, ns: str) -> str | None:
        """The id of the newest checkpoint of a thread's namespace, the one ``get_state()``
        reads (one seek of the primary key); None when it has none."""
        rows = self._all(f"SELECT MAX(checkpoint_id {self.ID_ORDER}) FROM checkpoints WHERE thread_id = :thread "
                         "AND checkpoint_ns = :ns", thread=thread_id, ns=ns)
        return as_text(rows[0][0]) if rows and rows[0][0] is not None else None

    def written_channels(self, thread_id: str, ns: str) -> list[str]:
        """Every channel the thread's tasks wrote in one namespace (no values read)."""
        rows = self._all(f"SELECT DISTINCT channel FROM {self.WRITES} WHERE thread_id = :thread "
                         "AND checkpoint_ns = :ns", thread=thread_id, ns=ns)
        return [str(r[0]) for r in rows]

    def channel_steps(self, thread_id: str, channel: str, limit: int) -> list[tuple[str, str, int]]:
        """(namespace, checkpoint id, distinct writing tasks) of up to ``limit`` checkpoints
        whose tasks wrote ``channel`` (any namespace; the most-written first)."""
        rows = self._all(f"SELECT checkpoint_ns, checkpoint_id, COUNT(DISTINCT task_id) FROM {self.WRITES} "
                         "WHERE thread_id = :thread AND channel = :channel "
                         "AND task_id <> '00000000-0000-0000-0000-000000000000' "
                         "GROUP BY checkpoint_ns, checkpoint_id ORDER BY 3 DESC, 2 DESC LIMIT :lim",
                         thread=thread_id, channel=channel, lim=limit)
        return [(str(r[0]), str(r[1]), int(r[2])) for r in rows]

    def parent_links(self, thread_id: str, ns: str) -> dict[str, str]:
        """Each checkpoint of a thread's namespace → its parent's id (those with a parent)."""
        rows = self._all("SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints WHERE thread_id = :thread "
                         "AND checkpoint_ns = :ns AND parent_checkpoint_id IS NOT NULL", thread=thread_id, ns=ns)
        return {as_text(r[0]): as_text(r[1]) for r in rows}

    def child_ids(self, thread_id: str, ns: str, checkpoint_id: str) -> list[str]:
        """Checkpoints whose parent is the given one (same namespace)."""
        rows = self._all("SELECT checkpoint_id FROM checkpoints WHERE thread_id = :thread "
                         "AND checkpoint_ns = :ns AND parent_checkpoint_id = :cid",
                         thread=thread_id, ns=ns, cid=checkpoint_id)
        return [str(r[0]) for r in rows]
