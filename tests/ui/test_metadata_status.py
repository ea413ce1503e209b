"""The Metadata tab's Status row says what the runs list and the run notice say (crashed, stuck), live."""

from __future__ import annotations

from pathlib import Path

from tests.resume.helpers import hung_agent
from tests.ui.conftest import open_in, select_checkpoint, select_run
from tests.ui.dialogs.conftest import run_named

TIMEOUT = 15_000


def _metadata(window):
    window.details.set_tab("metadata")
    return window.details.panels["metadata"]


def test_a_crashed_run_reads_crashed_in_metadata_with_the_reason(window, qtbot, crashed_store: Path) -> None:
    run = run_named(crashed_store, "crashy")
    assert run.status == "running"            # stored: the process was killed mid-run
    open_in(window, qtbot, crashed_store)
    select_run(window, qtbot, run.id)
    select_checkpoint(window, qtbot, 0)
    metadata = _metadata(window)
    assert window.runs_panel.model.status_of(run.id) == "crashed"
    qtbot.waitUntil(lambda: metadata.run.values().get("Status", "").startswith("crashed"), timeout=TIMEOUT)
    status = metadata.run.values()["Status"]
    assert "gone" in status and "stored status: running" in status
    # the same words as the notice above the timeline
    assert window.run_notice.status == "crashed"
    # another checkpoint of the same run keeps the effective status (no flash of "running")
    select_checkpoint(window, qtbot, 1)
    assert metadata.run.values()["Status"].startswith("crashed")
    # a completed run's row is its stored status, with nothing added
    reference = run_named(crashed_store, "reference")
    select_run(window, qtbot, reference.id)
    select_checkpoint(window, qtbot, 0)
    qtbot.waitUntil(lambda: metadata.run.values().get("Status") == "completed", timeout=TIMEOUT)


def test_metadata_status_follows_a_run_whose_owner_dies(window, qtbot, tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    with hung_agent(store, 4) as (hung, run):
        open_in(window, qtbot, store)
        select_run(window, qtbot, run.id)
        select_checkpoint(window, qtbot, 0)
        metadata = _metadata(window)
        qtbot.waitUntil(lambda: bool(metadata.run.values().get("Status")), timeout=TIMEOUT)
        assert not metadata.run.values()["Status"].startswith("crashed")
        hung.kill()
        hung.wait()
        qtbot.waitUntil(lambda: (window.refresh() or True)
                        and metadata.run.values().get("Status", "").startswith("crashed"), timeout=TIMEOUT)
        assert window.runs_panel.model.status_of(run.id) == "crashed"
        assert window.run_notice.status == "crashed"
