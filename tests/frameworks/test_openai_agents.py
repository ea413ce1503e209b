"""OpenAI Agents SDK sessions written by openai-agents 0.24 (SQLite, SQLAlchemy, Advanced)."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from inspector.errors import StoreError
from inspector.resume.frameworks import plan
from inspector.resume.stuck import diagnose
from inspector.store import open_store
from inspector.ui.models.messages import build_conversation, find_message_lists


@pytest.mark.parametrize("name,runs", [("agents_sqlite.db", {"trip-lisbon": 6, "quick-chat": 2}),
                                       ("agents_sqlalchemy.db", {"notes": 6})])
def test_plain_sessions_are_runs_and_items_checkpoints(store_copy, name: str, runs: dict) -> None:
    with open_store(store_copy(name)) as store:
        assert store.info.kind == "openai-agents" and store.info.read_only
        assert {r.id: r.checkpoint_count for r in store.list_runs()} == runs
        fork = store.info.capabilities.fork
        assert not fork.available and "AdvancedSQLiteSession" in fork.reason
        assert not store.info.capabilities.resume.available and store.info.capabilities.live.available
        run_id = next(iter(runs))
        kinds = [(c.kind, c.name) for c in store.list_checkpoints(run_id)]
        assert ("llm", "lookup_weather") in kinds and ("tool", "lookup_weather") in kinds
        assert kinds[0] == ("input", "user") and kinds[-1] == ("llm", "assistant")
        head = store.load(f"{run_id}:-1")
        assert len(head.state["messages"]) == runs[run_id]
        paths = find_message_lists(head.state)
        assert paths[0] == ("messages",)
        roles = [m.role for m in build_conversation(head.state, paths[0]).messages]
        assert "tool" in roles and roles[0] == "user" and roles[-1] == "assistant"
        assert head.meta["item"]["role"] == "assistant"


def test_advanced_branch_is_a_fork_sharing_the_earlier_turns(store_copy) -> None:
    with open_store(store_copy("agents_advanced.db")) as store:
        assert store.info.capabilities.fork.available
        main, branch = store.get_run("planner"), store.get_run("planner/retry-booking")
        assert main.checkpoint_count == 8 and branch.checkpoint_count == 3
        assert branch.parent_run == "planner" and branch.parent_checkpoint == "planner:3"
        assert [f.id for f in store.forks_of("planner")] == ["planner/retry-booking"]
        fork_point = store.load("planner/retry-booking:0")
        assert fork_point.info.kind == "fork"
        assert fork_point.state["messages"] == store.load("planner:3").state["messages"]
        head = store.load("planner/retry-booking:-1")
        texts = [m.get("content") for m in head.state["messages"] if m.get("role") == "user"]
        assert texts == ["What's the weather in Lisbon?", "Book a table for four instead"]
        usage = head.state["usage"]
        assert [t["turn"] for t in usage["turns"]] == [2] and usage["total"]["total_tokens"] == 60
        main_usage = store.load("planner:-1").state["usage"]
        assert [t["turn"] for t in main_usage["turns"]] == [1, 2, 3] and main_usage["total"]["requests"] == 4
        assert store.load("planner:3").meta["turn_usage"]["total_tokens"] == 106


def test_branch_plan_is_the_sdk_call_at_a_user_turn(store_copy) -> None:
    with open_store(store_copy("agents_advanced.db")) as store:
        found = plan(store, "planner:4", "fork", python="/usr/bin/python3", cwd="/tmp", branch="again")
        assert found.argv[0] == "/usr/bin/python3" and found.argv[1].endswith("openai_agents_branch.py")
        assert found.argv[-6:] == ("--from-branch", "main", "--turn", "2", "--name", "again")
        assert "create_branch_from_turn(2, 'again')" in found.describe()
        with pytest.raises(StoreError, match="user turn"):
            plan(store, "planner:5", "fork")
        with pytest.raises(StoreError, match="no run state"):
            plan(store, "planner:4", "resume")


def test_live_and_stuck_from_rows_the_sdk_would_add(store_copy) -> None:
    path = store_copy("agents_sqlite.db")
    store_copy.modified = True
    with open_store(path, running_window=1.0) as store:
        cursor = store.cursor()
        assert store.changes_since(cursor).empty
        conn = sqlite3.connect(path)   # what SQLiteSession.add_items writes: one row per item
        old = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() - 3600))
        conn.execute("INSERT INTO agent_messages (session_id, message_data, created_at) VALUES (?, ?, ?)",
                     ("quick-chat", json.dumps({"role": "user", "content": "still there?"}), old))
        conn.commit()
        conn.close()
        changes = store.changes_since(cursor)
        assert changes.run_ids == ("quick-chat",)
        assert [c.id for c in changes.new_checkpoints] == ["quick-chat:2"]
        run = store.get_run("quick-chat")
        assert run.status == "stuck" and "never finished" in run.last_error
        diag = diagnose(store, run)
        assert diag is not None and diag.status == "stuck"


def test_async_sessions_read_and_encrypted_items_stay_sealed(store_copy) -> None:
    with open_store(store_copy("agents_async_encrypted.db")) as store:
        assert {r.id for r in store.list_runs()} == {"async-chat", "secret-chat"}
        assert [c.kind for c in store.list_checkpoints("async-chat")] == ["input", "llm"]
        sealed = store.list_checkpoints("secret-chat")
        assert {c.name for c in sealed} == {"encrypted"} and "not decoded" in sealed[0].change
        state = store.load("secret-chat:-1").state
        assert "X123" not in json.dumps(state)
        assert all(m["type"] == "encrypted" for m in state["messages"])


def test_a_turn_written_just_now_is_running_in_the_runs_list(store_copy, capsys) -> None:
    from inspector.cli import main
    path = store_copy("agents_sqlite.db")
    store_copy.modified = True
    conn = sqlite3.connect(path)   # a user message the SDK just added, no answer yet
    conn.execute("INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)",
                 ("quick-chat", json.dumps({"role": "user", "content": "still there?"})))
    conn.commit()
    conn.close()
    assert main(["runs", str(path), "--json"]) == 0
    runs = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert runs["quick-chat"]["status"] == "running", runs["quick-chat"]     # was "stuck": nobody claimed it
    assert main(["stuck", str(path)]) == 0
    assert "no stuck runs" in capsys.readouterr().out


def test_sessions_kept_under_other_table_names_are_said_to_be_left_out(store_copy, capsys) -> None:
    from inspector.cli import main
    path = store_copy("agents_sqlite.db")
    store_copy.modified = True
    conn = sqlite3.connect(path)   # SQLiteSession(..., sessions_table=, messages_table=) beside the defaults
    conn.execute("CREATE TABLE my_sessions AS SELECT * FROM agent_sessions")
    conn.execute("CREATE TABLE my_messages AS SELECT * FROM agent_messages")
    conn.commit()
    conn.close()
    assert main(["runs", str(path)]) == 0
    captured = capsys.readouterr()
    assert "trip-lisbon" in captured.out       # the SDK's default tables are the ones read
    assert "'my_messages', which are not shown" in captured.err


def test_a_dry_run_fork_runs_nothing_even_with_yes(store_copy, monkeypatch, capsys) -> None:
    from inspector.cli import main
    from inspector.resume import launch
    started: list = []
    monkeypatch.setattr(launch, "spawn", lambda *a, **k: started.append(a))   # nothing may get this far
    path = store_copy("agents_advanced.db")            # (store_copy checks the file is unchanged)
    code = main(["fork", str(path), "planner:4", "--reason", "try", "--dry-run", "--yes", "--wait",
                 "--python", "/usr/bin/python3", "--cwd", str(path.parent)])
    out = capsys.readouterr().out
    assert code == 0 and "create_branch_from_turn(2" in out and "Dry run: nothing was run" in out
    assert started == []


def test_a_session_emptied_by_pop_item_is_a_run_with_no_checkpoints(store_copy) -> None:
    """``pop_item`` leaves the session's row when it takes the last item: the session still lists,
    with its times and no checkpoints, as an empty ADK session does (it was left out)."""
    path = store_copy("agents_emptied.db")
    conn = sqlite3.connect(path)
    times = dict(conn.execute("SELECT session_id, strftime('%s', updated_at) FROM agent_sessions").fetchall())
    conn.close()
    with open_store(path) as store:
        runs = {r.id: r for r in store.list_runs()}
        assert {k: r.checkpoint_count for k, r in runs.items()} == {"emptied": 0, "one-left": 1, "untouched": 2}
        emptied = runs["emptied"]
        assert emptied.status == "completed" and emptied.head_seq == -1
        assert int(emptied.updated) == int(times["emptied"]) and 0 < emptied.created <= emptied.updated
        assert store.list_checkpoints("emptied") == []
        with pytest.raises(StoreError, match="has no checkpoints yet"):
            store.get_checkpoint("emptied:-1")


def test_a_branch_name_the_session_used_is_refused_before_anything_runs(store_copy, monkeypatch, capsys) -> None:
    """The SDK refuses a name used before — a listed branch's, or one only its reservations
    keep (a branch left empty) — with a traceback from the runner; the plan says it first."""
    from inspector.cli import main
    from inspector.resume import launch
    started: list = []
    monkeypatch.setattr(launch, "spawn", lambda *a, **k: started.append(a))
    path = store_copy("agents_advanced.db")
    store_copy.modified = True
    conn = sqlite3.connect(path)   # what create_branch_from_turn(1, "kept ✨") leaves: a reservation, no rows
    conn.execute("INSERT INTO branch_reservations (session_id, branch_id) VALUES ('planner', 'kept ✨')")
    conn.commit()
    conn.close()
    with open_store(path) as store:
        for name in ("retry-booking", "main", "kept ✨"):
            with pytest.raises(StoreError, match=f"used the branch name '{name}' already"):
                plan(store, "planner:4", "fork", python="/usr/bin/python3", branch=name)
        with pytest.raises(StoreError, match="cannot be empty"):
            plan(store, "planner:4", "fork", python="/usr/bin/python3", branch="  ")
        assert plan(store, "planner:4", "fork", python="/usr/bin/python3", branch="fresh").argv[-1] == "fresh"
    code = main(["fork", str(path), "planner:4", "--reason", "again", "--branch", "retry-booking", "--yes",
                 "--wait", "--python", "/usr/bin/python3"])
    err = capsys.readouterr().err
    assert code == 2 and "choose another --branch" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and started == []


def test_a_branch_from_the_first_user_turn_is_refused(store_copy, capsys) -> None:
    """A branch from turn 1 keeps nothing: the SDK reserves the name and writes no row, so
    neither the inspector nor list_branches() shows it and switch_to_branch refuses it."""
    from inspector.cli import main
    path = store_copy("agents_advanced.db")
    with open_store(path) as store:
        first = store.get_checkpoint("planner:0")
        assert (first.kind, store.load(first.id).meta["turn"]) == ("input", 1)
        with pytest.raises(StoreError, match="first user turn of branch 'main'"):
            plan(store, "planner:0", "fork", python="/usr/bin/python3", branch="empty")
        branch_start = next(c for c in store.list_checkpoints("planner/retry-booking") if c.kind == "input")
        assert store.load(branch_start.id).meta["turn"] == 2     # a branch's own turns go on from its source's
        assert "keeps turn 1" in plan(store, branch_start.id, "fork", python="/usr/bin/python3",
                                      branch="again").describe()
    assert main(["fork", str(path), "planner:0", "--reason", "r", "--yes", "--dry-run"]) == 2
    assert "choose a later user turn" in capsys.readouterr().err


def test_the_branch_runner_says_the_sdks_refusal_in_one_sentence(store_copy, tmp_path) -> None:
    """Run by the openai-agents environment write_stores.py made (skipped where there is none):
    a name taken meanwhile by another process is the SDK's sentence and exit 2, no traceback."""
    import subprocess
    from pathlib import Path
    from inspector.resume.frameworks import RUNNERS
    python = Path.home() / ".cache" / "checkpoint-inspector-frameworks" / "openai-agents" / "bin" / "python"
    if not python.exists():
        pytest.skip("no openai-agents environment (tests/frameworks/write_stores.py makes it)")
    path = store_copy("agents_advanced.db")
    store_copy.modified = True
    done = subprocess.run([str(python), str(RUNNERS / "openai_agents_branch.py"), "--db", str(path),
                           "--session", "planner", "--turn", "2", "--name", "retry-booking"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "'retry-booking' has already been used" in done.stderr and "Traceback" not in done.stderr
