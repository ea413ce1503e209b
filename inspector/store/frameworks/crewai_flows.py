"""CrewAI flow persistence (``@persist`` with ``SQLiteFlowPersistence``): the ``flow_states``
table read into a CrewAI store's catalog.

Mapping: each ``flow_uuid`` is a run; each saved state (a row crewai writes after a persisted
method completes) is a checkpoint named by its method, in row order, and its state is the row's
``state_json`` as crewai's ``load_state`` returns it. A flow kicked off again with its id
(``kickoff(inputs={"id": …})``: crewai restores the latest state and runs on) goes on in the
same run. A flow waiting for human feedback (a ``pending_feedback`` row) is interrupted.
Resuming a flow needs the user's Flow class, so flow runs are read-only here.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from inspector.model import CheckpointInfo, RunInfo, Snapshot
from inspector.store.engine import guard
from inspector.store.frameworks.base import (MAX_ROWS, Budget, Damaged, damage, not_utf8, number_checkpoints,
                                             opaque, parse_json, row_keys)
from inspector.store.frameworks.openai_agents import parse_time, q

FLOW_COLUMNS = frozenset({"id", "flow_uuid", "method_name", "timestamp", "state_json"})
PENDING_COLUMNS = frozenset({"flow_uuid", "context_json", "state_json", "created_at"})
MAX_CONTEXT = 64 * 1024   # of a pending feedback's context read (its method and message are near the start)
FLOW_ROW = ("flow_uuid", "method_name", "timestamp", "state_json")   # as ``FlowReader.rows`` selects them
FLOW_WHY = ("CrewAI flow states are read-only here: crewai resumes a flow through your Flow class "
            "(YourFlow().kickoff(inputs={'id': FLOW_UUID}) restores its latest saved state and runs on), "
            "which the inspector does not have.")


def find_table(columns: dict[str, set[str]], wanted: frozenset[str]) -> str | None:
    """The first table (by name) holding the ``wanted`` columns."""
    return next((name for name, cols in sorted(columns.items()) if {c.lower() for c in cols} >= wanted), None)


@dataclass(frozen=True)
class FlowRow:
    """One saved state as listed: what the catalog needs, and a digest per top-level key."""

    label: int | str    # its id, or a key of its own for an id that is not a unique integer (``row_keys``)
    rowid: Any          # its id as stored (what reads its state back)
    flow: str
    method: str
    created: float
    size: int
    keys: dict[str, str]     # top-level key → digest of its value (what a change line compares)
    damaged: str


def _digests(state: Any) -> dict[str, str]:
    if not isinstance(state, dict) or damage(state):
        return {}
    return {str(k): hashlib.blake2b(json.dumps(v, sort_keys=True, default=str).encode(), digest_size=8).hexdigest()
            for k, v in state.items()}


class FlowReader:
    """Reads one ``flow_states`` table (and ``pending_feedback``, when there) for a CrewAI store."""

    def __init__(self, engine: sa.Engine, display: str, table: str, pending: str | None) -> None:
        self.engine, self.display, self.table, self.pending = engine, display, table, pending
        self._rows: dict[tuple[int | str, int], FlowRow] = {}   # (id, size) → row: rows are never rewritten
        self.by_ref: dict[str, FlowRow] = {}               # checkpoint id → its row

    def fingerprint(self, conn: sa.Connection) -> tuple:
        """Row count and last id of the states, and the pending feedback rows."""
        found = tuple(conn.exec_driver_sql(f"SELECT COUNT(*), MAX(id) FROM {q(self.table)}").one())
        if self.pending:
            found += tuple(conn.exec_driver_sql(f"SELECT COUNT(*), MAX(created_at) FROM {q(self.pending)}").one())
        return found

    def rows(self, budget: Budget) -> tuple[list[FlowRow], dict[str, str]]:
        """Every saved state in order, and the flows waiting for human feedback (uuid → what it asks)."""
        with guard(self.display), self.engine.connect() as conn:
            listed = conn.exec_driver_sql(
                f"SELECT id, flow_uuid, method_name, timestamp, length(state_json) FROM {q(self.table)} "
                f"ORDER BY id LIMIT {MAX_ROWS}").fetchall()
            out, known = [], self._rows
            self._rows = {}
            keys = row_keys([r[0] for r in listed])
            for (rowid, flow, method, stamp, size), (name, bad_id) in zip(listed, keys, strict=True):
                key = (name, int(size or 0))
                row = None if bad_id else known.get(key)   # (a damaged id is read again: it may be another's)
                if row is None:
                    budget.take(key[1])
                    data, state = self._state(conn, rowid)
                    broken = not_utf8((flow, method, stamp, data), FLOW_ROW) or damage(state)
                    if not broken and not isinstance(state, dict):   # load_state answers None for it
                        broken = f"its state_json is a JSON {type(state).__name__}, not a flow state"
                    broken = "; ".join(why for why in (bad_id, broken) if why)
                    row = FlowRow(name, rowid, str(flow), str(method), parse_time(stamp), key[1], _digests(state),
                                  broken)
                self._rows[key] = row
                out.append(row)
            waiting: dict[str, str] = {}
            if self.pending:
                for flow, context in conn.exec_driver_sql(
                        f"SELECT flow_uuid, substr(context_json, 1, {MAX_CONTEXT}) FROM {q(self.pending)} "
                        f"LIMIT {MAX_ROWS}"):
                    waiting[str(flow)] = _asked(parse_json(context, "context_json"))
        return out, waiting

    def _state(self, conn: sa.Connection, rowid: Any) -> tuple[Any, Any]:
        """A row's ``state_json`` as stored and as read, by its id: nothing when no row has that id
        any more, a damage marker when more rows have it (which of them is this one cannot be told)."""
        where = "id IS NULL" if rowid is None else "id = ?"
        found = conn.exec_driver_sql(f"SELECT state_json FROM {q(self.table)} WHERE {where} LIMIT 2",
                                     () if rowid is None else (rowid,)).fetchall()
        if len(found) > 1:
            return None, Damaged(opaque("state_json: more rows have its id, so which of them is this one "
                                        "cannot be told"))
        data = found[0][0] if found else None
        return data, parse_json(data, "state_json")

    def catalog(self, budget: Budget, taken: set[str], window: float
                ) -> tuple[list[RunInfo], dict[str, tuple[CheckpointInfo, ...]]]:
        """A run per flow (its id the flow's uuid, unless a crew branch has that name already)."""
        rows, waiting = self.rows(budget)
        flows: dict[str, list[FlowRow]] = {}
        for row in rows:
            flows.setdefault(row.flow, []).append(row)
        runs, checkpoints = [], {}
        by_ref: dict[str, FlowRow] = {}
        for flow, chain in flows.items():
            run_id = flow if flow not in taken else f"flow-{flow}"
            drafts, previous = [], None
            for row in chain:
                drafts.append(CheckpointInfo(id="", run_id="", seq=0, kind="step", name=row.method, created=row.created,
                                             size=row.size, change=_change(row, previous),
                                             damaged=f"state {row.label}: {row.damaged}" if row.damaged else ""))
                previous = row
            infos = number_checkpoints(run_id, drafts)
            checkpoints[run_id] = infos
            by_ref.update((str(info.id), row) for info, row in zip(infos, chain, strict=True))
            runs.append(self._run(run_id, flow, chain, infos, waiting.get(flow), window))
        self.by_ref = by_ref   # (whole: a snapshot read meanwhile finds the rows it listed)
        return runs, checkpoints

    @staticmethod
    def _run(run_id: str, flow: str, chain: list[FlowRow], infos: tuple[CheckpointInfo, ...],
             waiting: str | None, window: float) -> RunInfo:
        last = chain[-1]
        status, error = "completed", None
        if waiting is not None:
            status, error = "interrupted", f"waiting for human feedback on {last.method!r}{waiting}"
        elif time.time() - last.created < window:
            status = "running"
        bad = [f"state {r.label} (#{seq}): {r.damaged}" for seq, r in enumerate(chain) if r.damaged]
        return RunInfo(id=run_id, name=flow, agent="crewai flow", status=status, created=chain[0].created,
                       updated=last.created, checkpoint_count=len(infos), head_seq=len(infos) - 1, resumable=False,
                       not_resumable_reason=FLOW_WHY, labels={"flow": flow, "methods": len(chain)},
                       last_error=error, damaged="; ".join(bad[:3]))

    def snapshot(self, info: CheckpointInfo) -> Snapshot:
        """The saved state as crewai's ``load_state`` reads it, and where it came from."""
        row = self.by_ref[str(info.id)]
        with guard(self.display), self.engine.connect() as conn:
            _data, state = self._state(conn, row.rowid)
        meta = {"flow_uuid": row.flow, "method": row.method,
                "state_row": row.label if isinstance(row.rowid, bytes) else row.rowid,   # (the id as stored)
                "note": "a CrewAI flow state (@persist); " + FLOW_WHY}
        problems = (f"state {row.label} of flow {row.flow}: {row.damaged}",) if row.damaged else ()
        return Snapshot(info=info, state=state, tasks=None, meta=meta, problems=problems)


def _asked(context: Any) -> str:
    """': the message' of a pending feedback's context ('' when it has none to show)."""
    message = context.get("message") if isinstance(context, dict) else None
    return f": {' '.join(message.split())[:200]}" if isinstance(message, str) and message.strip() else ""


def _change(row: FlowRow, previous: FlowRow | None) -> str:
    """``method · changed: keys`` against the flow's previous saved state."""
    if previous is None:
        return f"{row.method} · first saved state"
    changed = sorted(k for k in row.keys.keys() | previous.keys.keys() if row.keys.get(k) != previous.keys.get(k))
    shown = ", ".join(changed[:8]) + (f" and {len(changed) - 8} more" if len(changed) > 8 else "")
    return f"{row.method} · " + (f"changed: {shown}" if changed else "no change")
