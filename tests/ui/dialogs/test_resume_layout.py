"""The Resume dialog's layout: no two visible widgets overlap at 1024x700, 1600x1000 and at 2x
device pixel ratio, for a native run and for a LangGraph thread waiting at an interrupt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.store import open_store
from inspector.ui.dialogs import langgraph_options
from tests.store.langgraph.conftest import lg_copy, lg_master  # noqa: F401 - fixtures
from tests.ui.dialogs.conftest import run_named
from tests.ui.dialogs.resume_layout_probe import open_resume_dialog
from tests.ui.layout_check import cut_off_widgets, overlapping_widgets

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def refs(crashed_store: Path, lg_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """(native store, crashed head, LangGraph db, interrupted head) — real stores."""
    monkeypatch.setenv("CHECKPOINT_INSPECTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setattr(langgraph_options, "QUIET_SECONDS", 0.0)
    with open_store(lg_copy) as store:
        lg_head = str(store.get_checkpoint("thread-A:-1").id)
    return str(crashed_store), f"{run_named(crashed_store, 'crashy').id}:-1", str(lg_copy), lg_head


@pytest.mark.parametrize("size", [(1024, 700), (1600, 1000)], ids=["1024x700", "1600x1000"])
@pytest.mark.parametrize("kind", ["native", "langgraph"])
def test_no_widgets_overlap(qtbot, refs, size, kind) -> None:
    store, ref = (refs[0], refs[1]) if kind == "native" else (refs[2], refs[3])
    dialog = open_resume_dialog(store, ref, size, langgraph=kind == "langgraph")
    qtbot.addWidget(dialog)
    assert (dialog.width(), dialog.height()) == size
    assert overlapping_widgets(dialog) == []
    assert cut_off_widgets(dialog) == []
    line = dialog.argv_editor.view.fontMetrics().lineSpacing()
    for editor in (dialog.argv_editor, dialog.env_editor):   # readable, its status line below it
        assert editor.view.height() >= 4 * line
        assert editor.status.geometry().top() >= editor.view.geometry().bottom()
    assert "valid" in dialog.argv_editor.status.text()
    if kind == "langgraph":
        assert dialog.langgraph.isVisible() and dialog.langgraph.answer.height() >= 3 * line
    dialog.close()


def test_no_widgets_overlap_at_2x_device_pixel_ratio(refs) -> None:
    env = {**os.environ, "QT_SCALE_FACTOR": "2", "QT_QPA_PLATFORM": "offscreen",
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-m", "tests.ui.dialogs.resume_layout_probe", "1024x700", *refs],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["dpr"] == 2.0
    assert report["native"] == [] and report["langgraph"] == []
    assert report["native_cut"] == [] and report["langgraph_cut"] == []
    assert report["native_size"] == [1024, 700] and report["langgraph_size"] == [1024, 700]
