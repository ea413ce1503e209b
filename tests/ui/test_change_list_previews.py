"""The Diff tab's change list words a change as the CLI does, in JSON: a LangChain message
says what it is, strings that would draw alike are told apart, numbers say nothing
meaningless (real stores: LangGraph's SqliteSaver and the recorder)."""

from __future__ import annotations

import math
from pathlib import Path

from PySide6.QtCore import Qt

from inspector.record import Checkpointer
from inspector.store import Store, open_store
from inspector.ui.models.change_list_model import PATH, WHAT
from inspector.ui.widgets.diff_panel import DiffPanel
from tests.diff.test_presentation import write_langgraph_chat


def _rows(qtbot, qtmodeltester, store: Store, a: str, b: str) -> dict[str, tuple[str, str]]:
    """Compare two checkpoints in a real Diff tab: each row's (Change column, tooltip) by path
    (its model checked by qtmodeltester)."""
    panel = DiffPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 700)
    panel.show()
    with qtbot.waitSignal(panel.diff_ready, timeout=10000):
        panel.compare(store, store.get_checkpoint(a), store.get_checkpoint(b))
    qtbot.waitUntil(lambda: not panel.busy, timeout=10000)
    model = panel.model
    qtmodeltester.check(model, force_py=True)
    return {model.index(r, PATH).data(): (model.index(r, WHAT).data(),
                                          model.index(r, WHAT).data(Qt.ItemDataRole.ToolTipRole))
            for r in range(model.rowCount())}


def test_added_langchain_messages_say_what_they_are(qtbot, qtmodeltester, tmp_path: Path) -> None:
    path = tmp_path / "lg.db"
    first, last = write_langgraph_chat(path)
    with open_store(path) as store:
        rows = _rows(qtbot, qtmodeltester, store, first, last)
    assert rows["messages[2]"][0] == 'AIMessage ai-0: tool_calls write_file(path="src/f0.py", content={…})'
    assert rows["messages[2]"][1] == '+ messages[2] = AIMessage ai-0: tool_calls write_file(path="src/f0.py", …)'
    assert rows["messages[3]"][0].startswith('ToolMessage tool-call_0: "{\\"ok\\": true')
    assert not any("keys}" in text for text, _ in rows.values())


def test_strings_and_numbers_that_read_alike_are_told_apart(qtbot, qtmodeltester, tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Checkpointer(path, name="alike", heartbeat=3600) as cp:
        cp.save({"comb": "cafe\u0301", "u": "hi 👋🏽", "y": 1.5, "a": 1,
                 "log": [{"role": "user", "content": f"question {i} " * 5} for i in range(4)]}, force=True)
        cp.save({"comb": "caf\u00e9", "u": "hi 👋🏿", "y": math.nan, "a": 1.0, "log": []}, force=True)
        run = cp.run_id
    with open_store(path) as store:
        rows = _rows(qtbot, qtmodeltester, store, f"{run}:0", f"{run}:1")
    assert rows["comb"] == ('"cafe\\u0301" → "café"  (same text once normalised: NFD → NFC)',
                            '~ comb: "cafe\\u0301" → "café" (same text once normalised: NFD → NFC)')
    assert rows["u"][0] == '"hi 👋\\U0001f3fd" → "hi 👋\\U0001f3ff"  (only combining, modifier or invisible ' \
                           'code points differ)'
    assert rows["y"] == ("1.5 → NaN", "~ y: 1.5 → NaN")
    assert rows["a"] == ("1 → 1.0  (int → float)", "~ a: 1 → 1.0 (int → float)")
    assert rows["log[0…3]"][0] == '4 items removed: user: "question 0 question 0 question 0 question 0 question…, …'

