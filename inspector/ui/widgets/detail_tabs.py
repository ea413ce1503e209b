"""Detail tabs (State, Tasks, Metadata, Diff) for the selected checkpoint; loads snapshots off-thread.

The panels live in their own modules (``state_panel``, ``tasks_panel``, ``metadata_panel``,
``diff_panel``); each is a QWidget with ``show_snapshot(snapshot, run)``. A module that is
not there yet is replaced by a placeholder, so the shell works on its own.
"""

from __future__ import annotations

import importlib
import inspect
import logging
from typing import Any, Protocol, runtime_checkable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget

from inspector.model import CheckpointInfo, RunInfo, Snapshot
from inspector.ui import style
from inspector.ui.session import StoreSession
from inspector.ui.startup import Startup

log = logging.getLogger(__name__)

TABS = (("state", "State", "state_panel"), ("tasks", "Tasks", "tasks_panel"),
        ("metadata", "Metadata", "metadata_panel"), ("diff", "Diff", "diff_panel"))
LOAD_DELAY_MS = 40   # the selection changes of a fast scrub (or of live heads) within it: one load


@runtime_checkable
class SnapshotPanel(Protocol):
    """What a panel module's widget offers (``_panel_class`` looks for ``show_snapshot``)."""

    def show_snapshot(self, snapshot: Snapshot | None, run: RunInfo | None) -> None: ...


class PlaceholderPanel(QLabel):
    """Stands in for a panel module that is not installed."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        style.mute(self)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setWordWrap(True)
        self.show_snapshot(None, None)

    def show_snapshot(self, snapshot: Snapshot | None, run: RunInfo | None) -> None:
        """Name the checkpoint the missing panel would show."""
        if snapshot is None:
            self.setText(f"{self.title}: select a checkpoint.")
        else:
            info = snapshot.info
            self.setText(f"{self.title} of #{info.seq} {info.kind} {info.name}\n(panel not available)")


def _panel_class(module_name: str) -> type[QWidget] | None:
    try:
        module = importlib.import_module(f"inspector.ui.widgets.{module_name}")
    except ImportError as exc:
        if exc.name != f"inspector.ui.widgets.{module_name}":
            log.exception("the %s module failed to import", module_name)
        return None
    found = [cls for _name, cls in inspect.getmembers(module, inspect.isclass)
             if cls.__module__ == module.__name__ and issubclass(cls, QWidget) and hasattr(cls, "show_snapshot")]
    found.sort(key=lambda cls: not cls.__name__.endswith("Panel"))
    return found[0] if found else None


def make_panel(module_name: str, title: str, session: StoreSession, parent: QWidget) -> QWidget:
    """The panel of ``module_name`` (given the session if it takes one), else a placeholder."""
    cls = _panel_class(module_name)
    if cls is None:
        return PlaceholderPanel(title, parent)
    params = inspect.signature(cls).parameters
    kwargs: dict[str, Any] = {}     # a panel class found at run time takes session and/or parent
    if "session" in params:
        kwargs["session"] = session
    if "parent" in params:
        kwargs["parent"] = parent
    try:
        return cls(**kwargs)
    except Exception:  # a broken panel must not take the window down
        log.exception("the %s panel failed to start", module_name)
        return PlaceholderPanel(title, parent)


class DetailTabs(QWidget):
    """Loads the current checkpoint's Snapshot in the background and hands it to every panel."""

    snapshot_loaded = Signal(object)   # Snapshot (after every panel was given it)
    pair_loaded = Signal(object, object)
    task_history_requested = Signal(str)   # a task's id ("" for every task), from the Tasks tab
    value_history_requested = Signal(object)   # a value's path (tuple), from the State tab
    notice = Signal(str)   # a panel's word for the window's banner (the Diff tab's held base went)

    def __init__(self, session: StoreSession, parent: QWidget | None = None, *,
                 startup: Startup | None = None) -> None:
        """``startup``: build the visible tab's panel after the window's first paint, not now."""
        super().__init__(parent)
        self.session = session
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        style.polish(self.tabs.tabBar(), "tab_bar")
        self.panels: dict[str, QWidget] = {}      # built panels (a tab's panel is built when first shown)
        self._pages: dict[str, QWidget] = {}
        for key, title, _module in TABS:
            page = QWidget(self.tabs)
            QVBoxLayout(page).setContentsMargins(0, 0, 0, 0)
            self._pages[key] = page
            self.tabs.addTab(page, title)
        self.loading_label = style.mute(QLabel("", self.tabs))
        self.loading_label.setContentsMargins(0, 0, 8, 0)
        self.loading_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.loading_label.hide()
        self.tabs.setCornerWidget(self.loading_label, Qt.Corner.TopRightCorner)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        self.snapshot: Snapshot | None = None
        self.message = ""       # why no checkpoint is shown although one is selected ('' when none)
        self._said: dict[QLabel, str] = {}     # empty-state labels saying ``message``: their own text
        self._run: RunInfo | None = None
        self._pair: tuple[Snapshot, Snapshot] | None = None
        self._request: tuple[CheckpointInfo | None, RunInfo | None] = (None, None)
        self._reading = False       # a snapshot is being read (one at a time)
        self._reading_info: CheckpointInfo | None = None    # ... of this checkpoint
        self._asks = 0              # checkpoints asked for so far (one asked again during a read is read again)
        self._timer = QTimer(self, singleShot=True, interval=LOAD_DELAY_MS)
        self._timer.timeout.connect(self._load)
        self._deferred = startup is not None and not startup.finished
        self.tabs.currentChanged.connect(lambda _i: self._ensure_current())
        if startup is not None:
            startup.later(self._undefer)
        self._ensure_current()
        session.opened.connect(self._on_store_opened)
        session.closed.connect(self._on_store_closed)

    def _undefer(self) -> None:
        self._deferred = False
        self._ensure_current()

    def _ensure_current(self) -> None:
        """Build the visible tab's panel, unless start-up defers it past the first paint."""
        if not self._deferred:
            self._ensure_panel(self.current_tab())

    def _ensure_panel(self, key: str) -> QWidget | None:
        """Build the panel of tab ``key`` if needed and bring it up to date."""
        if key in self.panels or key not in self._pages:
            return self.panels.get(key)
        module, title = next((m, t) for k, t, m in TABS if k == key)
        page = self._pages[key]
        panel = make_panel(module, title, self.session, page)
        style.polish(page, "panel")  # headers, buttons and inputs in the look of the rest
        layout = page.layout()
        assert layout is not None   # every tab page is made with a layout
        layout.addWidget(panel)
        self.panels[key] = panel
        if hasattr(panel, "history_requested"):
            panel.history_requested.connect(self.task_history_requested)
        if hasattr(panel, "value_history_requested"):
            panel.value_history_requested.connect(self.value_history_requested)
        if hasattr(panel, "base_lost"):
            panel.base_lost.connect(self.notice)
        if self.session.store is not None and hasattr(panel, "set_store"):
            panel.set_store(self.session.store)
        self._show_in(key, panel, self.snapshot, self._run)
        self._say_in(panel)
        if key == "diff" and self._pair is not None and hasattr(panel, "show_pair"):
            panel.show_pair(self._pair[0], self._pair[1], self._run)
        return panel

    # -- public API ------------------------------------------------------------------
    def show_checkpoint(self, info: CheckpointInfo | None, run: RunInfo | None) -> None:
        """Show ``info`` (None clears every panel); the snapshot loads shortly after."""
        self._request = (info, run)
        self._asks += 1
        self.message = ""
        if info is not None:
            self._undefer()     # a checkpoint to show: its panel cannot wait
        if info is not None and self.session.is_gone:
            self.show_message(f"Checkpoint #{info.seq} cannot be read: the store's file is no longer there "
                              "(deleted or moved).", run)
            return
        if info is None:
            self._stop_loading()
            self._deliver(None, run)
            return
        if not self._timer.isActive():   # (restarted at every change, heads arriving faster would starve it)
            self._timer.start()
        self._show_loading()

    def show_message(self, text: str, run: RunInfo | None = None) -> None:
        """Clear every panel and say ``text`` in its place: a checkpoint selected that cannot
        be read (a damaged row, a store deleted), never the previous one's content."""
        self._stop_loading()
        self._deliver(None, run)
        self.message = text
        for panel in self.panels.values():
            self._say_in(panel)
        self._show_loading()

    def update_run(self, run: RunInfo) -> None:
        """A newer RunInfo of the shown run arrived (live): panels that show run facts follow it."""
        info, shown = self._request if self._request is not None else (None, None)
        if shown is None or shown.id != run.id:
            return
        self._request = (info, run)
        if self._run is not None and self._run.id == run.id:
            self._run = run
        for panel in self.panels.values():
            if hasattr(panel, "update_run"):
                panel.update_run(run)

    def show_selection(self, infos: list[CheckpointInfo], run: RunInfo | None) -> None:
        """Two selected checkpoints: give the Diff panel both (it compares a pair)."""
        store = self.session.store
        if len(infos) != 2 or store is None:
            self._pair = None
            return
        older, newer = infos
        from inspector.diff.lazy_value import load_view     # big states: read on demand, as one is
        self.session.runner.run(lambda: (load_view(store, older.id), load_view(store, newer.id)),
                                lambda pair: self._deliver_pair(pair, run), key="detail:pair")

    def set_tab(self, key: str, *, build: bool = True) -> None:
        """Bring a tab to the front: 'state', 'tasks', 'metadata' or 'diff'; its panel is
        built now, or with ``build=False`` when start-up gets to it (restoring settings)."""
        page = self._pages.get(key)
        if page is not None:
            self.tabs.setCurrentWidget(page)
            if build:
                self._undefer()

    @property
    def loading(self) -> CheckpointInfo | None:
        """The checkpoint selected whose snapshot is not shown yet (None when it is shown)."""
        wanted = self._request[0]
        shown = self.snapshot.info if self.snapshot is not None else None
        if wanted is None or self.message or (shown is not None and shown.id == wanted.id):
            return None
        return wanted

    def current_tab(self) -> str:
        """The key of the visible tab."""
        current = self.tabs.currentWidget()
        return next((k for k, p in self._pages.items() if p is current), "")

    # -- internals -------------------------------------------------------------------------
    def _on_store_opened(self, _info: object) -> None:
        self._set_store(self.session.store)
        self.show_checkpoint(None, None)

    def _on_store_closed(self) -> None:
        self.show_checkpoint(None, None)
        self._set_store(None)

    def _set_store(self, store: object) -> None:
        self._pair = None
        for panel in self.panels.values():
            if hasattr(panel, "set_store"):
                panel.set_store(store)

    def _load(self) -> None:
        """Read the snapshot selected, unless one is being read: then it is read when that
        one ends (one read at a time, each shown: heads arriving faster than a read takes
        would otherwise supersede every read before it ends, and the details never follow)."""
        info, run = self._request
        store = self.session.store
        if info is None or store is None:
            return
        if self._reading and self._reading_info is not None and self._on_the_way(self._reading_info, info):
            return      # following (a head, a scrub onward): that read is shown, then this one is read
        # (a read of a checkpoint elsewhere, a jump back or to another run, is superseded at once)
        self._reading, self._reading_info, asked = True, info, self._asks
        from inspector.diff.lazy_value import load_view
        self.session.runner.run(lambda: load_view(store, info.id), lambda snap: self._on_read(info, asked, snap),
                                lambda why: self._on_read_failed(info, asked, run, why), key="detail:snapshot")

    def _on_read(self, info: CheckpointInfo, asked: int, snapshot: Snapshot) -> None:
        self._reading, self._reading_info = False, None
        wanted, run = self._request
        if wanted is not None and (wanted.id == info.id or self._on_the_way(info, wanted)):
            self._deliver(snapshot, run)
        self._load_next(asked)

    def _on_read_failed(self, info: CheckpointInfo, asked: int, run: RunInfo | None, why: str) -> None:
        """Said in the panels, and as any failure is (the banner; a screenshot's exit), when
        the checkpoint read is still the one selected."""
        self._reading, self._reading_info = False, None
        if asked == self._asks:
            self.show_message(f"Checkpoint #{info.seq} cannot be read: {why}", run)
            self.session.runner.failed.emit(why)
        self._load_next(asked)

    def _load_next(self, asked: int) -> None:
        """After a read: a checkpoint asked for since is read next (the newest asked)."""
        if asked != self._asks and not self._timer.isActive():
            self._load()
        self._show_loading()

    def _on_the_way(self, read: CheckpointInfo, wanted: CheckpointInfo) -> bool:
        """Whether ``read`` (no longer the one selected) is of the run selected and between
        the checkpoint shown (or the run's start) and the one selected, so nearer to it than
        what is shown: a head followed live shows the newest read while the next is read."""
        if read.run_id != wanted.run_id:
            return False
        shown = self.snapshot.info if self.snapshot is not None else None
        start = shown.seq if shown is not None and shown.run_id == wanted.run_id else -1
        return min(start, wanted.seq) < read.seq <= max(start, wanted.seq)

    def _stop_loading(self) -> None:
        """Nothing to read any more: a read under way is dropped."""
        self._timer.stop()
        self.session.runner.cancel("detail:snapshot")
        self._reading, self._reading_info = False, None

    def _show_loading(self) -> None:
        """Say which checkpoint is being read while the panels show another (or none)."""
        wanted = self.loading
        if wanted is not None:
            shown = self.snapshot.info if self.snapshot is not None else None
            showing = f" (#{shown.seq} shown)" if shown is not None and shown.run_id == wanted.run_id else ""
            self.loading_label.setText(f"Reading #{wanted.seq} \u2026{showing}")
        self.loading_label.setVisible(wanted is not None)

    def _deliver(self, snapshot: Snapshot | None, run: RunInfo | None) -> None:
        self.snapshot, self._run = snapshot, run
        self.message = ""
        self._unsay()
        for key, panel in self.panels.items():
            self._show_in(key, panel, snapshot, run)
        self._show_loading()
        if snapshot is not None:
            self.snapshot_loaded.emit(snapshot)

    @staticmethod
    def _show_in(key: str, panel: QWidget, snapshot: Snapshot | None, run: RunInfo | None) -> None:
        if not isinstance(panel, SnapshotPanel):    # (every panel class found has show_snapshot)
            return
        try:
            panel.show_snapshot(snapshot, run)
        except Exception:  # one failing panel must not hide the others
            log.exception("the %s panel failed to show a snapshot", key)

    def _say_in(self, panel: QWidget) -> None:
        """Put ``message`` where a panel says that no checkpoint is selected (its empty state);
        its own sentence comes back with the next checkpoint shown (``_unsay``)."""
        label = getattr(panel, "empty", None)
        if self.message and isinstance(label, QLabel):
            self._said.setdefault(label, label.text())
            label.setText(self.message)

    def _unsay(self) -> None:
        said, self._said = self._said, {}
        for label, text in said.items():
            label.setText(text)

    def _deliver_pair(self, pair: tuple[Snapshot, Snapshot], run: RunInfo | None) -> None:
        self._pair, self._run = pair, run
        diff = self.panels.get("diff")
        if diff is not None and hasattr(diff, "show_pair"):
            try:
                diff.show_pair(pair[0], pair[1], run)
            except Exception:
                log.exception("the diff panel failed to compare two snapshots")
        self.pair_loaded.emit(pair[0], pair[1])
