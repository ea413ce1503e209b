"""Google ADK sessions written by google-adk 2.13 (SqliteSessionService, DatabaseSessionService)."""

from __future__ import annotations

import pytest

from inspector.errors import StoreError
from inspector.resume.frameworks import plan
from inspector.store import open_store


@pytest.mark.parametrize("name", ["adk_sqlite.db", "adk_database.db"])
def test_sessions_events_and_state_rebuilt_from_deltas(store_copy, name: str) -> None:
    with open_store(store_copy(name)) as store:
        assert store.info.kind == "google-adk"
        runs = {r.id: r for r in store.list_runs()}
        assert set(runs) == {"s-groceries", "s-quick", "s-ben"}
        assert runs["s-groceries"].agent == "shop · ana" and runs["s-groceries"].status == "completed"
        cps = store.list_checkpoints("s-groceries")
        assert [c.kind for c in cps[:4]] == ["input", "llm", "tool", "llm"]
        assert cps[1].name == "add_to_cart" and cps[2].name == "add_to_cart"
        before = store.load("s-groceries:1").state
        after_tool = store.load("s-groceries:2").state
        assert before["state"] == {"budget": 20}           # initial key no delta touched: exact
        assert after_tool["state"]["cart"] == ["apples"]
        assert after_tool["user_state_written"] == {"orders": 1}
        assert after_tool["app_state_written"] == {"items_sold": 1}
        assert "temp:last_item" not in after_tool["state"]
        head = store.load("s-groceries:-1")
        assert head.state["state"]["cart"] == ["apples", "pears"]
        assert head.state["current"]["app_state"] == {"items_sold": 3}   # other sessions added one
        assert head.state["app_state_written"] == {"items_sold": 2}
        notes = head.state["_approximate"]
        assert "create_session" in notes and "app: and user:" in notes
        assert head.meta["rebuild"] == "approximate"
        roles = [m["role"] for m in head.state["messages"]]
        assert roles[:4] == ["user", "assistant", "tool", "assistant"]
        assert head.state["usage"]["total_tokens"] > 0


def test_adk_offers_no_fork_or_resume_and_says_why(store_copy) -> None:
    with open_store(store_copy("adk_sqlite.db")) as store:
        caps = store.info.capabilities
        assert not caps.fork.available and "no fork" in caps.fork.reason
        assert not caps.resume.available and "Runner.run_async" in caps.resume.reason
        with pytest.raises(StoreError, match="no fork"):
            plan(store, "s-ben:0", "fork")


def test_a_session_without_events_says_so(store_copy, capsys) -> None:
    import sqlite3
    from inspector.cli import main
    path = store_copy("adk_database.db")
    store_copy.modified = True
    conn = sqlite3.connect(path)     # what create_session leaves before the first append_event
    conn.execute("DELETE FROM events WHERE session_id = 's-quick'")
    conn.commit()
    conn.close()
    assert main(["show", str(path), "s-quick"]) == 2
    assert "has no checkpoints yet" in capsys.readouterr().err
    assert main(["show", str(path), "s-groceries:99"]) == 2
    assert "has no checkpoint 99 (it has " in capsys.readouterr().err
