"""The Metadata tab: everything known about a checkpoint and its run.

Timing, sizes and replay cost, run owner, resume spec, lineage, labels, last error, the
checkpoint's own meta dict (a tree), and a slot for a stuck diagnosis.
"""

from __future__ import annotations

import html
import shlex
import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QFontDatabase, QTextDocumentFragment
from PySide6.QtWidgets import (QFormLayout, QFrame, QHeaderView, QLabel, QPlainTextEdit, QScrollArea,
                               QTreeView, QVBoxLayout, QWidget)

from inspector.humanize import fmt_age, plural
from inspector.model import CheckpointInfo, RunInfo, Snapshot, StoreInfo
from inspector.resume.status import EffectiveStatus
from inspector.store.base import Store
from inspector.ui.formatting import visible, visible_html
from inspector.ui.models.json_walk import fmt_bytes, preview
from inspector.ui.models.state_tree_model import KEY, TYPE, VALUE, StateTreeModel
from inspector.ui.tasks import LatestJob
from inspector.ui.widgets.checkpoint_header import fmt_time, kind_chip
from inspector.ui.widgets.empty_state import EmptyState
from inspector.ui.widgets.palette import accent, is_dark, muted_text, theme_changed, tint

if TYPE_CHECKING:
    from inspector.ui.session import StoreSession

Row = tuple[str, str]   # (label, rich text)
LABEL_WIDTH = 130
NO_CHECKPOINT_TEXT = "No checkpoint selected: pick one in the timeline to see its metadata"
META_MIN_HEIGHT, META_MAX_HEIGHT = 90, 520
RESUME_MAX_LINES = 14
META_EXPAND_AT_MOST = 8   # meta entries with more children start collapsed





def resume_text(spec: dict | None) -> str:
    """A resume spec as a readable monospace block: the command, cwd and environment."""
    if not spec:
        return ""
    argv = spec.get("argv") or []
    lines = ["$ " + (shlex.join(str(a) for a in argv) if isinstance(argv, list) else str(argv))]
    if spec.get("cwd"):
        lines.append(f"cwd: {spec['cwd']}")
    env = spec.get("env") or {}
    if env:
        lines.append("env:")
        lines += [f"  {k}={v}" for k, v in sorted(env.items())]
    if spec.get("inherit"):
        lines.append("inherit: " + ", ".join(map(str, spec["inherit"])))
    for key, value in spec.items():
        if key not in ("argv", "cwd", "env", "inherit"):
            lines.append(f"{key}: {value}")
    return "\n".join(lines)


class Section(QFrame):
    """A titled group of label/value rows; rows are reused between updates."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel(f"<b>{visible_html(title)}</b>", self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.form = QFormLayout()
        self.form.setContentsMargins(12, 0, 0, 0)
        self.form.setHorizontalSpacing(14)
        self.form.setVerticalSpacing(3)
        self.form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.body = QVBoxLayout(self)
        self.body.setContentsMargins(0, 6, 0, 6)
        self.body.setSpacing(4)
        self.body.addWidget(self.title)
        self.body.addLayout(self.form)
        self._rows: list[tuple[QLabel, QLabel]] = []

    def set_rows(self, rows: list[Row]) -> None:
        """Show these rows (label, rich text value); the section hides when there are none."""
        while len(self._rows) < len(rows):
            name, value = QLabel(self), QLabel(self)
            value.setTextFormat(Qt.TextFormat.RichText)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            value.setWordWrap(True)
            name.setMinimumWidth(LABEL_WIDTH)
            name.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
            pal = name.palette()
            pal.setColor(pal.ColorRole.WindowText, muted_text(pal))
            name.setPalette(pal)
            self.form.addRow(name, value)
            self._rows.append((name, value))
        for i, (name, value) in enumerate(self._rows):
            visible = i < len(rows)
            if visible:
                name.setText(rows[i][0])
                value.setText(rows[i][1])
            self.form.setRowVisible(i, visible)
        self.setVisible(bool(rows) or self.body.count() > 2)

    def values(self) -> dict[str, str]:
        """Visible rows as {label: plain text} (for tests and copying)."""
        return {name.text(): _plain(value.text())
                for i, (name, value) in enumerate(self._rows) if self.form.isRowVisible(i)}


def _plain(rich: str) -> str:
    return QTextDocumentFragment.fromHtml(rich).toPlainText()


class MetadataPanel(QWidget):
    """Everything known about a checkpoint and its run. ``show_snapshot``; ``show_diagnosis``;
    ``set_store`` (optional) lets it look up the previous checkpoint for the time gap and
    whether the checkpoint is pinned (with its note); given the window's ``session``, that
    pin is read again whenever the store is written (a pin made by another process)."""

    def __init__(self, parent: QWidget | None = None, session: StoreSession | None = None) -> None:
        super().__init__(parent)
        self._store: Store | None = None
        self._snapshot: Snapshot | None = None
        self._run: RunInfo | None = None
        self._effective: tuple[str, EffectiveStatus] | None = None   # (run id, what the runs list shows)
        self._diagnosis_text: str | None = None
        self._lookup_job = LatestJob(self)
        self._lookup_job.finished.connect(self._on_lookup_finished)
        self._pin_job = LatestJob(self)
        self._pin_job.finished.connect(self._on_pin_read)
        if session is not None:
            session.written.connect(self._on_store_written)
        self._found: dict[str, Any] = {}
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.diagnosis = QLabel(self)
        self.diagnosis.setWordWrap(True)
        self.diagnosis.setTextFormat(Qt.TextFormat.RichText)
        self.diagnosis.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.diagnosis.setMargin(8)
        self.diagnosis.setAutoFillBackground(True)
        self.diagnosis.hide()
        self.checkpoint = Section("Checkpoint", self)
        self.sizes = Section("Size and replay cost", self)
        self.run = Section("Run", self)
        self.resume = Section("Resume spec", self)
        self.resume_text = QPlainTextEdit(self)
        self.resume_text.setReadOnly(True)
        self.resume_text.setFont(mono)
        self.resume_text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.resume.body.addWidget(self.resume_text)
        self.lineage = Section("Lineage", self)
        self.labels = Section("Labels", self)
        self.error = Section("Last error", self)
        self.error_text = QLabel(self)
        self.error_text.setTextFormat(Qt.TextFormat.PlainText)   # the agent's error text, never markup
        self.error_text.setWordWrap(True)
        self.error_text.setFont(mono)
        self.error_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_text.setContentsMargins(12, 0, 0, 0)
        self.error.body.addWidget(self.error_text)
        self.meta = Section("Checkpoint metadata", self)
        self.meta_model = StateTreeModel(self)
        self.meta_model.set_dark(is_dark(self.palette()))
        self.meta_tree = self._make_meta_tree()
        self.meta.body.addWidget(self.meta_tree)
        self._build_layout()
        self.show_snapshot(None, None)

    def _make_meta_tree(self) -> QTreeView:
        tree = QTreeView(self)
        tree.setModel(self.meta_model)
        tree.setUniformRowHeights(True)
        tree.setAlternatingRowColors(True)
        tree.setColumnHidden(3, True)
        header = tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(KEY, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(VALUE, QHeaderView.ResizeMode.Stretch)
        header.resizeSection(KEY, 180)
        header.resizeSection(TYPE, 90)
        return tree

    def _build_layout(self) -> None:
        inner = QWidget()
        column = QVBoxLayout(inner)
        column.setContentsMargins(10, 8, 10, 10)
        column.setSpacing(2)
        for widget in (self.diagnosis, self.checkpoint, self.sizes, self.run, self.resume,
                       self.lineage, self.labels, self.error, self.meta):
            column.addWidget(widget)
        column.addStretch(1)
        scroll = QScrollArea(self)
        scroll.setWidget(inner)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        # without a checkpoint, its sentence alone, in the middle (as the other tabs show it)
        self._pages = EmptyState.filling(self, scroll, NO_CHECKPOINT_TEXT)
        self.empty = self._pages.label

    # -- public API ----------------------------------------------------------------
    def set_store(self, store: Store | None) -> None:
        """The store snapshots come from (used to look up the previous checkpoint's time)."""
        self._store = store

    def show_snapshot(self, snapshot: Snapshot | None, run: RunInfo | None) -> None:
        """Describe a checkpoint and its run (None clears)."""
        self._snapshot, self._run = snapshot, run
        self._found = {}
        self._pick_page()
        for section in (self.checkpoint, self.sizes, self.run, self.resume, self.lineage, self.labels,
                        self.error, self.meta):
            section.setVisible(snapshot is not None)
        if snapshot is None:
            self._lookup_job.cancel()
            self.meta_model.set_value({})
            return
        self._fill(snapshot, run)
        self._look_up(snapshot.info, run)

    def update_run(self, run: RunInfo) -> None:
        """A newer RunInfo of the shown run (live): status, owner, counts and error follow it."""
        if self._snapshot is None or self._run is None or run.id != self._run.id:
            return
        self._run = run
        self.run.set_rows(self._run_rows(run))
        self._show_error(run)

    def _show_error(self, run: RunInfo | None) -> None:
        """The run's last error, or for an interrupted run the reason its agent stopped it
        (waiting for a human…), which is not an error: titled and coloured as such."""
        text = run.last_error if run else None
        self.error.setVisible(bool(text))
        if not run or not text:
            self.error_text.setText("")
            return
        interrupted = run.status == "interrupted"
        self.error.title.setText("<b>Why it stopped</b>" if interrupted else "<b>Last error</b>")
        self.error_text.setText(visible(text, lines=True))
        self.error_text.setStyleSheet("" if interrupted else f"color: {accent(self.palette(), '#cf222e').name()}")

    def show_status(self, run_id: str | None, status: EffectiveStatus | None) -> None:
        """The effective status of run ``run_id`` (crashed, stuck… as the runs list shows it), live.

        The Status row shows it, with its reason and the stored status when they differ."""
        self._effective = (run_id, status) if run_id and status else None
        if self._diagnosis_text:
            self.show_diagnosis(self._diagnosis_text)
        if self._snapshot is not None and self._run is not None and self._run.id == run_id:
            self.run.set_rows(self._run_rows(self._run))

    def _pick_page(self) -> None:
        """The sections, or without a checkpoint (and a diagnosis to show) the sentence alone."""
        self._pages.show_body(self._snapshot is not None or bool(self._diagnosis_text))

    def show_diagnosis(self, text: str | None) -> None:
        """Show (or hide, with None) a stuck diagnosis at the top of the panel."""
        if not text:
            self._diagnosis_text = None
            self.diagnosis.hide()
            self._pick_page()
            return
        self._diagnosis_text = text
        self._pick_page()
        status = self._effective[1].status if self._effective else ""
        crashed = status == "crashed" or text.startswith("crashed")
        pal = self.diagnosis.palette()
        pal.setColor(pal.ColorRole.Window, tint(self.palette(), "#cf222e" if crashed else "#bf8700", 0.18))
        self.diagnosis.setPalette(pal)
        title = "Crash diagnosis" if crashed else "Stuck diagnosis"
        self.diagnosis.setText(f"<b>{title}</b><br>{html.escape(visible(text, lines=True)).replace(chr(10), '<br>')}")
        self.diagnosis.show()

    # -- filling -------------------------------------------------------------------
    def changeEvent(self, event: QEvent) -> None:  # Qt override: a theme switch redraws what has colours
        super().changeEvent(event)
        if theme_changed(self, event):
            self.meta_model.set_dark(is_dark(self.palette()))
            QTimer.singleShot(0, self._recolour)     # once the children have the new palette too

    def _recolour(self) -> None:
        if self._snapshot is not None:     # the kind chip, the muted ids, the error's red
            self.checkpoint.set_rows(self._checkpoint_rows(self._snapshot.info, self._run))
            self.run.set_rows(self._run_rows(self._run) if self._run else [])
            self._show_error(self._run)

    def _fill(self, snapshot: Snapshot, run: RunInfo | None) -> None:
        self.setUpdatesEnabled(False)
        try:
            info = snapshot.info
            self.checkpoint.set_rows(self._checkpoint_rows(info, run))
            self.sizes.set_rows(self._size_rows(info))
            self.run.set_rows(self._run_rows(run) if run else [])
            spec = resume_text(run.resume_spec if run else None)
            self.resume_text.setPlainText(spec)
            lines = min(spec.count("\n") + 1, RESUME_MAX_LINES)
            self.resume_text.setFixedHeight(lines * self.resume_text.fontMetrics().lineSpacing() + 28)
            self.resume.setVisible(bool(spec))
            self.lineage.set_rows(self._lineage_rows(run, snapshot.meta) if run else [])
            self.labels.set_rows([(visible_html(str(k)), visible_html(preview(v)))
                                  for k, v in sorted((run.labels if run else {}).items())])
            self._show_error(run)
            self.meta_model.set_value(dict(snapshot.meta or {}))
            self._expand_small_meta()
            self._fit_meta_tree()
            self.meta.setVisible(True)
        finally:
            self.setUpdatesEnabled(True)

    def _expand_small_meta(self) -> None:
        model = self.meta_model
        for row in range(model.rowCount()):
            index = model.index(row, 0)
            if 0 < model.node(index).total <= META_EXPAND_AT_MOST:
                self.meta_tree.expand(index)

    def _fit_meta_tree(self) -> None:
        """Make the meta tree as tall as its shown rows (within limits), so the panel scrolls
        as one page instead of nesting a small scrolled tree."""
        model, tree = self.meta_model, self.meta_tree
        rows = model.rowCount()
        for row in range(model.rowCount()):
            index = model.index(row, 0)
            if tree.isExpanded(index):
                rows += model.rowCount(index)
        row_height = tree.sizeHintForRow(0) if rows else 0
        height = tree.header().sizeHint().height() + rows * max(row_height, 1) + 2 * tree.frameWidth() + 4
        tree.setFixedHeight(max(META_MIN_HEIGHT, min(height, META_MAX_HEIGHT)))

    def _muted(self, text: str) -> str:
        return f"<span style='color:{muted_text(self.palette()).name()}'>{visible_html(text)}</span>"

    def _checkpoint_rows(self, info: CheckpointInfo, run: RunInfo | None) -> list[Row]:
        name = run.name if run and run.name else info.run_id
        run_text = visible_html(name) + (" " + self._muted(info.run_id) if name != info.run_id else "")
        rows = [("Run", run_text),
                ("Checkpoint", f"<b>#{info.seq}</b> " + self._muted(f"id {info.id}")),
                ("Kind", kind_chip(self.checkpoint.title, info.kind)),
                ("Name", visible_html(info.name)),
                ("Created", fmt_time(info.created)),
                ("Gap", self._gap_text(info))]
        if info.lane:
            rows.insert(2, ("Lane", visible_html(info.lane)))
        if info.change:
            rows.append(("Change", visible_html(info.change)))
        if info.branch_count:
            rows.append(("Branches", f"{plural(info.branch_count, 'fork')} start{'s' if info.branch_count == 1 else ''} here"))
        note = self._found.get("pin")
        if isinstance(note, str):
            rows.append(("Pinned", "yes " + self._muted("(prune never removes it)")))
            if note:
                rows.append(("Pin note", visible_html(note)))
        return rows

    def _gap_text(self, info: CheckpointInfo) -> str:
        if info.parent_id is None:
            return self._muted("first checkpoint")
        if "previous" not in self._found or not info.created or not self._found["previous"]:
            return self._muted("—")     # (or one of the two times is unknown: 0)
        return f"{fmt_age(info.created - self._found['previous'])} after the previous checkpoint"

    def _foreign_store(self) -> StoreInfo | None:
        """The open store when another framework wrote it (a LangGraph database…): its runs
        have no owner process, heartbeat or ownership epoch, and record no replay count."""
        info = self._store.info if self._store is not None else None
        return info if info is not None and info.kind != "native" else None

    def _size_rows(self, info: CheckpointInfo) -> list[Row]:
        ops = info.ops
        foreign = self._foreign_store()
        replay = foreign is None
        self.sizes.title.setText("<b>Size and replay cost</b>" if replay else "<b>Size</b>")
        return [("State size", fmt_bytes(info.size)),
                ("Size change", self._change_text(info)),
                *([("Stored", self._stored_text(foreign.kind, info))]
                  if foreign is not None and foreign.kind != "langgraph" else []),
                *([("Replay cost", f"{ops} operation{'s' if ops != 1 else ''} since the previous snapshot")]
                  if replay else []),
                ("Score", f"checks {info.checks_passed}/{info.checks_total} · "
                          f"tasks {info.tasks_done}/{info.tasks_total}")]

    def _change_text(self, info: CheckpointInfo) -> str:
        """``size_delta``: the state's size less the one before it, not bytes written (a state
        stored by content writes only its new pieces; a shrinking state writes something too)."""
        if info.seq == 0 and info.size_delta == info.size:
            return self._muted("none: the run's first checkpoint")
        delta = info.size_delta
        if delta == 0:
            return "0 B " + self._muted("the state is as large as at the checkpoint before")
        sign, than = ("+", "larger") if delta > 0 else ("\u2212", "smaller")
        return f"{sign}{fmt_bytes(abs(delta))} " + self._muted(f"the state is {than} than at the checkpoint before")

    def _stored_text(self, kind: str, info: CheckpointInfo) -> str:
        """What a session store kept for this checkpoint (as its Storage view counts it)."""
        from inspector.usage.frameworks import LOG_KINDS, stored_by   # (the usage report: not at start-up)

        stored = fmt_bytes(stored_by(kind, info))
        if kind not in LOG_KINDS:
            return f"{stored} " + self._muted("a whole snapshot of the state, kept for this checkpoint")
        if info.kind == "fork":
            return f"{stored} " + self._muted("a branch's first checkpoint names the items it shares with its origin")
        return f"{stored} " + self._muted("the items this checkpoint added to the session")

    def _owner_rows(self, run: RunInfo) -> list[Row]:
        """Owner and heartbeat, or for another framework's run that no process owns, that alone."""
        foreign = self._foreign_store()
        if foreign is not None and run.owner_pid is None and run.heartbeat is None:
            return [("Owner", "no owner process " + self._muted(f"({_unowned(foreign.kind, run)})"))]
        owner = " · ".join(p for p in (run.owner_host and f"host {run.owner_host}",
                                       run.owner_pid and f"pid {run.owner_pid}",
                                       f"epoch {run.epoch}") if p)
        if run.owner_pid is None and not run.owner_host:
            owner = f"no process · {owner}"
        heartbeat = (f"{fmt_time(run.heartbeat)} " + self._muted(f"({fmt_age(time.time() - run.heartbeat)} ago)")
                     if run.heartbeat else self._muted("never"))
        return [("Owner", visible_html(owner)), ("Heartbeat", heartbeat)]

    def _run_rows(self, run: RunInfo) -> list[Row]:
        rows = [("Status", self._status_text(run)), ("Agent", visible_html(run.agent or "—")),
                *self._owner_rows(run),
                ("Started", fmt_time(run.created)), ("Updated", fmt_time(run.updated)),
                ("Checkpoints", str(run.checkpoint_count))]
        if not run.resumable:
            rows.append(("Resumable", "no — " + visible_html(run.not_resumable_reason or "")))
        return rows

    def _status_text(self, run: RunInfo) -> str:
        effective = self._effective[1] if self._effective and self._effective[0] == run.id else None
        if effective is None or effective.status == run.status:
            return visible_html(run.status)
        hue = {"crashed": "#cf222e", "stuck": "#bf8700"}.get(effective.status)
        shown = visible_html(effective.status)
        if hue:
            shown = f"<b style='color:{accent(self.palette(), hue).name()}'>{shown}</b>"
        reason = f" \u2014 {visible_html(effective.reason)}" if effective.reason else ""
        return f"{shown}{reason} " + self._muted(f"(stored status: {run.status})")

    def _lineage_rows(self, run: RunInfo, meta: dict[str, Any]) -> list[Row]:
        if not run.parent_run:
            return [("Parent", self._muted("none (an original run)"))]
        parent_name = self._found.get("parent_run_name")
        run_text = visible_html(parent_name) + " " + self._muted(run.parent_run) if parent_name \
            else visible_html(run.parent_run)
        seq = self._found.get("parent_seq")
        if seq is None and meta.get("source_checkpoint") == run.parent_checkpoint:
            seq = meta.get("source_seq")
        point = f"<b>#{seq}</b> " + self._muted(f"id {run.parent_checkpoint}") if seq is not None \
            else visible_html(str(run.parent_checkpoint))
        rows = [("Parent run", run_text), ("Parent checkpoint", point)]
        if run.fork_reason:
            rows.append(("Fork reason", visible_html(run.fork_reason)))
        return rows

    # -- background look-ups ----------------------------------------------------------
    def _look_up(self, info: CheckpointInfo, run: RunInfo | None) -> None:
        store = self._store
        parent_run = run.parent_run if run is not None else None
        parent_checkpoint = run.parent_checkpoint if run is not None else None
        wants_parent = parent_run is not None
        pin_notes = getattr(store, "pin_notes", None)     # (a native store's: others keep no pins)
        if store is None or (info.parent_id is None and not wants_parent and pin_notes is None):
            self._lookup_job.cancel()
            return

        def job(_ctx: object) -> tuple[CheckpointInfo, dict[str, Any]]:
            found: dict[str, Any] = {}
            if pin_notes is not None:
                found["pin"] = pin_notes(info.run_id).get(info.id)
            if info.parent_id is not None:
                found["previous"] = store.get_checkpoint(info.parent_id).created
            if parent_run is not None:
                found["parent_run_name"] = store.get_run(parent_run).name
                if parent_checkpoint is not None:
                    found["parent_seq"] = store.get_checkpoint(parent_checkpoint).seq
            return info, found

        self._lookup_job.submit(job)

    def _on_lookup_finished(self, result: tuple[CheckpointInfo, dict[str, Any]]) -> None:
        info, found = result
        if self._snapshot is None or self._snapshot.info != info:
            return
        self._found = found
        self.checkpoint.set_rows(self._checkpoint_rows(info, self._run))
        if self._run is not None:
            self.lineage.set_rows(self._lineage_rows(self._run, self._snapshot.meta))


    def _on_store_written(self) -> None:
        """The store was written: the checkpoint shown may have been pinned or unpinned by
        another process (a pin changes nothing else), so its pin is read again."""
        snapshot, store = self._snapshot, self._store
        pin_notes = getattr(store, "pin_notes", None)
        if snapshot is None or pin_notes is None:
            return
        info = snapshot.info
        self._pin_job.submit(lambda _ctx: (info, pin_notes(info.run_id).get(info.id)))

    def _on_pin_read(self, result: tuple[CheckpointInfo, str | None]) -> None:
        info, note = result
        if self._snapshot is None or self._snapshot.info != info or self._found.get("pin", False) == note:
            return
        self._found["pin"] = note
        self.checkpoint.set_rows(self._checkpoint_rows(info, self._run))


def _unowned(kind: str, run: RunInfo) -> str:
    """What a run of another framework's store is, which no process owns ("a CrewAI flow")."""
    if kind == "crewai":
        return "a CrewAI flow" if "flow" in run.labels else "a CrewAI checkpoint branch"
    return {"langgraph": "a LangGraph database's thread", "openai-agents": "an OpenAI Agents session",
            "google-adk": "a Google ADK session"}.get(kind, f"a run of a {kind} store")
