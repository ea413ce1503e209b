"""Prune…: rules, a preview of what would go (a dry run), and a confirmed apply — all off the GUI thread."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.ui.availability import set_available
from inspector.errors import StoreError
from inspector.humanize import fmt_size, plural
from inspector.model import StoreInfo
from inspector.record.summary import summarize
from inspector.resume.status import effective_statuses
from inspector.retention.rules import RENUMBERED, PrunePlan, make_rules
from inspector.ui import style
from inspector.ui.formatting import elide_middle, visible
from inspector.ui.tasks import TaskRunner

# every status `prune --status` takes, as the runs list shows them (a dead agent's run is crashed)
STATUSES = ("completed", "failed", "crashed", "interrupted", "forked", "stuck", "running")
CHECKED = ("completed", "failed", "crashed")    # finished runs: a crashed one is pruned as one (head kept)


def target_of(info: StoreInfo) -> str:
    """What the core opens for writing: the file, or the server URL."""
    return info.display if info.backend == "sqlite" else info.url

RUN_NAME_CHARS = 48   # a long run name is shortened in the middle
PREVIEW_FIRST = "press Preview first: Prune removes exactly what the preview listed."
PRUNING = "pruning now; wait for it to finish."
KEEP_ALL = 2 ** 62    # --keep-last beyond any run's length: a prune that removes no checkpoint
# what the CLI's summary says after a prune without --vacuum, said for the dialog
NOT_SHRUNK = ("The file does not shrink: the freed pages stay in it and the store reuses them for new "
              "checkpoints; only VACUUM gives them back to the disk. Until then its WAL file (-wal) may "
              "grow as well, since the prune writes its deletions through it.")


def only_run_text(run_id: str | None, name: str | None) -> str:
    """The "only this run" choice, naming the run (its id too when the name is not it)."""
    if not run_id:
        return "Only the selected run"
    if not name or name == run_id:
        return f"Only run {visible(run_id)}"
    return f"Only run \u201c{visible(elide_middle(name, RUN_NAME_CHARS))}\u201d ({visible(run_id)})"


class PruneDialog(QDialog):
    """Pick rules, Preview (dry run), then Prune (asks once more) — see ``inspector.retention``."""

    pruned = Signal(object)   # PrunePlan of what was applied

    def __init__(self, info: StoreInfo, runner: TaskRunner, run_id: str | None = None,
                 parent: QWidget | None = None, *, run_name: str | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Prune Checkpoints")
        self.info = info
        self.runner = runner
        self.plan: PrunePlan | None = None
        self._plan_rules: Any = None    # the rules the preview used (its cutoff time among them)
        self.keep_box = QCheckBox("Keep the last")
        self.keep_box.setChecked(True)
        self.keep = QSpinBox()
        self.keep.setRange(1, 1_000_000)
        self.keep.setValue(10)
        self.keep.setSuffix(" checkpoints of each run")
        self.older_box = QCheckBox("Only older than")
        self.older = QLineEdit("30d")
        self.older.setPlaceholderText("90s, 15m, 12h, 30d, 2w, 1d12h")
        self.run_box = QCheckBox(only_run_text(run_id, run_name))
        set_available(self.run_box, run_id is not None, "select a run in the list before opening Prune… "
                                                        "to limit pruning to it.")
        self.run_id = run_id
        self.status_boxes = {s: QCheckBox(s) for s in STATUSES}
        for s in CHECKED:
            self.status_boxes[s].setChecked(True)
        for s in ("stuck", "running"):
            self.status_boxes[s].setToolTip(f"a {s} run's agent may still be at work: none of its checkpoints "
                                            "is removed (a run whose agent died shows as crashed)")
        self.vacuum = QCheckBox("Give the space back to the operating system (VACUUM)")
        self.unlock = QCheckBox("Allow deleting rows LangGraph wrote (SQLite: a backup is made first; "
                                "PostgreSQL: one transaction)")
        self.unlock.setVisible(info.kind == "langgraph")
        self.summary = QLabel("Preview shows what would go; nothing changes until you press Prune.")
        self.summary.setWordWrap(True)
        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["Run", "Name", "Status", "Remove", "Keep"])
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.preview_button = QPushButton("Preview")
        self.vacuum_button = QPushButton("Vacuum Now\u2026")     # offered after a prune without VACUUM
        self.vacuum_button.setToolTip("Give the space the prune freed back to the disk (VACUUM rewrites the file)")
        self.vacuum_button.hide()
        self._vacuumed = False      # whether the last prune ran VACUUM
        self._vacuum_only = False   # ... and was Vacuum Now (it removes no checkpoint)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.apply_button = self.buttons.addButton("Prune", QDialogButtonBox.ButtonRole.DestructiveRole)
        set_available(self.apply_button, False, PREVIEW_FIRST)
        self._build()
        self.preview_button.clicked.connect(self.preview)
        self.apply_button.clicked.connect(self.confirm_and_apply)
        self.vacuum_button.clicked.connect(self.confirm_and_vacuum)
        self.buttons.rejected.connect(self.reject)
        for widget in (self.keep_box, self.older_box, self.run_box, *self.status_boxes.values()):
            widget.toggled.connect(self._rules_changed)
        self.keep.valueChanged.connect(self._rules_changed)
        self.older.textChanged.connect(self._rules_changed)
        self.resize(720, 520)

    def _build(self) -> None:
        form = QFormLayout()
        keep = QHBoxLayout()
        keep.addWidget(self.keep_box)
        keep.addWidget(self.keep, 1)
        older = QHBoxLayout()
        older.addWidget(self.older_box)
        older.addWidget(self.older, 1)
        statuses = QHBoxLayout()
        for box in self.status_boxes.values():
            statuses.addWidget(box)
        statuses.addStretch(1)
        form.addRow(keep)
        form.addRow(older)
        form.addRow("Runs with status:", statuses)
        form.addRow(self.run_box)
        form.addRow(self.vacuum)
        form.addRow(self.unlock)
        note = style.mute(QLabel("Never removed: each run's head, pinned checkpoints, every checkpoint a fork "
                                 "starts from and its ancestors, and anything of a running or stuck run (its agent may "
                                 "still be at work). A crashed run (its agent died) is pruned as a finished "
                                 "one, its head kept."))
        note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        row = QHBoxLayout()
        row.addWidget(self.summary, 1)
        buttons = QVBoxLayout()
        buttons.addWidget(self.preview_button)
        buttons.addWidget(self.vacuum_button)
        buttons.addStretch(1)
        row.addLayout(buttons)
        layout.addLayout(row)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.buttons)

    # -- rules ------------------------------------------------------------------------------
    def rules(self) -> Any:
        """The rules the form describes (StoreError when they make no sense)."""
        statuses = [s for s, box in self.status_boxes.items() if box.isChecked()]
        return make_rules(keep_last=self.keep.value() if self.keep_box.isChecked() else None,
                          older_than=self.older.text() if self.older_box.isChecked() else None,
                          runs=[self.run_id] if self.run_box.isChecked() and self.run_id else [],
                          statuses=statuses)

    def _rules_changed(self, *_args: Any) -> None:
        self.plan = None
        set_available(self.apply_button, False, "the rules changed; press Preview again to see what would go.")

    # -- preview and apply ---------------------------------------------------------------------
    def preview(self) -> None:
        """Run the dry run in the background and list what would go."""
        try:
            rules = self.rules()
        except StoreError as err:
            self._say(str(err), error=True)
            return
        from inspector.retention.api import plan_prune
        target = target_of(self.info)
        set_available(self.preview_button, False, "working out what would go; the list comes in a moment.")
        self._say("Working out what would go \u2026")
        self.runner.run(lambda: (plan_prune(target, rules, diagnose=effective_statuses, ids=True), rules),
                        self._on_plan, self._on_failed, key="prune-preview")

    def _on_plan(self, planned: tuple[PrunePlan, Any]) -> None:
        set_available(self.preview_button, True)
        plan, self._plan_rules = planned
        self.plan = plan
        self._show(plan)
        set_available(self.apply_button, plan.remove_checkpoints > 0,
                      "these rules remove nothing; keep fewer checkpoints or widen the rules, then Preview.")

    def _show(self, plan: PrunePlan) -> None:
        if plan.applied and self._vacuum_only:      # (the table keeps what the prune removed)
            backup = f" Backup: {html.escape(plan.backup)}" if plan.backup else ""
            self._say(f"Vacuumed: on disk {fmt_size(plan.disk_before)} \u2192 {fmt_size(plan.disk_after)}.{backup}")
            return
        self.table.setRowCount(len(plan.runs))
        for n, r in enumerate(plan.runs):
            for c, value in enumerate((r.run, r.name, r.status, f"{r.remove:,}", f"{r.keep:,}")):
                item = QTableWidgetItem(value)
                if c >= 3:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(n, c, item)
        verb = "Removed" if plan.applied else "Would remove"
        kept = ", ".join(f"{v:,} {k}" for k, v in plan.protected.items() if v)
        text = (f"{verb} <b>{plan.remove_checkpoints:,}</b> of {plural(plan.total_checkpoints, 'checkpoint')} in "
                f"{plural(len(plan.runs), 'run')}, freeing about <b>{fmt_size(plan.bytes)}</b>")
        if kept:
            text += f"; kept although selected: {kept}"
        if plan.applied:
            before, after, wal = plan.on_disk()     # the file, then its log apart (see PrunePlan.on_disk)
            log = "" if not wal and not plan.wal_before else (
                f" (and a {fmt_size(wal)} write-ahead log until SQLite folds it into the file: every writer's "
                "changes meanwhile, this prune's among them)" if not plan.wal_before else
                f" (and a write-ahead log until SQLite folds it into the file: {fmt_size(plan.wal_before)} before, "
                f"{fmt_size(wal)} after, every writer's changes, this prune's among them)")
            text += f". On disk {fmt_size(before)} \u2192 {fmt_size(after)}{log}."
            if plan.backup:
                text += f" Backup: {html.escape(plan.backup)}"
            if plan.remove_checkpoints:
                text += f"<br>{RENUMBERED}"
            if not self._vacuumed and self.info.backend == "sqlite":
                text += f"<br>{NOT_SHRUNK}"
        text += "" if plan.applied else "."
        if plan.notes:
            notes = " ".join(html.escape(n) for n in plan.notes)
            text += f"<br><span style='color:{style.theme().muted}'>{notes}</span>"
        self._say(text)

    def confirm_and_apply(self) -> None:
        """Ask once more, then prune in the background."""
        if self.plan is None:
            return
        if self.info.kind == "langgraph" and not self.unlock.isChecked():
            self._say("Tick \u201cAllow deleting rows LangGraph wrote\u201d to prune a LangGraph database.", error=True)
            return
        answer = QMessageBox.question(
            self, "Prune Checkpoints",
            f"Delete {plural(self.plan.remove_checkpoints, 'checkpoint')} from {self.info.display}?\n"
            "This cannot be undone.", QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel)
        if answer == QMessageBox.StandardButton.Yes:
            self.apply()

    def apply(self) -> None:
        """Prune what the preview listed, now (no question asked: ``confirm_and_apply`` asks):
        the preview's own rules, and none of the checkpoints it did not list, however the store
        changed since (a run that finished meanwhile keeps its checkpoints; the summary says so)."""
        if self.plan is None:
            return
        self._vacuum_only = False
        self._run_prune(self._plan_rules, self.vacuum.isChecked(), "Pruning \u2026", preview=self.plan)

    def confirm_and_vacuum(self) -> None:
        """Ask, then VACUUM: the prune ``--vacuum`` runs, with rules that keep every checkpoint
        (as ``prune --keep-last`` beyond any run's length does on the command line)."""
        if self.info.kind == "langgraph" and not self.unlock.isChecked():
            self._say("Tick \u201cAllow deleting rows LangGraph wrote\u201d to vacuum a LangGraph database.", error=True)
            return
        backup = (" A backup copy of the file is made first, as for the prune."
                  if self.info.kind == "langgraph" and self.info.backend == "sqlite" else "")
        answer = QMessageBox.question(
            self, "Vacuum",
            f"Give the freed space of {self.info.display} back to the disk?\n\nVACUUM rewrites the whole "
            "store: it needs free disk space as large as the store, and agents writing to it wait until it "
            f"ends.{backup}", QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel)
        if answer == QMessageBox.StandardButton.Yes:
            self.vacuum_now()

    def vacuum_now(self) -> None:
        """VACUUM now (no question asked: ``confirm_and_vacuum`` asks); removes no checkpoint."""
        self._vacuum_only = True
        self._run_prune(make_rules(keep_last=KEEP_ALL), True, "Vacuuming \u2026")

    def _run_prune(self, rules: Any, vacuum: bool, saying: str, preview: PrunePlan | None = None) -> None:
        from inspector.retention.api import apply_prune
        target, unlock = target_of(self.info), self.unlock.isChecked()
        for button in (self.apply_button, self.preview_button, self.vacuum_button):
            set_available(button, False, PRUNING)
        self._vacuumed = vacuum
        self._say(saying)
        self.runner.run(lambda: apply_prune(target, rules, vacuum=vacuum, langgraph_write=unlock,
                                            diagnose=effective_statuses, describe=summarize, preview=preview),
                        self._on_applied, self._on_failed, key="prune-apply")

    def _on_applied(self, plan: PrunePlan) -> None:
        set_available(self.preview_button, True)
        set_available(self.apply_button, False, "pruned; press Preview to see what the rules would remove now.")
        set_available(self.vacuum_button, True)
        self.vacuum_button.setVisible(not self._vacuumed)
        self.plan = None
        self._show(plan)
        self.pruned.emit(plan)

    def _on_failed(self, message: str) -> None:
        set_available(self.preview_button, True)
        set_available(self.vacuum_button, True)
        self._say(message, error=True)

    def _say(self, text: str, error: bool = False) -> None:
        color = style.theme().negative if error else style.theme().text
        self.summary.setText(f"<span style='color:{color}'>{text}</span>")
