"""What the window's notices say as time passes: a PostgreSQL server stopped and started again
(the banner and the live badge follow it), and a crashed run's notice (its age moves on)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.record import Checkpointer
from inspector.store import open_store
from tests.resume.helpers import hung_agent
from tests.ui.conftest import open_in, select_run

TIMEOUT = 60_000


@pytest.mark.postgres
def test_a_server_back_after_an_outage_clears_the_banner_and_the_badge_says_live(
        window, qtbot, pg_private_server) -> None:
    url = pg_private_server.url
    with Checkpointer(url, name="before the stop") as cp:
        cp.save({"n": 0})
    model, bridge, badge = window.runs_panel.model, window.session.bridge, window.store_status.live_chip
    with qtbot.waitSignals([window.session.opened, model.runs_loaded], timeout=TIMEOUT):
        window.open_store(url)
    qtbot.waitUntil(lambda: bridge.watching == "listen", timeout=TIMEOUT)
    assert badge.text() == "\u25cf live"
    try:
        with qtbot.waitSignal(bridge.failed, timeout=TIMEOUT) as failed:
            pg_private_server.halt()
        assert window.banner.message == failed.args[0] and "Cannot reach the database" in failed.args[0]
        assert badge.text() == "reconnecting \u2026"       # not "live" while nothing can be read
        assert failed.args[0] in badge.toolTip()
    finally:
        with qtbot.waitSignal(bridge.recovered, timeout=TIMEOUT):
            pg_private_server.resume()
    assert "Cannot reach" not in window.banner.message
    assert window.banner.level == "info" and window.banner.message.startswith("Reconnected to ")   # (it fades)
    assert badge.text() == "\u25cf live"
    # and it is live indeed: a run written now is listed without F5
    with Checkpointer(url, name="after the start") as cp:
        cp.save({"n": 1})
    with open_store(url) as store:
        stored = {r.name for r in store.list_runs()}
    assert stored == {"before the stop", "after the start"}
    qtbot.waitUntil(lambda: {n.run.name for n in model.tree.by_id.values()} == stored, timeout=TIMEOUT)


def test_a_crashed_runs_notice_ages_with_the_list(window, qtbot, tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    with hung_agent(store, 3) as (hung, run):
        open_in(window, qtbot, store)
        select_run(window, qtbot, run.id)
        hung.kill()
        hung.wait()
    panel, notice = window.runs_panel, window.run_notice
    qtbot.waitUntil(lambda: notice.status == "crashed" and "Crashed after" in notice.headline.text(), timeout=TIMEOUT)
    said = notice.headline.text()
    # the periodic refresh (every 30 s) re-diagnoses the selected crashed run: its age moves on
    qtbot.waitUntil(lambda: (panel.refresh_running() or True) and notice.headline.text() != said, timeout=TIMEOUT)
    assert notice.status == "crashed" and "Crashed after" in notice.headline.text()
    with open_store(store) as st:
        assert st.get_run(run.id).status == "running"      # (the store still says so: the window diagnosed it)
