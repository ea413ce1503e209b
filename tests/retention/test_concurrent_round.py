"""Retention beside other writers: a delete, a prune and a pin made elsewhere reach a window
watching a PostgreSQL store (LISTEN/NOTIFY, as the recording library's saves do); a prune's
"on disk" compares the file with the file while an agent's write-ahead log grows; a delete
whose pieces another prune collected first says what it collected itself."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.record import Checkpointer
from inspector.retention import native
from inspector.retention.api import apply_prune
from inspector.retention.delete import apply_delete
from inspector.retention.footprint import Layout
from inspector.retention.rules import PrunePlan, make_rules
from inspector.store import create_store, open_store
from inspector.store.native import prune_sql
from inspector.watch import ChangeTracker, open_change_source
from inspector.watch.pg_listen import make_pg_watcher
from tests.retention.stores import chat

BOUND = 10.0       # seconds a change made elsewhere may take to reach a watcher (it takes milliseconds)


class Heard:
    """What the real PostgreSQL listener delivered (run ids, from its thread)."""

    def __init__(self) -> None:
        self.payloads: set[str] = set()
        self.state = ""
        self.cond = threading.Condition()

    def on_change(self, run_ids: frozenset | None) -> None:
        with self.cond:
            self.payloads |= set(run_ids or ())
            self.cond.notify_all()

    def on_state(self, state: str, _detail: str | None) -> None:
        with self.cond:
            self.state = state
            self.cond.notify_all()

    def wait(self, predicate: Callable[[], bool], what: str) -> None:
        with self.cond:
            assert self.cond.wait_for(predicate, timeout=BOUND), f"no notification of {what} within {BOUND:.0f} s"

    def after(self, act: Callable[[], object], *run_ids: str) -> None:
        """``act()`` (made elsewhere), then wait until every run of ``run_ids`` was notified."""
        with self.cond:
            self.payloads.clear()
        act()
        self.wait(lambda: set(run_ids) <= self.payloads, f"runs {run_ids}")


@pytest.mark.postgres
def test_a_delete_a_prune_and_a_pin_elsewhere_reach_a_watching_window(pg_url: str) -> None:
    create_store(pg_url).close()
    ids = []
    for name in ("kept", "deleted", "pruned"):
        with Checkpointer(pg_url, name=name) as cp:
            chat(cp, 10)
            ids.append(cp.run_id)
    kept, deleted, pruned = ids
    heard = Heard()
    poked = threading.Event()
    with open_store(pg_url) as store:
        tracker = ChangeTracker(store)            # what the window's watch bridge polls when poked
        source = open_change_source(store, poked.set)
        listener = make_pg_watcher(store, heard.on_change, heard.on_state)
        assert source is not None and listener is not None
        source.start()
        listener.start()
        try:
            heard.wait(lambda: heard.state == "listening", "the listener connecting")
            for argv in (["pin", pg_url, f"{kept}:3", "--note", "keep me"], ["unpin", pg_url, f"{kept}:3"]):
                poked.clear()
                heard.after(lambda argv=argv: main(argv), kept)
                assert poked.wait(BOUND)
            poked.clear()
            heard.after(lambda: main(["delete", pg_url, deleted, "--apply"]), deleted)
            assert poked.wait(BOUND)
            changes = tracker.poll()
            assert changes is not None and changes.removed       # the window reads what it shows again
            poked.clear()
            heard.after(lambda: main(["prune", pg_url, "--keep-last", "2", "--apply"]), kept, pruned)
            assert poked.wait(BOUND)
            changes = tracker.poll()
            assert changes is not None and changes.removed
            assert store.get_run(pruned).checkpoint_count == 2
        finally:
            listener.stop()
            source.stop()


@pytest.mark.postgres
def test_a_pin_through_the_library_notifies_its_run(pg_url: str) -> None:
    from inspector.retention.pins import set_pin

    create_store(pg_url).close()
    with Checkpointer(pg_url, name="pinned") as cp:
        chat(cp, 4)
    heard = Heard()
    with open_store(pg_url) as store:
        listener = make_pg_watcher(store, heard.on_change, heard.on_state)
        assert listener is not None
        listener.start()
        try:
            heard.wait(lambda: heard.state == "listening", "the listener connecting")
            heard.after(lambda: set_pin(pg_url, f"{cp.run_id}:1", True), cp.run_id)
            heard.after(lambda: set_pin(pg_url, f"{cp.run_id}:1", False), cp.run_id)
        finally:
            listener.stop()


def test_on_disk_compares_the_file_with_the_file_while_an_agent_writes(tmp_path: Path, capsys) -> None:
    path = tmp_path / "s.db"
    with Checkpointer(path, name="old") as cp:
        chat(cp, 30)
    with Checkpointer(path, name="agent at work") as agent:      # its write-ahead log stays while it runs
        chat(agent, 120)
        capsys.readouterr()
        assert main(["prune", str(path), "--keep-last", "2", "--status", "completed", "--apply", "--json"]) == 0
        done = json.loads(capsys.readouterr().out)
        assert done["remove_checkpoints"] == 28 and done["wal_before"] > 100_000    # the agent's log
        assert main(["prune", str(path), "--keep-last", "1", "--status", "completed", "--apply"]) == 0
        out = capsys.readouterr().out
    file_before, file_after = done["disk_before"] - done["wal_before"], done["disk_after"] - done["wal_after"]
    assert file_after >= file_before          # without VACUUM the file keeps its pages: no shrink is claimed
    line = next(line for line in out.splitlines() if line.startswith("On disk: "))
    assert "freed space stays in the file" in line and "write-ahead log" not in line
    assert "Write-ahead log: " in out and "every writer's changes, this prune's among them" in out
    assert "write-ahead log of the prune" not in out


def test_a_delete_says_the_pieces_it_collected_when_a_prune_collected_the_rest(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "s.db"
    with Checkpointer(path, name="stays") as cp:
        chat(cp, 6)
    with Checkpointer(path, name="goes") as cp:
        chat(cp, 8, start=100)               # messages of its own: its pieces are garbage once it goes
        goes = cp.run_id
    with open_store(path) as store, store.engine.connect() as conn:
        layout = Layout(list(prune_sql.piece_rows(conn)), prune_sql.page_size(conn))
    monkeypatch.setattr(native, "GC_BATCH", 1)      # one piece per sweep: the prune lands between two
    left: list[set[bytes]] = []
    prunes: list[PrunePlan] = []

    def progress(text: str) -> None:
        if text.startswith("collected 1 of ") and not prunes:      # a prune elsewhere, right then
            with open_store(path) as store, store.engine.connect() as conn:
                left.append({bytes(r[0]) for r in prune_sql.piece_rows(conn)})
            prunes.append(apply_prune(path, make_rules(keep_last=2 ** 62)))

    done = apply_delete(path, [goes], progress=progress)
    assert prunes and prunes[0].pieces > 0            # the prune collected the rest
    assert done.pieces == 1                           # the delete collected one piece, and says so
    mine = set(layout.sizes) - left[0]
    assert len(mine) == 1
    assert done.content_bytes == layout.freed(mine)   # the size of that piece, not of every piece it tried
    with open_store(path) as store:
        assert [r.name for r in store.list_runs()] == ["stays"]
