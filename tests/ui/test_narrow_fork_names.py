"""At 800x600 the runs list gives a fork's indented row its name before it keeps Ckpts: the
columns that give way are measured against every name shown, not only the top-level ones."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QFont, QFontMetrics

from inspector.record import Checkpointer
from inspector.resume.fork import fork
from inspector.store import open_store
from inspector.ui.models.run_tree import COL_CHECKPOINTS, COL_CHECKS, COL_NAME, COL_UPDATED
from inspector.ui.widgets.runs_columns import GIVE_WAY, NAME_PADDING
from tests.retention.stores import chat
from tests.ui.dialogs.test_resume_flow import TIMEOUT
from tests.ui.test_journeys import _window

FORK_NAME = "report: tidal energy (fork of #8)"


def _store(path: Path) -> str:
    """Short top-level names, one long fork name; the fork's id."""
    for name in ("tidal", "bees"):
        with Checkpointer(path, name=name) as cp:
            chat(cp, 10)
    with open_store(path, readonly=False) as store:
        source = next(r for r in store.list_runs() if r.name == "tidal")
        return fork(store, f"{source.id}:8", reason="try again", name=FORK_NAME).id


def test_a_forks_name_wins_room_before_the_ckpts_column(qtbot, tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    fork_id = _store(path)
    window = _window(qtbot, (800, 600), path, annotated=True)
    panel = window.runs_panel
    view, header = panel.view, panel.view.header()
    index = panel.proxy.mapFromSource(panel.model.run_index(fork_id))
    qtbot.waitUntil(lambda: view.isExpanded(index.parent()), timeout=TIMEOUT)
    font = QFont(view.font())
    font.setWeight(QFont.Weight.Medium)
    need = QFontMetrics(font).horizontalAdvance(FORK_NAME) + NAME_PADDING + 2 * view.indentation()   # one level deep

    def fitted() -> bool:       # the fork's name whole, or every column that may give way gone
        room = header.sectionSize(COL_NAME)
        return room >= need or all(header.isSectionHidden(c) for c in GIVE_WAY)
    qtbot.waitUntil(fitted, timeout=TIMEOUT)
    assert header.isSectionHidden(COL_UPDATED) and header.isSectionHidden(COL_CHECKS)
    assert header.isSectionHidden(COL_CHECKPOINTS) or header.sectionSize(COL_NAME) >= need
    view.collapse(index.parent())           # the fork's row hidden: the top-level names are short
    qtbot.waitUntil(lambda: not header.isSectionHidden(COL_CHECKPOINTS), timeout=TIMEOUT)
    window.close()
