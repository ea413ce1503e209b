"""Read budgets on LangGraph decoding (``decode.unpack`` / ``to_plain``) and a real saver's store."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest

from inspector import limits
from inspector.store.langgraph.decode import BlobError, DecodeBudget, plain_or_error, to_plain, unpack


@pytest.fixture(autouse=True)
def _fresh_limits():
    limits.reset()
    yield
    limits.reset()


def test_a_flat_list_and_map_decode_whole_and_are_counted() -> None:
    value = unpack(msgpack.packb({"items": list(range(1000)), "index": {f"k{i}": i for i in range(500)}}))
    budget = DecodeBudget()
    plain = to_plain(value, budget)
    assert plain == {"items": list(range(1000)), "index": {f"k{i}": i for i in range(500)}}
    assert budget.nodes == 1 + 1 + 1000 + 1 + 500
    assert budget.size == 8 * 1000 + 8 * 500 + sum(len(f"k{i}") for i in range(500))


def test_the_value_count_budget_names_its_flag() -> None:
    limits.configure(nodes=10_000)
    value = unpack(msgpack.packb([list(range(100))] * 200))
    with pytest.raises(limits.BudgetExceeded, match=r"more than 10,000 values.*--max-nodes"):
        to_plain(value, DecodeBudget())
    assert "--max-nodes" in plain_or_error(value)["__error__"]   # a lone value: a marker, not a raise


def test_many_tiny_ext_count_against_the_value_budget() -> None:
    limits.configure(nodes=50_000)
    tiny = msgpack.ExtType(0, msgpack.packb(["m", "C", 1]))
    value = unpack(msgpack.packb([tiny] * 30_000))
    with pytest.raises(limits.BudgetExceeded, match="--max-nodes"):
        to_plain(value, DecodeBudget())


def test_nested_ext_stop_at_the_depth_budget_not_at_the_recursion_limit() -> None:
    inner: object = "leaf"
    for _ in range(400):
        inner = msgpack.ExtType(0, msgpack.packb(["m", "C", inner]))
    with pytest.raises(limits.BudgetExceeded, match=r"256 levels.*--max-depth"):
        to_plain(unpack(msgpack.packb(inner)), DecodeBudget())


def test_ext_payloads_count_against_the_state_budget() -> None:
    limits.configure(state=1)   # 1 MB
    inner: object = "x" * 100_000
    for _ in range(30):         # each level's payload (~100 KB) is unpacked again
        inner = msgpack.ExtType(0, msgpack.packb(["m", "C", inner]))
    with pytest.raises(limits.BudgetExceeded, match="--max-state-mb"):
        to_plain(unpack(msgpack.packb(inner)), DecodeBudget())


def test_a_blob_over_the_piece_budget_is_not_decoded() -> None:
    limits.configure(piece=1)
    with pytest.raises(limits.BudgetExceeded, match="--max-piece-mb"):
        unpack(msgpack.packb("x" * (2 * limits.MB)))


def test_a_declared_huge_array_fails_at_once() -> None:
    with pytest.raises(BlobError, match="max_array_len"):
        unpack(b"\xdd\xff\xff\xff\xff" + b"\x00" * 16)


def test_a_real_savers_state_over_budget_is_one_sentence(tmp_path: Path) -> None:
    from langgraph.checkpoint.base import create_checkpoint, empty_checkpoint
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = tmp_path / "lg.sqlite"
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    checkpoint = create_checkpoint(empty_checkpoint(), None, 0)
    checkpoint["channel_values"] = {"items": list(range(20_000)), "more": list(range(20_000))}
    checkpoint["channel_versions"] = {"items": 1, "more": 1}
    saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, checkpoint,
              {"source": "loop", "step": 0, "parents": {}}, {"items": 1, "more": 1})
    conn.close()
    cli = [sys.executable, "-m", "inspector", "show", str(path), "t:0"]
    over = subprocess.run([*cli, "--max-nodes", "30000"], capture_output=True, text=True, timeout=60)
    assert over.returncode == 2, over.stderr
    assert over.stderr.strip().splitlines() == [
        "checkpoint-inspector: The state of this LangGraph checkpoint decodes to more than 30,000 values, "
        "over the value count budget of 30,000; raise it with --max-nodes or the "
        "CHECKPOINT_INSPECTOR_MAX_NODES setting."]
    within = subprocess.run(cli, capture_output=True, text=True, timeout=60)
    assert within.returncode == 0 and '"items"' in within.stdout
