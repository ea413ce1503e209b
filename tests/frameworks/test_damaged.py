"""Framework stores that are damaged or hostile: bounded reads, opaque values, nothing executed."""

from __future__ import annotations

import json
import math
import pickle
import sqlite3
from pathlib import Path

import pytest

from inspector.errors import StoreError
from inspector.store import open_store


class _Boom:
    """Unpickling this would create a file: proof that nothing is unpickled."""

    def __init__(self, target: str) -> None:
        self.target = target

    def __reduce__(self):
        return (Path.touch, (Path(self.target),))


def test_adk_v0_pickled_actions_stay_opaque_and_are_never_run(store_copy, tmp_path: Path) -> None:
    path = store_copy("adk_database_v0.db")
    store_copy.modified = True
    with open_store(path) as store:
        assert store.info.kind == "google-adk" and "v0" in store.info.label
        head = store.load("s-legacy:-1")
        assert "pickled" in head.state["_approximate"]
        assert head.state["state"] == {"budget": 5, "cart": ["plums"], "last_reply": "You said: thanks"}
        assert [m["role"] for m in head.state["messages"]][:3] == ["user", "assistant", "tool"]
    canary = tmp_path / "executed"
    conn = sqlite3.connect(path)
    conn.execute("UPDATE events SET actions = ?", (pickle.dumps(_Boom(str(canary))),))
    conn.commit()
    conn.close()
    with open_store(path) as store:
        for cp in store.list_checkpoints("s-legacy"):
            event = store.load(cp.id).meta["event"]
            assert "pickled" in event["actions"]["__opaque__"]
    assert not canary.exists()


def test_agents_rows_that_are_not_json_or_nest_too_deep(store_copy) -> None:
    path = store_copy("agents_sqlite.db")
    store_copy.modified = True
    conn = sqlite3.connect(path)
    for data in ("not json {", "[" * 50_000 + "]" * 50_000, json.dumps({"role": "user", "content": "x" * 10})):
        conn.execute("INSERT INTO agent_messages (session_id, message_data) VALUES ('quick-chat', ?)", (data,))
    conn.commit()
    conn.close()
    with open_store(path) as store:
        cps = store.list_checkpoints("quick-chat")
        assert len(cps) == 5 and cps[2].name == "item" and cps[3].name == "item"
        messages = store.load("quick-chat:-1").state["messages"]
        opaque = [m["content"]["__opaque__"] for m in messages if isinstance(m.get("content"), dict)
                  and "__opaque__" in m["content"]]
        assert any("not valid JSON" in o for o in opaque) and any("deep" in o for o in opaque)


def test_crewai_folder_with_a_damaged_file_and_a_listing_over_its_budget(store_copy, monkeypatch) -> None:
    path = store_copy("crewai_json")
    store_copy.modified = True
    victim = sorted((path / "main").glob("*.json"))[-1]
    victim.write_text(victim.read_text()[:1000])
    with open_store(path) as store:
        runs = {r.id for r in store.list_runs()}
        assert "main" in runs
        shown = [json.dumps(store.load(c.id).state) for r in sorted(runs) for c in store.list_checkpoints(r)]
        assert any("not valid JSON" in s for s in shown)
    from inspector.store.frameworks import base
    monkeypatch.setattr(base, "MAX_CATALOG_BYTES", 50_000)
    with pytest.raises(StoreError, match="too large"), open_store(path) as store:
        store.list_runs()


def test_agents_usage_rows_whose_counts_are_not_numbers(store_copy) -> None:
    """An Advanced session's usage rows holding text or bytes where counts and turns belong,
    and a structure row whose message id is text (found by mutating stores at random): the
    runs list and their checkpoints load, such a count reading as 0, such a turn as none and
    such a row as naming no message (a sum, a comparison and int() once failed)."""
    path = store_copy("agents_advanced.db")
    store_copy.modified = True
    conn = sqlite3.connect(path)
    conn.execute("UPDATE turn_usage SET total_tokens = 'many', requests = x'00' "
                 "WHERE rowid = (SELECT min(rowid) FROM turn_usage)")
    conn.execute("UPDATE turn_usage SET user_turn_number = x'ff' WHERE rowid = (SELECT max(rowid) FROM turn_usage)")
    conn.execute("UPDATE message_structure SET message_id = 'x' WHERE rowid = (SELECT max(rowid) FROM message_structure)")
    conn.commit()
    conn.close()
    with open_store(path) as store:
        runs = {r.id: r for r in store.list_runs()}
        assert isinstance(runs["planner"].labels["tokens"], int)
        said = set()
        for run_id in runs:
            for cp in store.list_checkpoints(run_id):
                snap = store.load(cp.id)
                usage = snap.state.get("usage")
                assert usage is None or all(isinstance(v, int) for v in usage["total"].values())
                said.update(p for p in snap.problems if p.startswith("usage of turn"))
        # a count read as 0 says so (it read as 0 without a word)
        damaged = " ".join(r.damaged for r in runs.values())
        assert 'its total_tokens is text "many", not a count' in damaged and "its requests is 1 byte, not a count" in damaged
        assert "its turn is 1 byte, not a count" in damaged
        assert any('total_tokens is text "many"' in p for p in said)



@pytest.mark.parametrize("name", ["agents_sqlite.db", "adk_sqlite.db"])
def test_times_that_are_not_times_read_as_unknown(store_copy, name: str) -> None:
    """An infinite or NaN time where a framework keeps a timestamp (a column, or ADK's event
    JSON, whose parser takes ``Infinity``) reads as 0, "unknown", as a damaged native time does
    (an infinite time once reached the window, whose header raised on it)."""
    path = store_copy(name)
    store_copy.modified = True
    conn = sqlite3.connect(path)
    if name.startswith("agents"):
        conn.execute("UPDATE agent_messages SET created_at = ? WHERE rowid = (SELECT min(rowid) FROM agent_messages)",
                     (float("inf"),))
    else:
        rowid, data = conn.execute("SELECT rowid, event_data FROM events ORDER BY rowid LIMIT 1").fetchone()
        data = json.dumps({**json.loads(data), "timestamp": float("inf")})     # "timestamp": Infinity
        conn.execute("UPDATE events SET timestamp = 1e300, event_data = ? WHERE rowid = ?", (data, rowid))
        rowid, data = conn.execute("SELECT rowid, event_data FROM events ORDER BY rowid LIMIT 1 OFFSET 1").fetchone()
        conn.execute("UPDATE events SET timestamp = 1e300, event_data = ? WHERE rowid = ?",
                     (json.dumps({k: v for k, v in json.loads(data).items() if k != "timestamp"}), rowid))
    conn.commit()
    conn.close()
    with open_store(path) as store:
        times = [c.created for r in store.list_runs() for c in store.list_checkpoints(r.id)]
        assert times.count(0.0) == (1 if name.startswith("agents") else 2)
        assert all(math.isfinite(t) and t < 1e12 for t in times)


def _drop_a_row_behind_an_index(path: Path, table: str) -> None:
    """Damage as a bad sector or a torn write leaves it: an index of ``table`` keeps an entry for a
    row that is gone. (The index is hidden from SQLite while the row is deleted, then put back.)
    Every row still reads; only SQLite's integrity check, or a query through that index, finds it."""
    conn = sqlite3.connect(path)
    name, root, sql = conn.execute("SELECT name, rootpage, sql FROM sqlite_master WHERE type = 'index' "
                                   "AND tbl_name = ? AND sql IS NOT NULL ORDER BY name LIMIT 1", (table,)).fetchone()
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("DELETE FROM sqlite_master WHERE name = ?", (name,))
    conn.commit()
    conn.close()
    conn = sqlite3.connect(path)
    conn.execute(f"DELETE FROM {table} WHERE rowid = (SELECT MAX(rowid) FROM {table})")
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("INSERT INTO sqlite_master VALUES ('index', ?, ?, ?, ?)", (name, table, root, sql))
    conn.commit()
    conn.close()
    conn = sqlite3.connect(path)
    assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] > 0   # the rows read
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] != "ok"
    conn.close()


@pytest.mark.parametrize("name,table", [("adk_database.db", "events"), ("agents_sqlite.db", "agent_messages"),
                                        ("crewai_flows.db", "flow_states")])
def test_a_file_whose_index_misses_a_row_is_damaged(store_copy, capsys, name: str, table: str) -> None:
    """A store written by the real framework whose index no longer matches its table (its rows all
    read without an error) is refused as damaged, as a file SQLite calls malformed is: one
    sentence, exit 2 (it was listed as if nothing were wrong)."""
    from inspector.cli import main
    path = store_copy(name)
    store_copy.modified = True
    _drop_a_row_behind_an_index(path, table)
    with pytest.raises(StoreError, match="is damaged: SQLite's integrity check finds"), open_store(path) as store:
        store.list_runs()
    assert main(["runs", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is damaged" in err and "Traceback" not in err


@pytest.mark.parametrize("name", ["adk_database.db", "adk_sqlite.db"])
@pytest.mark.parametrize("column", ["timestamp", "event_data"])
def test_an_adk_event_adk_cannot_decode_is_reported(store_copy, capsys, name: str, column: str) -> None:
    """An event row with text that is not UTF-8 (ADK's own reads fail on it: "Could not decode to
    UTF-8 column") or with event_data that is not JSON: the run, the checkpoint and every state
    folded over it say which event of which session is damaged, and the value is not shown as
    one (it was: a time of 0 or a replacement character, and no word of damage)."""
    from inspector.cli import main
    path = store_copy(name)
    store_copy.modified = True
    conn = sqlite3.connect(path)
    rowid, event = conn.execute("SELECT rowid, id FROM events WHERE session_id = 's-groceries' "
                                "ORDER BY timestamp LIMIT 1 OFFSET 2").fetchone()
    conn.execute(f"UPDATE events SET {column} = CAST(x'7b22ff41fe' AS TEXT) WHERE rowid = ?", (rowid,))
    conn.execute("UPDATE events SET event_data = 'not json {' WHERE session_id = 's-quick'")
    conn.commit()
    conn.close()
    with open_store(path) as store:
        run = store.get_run("s-groceries")
        assert event in run.damaged and f"its {column} is not UTF-8 text" in run.damaged
        damaged = [c for c in store.list_checkpoints("s-groceries") if c.damaged]
        assert len(damaged) == 1 and event in damaged[0].damaged
        later = store.load("s-groceries:-1")
        assert any(event in p and "s-groceries" in p for p in later.problems)
        shown = store.load(damaged[0].id)
        assert shown.problems and (column == "timestamp" or "__opaque__" in shown.meta["event"])
        assert all(not c.damaged for c in store.list_checkpoints("s-ben"))
        assert not store.load("s-ben:-1").problems
        assert all("not valid JSON" in c.damaged for c in store.list_checkpoints("s-quick"))
    assert main(["checkpoints", str(path), "s-groceries"]) == 0
    assert f"damaged: #{damaged[0].seq}: event {event}" in capsys.readouterr().out
    assert main(["show", str(path), "s-groceries:-1"]) == 0
    assert f"damaged: event {event}" in capsys.readouterr().out


def test_an_agents_item_the_sdk_cannot_decode_is_reported(store_copy) -> None:
    """message_data that is not UTF-8 (the SDK's read fails on it) is damage, shown as such."""
    path = store_copy("agents_sqlite.db")
    store_copy.modified = True
    conn = sqlite3.connect(path)
    mid = conn.execute("SELECT MIN(id) FROM agent_messages WHERE session_id = 'quick-chat'").fetchone()[0]
    conn.execute("UPDATE agent_messages SET message_data = CAST(x'7b22ff41fe' AS TEXT) WHERE id = ?", (mid,))
    conn.commit()
    conn.close()
    with open_store(path) as store:
        assert f"item {mid}" in store.get_run("quick-chat").damaged
        first = store.list_checkpoints("quick-chat")[0]
        assert "not UTF-8" in first.damaged
        head = store.load("quick-chat:-1")
        assert any(f"item {mid} of session quick-chat" in p for p in head.problems)
        assert "not UTF-8" in head.state["messages"][0]["content"]["__opaque__"]
        assert not store.get_run("trip-lisbon").damaged


def test_a_crewai_snapshot_row_its_jsonb_cannot_give_is_reported(store_copy) -> None:
    """A checkpoint row whose JSONB is cut short (crewai's own ``json()`` fails on it) is damage."""
    path = store_copy("crewai_checkpoints.db")
    store_copy.modified = True
    conn = sqlite3.connect(path)
    cid = conn.execute("SELECT id FROM checkpoints WHERE branch = 'main' ORDER BY rowid LIMIT 1 OFFSET 1").fetchone()[0]
    conn.execute("UPDATE checkpoints SET data = substr(data, 1, length(data) - 7) WHERE id = ?", (cid,))
    conn.commit()
    conn.close()
    with open_store(path) as store:
        assert cid in store.get_run("main").damaged
        bad = store.list_checkpoints("main")[1]
        assert "damaged JSONB" in bad.damaged and not store.list_checkpoints("main")[0].damaged
        assert "damaged JSONB" in store.load(bad.id).problems[0]
