"""The Fork… dialog: edit a checkpoint's state and task state as validated JSON, review, fork."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from inspector.ui.availability import set_available
from inspector.errors import StoreError
from inspector.highlight import to_json_text
from inspector.model import CheckpointInfo, RunInfo, Snapshot
from inspector.resume.edit_diff import EditLine, edit_lines, text_diff_lines
from inspector.resume.edits import check_json_value, parse_json_text, validate_tasks
from inspector.resume.fork import fork
from inspector.ui import icons, style
from inspector.resume.fork_spec import edited_keys
from inspector.ui.dialogs.edit_review import BAD_HUE, JsonEditor, ReviewView
from inspector.ui.dialogs.fork_resume import ForkResumeEditor
from inspector.ui.store_access import StoreAccess, as_access
from inspector.ui.formatting import step_label, visible_html
from inspector.ui.tasks import TaskRunner
from inspector.ui.widgets.palette import accent
from inspector.ui.widgets.sizing import clear_size_grip, fit_to_screen

_UNSET: Any = object()
RAW_NEEDS_EDIT = ("a raw fork (no graph set for this store) writes only the values you edit: change a "
                  "channel's value in the State tab, or set the graph (Run ▸ LangGraph Settings…) to fork "
                  "this checkpoint unchanged through LangGraph.")


class _Loaded(NamedTuple):
    """What the dialog shows of the checkpoint, read off the GUI thread."""

    snapshot: Snapshot
    run: RunInfo
    state_text: str          # the state as complete JSON text
    tasks_text: str
    note: str                # how a LangGraph fork is made ('' for other stores)
    raw_state: Any = _UNSET  # a raw LangGraph fork (no graph set): the state as parsed from its text


def _load(access: StoreAccess, ref: int | str) -> _Loaded:
    """Worker: the snapshot, its run, both values as complete JSON texts, and a LangGraph note."""
    with access.read() as store:
        snap = store.load(ref)
        run = store.get_run(snap.info.run_id)
        langgraph = store.info.kind == "langgraph"
        note = langgraph_note(store) if langgraph else ""
        raw = langgraph and not _graph_of(store)
    state_text = to_json_text(snap.state)
    return _Loaded(snap, run, state_text, to_json_text(snap.tasks), note,
                   json.loads(state_text) if raw else _UNSET)


def _graph_of(store: Any) -> str | None:
    """The graph (module:attr) set for a LangGraph store, if any."""
    from inspector.store.langgraph.settings import load_settings
    return load_settings(store.info.url).graph


def langgraph_note(store: Any) -> str:
    """How a LangGraph fork will be made: through the user's graph, or raw with its limits."""
    from inspector.store.langgraph.fork import RAW_FORK_LIMITS

    graph = _graph_of(store)
    if graph:
        return (f"LangGraph: the fork runs <code>update_state</code> through your graph "
                f"<code>{_esc(graph)}</code> in a separate process, so routing applies; the fork's state is exactly "
                "the one edited here (a channel with a reducer is set to the edited value, not appended to). "
                "It becomes a new checkpoint of the same thread.")
    limits = "".join(f"<li>{_esc(text)}</li>" for text in RAW_FORK_LIMITS)
    return ("LangGraph, no graph set for this store: a <b>raw fork</b> writes a new checkpoint with the "
            f"edited channel values, which LangGraph continues as the thread's head. Limits:<ul>{limits}</ul>"
            "Set the graph (Run ▸ LangGraph Settings…) to fork and resume through LangGraph itself.")


def _parse_state(text: str) -> Any:
    value = parse_json_text(text, "state")
    check_json_value(value, "state")
    return value


def _parse_tasks(text: str) -> Any:
    return validate_tasks(parse_json_text(text, "task state"))


def _do_fork(access: StoreAccess, checkpoint_id: int | str, reason: str, state: Any, tasks: Any,
             name: str | None, resume_spec: Any = _UNSET) -> tuple[RunInfo, CheckpointInfo | None]:
    """Worker: open the store writable (an explicit user action) and fork; the fork's run and,
    for a LangGraph fork (a new checkpoint of the same thread), its new checkpoint."""
    kwargs: dict[str, Any] = {}
    if state is not _UNSET:
        kwargs["state"] = state
    if tasks is not _UNSET:
        kwargs["tasks"] = tasks
    with access.write() as store:
        if store.info.kind == "langgraph":
            return _fork_langgraph(store, checkpoint_id, reason, kwargs)
        if resume_spec is not _UNSET:
            kwargs["resume_spec"] = resume_spec
        return fork(store, checkpoint_id, reason=reason, name=name or None, **kwargs), None


def _fork_langgraph(store: Any, checkpoint_id: int | str, reason: str,
                    kwargs: dict) -> tuple[RunInfo, CheckpointInfo]:
    """A LangGraph fork is a new checkpoint in the same thread (through the graph if one is set)."""
    from inspector.resume.langgraph import fork_langgraph
    from inspector.store.langgraph.fork import ThreadBusyError
    from inspector.ui.dialogs.langgraph_options import QUIET_SECONDS

    if "tasks" in kwargs:
        raise StoreError("The task board of a LangGraph thread is derived from its channels; "
                         "edit the todos channel in the state instead.")
    edited = {"state": kwargs["state"]} if "state" in kwargs else {}
    try:
        result = fork_langgraph(store, checkpoint_id, reason=reason, quiet_seconds=QUIET_SECONDS, **edited)
    except ThreadBusyError as err:      # (its text names the command line's --force)
        raise StoreError(f"{err.wait}, then fork again.") from err
    return store.get_run(result.thread_id), store.get_checkpoint(result.checkpoint_id)


class ForkDialog(QDialog):
    """Fork a checkpoint into a new run, optionally with an edited state and task state.

    Page one edits (validated as you type); page two shows the edit against the original
    and creates the fork. Signals: ``loaded()`` once the editors hold the checkpoint,
    ``forked(RunInfo)`` after the fork exists (``fork_checkpoint`` is then the new checkpoint of
    a LangGraph fork, which stays in the same thread), ``failed(str)`` when loading or forking failed.
    """

    loaded = Signal()
    forked = Signal(object)
    failed = Signal(str)

    def __init__(self, store: str | StoreAccess, checkpoint: CheckpointInfo | int | str,
                 parent: QWidget | None = None, *, runner: TaskRunner | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Fork Checkpoint")
        self.setWindowIcon(icons.icon("branch"))
        self.setSizeGripEnabled(True)
        fit_to_screen(self, 900, 640)
        self.access = as_access(store)
        self.store_url = self.access.url
        self._ref = checkpoint.id if isinstance(checkpoint, CheckpointInfo) else checkpoint
        self._runner = runner or TaskRunner(self)
        self.snapshot: Snapshot | None = None
        self.run: RunInfo | None = None
        self.review_lines: list[EditLine] = []
        self._raw_state: Any = _UNSET     # set for a raw LangGraph fork, which needs an edited value
        self.new_run: RunInfo | None = None
        self.fork_checkpoint: CheckpointInfo | None = None
        self._build()
        access, ref = self.access, self._ref   # the job must not hold the dialog (see resume_dialog)
        self._runner.run(lambda: _load(access, ref), self._on_loaded, self._on_load_failed)

    # -- layout --------------------------------------------------------------------
    def _build(self) -> None:
        self.title = QLabel("Loading the checkpoint…", self)
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.pages = QStackedWidget(self)
        self.pages.addWidget(self._build_edit_page())
        self.pages.addWidget(self._build_review_page())
        self.error = QLabel(self)
        self.error.setWordWrap(True)
        self.error.setStyleSheet(f"color: {accent(self.palette(), BAD_HUE).name()};")
        self.error.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.pages, 1)
        layout.addWidget(self.error)
        buttons = self._build_buttons()
        layout.addLayout(buttons)
        clear_size_grip(self, buttons)
        self._update_buttons()

    def _build_edit_page(self) -> QWidget:
        page = QWidget(self)
        self.tabs = QTabWidget(page)
        self.state_editor = JsonEditor(_parse_state, page)
        self.tasks_editor = JsonEditor(_parse_tasks, page)
        self.resume_editor = ForkResumeEditor(page)
        self.tabs.addTab(self.state_editor, "State")
        self.tabs.addTab(self.tasks_editor, "Task state")
        self.tabs.addTab(self.resume_editor, "Resume command")
        self.reason = QLineEdit(page)
        self.reason.setPlaceholderText("Why this fork? (required; kept with the new run)")
        self.name = QLineEdit(page)
        self.name.setPlaceholderText("default: “<run> (fork of #N)”")
        form = self._form = QFormLayout()
        form.addRow("&Reason:", self.reason)
        form.addRow("&Name:", self.name)
        self.hint = style.mute(QLabel(page))     # why Review Fork… is not available yet
        self.hint.setWordWrap(True)
        self.hint.hide()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs, 1)
        layout.addLayout(form)
        layout.addWidget(self.hint)
        for editor in (self.state_editor, self.tasks_editor):
            editor.validated.connect(self._on_value_validated)
        self.resume_editor.validated.connect(self._update_buttons)
        self.reason.textChanged.connect(self._update_buttons)
        return page

    def _build_review_page(self) -> QWidget:
        page = QWidget(self)
        self.review_intro = QLabel(page)
        self.review_intro.setWordWrap(True)
        self.review = ReviewView(page)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.review_intro)
        layout.addWidget(self.review, 1)
        return page

    def _build_buttons(self) -> QHBoxLayout:
        self.reset_button = QPushButton("Reset Edits", self)
        self.cancel_button = QPushButton("Cancel", self)
        self.back_button = QPushButton("Back", self)
        self.review_button = QPushButton("Review Fork…", self)
        self.fork_button = QPushButton(icons.icon("branch"), "Create Fork", self)
        self.reset_button.clicked.connect(self._on_reset_clicked)
        self.cancel_button.clicked.connect(self.reject)
        self.back_button.clicked.connect(lambda: self._show_page(0))
        self.review_button.clicked.connect(self._on_review_clicked)
        self.fork_button.clicked.connect(self._on_fork_clicked)
        row = QHBoxLayout()
        row.addWidget(self.reset_button)
        row.addStretch(1)
        for button in (self.cancel_button, self.back_button, self.review_button, self.fork_button):
            row.addWidget(button)
        return row

    # -- state -----------------------------------------------------------------------
    @property
    def valid(self) -> bool:
        """True when both editors hold valid values, a raw LangGraph fork has an edited value
        and a reason is given."""
        return (self.snapshot is not None and self.state_editor.error is None
                and self.tasks_editor.error is None and self.resume_editor.error is None
                and not self._raw_unedited() and bool(self.reason.text().strip()))

    def _raw_unedited(self) -> bool:
        """True for a raw LangGraph fork whose state holds no changed value (nothing to write)."""
        if self._raw_state is _UNSET or self.state_editor.error is not None:
            return False
        return not self.state_editor.edited or self.state_editor.value == self._raw_state

    def _invalid_reason(self) -> str:
        """Why the fork cannot be reviewed yet, and what to do (one sentence)."""
        if self.snapshot is None:
            return "the checkpoint is still loading (or could not be loaded: see the message)."
        for editor, what in ((self.state_editor, "State"), (self.tasks_editor, "Task state")):
            if editor.error:
                return f"the {what} tab holds invalid JSON ({editor.error.rstrip('.')}); fix it or Reset Edits."
        if self.resume_editor.error:
            return f"{self.resume_editor.error.rstrip('.')} (Resume command tab)."
        if self._raw_unedited():
            return RAW_NEEDS_EDIT
        return "give the fork a reason (the Reason field): it is kept with the new run."

    def edited_values(self) -> tuple[Any, Any]:
        """(state, tasks) as edited; ``_UNSET`` for a part whose text was not touched."""
        state = self.state_editor.value if self.state_editor.edited else _UNSET
        tasks = self.tasks_editor.value if self.tasks_editor.edited else _UNSET
        return state, tasks

    def _show_page(self, index: int) -> None:
        self.pages.setCurrentIndex(index)
        self.error.hide()
        self._update_buttons()

    def _update_buttons(self, *_args: object) -> None:
        reviewing = self.pages.currentIndex() == 1
        self.back_button.setVisible(reviewing)
        self.fork_button.setVisible(reviewing)
        self.review_button.setVisible(not reviewing)
        self.reset_button.setVisible(not reviewing)
        valid = self.valid
        why = "" if valid else self._invalid_reason()
        set_available(self.review_button, valid, why)
        self.hint.setText(why[:1].upper() + why[1:])
        self.hint.setVisible(bool(why) and self.snapshot is not None)
        self.review_button.setDefault(not reviewing)
        self.fork_button.setDefault(reviewing)
        for index, editor in enumerate((self.state_editor, self.tasks_editor)):
            base = ("State", "Task state")[index]
            mark = " ⚠" if editor.error else (" •" if editor.edited else "")
            self.tabs.setTabText(index, base + mark)
        command = self.resume_editor
        mark = " ⚠" if command.error or command.conflicts else (" •" if command.edited else "")
        self.tabs.setTabText(2, "Resume command" + mark)

    # -- slots -----------------------------------------------------------------------
    def _on_loaded(self, result: _Loaded) -> None:
        snap, run, note = result.snapshot, result.run, result.note
        self.snapshot, self.run, self._raw_state = snap, run, result.raw_state
        info = snap.info
        self.title.setText(f"Fork <b>{_esc(run.name)}</b> at <b>#{info.seq}</b> "
                           f"({_esc(step_label(info.kind, info.name))}) into a new run. The source run is never modified; "
                           "whatever you do not edit is shared by reference." if not note else
                           f"Fork thread <b>{_esc(run.name)}</b> at <b>#{info.seq}</b> "
                           f"({_esc(step_label(info.kind, info.name))}). Existing checkpoints are never modified.<br>{note}")
        # a LangGraph fork is a new checkpoint of the same thread, not a run: no name to give it, a
        # task board derived from the graph's channels (not stored: edit the channels), and it
        # resumes through its graph (no command)
        self._form.setRowVisible(self.name, not note)
        self.tabs.setTabVisible(1, not note)
        self.tabs.setTabVisible(2, not note)
        if not note:
            self.resume_editor.set_original(run.resume_spec, run.name)
        self.state_editor.set_text(result.state_text)
        self.tasks_editor.set_text(result.tasks_text)
        self._update_buttons()
        self.loaded.emit()

    def _on_load_failed(self, message: str) -> None:
        self._show_error(message)
        self.title.setText("Cannot fork this checkpoint.")
        self.failed.emit(message)

    def _on_value_validated(self, *_args: object) -> None:
        """After an edit of the state or task state: flag the command's arguments it contradicts."""
        snap = self.snapshot
        if snap is not None and self.tabs.isTabVisible(2):
            keys: tuple[str, ...] = ()
            for editor, old in ((self.state_editor, snap.state), (self.tasks_editor, snap.tasks)):
                if editor.edited and editor.error is None:
                    keys += edited_keys(old, editor.value)
            self.resume_editor.set_edited_keys(keys)
        self._update_buttons()

    def _on_reset_clicked(self) -> None:
        self.state_editor.reset()
        self.tasks_editor.reset()
        self.resume_editor.reset()

    def _on_review_clicked(self) -> None:
        ok = self.state_editor.validate() & self.tasks_editor.validate() & self.resume_editor.validate()
        if not ok or not self.valid or self.snapshot is None:
            return
        state, tasks = self.edited_values()
        snap = self.snapshot
        new_state = snap.state if state is _UNSET else state
        new_tasks = snap.tasks if tasks is _UNSET else tasks
        self.review_lines = edit_lines(snap.state, new_state, snap.tasks, new_tasks)
        parts = [f"{label}: {'edited' if new != old else 'unchanged, shared by reference'}"
                 for label, new, old in (("state", new_state, snap.state), ("task state", new_tasks, snap.tasks))]
        native = self.tabs.isTabVisible(2) and self.resume_editor.spec() is not None
        if native:
            parts.append("resume command: " + ("edited" if self.resume_editor.edited
                                               else "copied from the original"))
        self.review_intro.setText(f"Fork #{snap.info.seq} of “{self.run.name if self.run else ''}” "
                                  f"because: {self.reason.text().strip()}\n"
                                  f"{'; '.join(parts).capitalize()}.")
        shown = list(self.review_lines)
        for label, editor, new, old in (("state", self.state_editor, new_state, snap.state),
                                        ("task state", self.tasks_editor, new_tasks, snap.tasks)):
            if new != old:
                shown.append(EditLine("#", f"The {label} as text (unified diff)"))
                shown += text_diff_lines(editor.original, editor.text(), label)
        if native:
            if not shown:
                shown.append(EditLine("@", "No edits: the fork starts from the checkpoint exactly, "
                                           "sharing its state by reference."))
            shown.append(EditLine("#", "The fork's resume command"))
            shown.append(EditLine(" ", "$ " + self.resume_editor.command_line()))
            shown += [EditLine("~", f"⚠ {c.describe()}") for c in self.resume_editor.conflicts]
            for editor, label in ((self.resume_editor.argv_editor, "resume command"),
                                  (self.resume_editor.env_editor, "resume environment")):
                if editor.edited:
                    shown += text_diff_lines(editor.original, editor.text(), label)
        self.review.show_lines(shown, "No edits: the fork starts from the checkpoint "
                                      "exactly, sharing its state by reference.")
        self._show_page(1)

    def _on_fork_clicked(self) -> None:
        if self.snapshot is None or not self.valid:
            return
        state, tasks = self.edited_values()
        spec = self.resume_editor.spec() if self.resume_editor.edited else _UNSET
        args = (self.access, self.snapshot.info.id, self.reason.text().strip(), state, tasks,
                self.name.text().strip(), spec)
        set_available(self.fork_button, False, "forking now; the new run opens when it exists.")
        self.fork_button.setText("Forking…")
        self._runner.run(lambda: _do_fork(*args), self._on_forked, self._on_fork_failed)

    def _on_forked(self, result: tuple[RunInfo, CheckpointInfo | None]) -> None:
        self.new_run, self.fork_checkpoint = result
        self.forked.emit(self.new_run)
        self.accept()

    def _on_fork_failed(self, message: str) -> None:
        set_available(self.fork_button, True)
        self.fork_button.setText("Create Fork")
        self._show_error(message)
        self.failed.emit(message)

    def _show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.show()


def _esc(text: str) -> str:
    return visible_html(text or "")
