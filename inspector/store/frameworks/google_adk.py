"""Google ADK sessions (``google-adk``): DatabaseSessionService and SqliteSessionService
databases (what ``adk web`` / ``adk run`` keep) as stores.

Mapping: a session is a run; each event is a checkpoint; the conversation is the events'
content parts (text, ``function_call``, ``function_response``). The state at an event is
rebuilt by folding the events' ``actions.state_delta`` — and that rebuild is approximate
where ADK keeps only current values: the initial state given to ``create_session`` (keys a
delta later overwrote), and the ``app:`` / ``user:`` scoped keys other sessions also change.
The state says so under ``_approximate``. The old v0 schema pickled ``actions``: those are
shown as opaque and never unpickled.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from inspector.humanize import fmt_size
from inspector.model import OFFERED, Capabilities, Capability, CheckpointInfo, RunInfo, Snapshot, StoreInfo
from inspector.store.adapters import StoreAdapter
from inspector.store.base import Store
from inspector.store.columns import as_count
from inspector.store.engine import Target, guard, table_columns
from inspector.store.frameworks.base import (MAX_ROWS, Budget, Catalog, EngineCatalogStore, damage, named,
                                             not_utf8, number_checkpoints, opaque, parse_json)
from inspector.store.frameworks.openai_agents import parse_time, q

SESSION_COLUMNS = frozenset({"app_name", "user_id", "id", "state", "create_time", "update_time"})
EVENT_COLUMNS = frozenset({"id", "app_name", "user_id", "session_id", "invocation_id", "timestamp"})
SESSION_ROW = ("app_name", "user_id", "id", "state", "create_time", "update_time")   # as selected
EVENT_ROW = {"v1": ("session_id", "app_name", "user_id", "id", "invocation_id", "timestamp", "event_data"),
             "v0": ("session_id", "app_name", "user_id", "id", "invocation_id", "timestamp", "author", "content")}
RUNNING_WINDOW = 300.0
FORK_WHY = ("Google ADK sessions have no fork: the schema has no branches, and ADK's rewind changes "
            "the session in place, which the inspector never does.")
RESUME_WHY = ("Resuming an ADK session needs your agent: Runner.run_async(user_id=…, session_id=…, "
              "new_message=…) in your own code, which the inspector does not have.")
CAPABILITIES = Capabilities(Capability(False, FORK_WHY), Capability(False, RESUME_WHY), OFFERED)


@dataclass
class _Event:
    event_id: str
    invocation: str
    created: float
    size: int
    data: Any          # decoded event (v1) or a dict of the v0 columns
    damaged: str = ""  # why ADK could not read this row ('' when it can)


def layout(columns: dict[str, set[str]]) -> str | None:
    """'v1' (event_data JSON), 'v0' (pickled actions) or None."""
    low = {n.lower(): {c.lower() for c in cols} for n, cols in columns.items()}
    events, sessions = low.get("events", set()), low.get("sessions", set())
    if not (sessions >= SESSION_COLUMNS and events >= EVENT_COLUMNS):
        return None
    if "event_data" in events:
        return "v1"
    return "v0" if "actions" in events and "author" in events else None


def _parts(data: Any) -> list[dict]:
    content = data.get("content") if isinstance(data, dict) else None
    parts = content.get("parts") if isinstance(content, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _short(text: Any, limit: int = 60) -> str:
    value = " ".join(str(text or "").split())
    return value if len(value) <= limit else value[:limit - 1] + "…"


# parts with a field of their own that only qualify another (a signature is bytes, never shown)
PART_EXTRAS = frozenset({"thought", "thought_signature", "part_metadata", "media_resolution", "video_metadata"})


def b64_size(data: Any) -> int | None:
    """The byte count of base64 text (as ADK stores a Blob's bytes), without decoding it."""
    if not isinstance(data, str):
        return None
    return max(0, len(data) * 3 // 4 - len(data) + len(data.rstrip("=")))


# fields of a part that ADK reads as objects (a part holding another value there is damaged)
PART_OBJECTS = ("function_call", "function_response", "inline_data", "file_data", "executable_code",
                "code_execution_result")


def part_damage(part: Any) -> str:
    """'' or why ADK could not read a content part: it is no object, its text is not text, or a
    field ADK reads as an object holds something else (the part is never shown as valid)."""
    if not isinstance(part, dict):
        return f"is {named(part)}, not a part"
    text = part.get("text")
    if text is not None and not isinstance(text, str):
        return f"has {named(text)} where its text belongs"
    bad = next((k for k in PART_OBJECTS if part.get(k) is not None and not isinstance(part[k], dict)), None)
    return f"has {named(part[bad])} where its {bad} object belongs" if bad else ""


def event_damage(data: dict) -> str:
    """'' or why ADK could not read a decoded event: its content, a part of it, or a token count
    of its ``usage_metadata`` is not what ADK's model holds (a token count is a whole number
    from 0: 2.7, true or -5 is damage, never read as 2, 1 or -5)."""
    content = data.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    if content is not None and not isinstance(content, dict):
        return f"its content is {named(content)}, not an object"
    if parts is not None and not isinstance(parts, list):
        return f"its content's parts are {named(parts)}, not a list"
    for index, part in enumerate(parts or ()):
        if why := part_damage(part):
            return f"its content part {index} {why}"
    usage = data.get("usage_metadata")
    if usage is None:
        return ""
    if not isinstance(usage, dict):
        return f"its usage_metadata is {named(usage)}, not an object"
    bad = next((k for k, v in usage.items()
                if str(k).endswith("_token_count") and v is not None and as_count(v) is None), None)
    return f"its usage_metadata.{bad} is {named(usage[bad])}, not a count of tokens" if bad else ""


def describe_part(part: dict) -> dict | None:
    """One content part as the conversation shows it — text, a thought, media by type and size
    (never its bytes), a file by its uri, code and its result, any other kind by name, a damaged
    part by what is wrong with it — or None for a function call or response (tool calls and tool
    messages carry those) and for a part holding only what qualifies another (a thought's signature)."""
    if why := part_damage(part):
        return {"type": "damaged", "damaged": why}
    if "function_call" in part or "function_response" in part:
        return None
    if isinstance(part.get("text"), str):
        return {"type": "thought" if part.get("thought") else "text", "text": part["text"]}
    for key in ("inline_data", "file_data", "executable_code", "code_execution_result"):
        value = part.get(key)
        if isinstance(value, dict):
            if key == "inline_data":
                return {"type": key, "mime_type": value.get("mime_type"), "size": b64_size(value.get("data")),
                        **({"display_name": value["display_name"]} if value.get("display_name") else {})}
            return {"type": key, **{k: v for k, v in value.items() if k != "id" and v is not None}}
    kind = next((k for k, v in part.items() if k not in PART_EXTRAS and v is not None), None)
    return None if kind is None else {"type": str(kind)}   # (a bare signature says nothing)


def _tag(*words: Any) -> str:
    return "[" + " ".join(str(w) for w in words if w) + "]"


def part_label(part: dict) -> str:
    """A described part (``describe_part``) as a line of the message's text."""
    kind, get = part["type"], part.get
    if kind in ("text", "thought"):
        return str(part["text"])
    if kind == "inline_data":
        name = f": {get('display_name')}" if get("display_name") else ""
        return f"[{get('mime_type') or 'data'} {fmt_size(get('size')) or 'of unknown size'}{name}]"
    if kind == "file_data":
        return _tag("file", get("mime_type"), get("file_uri") or get("display_name"))
    if kind == "executable_code":
        return _tag("code", get("language")) + f"\n{get('code') or ''}"
    if kind == "code_execution_result":
        return _tag("code result", get("outcome")) + f"\n{str(get('output') or '').rstrip()}"
    if kind == "damaged":
        return f"[a damaged part, which {get('damaged')}]"
    return _tag(kind)


def error_of(data: Any) -> str:
    """'' or the event's error: ``CODE: message`` (ADK's ``error_code`` and ``error_message``)."""
    if not isinstance(data, dict) or not (data.get("error_code") or data.get("error_message")):
        return ""
    return ": ".join(str(v) for v in (data.get("error_code"), data.get("error_message")) if v)


def _said(data: Any) -> tuple[str, str]:
    """(what the event says, what it thought): its parts' lines, thoughts kept apart."""
    parts = [d for p in _parts(data) if (d := describe_part(p)) is not None]
    return ("\n".join(part_label(d) for d in parts if d["type"] != "thought"),
            "\n".join(str(d["text"]) for d in parts if d["type"] == "thought"))


def classify(data: Any) -> tuple[str, str, str]:
    """(kind, name, change) of one event."""
    author = str(data.get("author") or "") if isinstance(data, dict) else ""
    parts = _parts(data)
    calls = [p["function_call"] for p in parts if isinstance(p.get("function_call"), dict)]
    answers = [p["function_response"] for p in parts if isinstance(p.get("function_response"), dict)]
    said, thought = _said(data)
    if error := error_of(data):
        return "llm", author or "model", f"error {_short(error, 80)}"
    if calls:
        names = ", ".join(str(c.get("name")) for c in calls)
        return "llm", names, f"{author} calls {names}"
    if answers:
        names = ", ".join(str(a.get("name")) for a in answers)
        return "tool", names, f"{names} → {_short(answers[0].get('response'))}"
    if author == "user":
        return "input", "user", f"user: {_short(said or thought)}"
    if said or thought:
        return "llm", author or "model", f"{author}: {_short(said)}" if said else f"{author} thinks: {_short(thought)}"
    delta = (data.get("actions") or {}).get("state_delta") if isinstance(data, dict) else None
    if isinstance(delta, dict) and delta:
        return "update", author or "state", "state: " + ", ".join(sorted(map(str, delta)))[:80]
    return "step", author or "event", author or "event"


def to_messages(data: Any) -> list[dict]:
    """The event's content parts as chat messages for the conversation view: one for what it
    says (with its thoughts under ``thought`` and, when not all is text, each part under
    ``parts``), one per function response, one for its error."""
    author = str(data.get("author") or "") if isinstance(data, dict) else ""
    role = "user" if author == "user" else "assistant"
    out: list[dict] = []
    parts = [d for p in _parts(data) if (d := describe_part(p)) is not None]
    said, thought = _said(data)
    calls = [p["function_call"] for p in _parts(data) if isinstance(p.get("function_call"), dict)]
    if parts or calls:
        message: dict[str, Any] = {"role": role, "content": said, "author": author}
        if thought:
            message["thought"] = thought
        if any(d["type"] != "text" for d in parts):
            message["parts"] = parts
        if calls:
            message["tool_calls"] = [{"name": c.get("name"), "args": c.get("args", {})} for c in calls]
        out.append(message)
    for part in _parts(data):
        answer = part.get("function_response")
        if isinstance(answer, dict):
            out.append({"role": "tool", "name": answer.get("name"), "content": answer.get("response")})
    if error := error_of(data):
        out.append({"role": "assistant", "type": "error", "author": author, "content": f"error {error}",
                    "error_code": data.get("error_code"), "error_message": data.get("error_message")})
    return out


def is_final(data: Any) -> bool:
    """A model answer with no pending call and no error (ADK's final response, thoughts aside)."""
    if not isinstance(data, dict) or data.get("author") == "user" or data.get("partial") or error_of(data):
        return False
    parts = _parts(data)
    return bool(_said(data)[0]) and not any("function_call" in p or "function_response" in p for p in parts)


class GoogleADKStore(EngineCatalogStore):
    """An ADK session database opened read-only."""

    identity_table = "sessions"

    def __init__(self, engine: sa.Engine, target: Target, version: str,
                 running_window: float = RUNNING_WINDOW) -> None:
        super().__init__(engine, target)
        self.version = version
        self.running_window = running_window
        self._events: dict[str, list[_Event]] = {}
        self._sessions: dict[str, dict] = {}
        self.info = StoreInfo(url=target.url, display=target.display, kind="google-adk", backend=target.backend,
                              format_version=None, read_only=True, capabilities=CAPABILITIES,
                              label="Google ADK" + (" (v0 schema)" if version == "v0" else ""))

    def _all(self, conn: sa.Connection, sql: str) -> list[Any]:
        return list(conn.exec_driver_sql(sql + f" LIMIT {MAX_ROWS}").fetchall())

    def fingerprint(self) -> Any:
        """Event and session counts and the latest times."""
        with guard(self.display), self.engine.connect() as conn:
            return (tuple(conn.exec_driver_sql("SELECT COUNT(*), MAX(timestamp) FROM events").one()),
                    tuple(conn.exec_driver_sql("SELECT COUNT(*), MAX(update_time) FROM sessions").one()))

    def _scoped(self, conn: sa.Connection, table: str, key: tuple[str, ...]) -> dict[tuple, Any]:
        cols = {c.lower() for c in table_columns(self.engine, self.display).get(table, set())}
        if "state" not in cols:
            return {}
        return {tuple(map(str, row[:-1])): parse_json(row[-1], f"{table} state")
                for row in self._all(conn, f"SELECT {', '.join(key)}, state FROM {q(table)}")}

    def read_catalog(self) -> Catalog:
        """Sessions with their events (decoded once per catalog; bounded)."""
        budget = Budget(self.display)
        v1 = self.version == "v1"
        select = ("SELECT session_id, app_name, user_id, id, invocation_id, timestamp, event_data FROM events"
                  if v1 else
                  "SELECT session_id, app_name, user_id, id, invocation_id, timestamp, author, content FROM events")
        with guard(self.display), self.engine.connect() as conn:
            sessions = self._all(conn, "SELECT app_name, user_id, id, state, create_time, update_time FROM sessions")
            rows = self._all(conn, select + " ORDER BY timestamp")
            apps = self._scoped(conn, "app_states", ("app_name",))
            users = self._scoped(conn, "user_states", ("app_name", "user_id"))
        ids = [str(s[2]) for s in sessions]
        unique = len(set(ids)) == len(ids)
        def run_key(app: Any, user: Any, sid: Any) -> str:
            return str(sid) if unique else f"{app}/{user}/{sid}"
        events: dict[str, list[_Event]] = {}
        for row in rows:
            if v1:
                raw = row[6]
                size = len(raw) if isinstance(raw, (str, bytes)) else len(json.dumps(raw, default=str))
                budget.take(size)
                data = parse_json(raw, "event_data")
            else:
                content = row[7]
                budget.take(len(content) if isinstance(content, (str, bytes)) else 0)
                data = {"author": row[6], "content": parse_json(content, "content") if isinstance(content, (str, bytes))
                        else content, "actions": opaque("v0 schema: actions are pickled, not decoded "
                                                        "(pickle can run code)")}
            broken = not_utf8(row, EVENT_ROW[self.version]) or damage(data if v1 else data["content"])
            if not broken and v1 and not isinstance(data, dict):
                broken = f"its event_data is a JSON {type(data).__name__}, not an event"
            broken = broken or (event_damage(data) if isinstance(data, dict) else "")
            stamp = data.get("timestamp") if isinstance(data, dict) else None
            if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
                created = parse_time(stamp)
            else:
                created = parse_time(row[5])
            events.setdefault(run_key(row[1], row[2], row[0]), []).append(
                _Event(str(row[3]), str(row[4]), created, size if v1 else len(str(row[7] or "")), data, broken))
        self._events = events
        self._sessions = {}
        runs, checkpoints = [], {}
        for app, user, sid, state, created, updated in sessions:
            run_id = run_key(app, user, sid)
            current = parse_json(state, "session state")
            self._sessions[run_id] = {"app": str(app), "user": str(user), "id": str(sid), "state": current,
                                      "damaged": not_utf8((app, user, sid, state, created, updated), SESSION_ROW)
                                      or damage(current),
                                      "app_state": apps.get((str(app),)),
                                      "user_state": users.get((str(app), str(user)))}
            evs = events.get(run_id, [])
            drafts, total = [], 0
            for ev in evs:   # a checkpoint's size is the session's events so far
                kind, name, change = classify(ev.data)
                total += ev.size
                drafts.append(CheckpointInfo(id="", run_id="", seq=0, kind=kind, name=name, created=ev.created,
                                             size=total, change=change,
                                             damaged=f"event {ev.event_id}: {ev.damaged}" if ev.damaged else ""))
            infos = number_checkpoints(run_id, drafts)
            checkpoints[run_id] = infos
            runs.append(self._run(run_id, str(app), str(user), str(sid), parse_time(created), parse_time(updated),
                                  infos, evs, self._sessions[run_id]["damaged"]))
        runs.sort(key=lambda r: (r.updated, r.id), reverse=True)
        return Catalog(tuple(runs), checkpoints)

    def _run(self, run_id: str, app: str, user: str, sid: str, created: float, updated: float,
             infos: tuple[CheckpointInfo, ...], evs: list[_Event], broken: str) -> RunInfo:
        last = evs[-1].data if evs else None
        status, error = "completed", None
        failed = _failure(evs)
        if failed is not None:
            status, error = "failed", error_of(evs[failed].data) + (f" (at #{failed})" if failed < len(evs) - 1 else "")
        elif evs and not is_final(last):
            recent = time.time() - max(updated, evs[-1].created) < self.running_window
            status = "running" if recent else "stuck"
            error = None if recent else f"the invocation never finished: nothing after {infos[-1].change!r}"
        return RunInfo(id=run_id, name=sid, agent=f"{app} · {user}", status=status, created=created,
                       updated=max(updated, evs[-1].created if evs else 0.0), checkpoint_count=len(infos),
                       head_seq=len(infos) - 1, resumable=False, not_resumable_reason=RESUME_WHY,
                       labels={"app": app, "user": user, "session": sid, "events": len(evs)}, last_error=error,
                       damaged=_run_damage(broken, evs))

    @staticmethod
    def _problems(session: dict, evs: list[_Event]) -> tuple[str, ...]:
        """What of the session and of its events up to a checkpoint ADK could not read either."""
        sid = session.get("id")
        found = [f"session {sid}: {session['damaged']}"] if session.get("damaged") else []
        return tuple(found + [f"event {e.event_id} (#{seq}) of session {sid}: {e.damaged}"
                              for seq, e in enumerate(evs) if e.damaged])

    # -- the state at an event ---------------------------------------------------------------------
    def snapshot(self, info: CheckpointInfo) -> Snapshot:
        """Conversation and rebuilt state at ``info``, with what of the rebuild is approximate."""
        self.catalog()
        session = self._sessions.get(info.run_id, {})
        evs = self._events.get(info.run_id, [])[:info.seq + 1]
        current = session.get("state")
        if not isinstance(current, dict) or damage(current):
            current = {}
        deltas = [(e.data.get("actions") or {}).get("state_delta") if isinstance(e.data, dict) else None for e in evs]
        every = self._events.get(info.run_id, [])
        touched = {k for e in every if isinstance(e.data, dict)
                   for k in ((e.data.get("actions") or {}).get("state_delta") or {}
                             if isinstance((e.data.get("actions") or {}).get("state_delta"), dict) else {})}
        state = {k: v for k, v in current.items() if k not in touched}   # never changed: the initial values
        user: dict[str, Any] = {}
        app: dict[str, Any] = {}
        notes: list[str] = []
        readable = True
        for delta in deltas:
            if not isinstance(delta, dict):
                readable = readable and delta is None
                continue
            for key, value in delta.items():
                key = str(key)
                if key.startswith("app:"):
                    app[key[4:]] = value
                elif key.startswith("user:"):
                    user[key[5:]] = value
                elif not key.startswith("temp:"):
                    state[key] = value
        if self.version == "v0":
            notes.append("This database uses ADK's v0 schema, whose state deltas are pickled: the state "
                         "cannot be rebuilt; shown is the session's current state.")
            state = dict(current)
        elif not readable:
            notes.append("Some events' state deltas could not be read; the state may miss their changes.")
        pending = sorted(k for k in touched if k in current and not k.startswith(("app:", "user:", "temp:")))
        if pending:
            notes.append("Initial values given to create_session are not stored: before the first event that "
                         f"set {', '.join(pending[:8])}, its earlier value (if any) is unknown.")
        if app or user:
            notes.append("app: and user: keys are shared with other sessions; shown are the values this "
                         "session's events wrote, while app_state / user_state below are today's values.")
        messages = [m for e in evs for m in to_messages(e.data)]
        errors = [{"seq": seq, "event_id": e.event_id, "author": e.data.get("author"),
                   "error_code": e.data.get("error_code"), "error_message": e.data.get("error_message")}
                  for seq, e in enumerate(evs) if error_of(e.data)]
        usage: list[dict] = [u for e in evs if isinstance(e.data, dict)
                             and isinstance(u := e.data.get("usage_metadata"), dict)]
        counts = [u.get("total_token_count") for u in usage]
        shown: dict[str, Any] = {}
        if notes:   # one text, so the state tree shows it on its first row without expanding
            shown["_approximate"] = " ".join(notes)
        shown.update({"state": state, "user_state_written": user, "app_state_written": app,
                      "messages": messages, **({"errors": errors} if errors else {}),
                      "usage": {"calls": len(usage), "total_tokens": sum(as_count(c) or 0 for c in counts),
                                **_uncounted(counts)},
                      "current": {"session_state": current, "user_state": session.get("user_state"),
                                  "app_state": session.get("app_state")}})
        event = evs[-1].data if evs else None
        meta = {"event_id": evs[-1].event_id if evs else None, "invocation_id": evs[-1].invocation if evs else None,
                "app": session.get("app"), "user": session.get("user"), "session": session.get("id"),
                "event": event, "rebuild": "approximate" if notes else "exact",
                **({"error": error_of(event)} if error_of(event) else {})}
        return Snapshot(info=info, state=shown, tasks=None, meta=meta, problems=self._problems(session, evs))


def _uncounted(counts: list[Any]) -> dict[str, int]:
    """``not_counted``: how many calls' total token counts are damaged (left out of the total,
    the events listed in the problems), when any are."""
    bad = sum(1 for c in counts if c is not None and as_count(c) is None)
    return {"not_counted": bad} if bad else {}


def _failure(evs: list[_Event]) -> int | None:
    """The index of the last error event of the session's last invocation (ADK ends an agent's
    turn at an error), or None: no error, or the user spoke again after it (a newer invocation)."""
    found = next((i for i in range(len(evs) - 1, -1, -1) if error_of(evs[i].data)), None)
    return found if found is not None and evs[found].invocation == evs[-1].invocation else None


def _run_damage(broken: str, evs: list[_Event]) -> str:
    """'' or why a session's rows are damaged: its own row, then its first damaged events."""
    bad = [f"event {e.event_id} (#{seq}): {e.damaged}" for seq, e in enumerate(evs) if e.damaged]
    parts = ([f"session row: {broken}"] if broken else []) + bad[:3]
    if len(bad) > 3:
        parts.append(f"{len(bad) - 3} more damaged events")
    return "; ".join(parts)


class GoogleADKAdapter(StoreAdapter):
    """Google ADK session databases (DatabaseSessionService, SqliteSessionService)."""

    kind = "google-adk"
    label = "Google ADK"
    capabilities = CAPABILITIES
    order = 50

    def detect_tables(self, columns: dict[str, set[str]]) -> bool:
        """``sessions`` and ``events`` tables with ADK's columns."""
        return layout(columns) is not None

    def open_database(self, engine: sa.Engine, target: Target, *, readonly: bool = True,
                      **options: Any) -> Store:
        """A read-only ``GoogleADKStore``."""
        version = layout(table_columns(engine, target.display))
        assert version is not None
        return GoogleADKStore(engine, target, version,
                              running_window=float(options.get("running_window", RUNNING_WINDOW)))
