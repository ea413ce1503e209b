"""The Metadata tab's Status row says what the runs list and the run notice say (crashed, stuck), live."""

from __future__ import annotations

import html
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


def test_an_interrupted_runs_reason_reads_as_a_reason_and_a_failed_runs_error_as_an_error(
        window, qtbot, demo_store: Path) -> None:
    from inspector.store import open_store
    with open_store(demo_store) as store:
        runs = store.list_runs()
    paused = next(r for r in runs if r.status == "interrupted")
    failed = next(r for r in runs if r.status == "failed")
    open_in(window, qtbot, demo_store)
    metadata, notice = _metadata(window), window.run_notice
    for run, headline, title in ((paused, "Interrupted:", "Why it stopped"), (failed, "Failed:", "Last error")):
        select_run(window, qtbot, run.id)
        # the run opens on its head, whose Metadata tab ends with the run's text
        qtbot.waitUntil(lambda title=title: metadata.error.isVisible() and title in metadata.error.title.text(),
                        timeout=TIMEOUT)
        assert notice.isVisible() and notice.headline.text().startswith(f"<b>{headline}</b>")
        assert notice.status == run.status and html.escape(run.last_error.splitlines()[0]) in notice.headline.text()
        assert metadata.error_text.text().startswith(run.last_error.splitlines()[0])


def test_a_diagnosis_says_its_reason_once(window, qtbot, crashed_store: Path) -> None:
    """The diagnosis' headline ends with its first reason: the Metadata tab and the notice's
    details do not repeat it as their first bullet (the other details stay)."""
    from inspector.resume.stuck import diagnose
    from inspector.store import open_store

    run = run_named(crashed_store, "crashy")
    with open_store(crashed_store) as store:
        diagnosis = diagnose(store, run)
    assert diagnosis is not None and diagnosis.summary.endswith(diagnosis.reasons[0])
    open_in(window, qtbot, crashed_store)
    select_run(window, qtbot, run.id)
    metadata = _metadata(window)
    qtbot.waitUntil(lambda: metadata.diagnosis.isVisible(), timeout=TIMEOUT)
    reason = html.escape(diagnosis.reasons[0])
    shown = metadata.diagnosis.text()
    headline = html.escape(diagnosis.summary.split(" (")[0])    # (its age moves on)
    assert shown.count(reason) == 1 and f"<br>{headline} (" in shown
    assert f"last checkpoint #{diagnosis.last_checkpoint.seq}" in shown
    notice = window.run_notice
    said = notice.headline.text() + notice.detail.text()
    assert said.count(diagnosis.reasons[0]) == 1 and "last checkpoint" in notice.detail.text()
