"""Nothing named in a LangGraph database runs: planted os.system / eval / pickle payloads stay inert."""

from __future__ import annotations

import os
import pickle
import sqlite3
from pathlib import Path

import msgpack
import pytest

from inspector.store.langgraph.decode import pack, unpack

from .conftest import open_ro



class _Boom:
    """Pickles to a call of os.system (the payload an attacker would plant)."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def _ext(code: int, *payload) -> msgpack.ExtType:
    return msgpack.ExtType(code, pack(list(payload)))


def _plant(db: Path, canaries: dict[str, Path]) -> dict[str, str]:
    """Add a hostile head to thread-C plus hostile writes and bodies; return planted ids."""
    touch = {k: f"touch {p}" for k, p in canaries.items()}
    conn = sqlite3.connect(str(db))
    try:
        rows = conn.execute("SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id='thread-C' "
                            "AND checkpoint_ns='' ORDER BY checkpoint_id").fetchall()
        head_id, head_body = rows[-1]
        child_id = head_id[:19] + "8009-000000000001"  # same time, later step: the new head
        body = unpack(head_body)
        body["id"] = child_id
        body["channel_values"]["evil_system"] = _ext(0, "os", "system", touch["system"])
        body["channel_values"]["evil_eval"] = _ext(0, "builtins", "eval",
                                                   f"open({str(canaries['eval'])!r}, 'w')")
        body["channel_values"]["evil_method"] = _ext(3, "os", "system", touch["method"], "__call__")
        body["channel_values"]["evil_model"] = _ext(5, "os", "system", {"x": touch["model"]},
                                                    "model_validate_json")
        conn.execute("INSERT INTO checkpoints VALUES ('thread-C', '', ?, ?, 'msgpack', ?, ?)",
                     (child_id, head_id, pack(body), b'{"source": "loop", "step": 9, "parents": {}}'))
        task = "11111111-2222-3333-4444-555555555555"
        writes = [(0, "messages", "pickle", pickle.dumps(_Boom(touch["pickle"]))),
                  (1, "plan", "msgpack", pack(_ext(0, "os", "system", touch["write"]))),
                  (2, "todos", "msgpack+aes", os.urandom(48))]
        for idx, channel, tag, value in writes:
            conn.execute("INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, "
                         "channel, type, value, task_path) VALUES ('thread-C', '', ?, ?, ?, ?, ?, ?, "
                         "'~__pregel_pull, evil')",
                         (child_id, task, idx, channel, tag, value))
        # a middle checkpoint whose whole body is a pickle, another that is garbage
        pickled, garbage = rows[2][0], rows[3][0]
        conn.execute("UPDATE checkpoints SET type='pickle', checkpoint=? WHERE thread_id='thread-C' "
                     "AND checkpoint_id=?", (pickle.dumps(_Boom(touch["body"])), pickled))
        conn.execute("UPDATE checkpoints SET checkpoint=? WHERE thread_id='thread-C' AND checkpoint_id=?",
                     (b"\xc1\xff\x00garbage", garbage))
        conn.commit()
    finally:
        conn.close()
    return {"head": f"thread-C@{child_id}", "pickled": f"thread-C@{pickled}",
            "garbage": f"thread-C@{garbage}"}


@pytest.fixture
def planted(lg_copy: Path, tmp_path: Path):
    names = ("system", "eval", "method", "model", "pickle", "write", "body")
    canaries = {n: tmp_path / f"pwned-{n}" for n in names}
    ids = _plant(lg_copy, canaries)
    return lg_copy, canaries, ids


def test_payloads_are_live_for_langgraphs_own_reader(tmp_path):
    """Control: the same payload *does* run under LangGraph's default deserializer."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    canary = tmp_path / "control"
    JsonPlusSerializer().loads_typed(("msgpack", pack(_ext(0, "os", "system", f"touch {canary}"))))
    assert canary.exists()


def test_nothing_runs_and_the_thread_still_displays(planted):
    db, canaries, ids = planted
    with open_ro(db) as store:
        runs = {r.id: r for r in store.list_runs()}
        assert runs["thread-C"].checkpoint_count == 10
        infos = store.list_checkpoints("thread-C")
        assert infos[-1].id == ids["head"]
        snaps = {i.id: store.load(i.id) for i in infos}
    assert not [p for p in canaries.values() if p.exists()]

    head = snaps[ids["head"]]
    assert head.state["evil_system"] == {"__type__": "os.system", "value": f"touch {canaries['system']}"}
    assert head.state["evil_eval"]["__type__"] == "builtins.eval"
    assert head.state["evil_method"]["__type__"] == "os.system"
    assert head.state["evil_model"] == {"__type__": "os.system", "x": f"touch {canaries['model']}"}
    assert head.state["plan"] == "draft for Tidy the wiki (refined)"
    writes = {w["channel"]: w["value"] for w in head.meta["writes"]}
    assert writes["messages"]["__opaque__"] == "pickle"
    assert "pickle can run code" in writes["messages"]["note"]
    assert writes["plan"]["__type__"] == "os.system"
    assert writes["todos"]["__opaque__"] == "msgpack+aes"

    pickled = snaps[ids["pickled"]]
    assert pickled.state["__opaque__"] == "pickle" and pickled.meta["notes"]
    garbage = snaps[ids["garbage"]]
    assert "__error__" in garbage.state and garbage.meta["decode_errors"]
    assert garbage.meta["writes"]  # its pending writes still decode
    others = [s for i, s in snaps.items() if i not in ids.values()]
    assert len(others) == 7
    assert all("__error__" not in s.state and "__opaque__" not in s.state for s in others)
    assert all(s.state.get("messages") for s in others if s.info.kind == "loop" and s.info.seq > 1
               and s.info.lane == "")
