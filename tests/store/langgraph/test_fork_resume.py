"""Fork and resume LangGraph threads with the inspector, then let the real LangGraph continue them.

Raw forks (no graph) are checked row by row against reference §4 and resumed by LangGraph in
this process; graph forks, resumes and interrupt answers run the user's graph in our runner
subprocess. Every test also checks that the original branch's rows are unchanged.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest
from langchain_core.messages import HumanMessage
from langgraph.types import Command

from inspector.errors import NotResumableError, StoreError
from inspector.resume.langgraph import (fork_langgraph, plan_resume, runner_argv, settings_for,
                                        start_resume)
from inspector.resume.launch import spawn
from inspector.resume.resume import CONTINUE, FORK
from inspector.store import open_store
from inspector.store.langgraph.decode import pack, unpack
from inspector.store.langgraph.fork import RAW_FORK_LIMITS, raw_fork
from inspector.store.langgraph.ids import parse_id
from inspector.store.langgraph.settings import GraphSettings, load_settings, save_settings

from .lg_graphs import REVIEW_QUESTION, Stage, build_delta_graph, config, open_graph

ROOT = Path(__file__).resolve().parents[3]
ENTRY = (f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
         "from tests.store.langgraph.lg_graphs import build_graph\ngraph = build_graph(None)\n")


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Per-test settings directory (never the user's real one)."""
    folder = tmp_path / "config"
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(folder))
    return folder


@pytest.fixture
def entry(tmp_path: Path) -> Path:
    """A project directory with ``lg_entry:graph``, the standard graph as a user would expose it."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "lg_entry.py").write_text(ENTRY)
    return project


def _rows(path: Path) -> tuple[set, set]:
    conn = sqlite3.connect(str(path))
    try:
        cps = set(conn.execute("SELECT * FROM checkpoints"))
        writes = set(conn.execute("SELECT * FROM writes"))
    finally:
        conn.close()
    return cps, writes


def _row(path: Path, thread: str, cid: str) -> tuple:
    conn = sqlite3.connect(str(path))
    try:
        return conn.execute("SELECT parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints "
                            "WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?",
                            (thread, cid)).fetchone()
    finally:
        conn.close()


def _checkpoint_with_next(store, thread: str, node: str) -> str:
    for info in store.list_checkpoints(thread):
        if info.lane == "" and store.load(info.id).meta["next"] == [node]:
            return info.id
    raise AssertionError(f"no checkpoint of {thread} before {node}")


def _run(spec) -> subprocess.CompletedProcess:
    proc = spawn(spec, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(spec.argv, proc.returncode, out.decode(), err.decode())


# -- raw fork on SQLite ----------------------------------------------------------------------------
def test_raw_fork_row_follows_the_reference(lg_copy):
    before_cps, before_writes = _rows(lg_copy)
    with open_store(lg_copy, readonly=False) as store:
        source = _checkpoint_with_next(store, "thread-C", "execute")
        newest = max(parse_id(c.id).checkpoint_id for c in store.list_checkpoints("thread-C"))
        result = raw_fork(store, source, {"fail": True}, reason="make execute fail", quiet_seconds=0)
        src_meta = store.load(source).meta
    assert result.mode == "raw" and result.edited == ("fail",) and result.limits == RAW_FORK_LIMITS
    assert result.next == ("execute",)
    assert result.langgraph_checkpoint_id > newest
    src_key = parse_id(source)
    parent, tag, blob, meta = _row(lg_copy, "thread-C", result.langgraph_checkpoint_id)
    old = unpack(_row(lg_copy, "thread-C", src_key.checkpoint_id)[2])
    new = unpack(blob)
    assert parent == src_key.checkpoint_id and tag == "msgpack"
    assert json.loads(meta)["source"] == "update" and json.loads(meta)["step"] == src_meta["step"] + 1
    assert json.loads(meta)["fork_reason"] == "make execute fail"
    for channel, value in old["channel_values"].items():   # untouched data: byte-identical
        if channel != "fail":
            assert pack(new["channel_values"][channel]) == pack(value), channel
    assert new["channel_values"]["fail"] is True
    assert pack(new["versions_seen"]) == pack(old["versions_seen"])
    changed = {c for c in old["channel_versions"] if new["channel_versions"][c] != old["channel_versions"][c]}
    assert changed == {"fail"}
    number = lambda version: int(version.split(".")[0])
    assert number(new["channel_versions"]["fail"]) == number(old["channel_versions"]["fail"]) + 1
    assert new["id"] == result.langgraph_checkpoint_id
    after_cps, after_writes = _rows(lg_copy)
    assert before_cps <= after_cps and len(after_cps) == len(before_cps) + 1
    assert after_writes == before_writes                    # no writes rows


def test_raw_fork_value_drives_a_different_result_in_langgraph(lg_copy):
    with open_store(lg_copy, readonly=False) as store:
        source = _checkpoint_with_next(store, "thread-C", "execute")
        result = raw_fork(store, source, {"fail": True}, reason="make execute fail", quiet_seconds=0)
        original_head = store.list_checkpoints("thread-C")[-2]
    before_cps, _ = _rows(lg_copy)
    graph, conn = open_graph(lg_copy)
    try:
        state = graph.get_state(config("thread-C"))
        assert state.config["configurable"]["checkpoint_id"] == result.langgraph_checkpoint_id
        assert state.next == ("execute",) and state.values["fail"] is True
        with pytest.raises(RuntimeError, match="execute failed on purpose"):
            graph.invoke(None, config("thread-C"))            # the original run had completed
    finally:
        conn.close()
    after_cps, _ = _rows(lg_copy)
    assert before_cps <= after_cps
    with open_store(lg_copy) as store:
        assert store.get_run("thread-C").status == "failed"
        assert store.get_checkpoint(original_head.id) == original_head


def test_raw_fork_of_an_interrupted_head_then_answer(lg_copy):
    todos = [{"content": "one smaller task", "status": "pending"}]
    with open_store(lg_copy, readonly=False) as store:
        head = store.get_checkpoint("thread-A:-1")
        assert store.load(head.id).meta["interrupts"]
        result = raw_fork(store, head.id, {"plan": "a smaller plan", "todos": todos},
                          reason="smaller plan", quiet_seconds=0)
        snap = store.load(result.checkpoint_id)
    assert snap.meta["next"] == ["review"] and snap.meta["interrupts"] == []
    graph, conn = open_graph(lg_copy)
    try:
        out = graph.invoke(None, config("thread-A"))
        assert out["__interrupt__"][0].value == {"question": REVIEW_QUESTION, "plan": "a smaller plan"}
        final = graph.invoke(Command(resume="fine"), config("thread-A"))
    finally:
        conn.close()
    assert final["approved"] == "fine" and final["plan"] == "a smaller plan"
    assert final["todos"] == [{"content": "one smaller task", "status": "completed"}]


def test_raw_fork_keeps_stored_types_of_edited_values(lg_copy):
    with open_store(lg_copy, readonly=False) as store:
        source = _checkpoint_with_next(store, "thread-C", "execute")
        state = store.load(source).state
        messages = json.loads(json.dumps(state["messages"]))
        messages[0]["content"] = "Tidy the wiki, then the docs"
        stage = dict(state["stage"], value="done")
        result = raw_fork(store, source, {"messages": messages, "stage": stage}, reason="types",
                          quiet_seconds=0)
    new = unpack(_row(lg_copy, "thread-C", result.langgraph_checkpoint_id)[2])["channel_values"]
    assert isinstance(new["messages"][0], msgpack.ExtType) and new["messages"][0].code == 5
    graph, conn = open_graph(lg_copy)
    try:
        values = graph.get_state(config("thread-C")).values
    finally:
        conn.close()
    assert isinstance(values["messages"][0], HumanMessage)
    assert values["messages"][0].content == "Tidy the wiki, then the docs"
    assert values["messages"][0].id == messages[0]["id"]
    assert values["stage"] is Stage.DONE


def test_raw_fork_refusals(lg_copy, tmp_path):
    with open_store(lg_copy) as ro, pytest.raises(StoreError, match="read-only"):
        raw_fork(ro, "thread-C:-1", {"fail": True}, reason="x", quiet_seconds=0)
    with open_store(lg_copy, readonly=False) as store:
        head = store.get_checkpoint("thread-C:-1")
        with pytest.raises(StoreError, match="may still be running"):
            raw_fork(store, head.id, {"fail": True}, reason="x", quiet_seconds=10 ** 9)
        sub = next(c for c in store.list_checkpoints("thread-C") if c.lane)
        with pytest.raises(StoreError, match="subgraph"):
            raw_fork(store, sub.id, {"plan": "x"}, reason="x", quiet_seconds=0)
        with pytest.raises(StoreError, match="steers execution"):
            raw_fork(store, head.id, {"branch:to:execute": None}, reason="x", quiet_seconds=0)
        with pytest.raises(StoreError, match="changes no value"):
            raw_fork(store, head.id, {"priority": "low"}, reason="x", quiet_seconds=0)
        with pytest.raises(StoreError, match="reason"):
            raw_fork(store, head.id, {"fail": True}, reason=" ", quiet_seconds=0)
        forced = raw_fork(store, head.id, {"fail": True}, reason="x", quiet_seconds=10 ** 9, force=True)
        assert store.get_checkpoint("thread-C:-1").id == forced.checkpoint_id
        # our own fork as the newest checkpoint is not a running graph: no wait needed
        again = raw_fork(store, forced.checkpoint_id, {"fail": False},
                         reason="y", quiet_seconds=10 ** 9)
        assert store.get_checkpoint("thread-C:-1").id == again.checkpoint_id
    delta = tmp_path / "delta.db"
    conn = sqlite3.connect(str(delta), check_same_thread=False)
    from langgraph.checkpoint.sqlite import SqliteSaver
    build_delta_graph(SqliteSaver(conn)).invoke({"n": 0}, config("d"))
    conn.close()
    with open_store(delta, readonly=False) as store, pytest.raises(StoreError, match="DeltaChannel"):
        raw_fork(store, "d:-1", {"n": 99}, reason="x", quiet_seconds=0)


# -- with the graph: the runner subprocess ------------------------------------------------------------
def test_graph_fork_applies_routing_then_resume_completes(lg_copy, entry):
    before_cps, before_writes = _rows(lg_copy)
    with open_store(lg_copy, readonly=False) as store:
        head = store.get_checkpoint("thread-A:-1")
        save_settings(store.info.url, GraphSettings(graph="lg_entry:graph", cwd=str(entry)))
        messages = store.load(head.id).state["messages"]
        messages[0]["content"] = "Write the quarterly report, briefly"
        result = fork_langgraph(store, head.id, edits={"priority": "low", "messages": messages},
                                reason="skip the review", quiet_seconds=0)
        assert result.mode == "graph" and result.next == ("execute",)   # the conditional edge re-ran
        snap = store.load(result.checkpoint_id)
        assert snap.meta["source"] == "update" and snap.meta["next"] == ["execute"]
        assert snap.meta["langgraph_metadata"]["fork_reason"] == "skip the review"
        assert snap.info.parent_id == head.id
        plan = plan_resume(store, result.checkpoint_id, quiet_seconds=0)
        assert plan.mode == CONTINUE and plan.env["LANGGRAPH_STRICT_MSGPACK"] == "true"
        done = _run(start_resume(store, plan))
    assert done.returncode == 0, done.stderr
    assert "strict msgpack on" in done.stdout and "node execute: wrote" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "finished"
    graph, conn = open_graph(lg_copy)
    try:
        final = graph.get_state(config("thread-A")).values
    finally:
        conn.close()
    assert final["stage"] is Stage.DONE and "approved" not in final     # review was skipped
    first = final["messages"][0]                      # the edited message, the others as they were
    assert isinstance(first, HumanMessage) and first.content == "Write the quarterly report, briefly"
    assert first.additional_kwargs == {} and len(final["messages"]) == 3
    assert [t["status"] for t in final["todos"]] == ["completed", "completed"]
    after_cps, after_writes = _rows(lg_copy)
    assert before_cps <= after_cps and before_writes <= after_writes


def test_answer_an_interrupt_through_the_runner(lg_copy, entry):
    with open_store(lg_copy, readonly=False) as store:
        head = store.get_checkpoint("thread-A:-1")
        with pytest.raises(NotResumableError, match="Approve the plan"):
            plan_resume(store, head.id, graph="lg_entry:graph", cwd=str(entry), quiet_seconds=0)
        plan = plan_resume(store, head.id, answer={"ok": True}, graph="lg_entry:graph", cwd=str(entry),
                           quiet_seconds=0)
        assert plan.action == "answer" and "--values-json" in plan.argv
        done = _run(start_resume(store, plan))
        assert done.returncode == 0, done.stderr
        assert store.get_run("thread-A").status == "completed"
        assert store.load("thread-A:-1").state["approved"] == {"ok": True}
    assert load_settings(str(lg_copy)).graph is None            # per-call options are not saved


def test_a_thread_waiting_at_an_interrupt_is_not_running(lg_copy, entry):
    """A thread whose head waits at ``interrupt()`` has stopped: answering it needs no quiet
    wait, however recent its last checkpoint (the README's fork, resume, answer, one after
    another); a head that does not wait is still refused, the refusal naming --force."""
    with open_store(lg_copy, readonly=False) as store:
        plan = plan_resume(store, "thread-A:-1", answer={"ok": True}, graph="lg_entry:graph", cwd=str(entry),
                           quiet_seconds=10 ** 9)
        assert plan.action == "answer"
        with pytest.raises(NotResumableError, match=r"may still be running; .* act anyway with --force"):
            plan_resume(store, "thread-C:-1", graph="lg_entry:graph", cwd=str(entry), quiet_seconds=10 ** 9)
        earlier = [c for c in store.list_checkpoints("thread-A") if not c.lane][-2]     # not the head: refused
        with pytest.raises(NotResumableError, match="may still be running"):
            plan_resume(store, earlier.id, graph="lg_entry:graph", cwd=str(entry), quiet_seconds=10 ** 9)


def test_resume_from_an_old_checkpoint_replays_on_a_new_branch(lg_copy, entry):
    with open_store(lg_copy, readonly=False) as store:
        source = store.get_checkpoint(_checkpoint_with_next(store, "thread-C", "execute"))
        count = store.count_checkpoints("thread-C")
        before_cps, _ = _rows(lg_copy)
        plan = plan_resume(store, source.id, graph="lg_entry:graph", cwd=str(entry), quiet_seconds=0)
        assert plan.mode == FORK and "--checkpoint" in plan.argv
        done = _run(start_resume(store, plan))
        assert done.returncode == 0, done.stderr
        infos = store.list_checkpoints("thread-C")
        assert len(infos) > count
        assert any(c.kind == "fork" and c.parent_id == source.id for c in infos)
        assert store.get_checkpoint(source.id).branch_count >= 1
    assert before_cps <= _rows(lg_copy)[0]


def test_runner_refuses_a_poisoned_checkpoint_unless_trusted(lg_copy, entry, tmp_path):
    """Strict msgpack in the runner: a row naming os.system does not run it (trusted: it does)."""
    marker = tmp_path / "PWNED"
    evil = msgpack.ExtType(0, pack(["os", "system", f"touch {marker}"]))
    with open_store(lg_copy, readonly=False) as store:
        head = store.get_checkpoint("thread-C:-1")
        raw_fork(store, head.id, {"plan": "x"}, reason="poison", quiet_seconds=0)
    conn = sqlite3.connect(str(lg_copy))
    cid, blob = conn.execute("SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id='thread-C' "
                             "ORDER BY checkpoint_id DESC LIMIT 1").fetchone()
    cp = unpack(blob)
    cp["channel_values"]["plan"] = evil
    conn.execute("UPDATE checkpoints SET checkpoint = ? WHERE thread_id='thread-C' AND checkpoint_id = ?",
                 (pack(cp), cid))
    conn.commit()
    conn.close()
    with open_store(lg_copy) as store:
        settings = settings_for(store, graph="lg_entry:graph", cwd=str(entry))
        for trusted in (False, True):
            plan = plan_resume(store, "thread-C:-1", graph="lg_entry:graph", cwd=str(entry),
                               trusted=trusted, quiet_seconds=0)
            _run(start_resume(store, plan))
            assert marker.exists() is trusted
    assert settings.trusted is False


def test_runner_reports_errors_in_one_line(lg_copy, entry, capsys, monkeypatch):
    """The runner's error contract (run in-process here; the tests above run it as a subprocess)."""
    from inspector.store.langgraph import graph_runner
    monkeypatch.chdir(entry)
    monkeypatch.setattr(sys, "path", list(sys.path))
    argv = runner_argv(GraphSettings(graph="lg_entry:nothing_here"), f"sqlite:///{lg_copy}",
                       "thread-C", None, "resume")[2:]
    assert graph_runner.main(argv) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == ["error: AttributeError: module 'lg_entry' has no attribute 'nothing_here'"]
    assert graph_runner.main([*argv[:-2], "--action", "fork", "--values-json", "[1]"]) == 1
    assert "must be a JSON object" in capsys.readouterr().err
    assert argv[argv.index("--store") + 1] == str(lg_copy)
    missing = [a if a != str(lg_copy) else f"{lg_copy}.missing" for a in argv]
    assert graph_runner.main(missing) == 1
    assert "no database at" in capsys.readouterr().err


def test_resume_needs_the_graph(lg_copy):
    with open_store(lg_copy) as store, pytest.raises(NotResumableError, match="module:attr"):
        plan_resume(store, "thread-C:-1", quiet_seconds=0)


def test_settings_are_keyed_by_resolved_path(lg_copy, config_home):
    relative = Path("..") / lg_copy.parent.name / lg_copy.name
    save_settings(str(lg_copy), GraphSettings(graph="pkg.mod:app", trusted=True))
    import os
    here = os.getcwd()
    os.chdir(lg_copy.parent)
    try:
        assert load_settings(str(relative)).graph == "pkg.mod:app"
    finally:
        os.chdir(here)
    assert load_settings(f"sqlite:///{lg_copy}").trusted is True
    assert (config_home / "store-settings.json").exists()
    with open_store(lg_copy) as store:          # the saved graph makes threads resumable
        assert store.graph == "pkg.mod:app" and all(r.resumable for r in store.list_runs())
    (config_home / "store-settings.json").write_text("{not json")
    with open_store(lg_copy) as store:          # a broken settings file does not stop opening
        assert not any(r.resumable for r in store.list_runs())
        assert "module:attr" in store.list_runs()[0].not_resumable_reason
    with pytest.raises(StoreError, match="module:attr"):
        save_settings(str(lg_copy), GraphSettings(graph="not a spec"))


def test_fork_without_graph_is_raw_and_says_its_limits(lg_copy):
    with open_store(lg_copy, readonly=False) as store:
        head = store.get_checkpoint("thread-C:-1")
        state = dict(store.load(head.id).state, plan="new plan")
        result = fork_langgraph(store, head.id, state=state, reason="r", quiet_seconds=0)
        assert result.mode == "raw" and result.edited == ("plan",) and result.limits
        with pytest.raises(StoreError, match="removed"):
            fork_langgraph(store, head.id, state={"plan": "x"}, reason="r", quiet_seconds=0)


# -- the CLI (fork / resume commands with the LangGraph options installed) ---------------------------
def _cli(argv: list[str]) -> int:
    """Run a CLI command through its real register() plus the LangGraph hook."""
    import argparse

    from inspector.commands import fork as fork_cmd
    from inspector.commands import resume as resume_cmd
    from inspector.commands._langgraph import install
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    for name, module in (("fork", fork_cmd), ("resume", resume_cmd)):
        module.register(sub)
        if "--graph" not in sub.choices[name]._option_string_actions:   # not hooked in yet
            install(sub.choices[name], name)
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_fork_raw_then_resume_with_graph(lg_copy, entry, capsys, monkeypatch):
    monkeypatch.chdir(entry)
    assert _cli(["fork", str(lg_copy), "thread-A:-1", "--set", 'plan="cli plan"',
                 "--reason", "from the cli", "--force"]) == 0
    out, err = capsys.readouterr()
    new_id = out.strip()
    assert parse_id(new_id).thread_id == "thread-A" and "raw fork" in err and "note: " in err
    with pytest.raises(StoreError, match="derived from the 'todos' channel"):
        _cli(["fork", str(lg_copy), "thread-A:-1", "--set-task", 'tasks[0].status="done"',
              "--reason", "x", "--force"])
    code = _cli(["resume", str(lg_copy), new_id, "--yes", "--wait", "--graph", "lg_entry:graph",
                 "--answer", '"cli answer"', "--force"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "resume thread thread-A from #" in out and "LANGGRAPH_STRICT_MSGPACK=true" in out
    assert load_settings(str(lg_copy)).graph == "lg_entry:graph"      # remembered for this store
    with open_store(lg_copy) as store:
        final = store.load("thread-A:-1").state
    assert final["approved"] == "cli answer" and final["plan"] == "cli plan"


def test_postgres_password_goes_to_the_environment_not_argv():
    from inspector.resume.langgraph import store_argument
    shown, secret = store_argument("postgresql+psycopg://agent:s3cr%40t@db.example:5433/lg?sslmode=require")
    assert shown == "postgresql://agent@db.example:5433/lg?sslmode=require"
    assert secret == {"PGPASSWORD": "s3cr@t"}
    assert store_argument("sqlite:////data/lg.db") == ("/data/lg.db", {})


def test_an_update_whose_parent_is_gone_still_says_what_it_changed(lg_copy):
    """A prune (or LangGraph's own) took the parent of an ``update_state`` checkpoint: its change
    was read against nothing, every channel listed; the channels it wrote hold the newest
    version."""
    with open_store(lg_copy) as store:
        update = next(c for c in store.list_checkpoints("thread-D") if c.kind == "update")
        parent = parse_id(str(update.parent_id))
    assert update.change == "priority" and parent is not None
    conn = sqlite3.connect(lg_copy)
    conn.execute("DELETE FROM checkpoints WHERE thread_id = 'thread-D' AND checkpoint_ns = '' AND checkpoint_id = ?",
                 (parent.checkpoint_id,))
    conn.commit()
    conn.close()
    with open_store(lg_copy) as store:
        again = next(c for c in store.list_checkpoints("thread-D") if c.id == update.id)
    assert again.change == "priority"


def test_settings_saved_under_the_old_file_name_are_still_read(lg_copy, tmp_path, monkeypatch):
    # the file was langgraph-stores.json while it kept LangGraph stores' settings alone; the
    # framework stores' --python/--cwd went there too, so it is store-settings.json now
    import json

    from inspector.store.langgraph import settings

    home = tmp_path / "config"
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(home))
    home.mkdir()
    (home / "langgraph-stores.json").write_text(json.dumps({settings.store_key(str(lg_copy)): {"graph": "a.b:app"}}))
    assert load_settings(str(lg_copy)).graph == "a.b:app"
    save_settings(str(lg_copy), GraphSettings(graph="c.d:app"))
    assert load_settings(str(lg_copy)).graph == "c.d:app"
    assert sorted(p.name for p in home.iterdir()) == ["langgraph-stores.json", "store-settings.json"]
