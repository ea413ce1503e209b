"""prune on native stores: rules, protections, dry run, apply, pins, collection of pieces."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from inspector import codec as pieces
from inspector.cli import main
from inspector.record import Checkpointer
from inspector.retention.api import apply_prune, plan_prune
from inspector.retention.rules import make_rules, parse_duration
from inspector.store import open_store
from inspector.store.native import FORMAT_VERSION
from tests.conftest import store_files_digest
from tests.retention.stores import build, chat, damage_head_reference


def integrity(path: Path) -> dict:
    """Store invariants: SQLite integrity, seqs 0.. without gaps, counts, every piece reachable
    from a checkpoint present, and no piece that nothing reaches."""
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    for run_id, head, count in con.execute("SELECT id, head_seq, checkpoint_count FROM ci_runs"):
        seqs = [r[0] for r in con.execute("SELECT seq FROM ci_checkpoints WHERE run_id = ? ORDER BY seq", (run_id,))]
        assert seqs == list(range(len(seqs))) and head == len(seqs) - 1 and count == len(seqs), run_id
    blobs = {bytes(h): bytes(d) for h, d in con.execute("SELECT hash, data FROM ci_blobs")}
    roots = {bytes(r[0]) for r in con.execute("SELECT state_hash FROM ci_checkpoints UNION "
                                               "SELECT tasks_hash FROM ci_checkpoints WHERE tasks_hash IS NOT NULL")}
    con.close()
    with open_store(path) as store:
        seen, frontier = set(), list(roots)
        while frontier:
            raw = store.read_raw_pieces(frontier)      # raises when a piece is missing or damaged
            seen.update(frontier)
            frontier = list({c for r in raw.values() if pieces.may_hold_markers(r)
                             for c in pieces.iter_digests(pieces.unpack(r))} - seen)
    return {"reachable": len(seen), "pieces": len(blobs)}


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, dict]:
    path = tmp_path / "s.db"
    ids = build(path)
    assert main(["pin", str(path), f"{ids['short']}:5", "--note", "the good one"]) == 0
    return path, ids


def seqs_and_ids(path: Path, run_id: str) -> list[tuple[int, int]]:
    with open_store(path) as st:
        return [(c.seq, c.id) for c in st.list_checkpoints(run_id)]


def test_dry_run_changes_nothing_and_apply_keeps_what_matters(store, capsys) -> None:
    path, ids = store
    with open_store(path) as st:
        fork_origin = st.get_checkpoint(st.get_run(ids["fork"]).parent_checkpoint)
        pinned = st.get_checkpoint(f"{ids['short']}:5")
        heads = {rid: st.get_checkpoint(f"{rid}:-1").id for rid in ids.values()}
        kept_states = {c.id: st.load(c.id).state for c in (fork_origin, pinned)}
    assert pinned.pinned and fork_origin.seq == 20
    before = store_files_digest(path)
    assert main(["prune", str(path), "--keep-last", "3", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert store_files_digest(path) == before and not plan["applied"]
    by_run = {r["run"]: r for r in plan["runs"]}
    # long: 60 - 21 (seq 0..20 protected by the fork) - 3 kept; short: 30 - 3 - 1 pinned
    assert by_run[ids["long"]]["remove"] == 36 and by_run[ids["short"]]["remove"] == 26
    assert plan["protected"]["pinned"] == 1 and plan["protected"]["fork origin or its ancestor"] == 21
    assert plan["bytes"] > 0 and plan["pieces"] > 0
    assert main(["prune", str(path), "--keep-last", "3", "--apply", "--vacuum", "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["applied"] and done["remove_checkpoints"] == 62 and done["pieces"] == plan["pieces"]
    assert done["protected"] == plan["protected"]          # what was kept although selected, said again
    assert done["disk_after"] < done["disk_before"]
    figures = integrity(path)
    assert figures["reachable"] == figures["pieces"]
    with open_store(path) as st:
        for cid, state in kept_states.items():
            assert st.load(cid).state == state
        for rid, head in heads.items():
            assert st.get_checkpoint(f"{rid}:-1").id == head
        assert st.get_checkpoint(pinned.id).pinned
        assert st.get_run(ids["long"]).checkpoint_count == 24
    # nothing left to do: a second prune removes nothing
    assert main(["prune", str(path), "--keep-last", "3", "--apply", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["remove_checkpoints"] == 0


def test_rules_combine_and_unpin_releases(store, capsys) -> None:
    path, ids = store
    plan = plan_prune(path, make_rules(runs=[ids["short"]]))
    assert [r.run for r in plan.runs] == [ids["short"]] and plan.runs[0].remove == 28  # head and pin stay
    assert plan_prune(path, make_rules(older_than="1d")).remove_checkpoints == 0
    assert plan_prune(path, make_rules(keep_last=1, statuses=["failed"])).remove_checkpoints == 0
    assert plan_prune(path, make_rules(keep_last=1, statuses=["completed,failed"])).remove_checkpoints == 28 + 38
    assert main(["unpin", str(path), f"{ids['short']}:5"]) == 0
    assert "is now unpinned" in capsys.readouterr().out
    assert plan_prune(path, make_rules(runs=[ids["short"]])).remove_checkpoints == 29
    assert parse_duration("1d12h") == 129600 and parse_duration("90s") == 90


def test_live_run_is_never_touched(tmp_path: Path) -> None:
    path = tmp_path / "live.db"
    with Checkpointer(path, name="live") as cp:
        chat(cp, 20)
        before = seqs_and_ids(path, cp.run_id)
        result = apply_prune(path, make_rules(keep_last=1))
        assert plan_prune(path, make_rules(keep_last=1)).protected["live run"] == 19
        kept = {reason: n for reason, n in result.protected.items() if n}
        assert result.remove_checkpoints == 0 and kept == {"live run": 19}   # said as the dry run says it
        assert seqs_and_ids(path, cp.run_id) == before
        chat(cp, 2, start=20)                     # the agent goes on writing
    assert len(seqs_and_ids(path, cp.run_id)) == 22
    assert apply_prune(path, make_rules(keep_last=1)).remove_checkpoints == 21
    integrity(path)


def test_pin_errors_and_format2_store_gets_the_table_only_from_writers(tmp_path: Path, capsys) -> None:
    path = tmp_path / "old.db"
    with Checkpointer(path, name="r") as cp:
        chat(cp, 3)
        run_id = cp.run_id
    con = sqlite3.connect(path)
    con.execute("DROP TABLE ci_pins")          # a store made before pins existed
    con.commit()
    con.close()
    before = store_files_digest(path)
    assert main(["usage", str(path)]) == 0 and main(["checkpoints", str(path), run_id]) == 0
    assert plan_prune(path, make_rules(keep_last=1)).remove_checkpoints == 2
    assert store_files_digest(path) == before   # readers never create it
    assert main(["unpin", str(path), f"{run_id}:1"]) == 0
    assert main(["pin", str(path), f"{run_id}:1"]) == 0
    assert main(["pin", str(path), f"{run_id}:99"]) == 2
    assert main(["pin", str(path), "nonsense"]) == 2
    capsys.readouterr()
    assert plan_prune(path, make_rules(keep_last=1)).remove_checkpoints == 1
    con = sqlite3.connect(path)
    assert con.execute("SELECT value FROM ci_meta WHERE key = 'format_version'").fetchone()[0] == str(FORMAT_VERSION)   # pins change no format
    con.close()


@pytest.mark.postgres
def test_usage_and_prune_on_postgresql(pg_url: str, capsys) -> None:
    ids = build(pg_url)
    assert main(["pin", pg_url, f"{ids['short']}:5"]) == 0
    capsys.readouterr()
    assert main(["usage", pg_url, ids["long"], "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["backend"] == "postgresql" and doc["tables"]["ci_blobs"] > 0
    assert doc["total_bytes"] == sum(doc["tables"].values())
    assert len(doc["detail"]["checkpoints"]) == 60 and next(iter(doc["fields"])) in ("messages", "(checkpoint rows)")
    with open_store(pg_url) as st:
        keep = {c.id: st.load(c.id).state for c in (st.get_checkpoint(f"{ids['short']}:5"),
                                                     st.get_checkpoint(f"{ids['long']}:20"))}
    assert main(["prune", pg_url, "--keep-last", "3", "--apply", "--vacuum", "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["remove_checkpoints"] == 62 and done["pieces"] > 0
    with open_store(pg_url) as st:
        for cid, state in keep.items():
            assert st.load(cid).state == state
        for run in st.list_runs():
            infos = st.list_checkpoints(run.id)
            assert [c.seq for c in infos] == list(range(run.checkpoint_count))
            for info in infos:                        # every survivor still reads in full
                st.load(info.id)


def below(path: Path, root: bytes) -> set[bytes]:
    """The piece ``root`` and every piece it reaches."""
    with open_store(path) as store:
        seen, frontier = set(), [root]
        while frontier:
            raw = store.read_raw_pieces(frontier)
            seen.update(frontier)
            frontier = list({c for r in raw.values() if pieces.may_hold_markers(r)
                             for c in pieces.iter_digests(pieces.unpack(r))} - seen)
    return seen


@pytest.mark.parametrize("damage", ["a state reference as text", "a state reference of 15 bytes",
                                    "a piece row of the wrong types"])
def test_a_damaged_row_stops_the_collection_of_pieces_until_its_run_goes(store, damage, capsys) -> None:
    """What a damaged row named cannot be known, so no piece is collected while one is there
    (a piece only it names may be what a repair needs); the note says why and what to do."""
    path, ids = store
    with open_store(path) as st:
        pinned = st.get_checkpoint(f"{ids['short']}:5").id
    con = sqlite3.connect(path)
    head, root = con.execute("SELECT id, state_hash FROM ci_checkpoints WHERE run_id = ? ORDER BY seq DESC LIMIT 1",
                             (ids["short"],)).fetchone()
    kept = below(path, bytes(root))        # what the short run's head reaches, its own tail chunk among it
    if damage == "a state reference as text":
        damage_head_reference(path, ids["short"])
    elif damage == "a state reference of 15 bytes":
        con.execute("UPDATE ci_checkpoints SET state_hash = substr(state_hash, 1, 15) WHERE id = ?", (head,))
    else:
        con.execute("UPDATE ci_blobs SET codec = 'zstd' WHERE hash = ?", (root,))
    con.commit()
    con.close()
    assert main(["prune", str(path), "--keep-last", "3", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["remove_checkpoints"] == 62 and plan["pieces"] == 0
    assert any("would not be collected" in n for n in plan["notes"])
    assert main(["prune", str(path), "--keep-last", "3", "--apply"]) == 0
    out = capsys.readouterr().out
    assert "Removed 62 of" in out and "and 0 unreferenced pieces" in out
    assert "numbered again from #0 in each run" in out     # (#10 of a run is another checkpoint now)
    assert "Write-ahead log: " in out and "this prune's among them, until SQLite folds them into the file" in out
    assert "note: Unreferenced pieces were not collected: 1 " in out
    assert ("1 reference from checkpoints to their state is damaged" in out and "delete their runs" in out
            if damage != "a piece row of the wrong types" else "1 piece the checkpoints reach could not be read" in out)
    con = sqlite3.connect(path)
    assert kept <= {bytes(h) for (h,) in con.execute("SELECT hash FROM ci_blobs")}
    con.close()
    # the remedy the note gives: once the damaged run is gone, collection goes on
    assert main(["unpin", str(path), str(pinned)]) == 0
    assert main(["delete", str(path), ids["short"], "--apply", "--json"]) == 0
    done = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    assert done["notes"] == [] and done["pieces"] > 0
    figures = integrity(path)
    assert figures["reachable"] == figures["pieces"]
