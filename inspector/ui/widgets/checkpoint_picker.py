"""Pick a checkpoint of any run: search by run (name, id prefix), seq (#N, RUN:SEQ) or step name."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.ui.availability import set_available
from inspector.errors import StoreError
from inspector.model import CheckpointInfo, RunInfo
from inspector.store.base import Store
from inspector.store.refs import resolve_checkpoint
from inspector.ui.formatting import step_label, visible
from inspector.ui.tasks import JobContext, LatestJob
from inspector.ui.widgets.sizing import fit_to_screen

RUN_LIMIT = 20          # runs searched by name
LISTED = 500            # checkpoints of one run listed at most (a seq finds any other)
SEARCH_DELAY_MS = 150


@dataclass(frozen=True)
class Found:
    """What a search found: checkpoints (best first) and the names of their runs."""

    checkpoints: tuple[CheckpointInfo, ...]
    run_names: dict[str, str]


def search(store: Store, text: str, run: RunInfo | None, ctx: JobContext | None = None) -> Found:
    """Checkpoints matching ``text`` (in a worker): an exact reference first, then by name."""
    text = text.strip()
    found: list[CheckpointInfo] = []
    names = {run.id: run.name} if run is not None else {}
    exact = _exact(store, text, run)
    if exact is not None:
        found.append(exact)
    if run is not None:
        needle = text.lstrip("#").casefold()
        for cp in store.list_checkpoints(run.id, limit=LISTED):
            if not needle or needle in cp.name.casefold() or needle == str(cp.seq) or needle in cp.kind:
                found.append(cp)
    if text and not text.lstrip("#-").isdigit():
        for other in store.list_runs(text=text, limit=RUN_LIMIT):
            if ctx is not None:
                ctx.check()
            if run is not None and other.id == run.id:
                continue
            names[other.id] = other.name
            found += store.list_checkpoints(other.id, after_seq=max(-1, other.head_seq - 50))[::-1]
    for cp in found:
        if cp.run_id not in names:
            names[cp.run_id] = store.get_run(cp.run_id).name
    unique = list({(cp.run_id, cp.seq): cp for cp in found}.values())
    return Found(tuple(unique), names)


def _exact(store: Store, text: str, run: RunInfo | None) -> CheckpointInfo | None:
    if not text:
        return None
    ref = f"{run.id}:{text.lstrip('#')}" if run is not None and text.lstrip("#-").isdigit() else text
    try:
        return resolve_checkpoint(store, ref)
    except StoreError:
        return None


def describe(cp: CheckpointInfo, run_names: dict[str, str]) -> str:
    """One list line: run name, #seq, kind and name."""
    return f"{run_names.get(cp.run_id, cp.run_id)}  \u00b7  #{cp.seq}  {step_label(cp.kind, cp.name)}"

PICK_FIRST = "select a checkpoint in the list first (type to search by run, #seq or step name)."


class CheckpointPicker(QDialog):
    """Search and pick a checkpoint; ``chosen(CheckpointInfo)`` on OK or double-click."""

    chosen = Signal(object)
    searched = Signal(int)      # results shown (tests wait on it)

    def __init__(self, store: Store, run: RunInfo | None, parent: QWidget | None = None,
                 title: str = "Compare With") -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setSizeGripEnabled(True)
        self._store, self._run = store, run
        self.query = QLineEdit(self)
        self.query.setPlaceholderText("Search: #seq, step name, run name or id, RUN:SEQ")
        self.query.setClearButtonEnabled(True)
        self.results = QListWidget(self)
        self.results.setObjectName("pickerResults")
        self.results.setUniformItemSizes(True)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Compare")
        buttons.accepted.connect(self._accept_current)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.query)
        layout.addWidget(self.results, 1)
        layout.addWidget(self.status)
        layout.addWidget(buttons)
        fit_to_screen(self, 620, 480)
        self._job = LatestJob(self)
        self._job.finished.connect(self._on_found)
        self._job.failed.connect(lambda err: self.status.setText(str(err)))
        self._timer = QTimer(self, singleShot=True, interval=SEARCH_DELAY_MS)
        self._timer.timeout.connect(self._search)
        self.query.textChanged.connect(lambda _t: self._timer.start())
        self.query.returnPressed.connect(self._accept_current)
        self.results.itemDoubleClicked.connect(lambda _i: self._accept_current())
        self.results.currentRowChanged.connect(
            lambda row: set_available(self.ok_button, row >= 0, PICK_FIRST))
        set_available(self.ok_button, False, PICK_FIRST)
        self._search()

    def _search(self) -> None:
        store, run, text = self._store, self._run, self.query.text()
        self.status.setText("Searching\u2026")
        self._job.submit(lambda ctx: search(store, text, run, ctx))

    def _on_found(self, found: Found) -> None:
        self.results.clear()
        for cp in found.checkpoints:
            item = QListWidgetItem(visible(describe(cp, found.run_names)))
            item.setData(Qt.ItemDataRole.UserRole, cp)
            item.setToolTip(f"{cp.run_id}:{cp.seq}")
            self.results.addItem(item)
        if found.checkpoints:
            self.results.setCurrentRow(0)
        self.status.setText(f"{len(found.checkpoints):,} found" if found.checkpoints else "Nothing matches.")
        self.searched.emit(len(found.checkpoints))

    def _accept_current(self) -> None:
        item = self.results.currentItem()
        if item is None:
            return
        self.chosen.emit(item.data(Qt.ItemDataRole.UserRole))
        self.accept()
