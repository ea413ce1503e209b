"""Check an import: LangGraph's own saver on the source and ``InspectorSaver`` on the destination
must list the same checkpoints — what ``graph.get_state_history`` reads: every checkpoint's
channel values, versions, versions seen, metadata, parent and pending writes.

Both sides deserialize with LangGraph's serializer in strict mode (only LangGraph's safe types
are constructed; any other type stays its raw payload on both sides), and values are compared
by their re-serialized bytes.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

from inspector.store.columns import as_text
from inspector.store.engine import parse_target


@dataclass
class Verification:
    """How many checkpoints were compared and what differed."""

    threads: int = 0
    checkpoints: int = 0
    differences: list[str] = field(default_factory=list)


def _strict() -> Any:
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    return JsonPlusSerializer(allowed_msgpack_modules=None)


@contextlib.contextmanager
def langgraph_saver(target: str) -> Iterator[Any]:
    """LangGraph's own saver on a LangGraph database, read-only where the backend allows."""
    tgt = parse_target(target)
    if tgt.backend == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver
        assert tgt.path is not None
        from inspector.store import sqlite_ro
        # read as the inspector reads a store: ``mode=ro`` alone would create the -wal and
        # -shm of a clean WAL file and leave them beside it (a dry run changed its directory)
        copies: dict = {}
        conn = sqlite_ro.connect(Path(tgt.path), copies)
        try:
            saver = SqliteSaver(conn, serde=_strict())
            saver.is_setup = True       # never run its CREATE/ALTER on a database we only read
            saver._has_task_path = bool(conn.execute(
                "SELECT 1 FROM pragma_table_info('writes') WHERE name = 'task_path'").fetchone())
            yield saver
        finally:
            conn.close()
            copies.clear()
    else:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        url = tgt.url.replace("postgresql+psycopg://", "postgresql://", 1)
        from psycopg.rows import dict_row
        with psycopg.connect(url, autocommit=True, options="-c default_transaction_read_only=on",
                             row_factory=dict_row) as pg_conn:
            yield PostgresSaver(pg_conn, serde=_strict())


def _key(t: Any) -> tuple:
    c = t.config["configurable"]
    return (c["thread_id"], c.get("checkpoint_ns", ""), c["checkpoint_id"])


def _shape(t: Any, serde: Any) -> dict:
    cp = t.checkpoint
    return {
        "values": serde.dumps_typed(cp.get("channel_values", {})),
        "versions": {k: str(v) for k, v in (cp.get("channel_versions") or {}).items()},
        "seen": {k: {c: str(v) for c, v in d.items()} for k, d in (cp.get("versions_seen") or {}).items()},
        "metadata": serde.dumps_typed(dict(t.metadata)),
        "parent": t.parent_config["configurable"]["checkpoint_id"] if t.parent_config else None,
        "writes": sorted((w[0], w[1], serde.dumps_typed(w[2])) for w in (t.pending_writes or [])),
    }


def _listed(saver: Any, config: RunnableConfig, serde: Any, failure: str, result: Verification) -> dict | None:
    """Every checkpoint of a thread as a saver lists it, by key; None (and ``failure`` with the
    reason among the differences) when the saver fails on one: LangGraph's own deserializer
    raises on a damaged row (an unknown type tag, bytes that are not msgpack), where the import
    read around it."""
    try:
        return {_key(t): _shape(t, serde) for t in saver.list(config)}
    except Exception as err:     # a third-party reader on a file that may be damaged or hostile
        text = " ".join(str(err).split())[:300] or type(err).__name__
        result.differences.append(f"{failure} ({type(err).__name__}: {text})")
        return None


def verify(source: str, destination: str, thread_ids: list[str]) -> Verification:
    """Compare every checkpoint of these threads on both sides."""
    from inspector.record.langgraph import InspectorSaver
    result = Verification()
    serde = _strict()
    with langgraph_saver(source) as theirs, InspectorSaver.from_conn_string(destination, serde=_strict()) as ours:
        for thread_id in thread_ids:
            result.threads += 1
            config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
            a = _listed(theirs, config, serde, f"{thread_id}: LangGraph's saver cannot read the source", result)
            b = _listed(ours, config, serde, f"{thread_id}: InspectorSaver cannot read the copy", result)
            if a is None or b is None:
                continue
            result.checkpoints += len(a)
            # (a damaged file's ids may come back as bytes from LangGraph's saver: keys sort
            # and print as text)
            for key in sorted(set(a) | set(b), key=_label):
                if key not in b:
                    result.differences.append(f"{_label(key)}: missing in the destination")
                elif key not in a:
                    result.differences.append(f"{_label(key)}: not in the source")
                elif a[key] != b[key]:
                    what = ", ".join(k for k in a[key] if a[key][k] != b[key][k])
                    result.differences.append(f"{_label(key)}: {what} differ")
    return result


def _label(key: tuple) -> str:
    """A checkpoint key (thread, namespace, id) as text."""
    return " ".join(map(as_text, key))
