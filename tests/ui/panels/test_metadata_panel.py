"""The Metadata tab: timing, sizes, replay cost, owner, resume spec, lineage, error, meta, diagnosis."""

from __future__ import annotations

from inspector.ui.widgets.metadata_panel import MetadataPanel
from tests.ui.panels.conftest import run_named


def _panel(qtbot, store=None) -> MetadataPanel:
    panel = MetadataPanel()
    panel.set_store(store)
    qtbot.addWidget(panel)
    panel.resize(900, 900)
    panel.show()
    return panel


def test_checkpoint_sizes_and_run(qtbot, panels_store, snap_at, beekeeping) -> None:
    snap = snap_at(14)
    panel = _panel(qtbot, panels_store)
    panel.show_snapshot(snap, beekeeping)
    qtbot.waitUntil(lambda: "after the previous checkpoint" in panel.checkpoint.values()["Gap"], timeout=5000)
    rows = panel.checkpoint.values()
    assert rows["Kind"].strip() == snap.info.kind and rows["Name"] == snap.info.name
    assert rows["Checkpoint"].startswith("#14")
    sizes = panel.sizes.values()
    assert sizes["Replay cost"] == "1 operation since the previous snapshot"
    assert sizes["Score"] == (f"checks {snap.info.checks_passed}/{snap.info.checks_total} · "
                              f"tasks {snap.info.tasks_done}/{snap.info.tasks_total}")
    run = panel.run.values()
    assert f"pid {beekeeping.owner_pid}" in run["Owner"] and "epoch 1" in run["Owner"]
    assert "ago" in run["Heartbeat"]
    spec = panel.resume_text.toPlainText()
    assert spec.startswith("$ ") and "inspector.demo" in spec and "cwd: " in spec and "env:" in spec
    assert panel.labels.values() == {"seed": "1", "topic": "urban beekeeping", "heartbeat_s": "1.0"}
    meta = panel.meta_model
    assert {meta.index(r, 0).data() for r in range(meta.rowCount())} == set(snap.meta)


def test_fork_lineage_and_failed_run(qtbot, panels_store) -> None:
    fork = next(r for r in panels_store.list_runs() if r.parent_run)
    panel = _panel(qtbot, panels_store)
    panel.show_snapshot(panels_store.load(f"{fork.id}:0"), fork)
    source = panels_store.get_checkpoint(fork.parent_checkpoint)
    qtbot.waitUntil(lambda: "report: urban beekeeping" in panel.lineage.values().get("Parent run", ""),
                    timeout=5000)
    lineage = panel.lineage.values()
    assert lineage["Parent checkpoint"].startswith(f"#{source.seq}")
    assert lineage["Fork reason"] == fork.fork_reason
    assert panel.checkpoint.values()["Gap"] == "first checkpoint"
    assert panel.error.isHidden()
    failed = run_named(panels_store, "report: e-bike logistics")
    panel.show_snapshot(panels_store.load(f"{failed.id}:-1"), failed)
    assert not panel.error.isHidden() and "calculator" in panel.error_text.text()


def test_diagnosis_hook_and_clearing(qtbot, snap_at, beekeeping) -> None:
    panel = _panel(qtbot)
    panel.show_snapshot(snap_at(2), beekeeping)
    assert panel.diagnosis.isHidden()
    panel.show_diagnosis("No heartbeat for 40 min.")
    assert not panel.diagnosis.isHidden() and "40 min" in panel.diagnosis.text()
    panel.show_diagnosis(None)
    assert panel.diagnosis.isHidden()
    panel.show_snapshot(None, None)
    assert panel.empty.isVisible() and panel.checkpoint.isHidden() and not panel.meta_tree.isVisible()
    assert panel.empty.text().startswith("No checkpoint selected")
    panel.show_diagnosis("No heartbeat for 40 min.")     # a run's diagnosis, no checkpoint: shown
    assert panel.diagnosis.isVisible() and not panel.empty.isVisible()
    panel.show_diagnosis(None)
    assert panel.empty.isVisible()
