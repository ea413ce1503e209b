"""Framework stores with one field of another type than its framework writes (found by mutating
the fixture stores): that row is damaged, said in a sentence, and the rest of the store reads."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.store import open_store
from inspector.ui.models.messages import build_conversation

FLOW = "00e3834a-3215-4dd1-a360-db851c9b0698"   # crewai_flows.db: the flow saved six times (ids 1 to 6)
ORACLE = json.loads((Path(__file__).parent / "stores" / "crewai_flows_oracle.json").read_text())


def _edit_event(path: Path, offset: int, change) -> str:
    """Apply ``change`` to the decoded event_data of s-groceries' event at ``offset``; its id."""
    conn = sqlite3.connect(path)
    rowid, event, data = conn.execute("SELECT rowid, id, event_data FROM events WHERE session_id = 's-groceries' "
                                      "ORDER BY timestamp LIMIT 1 OFFSET ?", (offset,)).fetchone()
    conn.execute("UPDATE events SET event_data = ? WHERE rowid = ?", (change(json.loads(data)), rowid))
    conn.commit()
    conn.close()
    return event


@pytest.mark.parametrize("parts,said", [([{"text": 5}], ""), ([{"text": [[1]]}], ""), ([{"text": {"a": 1}}], ""),
                                        ([{"thought": True, "text": 5}, {"text": "add plums"}], "add plums"),
                                        ([{"function_call": 3}, {"text": "add plums"}], "add plums")])
def test_an_adk_part_of_another_type_is_a_damaged_event(store_copy, capsys, parts: list, said: str) -> None:
    """A content part whose text is not text (or whose call is not an object) — ADK's own model
    refuses the event — marks that event damaged and shows the part as damaged, the others as
    they are (a KeyError once made every command on the store fail)."""
    path = store_copy("adk_database.db")
    store_copy.modified = True
    event = _edit_event(path, 0, lambda d: json.dumps({**d, "content": {**d["content"], "parts": parts}}))
    with open_store(path) as store:
        run = store.get_run("s-groceries")
        assert event in run.damaged and "its content part 0 has" in run.damaged
        cps = store.list_checkpoints("s-groceries")
        assert [bool(c.damaged) for c in cps] == [True] + [False] * (len(cps) - 1)
        assert cps[0].change.startswith("user: [a damaged part, which has")
        first = store.load(cps[0].id)
        message = first.state["messages"][0]
        assert message["parts"][0]["type"] == "damaged" and message["content"].endswith(said)
        assert build_conversation(first.state, ("messages",)).messages
        assert any(event in p for p in store.load("s-groceries:-1").problems)
        assert not store.get_run("s-ben").damaged
    for command in (["runs"], ["checkpoints", "s-groceries"], ["show", "s-groceries:0"],
                    ["diff", "s-groceries:0", "s-groceries:1"]):
        assert main([command[0], str(path), *command[1:]]) == 0
    assert f"damaged: event {event}" in capsys.readouterr().out


@pytest.mark.parametrize("count", ['"lots"', "1e400", "[1]", "2.7", "true", "-5", "{}"])
def test_an_adk_token_count_that_is_not_one_is_damage(store_copy, capsys, count: str) -> None:
    """A ``usage_metadata.total_token_count`` that is not a whole number from 0 (text, a list,
    1e400, which JSON reads as infinite; 2.7, true or -5, which int() read as 2, 1 and -5) is
    left out of the total, counted under ``not_counted`` and its event damaged (a ValueError,
    OverflowError or TypeError once failed show, diff and history)."""
    path = store_copy("adk_database.db")
    store_copy.modified = True
    with open_store(path) as store:
        before = store.load("s-groceries:-1").state["usage"]
    event = _edit_event(path, 1, lambda d: json.dumps(d).replace('"total_token_count": 38',
                                                                  f'"total_token_count": {count}'))
    with open_store(path) as store:
        cps = store.list_checkpoints("s-groceries")
        assert "its usage_metadata.total_token_count is" in cps[1].damaged and event in cps[1].damaged
        head = store.load("s-groceries:-1")
        assert head.state["usage"] == {"calls": before["calls"], "total_tokens": before["total_tokens"] - 38,
                                       "not_counted": 1}
        assert any(event in p and "not a count of tokens" in p for p in head.problems)
        assert store.load("s-groceries:0").state["usage"] == {"calls": 0, "total_tokens": 0}
    for command in (["show", "s-groceries:-1"], ["diff", "s-groceries:0", "s-groceries:-1"],
                    ["history", "s-groceries"]):
        assert main([command[0], str(path), *command[1:]]) == 0
    assert "Traceback" not in capsys.readouterr().err


def _without_primary_key(path: Path, table: str, ids: dict[int, object]) -> None:
    """``table`` recreated without its INTEGER PRIMARY KEY (its ids now take any value), and the
    rows of ``ids``' keys given their values as ids."""
    conn = sqlite3.connect(path)
    conn.executescript(f"CREATE TABLE _copy AS SELECT * FROM {table}; DROP TABLE {table}; "
                       f"ALTER TABLE _copy RENAME TO {table};")
    for old, new in ids.items():
        conn.execute(f"UPDATE {table} SET id = ? WHERE id = ?", (new, old))
    conn.commit()
    conn.close()


@pytest.mark.parametrize("new,why", [(7.5, "its id is 7.5, not an integer"), ("", "its id is empty text"),
                                     (7, "another row has its id 7 too")])
def test_an_agents_message_id_that_is_not_a_unique_integer(store_copy, capsys, new: object, why: str) -> None:
    """quick-chat's two items are ids 7 and 8; 8 made 7.5, '' or 7. The SDK's get_items (ORDER BY
    id) still gives both: so does the inspector, the odd id damaged (int() of '' failed every
    command; int(7.5) and a repeated 7 merged the two items into one)."""
    path = store_copy("agents_sqlite.db")
    store_copy.modified = True
    _without_primary_key(path, "agent_messages", {8: new})
    with open_store(path) as store:
        assert why in store.get_run("quick-chat").damaged
        cps = store.list_checkpoints("quick-chat")
        assert [c.name for c in cps] == ["user", "assistant"] and why in cps[1].damaged
        assert not cps[0].damaged or new == 7
        head = store.load("quick-chat:-1")
        assert [m["role"] for m in head.state["messages"]] == ["user", "assistant"]
        assert any(why in p and "the SDK cannot read it" not in p for p in head.problems)
        assert not store.get_run("trip-lisbon").damaged
    assert main(["runs", str(path)]) == 0
    assert why in capsys.readouterr().out


@pytest.mark.parametrize("new,why", [(5.5, "its id is 5.5, not an integer"), ("", "its id is empty text"),
                                     (None, "its id is null")])
def test_a_crewai_flow_state_id_that_is_not_an_integer(store_copy, capsys, new: object, why: str) -> None:
    """The flow's sixth save (id 6) given the id 5.5, '' or NULL: it is still one of the flow's
    six checkpoints, where crewai's ORDER BY id puts it (NULL first), showing its own state, and
    damaged (int() of '' failed every command; int(5.5) showed the fifth save's state as the sixth's)."""
    path = store_copy("crewai_flows.db")
    store_copy.modified = True
    _without_primary_key(path, "flow_states", {6: new})
    with open_store(path) as store:
        assert why in store.get_run(FLOW).damaged
        cps = store.list_checkpoints(FLOW)
        seq = 0 if new is None else 5
        assert len(cps) == 6 and [bool(c.damaged) for c in cps] == [i == seq for i in range(6)]
        snap = store.load(cps[seq].id)
        assert snap.state == ORACLE["crewai_flows.db"][FLOW][5][1] != ORACLE["crewai_flows.db"][FLOW][4][1]
        assert snap.problems and why in snap.problems[0]
    assert main(["runs", str(path)]) == 0
    assert why in capsys.readouterr().out


def test_crewai_flow_states_sharing_an_id_are_both_damaged_never_one(store_copy) -> None:
    """Two saved states with the same id (the sixth save given the fifth's id): both are listed
    and damaged, and neither shows a state that may be the other's."""
    path = store_copy("crewai_flows.db")
    store_copy.modified = True
    _without_primary_key(path, "flow_states", {6: 5})
    with open_store(path) as store:
        cps = store.list_checkpoints(FLOW)
        assert len(cps) == 6 and all("another row has its id 5 too" in c.damaged for c in cps[4:])
        for cp in cps[4:]:
            snap = store.load(cp.id)
            assert "which of them is this one cannot be told" in snap.state["__opaque__"]
        assert store.load(cps[3].id).state == ORACLE["crewai_flows.db"][FLOW][3][1]
