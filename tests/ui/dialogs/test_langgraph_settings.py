"""LangGraph Settings from the GUI: graph, Python, working directory and trust of the open store,
applied at once (no reopening); disabled actions say why; Resume stays open for LangGraph
threads (the dialog asks for the graph)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from inspector.store.langgraph.settings import load_settings
from tests.ui.conftest import open_in, select_run

SHOTS = Path(__file__).resolve().parents[3] / "screenshots-tmp"


@pytest.fixture
def corpus_db(corpus_copy_sqlite: Path) -> Path:
    """A copy of the suite's LangGraph corpus (built once per session)."""
    return corpus_copy_sqlite


def test_settings_apply_at_once_and_actions_say_why(window, qtbot, corpus_db: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))
    actions = window.run_actions
    assert not actions.lg_settings.isEnabled() and "open one" in actions.lg_settings.toolTip()
    assert not actions.resume.isEnabled() and "open a store first" in actions.resume.toolTip()
    open_in(window, qtbot, corpus_db)
    select_run(window, qtbot, "typed-2")
    store = window.session.store
    assert actions.lg_settings.isEnabled()
    assert not store.get_run("typed-2").resumable
    assert actions.resume.isEnabled()                 # the Resume dialog asks for the graph
    dialog = actions.open_langgraph_settings()
    qtbot.addWidget(dialog)
    dialog.graph.setText("not a spec")
    dialog.save()
    assert dialog.isVisible() and not dialog.error.isHidden()          # one sentence, stays open
    assert load_settings(store.info.url).graph is None                 # nothing saved
    dialog.graph.setText("tests.lgcorpus.typed:build")
    dialog.python.setText(sys.executable)
    dialog.cwd.setText(str(Path(__file__).resolve().parents[3]))
    dialog.trusted.setChecked(True)
    for size in ((1024, 700), (1600, 1000)):
        window.resize(*size)
        dialog.resize(min(760, size[0] - 100), dialog.sizeHint().height())
        qtbot.wait(50)
        SHOTS.mkdir(exist_ok=True)
        window.grab().save(str(SHOTS / f"lg-settings-window-{size[0]}.png"))
        dialog.grab().save(str(SHOTS / f"lg-settings-dialog-{size[0]}.png"))
    dialog.save()
    saved = load_settings(store.info.url)
    assert (saved.graph, saved.python, saved.trusted) == ("tests.lgcorpus.typed:build", sys.executable, True)
    assert store.get_run("typed-2").resumable                            # applied to the open store
    assert window.session.store is store                                 # without reopening


def test_the_settings_dialog_cuts_off_no_text(qtbot, corpus_db: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The trust checkbox's label and the fields' placeholders are read whole (they ended in
    "…(no LANGGRAPH_S" and "(default: the cu…"); the dialog fits a 1024x700 screen."""
    from PySide6.QtWidgets import QCheckBox, QLineEdit

    from inspector.store import open_store
    from inspector.ui.dialogs.langgraph_settings import LangGraphSettingsDialog
    from tests.ui.layout_check import cut_off_widgets, overlapping_widgets

    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))
    with open_store(corpus_db) as store:
        dialog = LangGraphSettingsDialog(store)
        qtbot.addWidget(dialog)
        dialog.show()
        qtbot.waitExposed(dialog)
        assert dialog.width() <= 1024 - 100 and dialog.height() <= 700 - 100
        for box in dialog.findChildren(QCheckBox):
            assert box.width() >= box.sizeHint().width(), box.text()
        for edit in dialog.findChildren(QLineEdit):
            if edit.placeholderText():
                room = edit.width() - 2 * edit.style().pixelMetric(edit.style().PixelMetric.PM_DefaultFrameWidth)
                assert room >= edit.fontMetrics().horizontalAdvance(edit.placeholderText()), edit.placeholderText()
        assert cut_off_widgets(dialog) == [] and overlapping_widgets(dialog) == []
        dialog.close()
