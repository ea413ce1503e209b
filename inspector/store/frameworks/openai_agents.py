"""OpenAI Agents SDK sessions (``openai-agents``): SQLiteSession, SQLAlchemySession and
AdvancedSQLiteSession databases as stores.

Mapping: a session is a run; each stored item (user or assistant message, ``function_call``,
``function_call_output``, reasoning …) is a checkpoint whose state is the conversation up to
it (``messages``, normalised for the conversation view; the raw item is in ``meta``). An
Advanced session adds turns and usage per turn (``state.usage``), and its branches
(``create_branch_from_turn``) become forks: the branch's run starts with a ``fork``
checkpoint holding the shared earlier turns, its parent the last shared item of the branch
it came from. A session whose items are all gone (``pop_item`` keeps the session's row) is a
run with no checkpoints. Table names are configurable in the SDK, so tables are found by their
columns.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, UTC
from typing import Any

import sqlalchemy as sa

from inspector.model import OFFERED, Capabilities, Capability, CheckpointInfo, RunInfo, Snapshot, StoreInfo
from inspector.store.adapters import StoreAdapter
from inspector.store.base import Store
from inspector.store.columns import as_count, as_real
from inspector.store.engine import Target, guard, table_columns
from inspector.store.frameworks.base import (MAX_ROWS, Budget, Catalog, EngineCatalogStore, damage, not_utf8,
                                             named, number_checkpoints, parse_json, row_keys)
from inspector.store.sqlite_ro import DamagedText

MESSAGES = frozenset({"id", "session_id", "message_data", "created_at"})
SESSIONS = frozenset({"session_id", "created_at", "updated_at"})
STRUCTURE = frozenset({"session_id", "message_id", "branch_id", "message_type", "sequence_number",
                       "user_turn_number", "branch_turn_number"})
MESSAGE_ROW = ("session_id", "created_at", "message_data")    # as ``_messages`` selects them
SESSION_ROW = ("session_id", "created_at", "updated_at")
USAGE = frozenset({"session_id", "branch_id", "user_turn_number", "requests", "input_tokens",
                   "output_tokens", "total_tokens"})
RUNNING_WINDOW = 300.0   # a turn left unfinished for longer than this is stuck
RESUME_REASON = ("An OpenAI Agents session holds no run state: it is continued by your own code "
                 "(Runner.run(agent, input, session=…)), which the inspector does not have.")
PLAIN_FORK_REASON = ("This session store has no branches (SQLiteSession / SQLAlchemySession); "
                     "AdvancedSQLiteSession can branch from a user turn.")


@dataclass(frozen=True)
class Tables:
    """The session tables found by their columns."""

    sessions: str
    messages: str
    structure: str | None = None
    usage: str | None = None
    others: tuple[str, ...] = ()    # more messages tables in the file (sessions kept under other names)


def find_tables(columns: dict[str, set[str]]) -> Tables | None:
    """The sessions/messages (and Advanced structure/usage) tables, or None."""
    low = {name: {c.lower() for c in cols} for name, cols in columns.items()}
    messages = sorted(n for n, c in low.items() if c >= MESSAGES)
    sessions = sorted(n for n, c in low.items() if c >= SESSIONS and n not in messages)
    if not messages or not sessions:
        return None
    structure = next((n for n, c in sorted(low.items()) if c >= STRUCTURE), None)
    usage = next((n for n, c in sorted(low.items()) if c >= USAGE), None)
    # the SDK's own names first (SQLiteSession's defaults), else the first by name
    first = ("agent_sessions", "agent_messages")
    pair = first if first[0] in sessions and first[1] in messages else (sessions[0], messages[0])
    return Tables(pair[0], pair[1], structure, usage, tuple(m for m in messages if m != pair[1]))


def q(name: str) -> str:
    """A quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def parse_time(value: Any) -> float:
    """SQLite CURRENT_TIMESTAMP text (UTC), a datetime or a number as epoch seconds (0 if unreadable,
    infinite, not a number or past any calendar)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return as_real(value)
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    if isinstance(value, str) and value:
        try:
            stamp = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return 0.0
        return (stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)).timestamp()
    return 0.0


# -- items ----------------------------------------------------------------------------------------
def _text(value: Any, limit: int = 60) -> str:
    if isinstance(value, list):
        value = " ".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in value)
    text = " ".join(str(value or "").split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def is_encrypted(item: dict) -> bool:
    """An EncryptedSession envelope ({"__enc__": 1, "payload": …}): shown, never decrypted."""
    return item.get("__enc__") == 1 and "payload" in item


def classify(item: Any, tools: dict[str, str]) -> tuple[str, str, str]:
    """(checkpoint kind, name, one-line change) of one session item."""
    if not isinstance(item, dict):
        return "step", "item", "unreadable item"
    if is_encrypted(item):
        return "step", "encrypted", f"encrypted item (EncryptedSession, key {item.get('kid')!r}; not decoded)"
    kind = item.get("type")
    if kind == "function_call":
        name = str(item.get("name") or "tool")
        return "llm", name, f"calls {name}({_text(item.get('arguments'), 40)})"
    if kind == "function_call_output":
        name = tools.get(str(item.get("call_id")), "tool")
        return "tool", name, f"{name} → {_text(item.get('output'))}"
    if kind == "reasoning":
        return "llm", "reasoning", "reasoning"
    role = item.get("role")
    if role == "user":
        return "input", "user", f"user: {_text(item.get('content'))}"
    if role == "assistant":
        return "llm", "assistant", f"assistant: {_text(item.get('content'))}"
    if role in ("system", "developer"):
        return "input", str(role), f"{role}: {_text(item.get('content'))}"
    label = str(kind or role or "item")
    return "step", label, label


def to_message(item: Any, tools: dict[str, str]) -> dict:
    """One item as a chat message the conversation view reads (the raw fields kept)."""
    if not isinstance(item, dict):
        return {"role": "other", "content": item}
    if is_encrypted(item):
        return {"role": "other", "type": "encrypted", "content": "[encrypted by EncryptedSession; not decoded]",
                "kid": item.get("kid")}
    kind = item.get("type")
    if kind == "function_call":
        return {"role": "assistant", "content": "", "type": "function_call", "call_id": item.get("call_id"),
                "tool_calls": [{"name": item.get("name"), "arguments": item.get("arguments")}]}
    if kind == "function_call_output":
        return {"role": "tool", "name": tools.get(str(item.get("call_id")), ""), "content": item.get("output"),
                "type": "function_call_output", "call_id": item.get("call_id")}
    if kind == "reasoning":
        summary = item.get("summary") or item.get("content") or []
        return {"role": "assistant", "type": "reasoning", "content": summary}
    if "role" in item:
        return item
    return {"role": "other", "type": kind, "content": item}


def _text_of(data: Any) -> tuple[str, str]:
    """A ``message_data`` value as text, and '' or why the SDK cannot read it (bytes it cannot
    decode; a number, which it skips)."""
    if isinstance(data, str):
        return data, ""
    if isinstance(data, (bytes, memoryview)):
        raw = bytes(data)
        try:
            return raw.decode("utf-8"), ""
        except UnicodeDecodeError:
            return DamagedText(raw.decode("utf-8", "replace")), "its message_data is not UTF-8 text"
    return "", f"its message_data is a {type(data).__name__}, not JSON text"


Key = int | str   # a message's id, or for an id that is not one (``row_keys``) a text key of its own


@dataclass
class _Row:
    message_id: Key
    created: float
    size: int
    kind: str
    name: str
    change: str
    turn: int | None = None
    damaged: str = ""


class OpenAIAgentsStore(EngineCatalogStore):
    """An OpenAI Agents SDK session database opened read-only."""

    def __init__(self, engine: sa.Engine, target: Target, tables: Tables, *, read_only: bool = True,
                 running_window: float = RUNNING_WINDOW) -> None:
        super().__init__(engine, target)
        self.tables = tables
        self.identity_table = tables.sessions
        self.running_window = running_window
        advanced = tables.structure is not None
        fork = (Capability(True, "An AdvancedSQLiteSession branch from a user turn "
                                 "(create_branch_from_turn), run by the openai-agents package in your environment.")
                if advanced and target.backend == "sqlite" else
                Capability(False, PLAIN_FORK_REASON if not advanced else
                           "Branching is offered for AdvancedSQLiteSession files (SQLite) only."))
        self.info = StoreInfo(url=target.url, display=target.display, kind="openai-agents",
                              backend=target.backend, format_version=None, read_only=read_only,
                              capabilities=Capabilities(fork, Capability(False, RESUME_REASON), OFFERED),
                              label="OpenAI Agents (Advanced session)" if advanced else "OpenAI Agents",
                              notice=(f"{target.display} also keeps sessions in "
                                      f"{', '.join(repr(t) for t in tables.others)}, which are not shown: "
                                      f"one pair of tables is read a file (here {tables.sessions!r} and "
                                      f"{tables.messages!r})") if tables.others else "")
        self._items: dict[Key, str] = {}
        self._lane_of: dict[str, tuple[str, str, int | None]] = {}
        self._lanes_cache: dict = {}
        self._branch_made: dict[tuple[str, str], float] = {}   # when a branch's first row was written
        self._tools_cache: dict[str, str] = {}
        self._usage_cache: dict = {}
        self._broken: dict[Key, str] = {}   # message id → why the SDK cannot read that row
        self._bad_ids: dict[Key, str] = {}  # message key → why its id is damaged (the SDK reads the row)

    # -- reads --------------------------------------------------------------------------------------
    def _all(self, sql: str, params: tuple = ()) -> list[Any]:
        with guard(self.display), self.engine.connect() as conn:
            return list(conn.exec_driver_sql(sql + f" LIMIT {MAX_ROWS}", params).fetchall())

    def fingerprint(self) -> Any:
        """Row counts and largest ids of the session tables."""
        t = self.tables
        parts = [f"SELECT COUNT(*), MAX(id) FROM {q(t.messages)}",
                 f"SELECT COUNT(*), MAX(updated_at) FROM {q(t.sessions)}"]
        if t.structure:
            parts.append(f"SELECT COUNT(*), MAX(id) FROM {q(t.structure)}")
        if t.usage:
            parts.append(f"SELECT COUNT(*), SUM(total_tokens) FROM {q(t.usage)}")
        with guard(self.display), self.engine.connect() as conn:
            return tuple(tuple(conn.exec_driver_sql(sql).one()) for sql in parts)

    def _messages(self, budget: Budget) -> dict[Key, tuple[str, float, str]]:
        """message key → (session id, created, JSON text), in the SDK's order (by id); rows the SDK
        cannot read go in ``_broken``, ids that are not unique integers in ``_bad_ids``."""
        rows = self._all(f"SELECT id, session_id, created_at, message_data FROM {q(self.tables.messages)} ORDER BY id")
        out: dict[Key, tuple[str, float, str]] = {}
        self._broken, self._bad_ids = {}, {}
        for (_mid, sid, created, data), (key, bad_id) in zip(rows, row_keys([r[0] for r in rows]), strict=True):
            text, broken = _text_of(data)
            budget.take(len(text))
            broken = not_utf8((sid, created, data), MESSAGE_ROW) or broken
            if broken:
                self._broken[key] = broken
            if bad_id:
                self._bad_ids[key] = bad_id
            out[key] = (str(sid), parse_time(created), text)
        return out

    def _why(self, key: Key, item: Any) -> str:
        """'' or why an item is damaged: what the SDK cannot read of it, and an id that is not one."""
        unread = self._broken.get(key) or damage(item)
        return "; ".join(([f"{unread} (the SDK cannot read it)"] if unread else [])
                         + ([self._bad_ids[key]] if key in self._bad_ids else []))

    def read_catalog(self) -> Catalog:
        """Sessions (and their branches) with their items."""
        budget = Budget(self.display)
        messages = self._messages(budget)
        self._items = {mid: text for mid, (_s, _c, text) in messages.items()}
        session_rows = self._all(f"SELECT session_id, created_at, updated_at FROM {q(self.tables.sessions)}")
        sessions = {str(sid): (parse_time(c), parse_time(u)) for sid, c, u in session_rows}
        broken = {str(row[0]): f"session row: {why}" for row in session_rows if (why := not_utf8(row, SESSION_ROW))}
        lanes = self._lanes(messages)
        tools = self._tool_names(messages)
        usage = self._usage()
        runs: list[RunInfo] = []
        checkpoints: dict[str, tuple[CheckpointInfo, ...]] = {}
        sources = self._sources(lanes)
        self._lane_of = {}
        for (sid, branch), ids in lanes.items():
            rows = [self._row(mid, messages[mid], tools, turn) for mid, turn in ids if mid in messages]
            run_id = sid if branch == "main" else f"{sid}/{branch}"
            source = sources.get((sid, branch))
            drafts, parent = self._drafts(sid, branch, rows, source, lanes)
            infos = number_checkpoints(run_id, drafts)
            checkpoints[run_id] = infos
            self._lane_of[run_id] = (sid, branch, source[1] if source is not None else None)
            runs.append(self._run(run_id, sid, branch, sessions.get(sid), infos, rows, parent, usage,
                                  broken.get(sid, "")))
        for sid in sessions.keys() - {sid for sid, _branch in lanes}:   # no items left (pop_item took them)
            checkpoints[sid] = ()
            runs.append(self._run(sid, sid, "main", sessions[sid], (), [], None, usage, broken.get(sid, "")))
        runs.sort(key=lambda r: (r.updated, r.id), reverse=True)
        self._lanes_cache, self._tools_cache, self._usage_cache = lanes, tools, usage
        return Catalog(tuple(runs), checkpoints)

    def _lanes(self, messages: dict[Key, tuple[str, float, str]]
               ) -> dict[tuple[str, str], list[tuple[Key, int | None]]]:
        """(session, branch) → [(message key, branch turn)] in order."""
        lanes: dict[tuple[str, str], list[tuple[Key, int | None]]] = {}
        structured: set[str] = set()
        if self.tables.structure:
            for sid, mid, branch, turn, made in self._all(
                    f"SELECT session_id, message_id, branch_id, branch_turn_number, created_at "
                    f"FROM {q(self.tables.structure)} ORDER BY sequence_number, id"):
                if type(mid) is not int:    # a damaged row's message id (text, bytes) names no message
                    continue
                key = (str(sid), str(branch or "main"))
                lanes.setdefault(key, []).append((mid, turn if type(turn) is int else None))
                self._branch_made.setdefault(key, parse_time(made))
                structured.add(str(sid))
        for mid, (sid, _created, _text) in messages.items():  # sessions written without structure rows
            if sid not in structured:
                lanes.setdefault((sid, "main"), []).append((mid, None))
        return lanes

    @staticmethod
    def _tool_names(messages: dict[Key, tuple[str, float, str]]) -> dict[str, str]:
        names: dict[str, str] = {}
        for _sid, _c, text in messages.values():
            if '"function_call"' in text:
                item = parse_json(text)
                if isinstance(item, dict) and item.get("type") == "function_call":
                    names[str(item.get("call_id"))] = str(item.get("name") or "tool")
        return names

    def _usage(self) -> dict[tuple[str, str], list[dict]]:
        if not self.tables.usage:
            return {}
        out: dict[tuple[str, str], list[dict]] = {}
        for sid, branch, turn, req, inp, outp, total in self._all(
                f"SELECT session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, "
                f"total_tokens FROM {q(self.tables.usage)} ORDER BY user_turn_number"):
            # (a damaged row's counts may be text or bytes: such a count reads as 0, such a turn as
            # none, and the row says so under ``damaged``, which the run's damage lists)
            values = {"turn": turn, "requests": req, "input_tokens": inp, "output_tokens": outp,
                      "total_tokens": total}
            entry: dict[str, Any] = {k: as_count(v) if k == "turn" else as_count(v) or 0 for k, v in values.items()}
            bad = [f"its {k} is {named(v)}, not a count" for k, v in values.items()
                   if as_count(v) is None and not (k == "turn" and v is None)]
            if bad:
                entry["damaged"] = f"usage of turn {named(turn) if entry['turn'] is None else turn}: {'; '.join(bad)}"
            out.setdefault((str(sid), str(branch or "main")), []).append(entry)
        return out

    def _row(self, mid: Key, message: tuple[str, float, str], tools: dict[str, str], turn: int | None) -> _Row:
        item = parse_json(message[2], "item")
        kind, name, change = classify(item, tools)
        broken = self._why(mid, item)
        return _Row(mid, message[1], len(message[2]), kind, name, change, turn,
                    f"item {mid}: {broken}" if broken else "")

    @staticmethod
    def _sources(lanes: dict[tuple[str, str], list[tuple[Key, int | None]]]) -> dict[tuple[str, str], tuple[str, int]]:
        """Branch → (source branch, number of shared leading items): the branch sharing the longest prefix."""
        found: dict[tuple[str, str], tuple[str, int]] = {}
        for (sid, branch), ids in lanes.items():
            if branch == "main":
                continue
            best = ("main" if (sid, "main") in lanes else "", 0)
            mine = [m for m, _t in ids]
            for (other_sid, other), other_ids in lanes.items():
                if other_sid != sid or other == branch:
                    continue
                theirs = [m for m, _t in other_ids]
                shared = 0
                while shared < min(len(mine), len(theirs)) and mine[shared] == theirs[shared]:
                    shared += 1
                if shared > best[1] or (shared == best[1] and other == "main" and shared):
                    best = (other, shared)
            found[(sid, branch)] = best
        return found

    def _drafts(self, sid: str, branch: str, rows: list[_Row], source: tuple[str, int] | None,
                lanes: dict) -> tuple[list[CheckpointInfo], tuple[str, str | None] | None]:
        """Checkpoint drafts of one lane and its (parent run, parent checkpoint) when a branch."""
        total = 0   # a checkpoint's size is the conversation's (its items so far)

        def draft(row: _Row) -> CheckpointInfo:
            nonlocal total
            total += row.size
            return CheckpointInfo(id="", run_id="", seq=0, kind=row.kind, name=row.name, created=row.created,
                                  size=total, change=row.change, damaged=row.damaged)
        if source is None:
            return [draft(r) for r in rows], None
        origin, shared = source
        origin_run = sid if origin == "main" else f"{sid}/{origin}"
        prefix, own = rows[:shared], rows[shared:]
        total = sum(r.size for r in prefix)
        turn = own[0].turn if own and own[0].turn is not None else (prefix[-1].turn or 0) + 1 if prefix else 1
        fork = CheckpointInfo(id="", run_id="", seq=0, kind="fork", name=f"branch from turn {turn}",
                              created=self._branch_made.get((sid, branch))
                              or (own[0].created if own else rows[-1].created if rows else 0.0),
                              size=total,
                              change=f"branch {branch!r}: {len(prefix)} earlier items shared with {origin or 'main'}")
        parent = None
        if origin:
            before = self._sources(lanes).get((sid, origin))
            index = shared - 1 if before is None else max(0, shared - 1 - before[1] + 1)
            parent = (origin_run, f"{origin_run}:{index}" if shared else None)
        return [fork, *(draft(r) for r in own)], parent

    def _run(self, run_id: str, sid: str, branch: str, times: tuple[float, float] | None,
             infos: tuple[CheckpointInfo, ...], rows: list[_Row], parent: tuple[str, str | None] | None,
             usage: dict, broken: str) -> RunInfo:
        created = times[0] if times else (rows[0].created if rows else 0.0)
        # (an emptied session's last change is its row's: items are gone, pop_item touched it)
        updated = max([infos[-1].created if infos else times[1] if times else 0.0, created])
        last = rows[-1] if rows else None
        status, error = "completed", None
        if last is not None and not (last.kind == "llm" and last.name == "assistant"):
            age = time.time() - updated
            status = "running" if age < self.running_window else "stuck"
            if status == "stuck":
                error = f"the turn never finished: nothing after {last.change!r}"
        turns = usage.get((sid, branch), [])
        labels = {"session": sid, "branch": branch, "items": len(rows)}
        if turns:
            labels["tokens"] = sum(t["total_tokens"] for t in turns)
        return RunInfo(id=run_id, name=sid if branch == "main" else branch, agent="openai-agents",
                       status="forked" if parent and status == "completed" else status,
                       created=created, updated=updated, checkpoint_count=len(infos), head_seq=len(infos) - 1,
                       resumable=False, not_resumable_reason=RESUME_REASON,
                       parent_run=parent[0] if parent else None, parent_checkpoint=parent[1] if parent else None,
                       fork_reason=f"branch {branch!r}" if parent else None, labels=labels, last_error=error,
                       damaged="; ".join(([broken] if broken else []) + [r.damaged for r in rows if r.damaged][:3]
                                         + [t["damaged"] for t in turns if "damaged" in t][:3]))

    def branch_names(self, session: str) -> set[str]:
        """The branch names ``session`` has used, which the SDK never gives a new branch: those
        its ``branch_reservations`` table keeps (with the names of branches left empty) and
        those its structure rows hold."""
        sql = [f"SELECT DISTINCT branch_id FROM {q(self.tables.structure)} WHERE session_id = ?"
               ] if self.tables.structure else []
        if "branch_reservations" in table_columns(self.engine, self.display):   # (the SDK's name, fixed)
            sql.append("SELECT branch_id FROM branch_reservations WHERE session_id = ?")
        return {str(b or "main") for query in sql for (b,) in self._all(query, (session,))}

    # -- one snapshot ------------------------------------------------------------------------------
    def snapshot(self, info: CheckpointInfo) -> Snapshot:
        """The conversation up to ``info`` (and usage per turn so far, for Advanced sessions)."""
        self.catalog()
        sid, branch, shared = self._lane_of[info.run_id]
        ids = self._lanes_cache.get((sid, branch), [])
        upto = info.seq + 1 if shared is None else shared + info.seq
        items = [parse_json(self._items.get(mid), "item") for mid, _t in ids[:upto]]
        turns = [t for _mid, t in ids[:upto]]
        state: dict[str, Any] = {"session_id": sid, "branch": branch,
                                 "messages": [to_message(i, self._tools_cache) for i in items]}
        meta: dict[str, Any] = {"session": sid, "branch": branch}
        if items and info.kind != "fork":
            meta["item"] = items[-1]
            meta["turn"] = turns[-1]
        if self.tables.structure:
            reached = max((t for t in turns if t is not None), default=0)
            done = [u for u in self._usage_cache.get((sid, branch), []) if (u["turn"] or 0) <= reached]
            state["usage"] = {"turns": done, "total": {k: sum(u[k] for u in done) for k in
                                                       ("requests", "input_tokens", "output_tokens", "total_tokens")}}
            if done and info.kind != "fork" and meta.get("turn") == done[-1]["turn"]:
                meta["turn_usage"] = done[-1]
        problems = [f"item {mid} of session {sid}: {why}"
                    for (mid, _t), item in zip(ids[:upto], items, strict=True) if (why := self._why(mid, item))]
        if self.tables.structure:
            problems += [u["damaged"] for u in done if "damaged" in u]
        return Snapshot(info=info, state=state, tasks=None, meta=meta, problems=tuple(problems))


class OpenAIAgentsAdapter(StoreAdapter):
    """Sessions of the OpenAI Agents SDK (SQLite, SQLAlchemy, Advanced)."""

    kind = "openai-agents"
    label = "OpenAI Agents"
    capabilities = Capabilities(Capability(True, "Advanced sessions: a branch from a user turn."),
                                Capability(False, RESUME_REASON), OFFERED)
    order = 50

    def detect_tables(self, columns: dict[str, set[str]]) -> bool:
        """A sessions table and a messages table (any names) with the SDK's columns."""
        return find_tables(columns) is not None

    def open_database(self, engine: sa.Engine, target: Target, *, readonly: bool = True,
                      **options: Any) -> Store:
        """An ``OpenAIAgentsStore`` (always read-only: the SDK writes, the inspector reads)."""
        tables = find_tables(table_columns(engine, target.display))
        assert tables is not None
        window = float(options.get("running_window", RUNNING_WINDOW))
        return OpenAIAgentsStore(engine, target, tables, read_only=True, running_window=window)
