"""The one reference syntax on a real LangGraph database: thread ids, prefixes, THREAD:SEQ, THREAD:-1."""

from __future__ import annotations

import json
from pathlib import Path

from inspector.cli import main
from inspector.humanize import plural
from inspector.store.refs import format_ref, resolve_checkpoint, resolve_run


def test_langgraph_threads_resolve_like_runs(lg_store, lg_master: Path, capsys) -> None:
    run = lg_store.list_runs()[0]
    assert resolve_run(lg_store, run.id).id == run.id
    head = resolve_checkpoint(lg_store, f"{run.id}:-1")
    assert head.seq == lg_store.count_checkpoints(run.id) - 1
    assert resolve_checkpoint(lg_store, run.id).id == head.id           # a thread alone: its head
    assert resolve_checkpoint(lg_store, str(head.id)).id == head.id     # its own id form still works
    assert main(["show", str(lg_master), format_ref(head), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["checkpoint"]["seq"] == head.seq


def test_plural() -> None:
    assert (plural(1, "checkpoint"), plural(23, "checkpoint"), plural(1024, "run")) == \
        ("1 checkpoint", "23 checkpoints", "1,024 runs")
