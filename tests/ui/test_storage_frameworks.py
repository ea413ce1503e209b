"""The Storage view of other frameworks' session stores (written by the real packages)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from inspector.humanize import fmt_size
from inspector.store import open_store
from inspector.ui.session import StoreSession
from inspector.ui.widgets.storage_view import StorageView
from inspector.usage.api import store_usage
from tests.frameworks.conftest import STORES
from tests.ui.storage_stores import check_run_detail


@pytest.mark.parametrize("name", ["adk_sqlite.db", "agents_sqlite.db", "crewai_json"])
def test_the_storage_view_measures_a_framework_store(qtbot, tmp_path: Path, name: str) -> None:
    source, path = STORES / name, tmp_path / name
    (shutil.copytree if source.is_dir() else shutil.copy2)(source, path)
    session = StoreSession()
    view = StorageView(session)
    qtbot.addWidget(view)
    view.resize(1024, 700)
    view.show()
    try:
        assert not view.charts_area.isVisible()          # no store: no empty charts with meaningless axes
        with qtbot.waitSignal(view.report_ready, timeout=30_000) as got:
            session.open(str(path))
        report = got.args[0]
        assert view.charts_area.isVisible()
        with open_store(path) as store:
            run = max(store.list_runs(), key=lambda r: r.checkpoint_count)
            expected = store_usage(store)
        assert report.content_bytes == expected.content_bytes > 0
        text = view.summary.text()
        assert f"<b>{fmt_size(expected.total_bytes)}</b> on disk" in text
        assert f"session data: {fmt_size(expected.content_bytes)}" in text and "could not" not in text
        assert not view.prune_button.isEnabled() and "deletes its own sessions" in view.prune_button.toolTip()
        bars = [i for i in view.charts["runs"].getPlotItem().items if type(i).__name__ == "BarGraphItem"]
        assert bars and len(bars[0].opts["width"]) == len(report.runs)
        check_run_detail(qtbot, view, run)
    finally:
        session.shutdown()
