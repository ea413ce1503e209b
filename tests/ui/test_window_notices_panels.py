"""What the Metadata tab says of a checkpoint's size (a change of the state's size is not content
written; a session store's own bytes are said apart), and the runs list at 1024 px with runs
named by a UUID (CrewAI flows): the name elides, Checks and Updated stay, the id is not repeated."""

from __future__ import annotations

import shutil
from pathlib import Path

from inspector.model import CheckpointInfo
from inspector.record import Checkpointer
from inspector.store import open_store
from inspector.ui.models.json_walk import fmt_bytes
from inspector.ui.models.run_tree import COL_CHECKPOINTS, COL_CHECKS, COL_NAME, COL_UPDATED
from tests.ui.conftest import open_in, select_checkpoint, select_run

STORES = Path(__file__).parents[1] / "frameworks" / "stores"
TIMEOUT = 20_000


def _copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copy2(STORES / name, target)
    return target


def _checkpoints(store: Path | str, run_id: str) -> list[CheckpointInfo]:
    with open_store(store) as st:
        return list(st.list_checkpoints(run_id))


def _sizes(window, qtbot, seq: int) -> dict[str, str]:
    select_checkpoint(window, qtbot, seq)
    window.details.set_tab("metadata")
    panel = window.details.panels["metadata"]
    qtbot.waitUntil(lambda: panel.checkpoint.values().get("Checkpoint", "").startswith(f"#{seq} "), timeout=TIMEOUT)
    return panel.sizes.values()


def test_a_shrinking_native_state_reads_as_a_size_change_not_as_content_written(window, qtbot, tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    with Checkpointer(store, name="shrinks") as cp:
        cp.save({"blob": "x" * 50_000, "n": 0})
        cp.save({"blob": "", "n": 1})
        cp.save({"blob": "", "n": 2})
    with open_store(store) as st:
        run = st.list_runs()[0]
    first, shrunk, same = _checkpoints(store, run.id)
    assert shrunk.size_delta < 0 and same.size_delta == 0
    open_in(window, qtbot, store)
    select_run(window, qtbot, run.id)
    rows = _sizes(window, qtbot, 1)
    assert rows["Size change"] == f"\u2212{fmt_bytes(-shrunk.size_delta)} the state is smaller than at the checkpoint before"
    assert "Written" not in rows and "Stored" not in rows    # what a native checkpoint wrote is not recorded
    assert _sizes(window, qtbot, 2)["Size change"] == "0 B the state is as large as at the checkpoint before"
    assert _sizes(window, qtbot, 0)["Size change"] == "none: the run's first checkpoint"
    assert first.size_delta == first.size


def test_session_stores_say_what_each_checkpoint_stored(window, qtbot, tmp_path: Path) -> None:
    crew = _copy(tmp_path, "crewai_flows.db")     # snapshots: every checkpoint keeps the whole state
    flow = "4dbc4139-3577-4183-9d5b-b4b9bf3730c5"
    info = _checkpoints(crew, flow)[1]
    open_in(window, qtbot, crew)
    select_run(window, qtbot, flow)
    assert _sizes(window, qtbot, 1)["Stored"] == f"{fmt_bytes(info.size)} a whole snapshot of the state, kept for this checkpoint"
    # (it said "(a CrewAI flows (SQLite) session)": a flow is no session)
    assert window.details.panels["metadata"].run.values()["Owner"] == "no owner process (a CrewAI flow)"
    agents = _copy(tmp_path, "agents_sqlite.db")   # a log: every checkpoint adds its items
    open_in(window, qtbot, agents)
    with open_store(agents) as st:
        run = st.list_runs()[0]
    infos = _checkpoints(agents, run.id)
    seq = next(c.seq for c in infos if c.seq > 0 and c.kind != "fork" and c.size_delta > 0)
    select_run(window, qtbot, run.id)
    rows = _sizes(window, qtbot, seq)
    assert rows["Stored"] == f"{fmt_bytes(infos[seq].size_delta)} the items this checkpoint added to the session"
    assert rows["Size change"] == f"+{fmt_bytes(infos[seq].size_delta)} the state is larger than at the checkpoint before"
    assert window.details.panels["metadata"].run.values()["Owner"] == "no owner process (an OpenAI Agents session)"


def test_uuid_named_runs_elide_and_leave_checks_and_updated_in_view(window, qtbot, tmp_path: Path) -> None:
    window.resize(1024, 700)
    store = _copy(tmp_path, "crewai_flows.db")
    open_in(window, qtbot, store)
    view = window.runs_panel.view
    header = view.header()
    qtbot.waitUntil(lambda: view.viewport().width() < 600, timeout=TIMEOUT)
    window.runs_panel.column_fit.fit()
    for column in (COL_CHECKPOINTS, COL_CHECKS, COL_UPDATED):
        assert not header.isSectionHidden(column), column
    with open_store(store) as st:
        runs = st.list_runs()
    assert all(r.name == r.id and len(r.id) == 36 for r in runs)     # (the flows are named by their UUID)
    metrics = view.fontMetrics()
    assert header.sectionSize(COL_NAME) < metrics.horizontalAdvance(runs[0].name)   # it elides
    delegate = view.itemDelegateForColumn(COL_NAME)
    proxy = window.runs_panel.proxy
    lines = [delegate.second_line(proxy.index(row, COL_NAME)) for row in range(proxy.rowCount())]
    assert lines == [["crewai flow"]] * len(runs)      # not the UUID of the line above once more


def test_a_header_keeps_its_chips_in_sight_before_a_long_name(qtbot, tmp_path: Path) -> None:
    # a CrewAI flow named by its UUID pushed the 'damaged' chip off the State header at 1024x700
    from inspector.ui.widgets.checkpoint_header import CheckpointHeader

    store = _copy(tmp_path, "crewai_flows.db")
    with open_store(store) as st:
        run = st.list_runs()[0]
        info = st.list_checkpoints(run.id)[-1]
    header = CheckpointHeader()
    qtbot.addWidget(header)
    header.show_checkpoint(info, run, problems=("a part cannot be read",))
    text = header.text()
    assert run.id not in text and run.id[:8] + "\u2026" in text     # the UUID by its first characters
    assert text.index("damaged: 1 part") < text.index(info.name)     # before the step's name and time
    assert run.id in header.toolTip()
