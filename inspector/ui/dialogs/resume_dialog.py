"""The Resume… dialog: exactly what will run (argv, directory, environment), owner, replay cost."""

from __future__ import annotations

import html
import os
import shlex
from typing import Any
from collections.abc import Callable, Mapping

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (QDialog, QFormLayout, QFrame, QGroupBox, QHBoxLayout, QLabel, QLineEdit,
                               QMessageBox, QPushButton, QScrollArea, QVBoxLayout, QWidget)

from inspector.ui.availability import set_available
from inspector.errors import StoreError
from inspector.highlight import to_json_text
from inspector.model import CheckpointInfo
from inspector.record.handoff import ENV_VAR
from inspector.resume.edits import parse_json_text
from inspector.resume.launch import LaunchSpec, check_argv, check_env
from inspector.resume.resume import FORK, ResumePlan, plan_resume, start_resume
from inspector.ui import icons
from inspector.ui.dialogs.edit_review import BAD_HUE, JsonEditor
from inspector.ui.dialogs.langgraph_options import (ANSWER_FIELD, LangGraphChoices, LangGraphOptions, PlanOutcome,
                                                    plan_langgraph, remember)
from inspector.ui.store_access import StoreAccess, as_access
from inspector.ui.formatting import step_label, visible_html
from inspector.ui.tasks import TaskRunner
from inspector.ui.widgets.palette import accent
from inspector.ui.widgets.sizing import clear_size_grip, fit_to_screen

OWNER_HUES = {"live": "#1a7f37", "starting": "#1a7f37", "gone": "#cf222e", "silent": "#bf8700",
              "none": "#57606a"}
Confirm = Callable[[QWidget, str, str], bool]


def ask_confirmation(parent: QWidget, title: str, text: str) -> bool:
    """The real confirmation: a question box whose default answer is No."""
    box = QMessageBox(QMessageBox.Icon.Question, title, text,
                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, parent)
    box.setDefaultButton(QMessageBox.StandardButton.No)
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return box.exec() == QMessageBox.StandardButton.Yes


def parse_argv(text: str) -> list[str]:
    """The argv editor's text: a JSON array of strings (exact: no shell, no quoting rules)."""
    value = parse_json_text(text, "command")
    if not isinstance(value, list):
        raise StoreError("The command must be a JSON array of strings, one argument each.")
    return list(check_argv(value))


def parse_env(text: str) -> dict[str, str]:
    """The environment editor's text: a JSON object of strings."""
    value = parse_json_text(text, "environment")
    if not isinstance(value, dict):
        raise StoreError("The environment must be a JSON object of NAME: \"value\" pairs.")
    return check_env(value)


def _plan(access: StoreAccess, ref: int | str, threshold: float,
          choices: LangGraphChoices) -> PlanOutcome:
    with access.read() as store:
        if store.info.kind == "langgraph":
            return plan_langgraph(store, ref, choices)
        return PlanOutcome(store.info.kind, plan_resume(store, ref, heartbeat_threshold=threshold))


def _start(access: StoreAccess, plan: ResumePlan, argv: list[str], cwd: str, env: dict[str, str],
           reason: str | None, choices: LangGraphChoices | None = None) -> LaunchSpec:
    """Worker: write (confirmed by the user): fork if needed, take ownership."""
    if choices is not None:   # LangGraph: the runner process writes; remember the graph
        with access.read() as store:
            launch = start_resume(store, plan, argv=argv, cwd=cwd, env=env, reason=reason)
            remember(store, choices)
            return launch
    with access.write() as store:
        return start_resume(store, plan, argv=argv, cwd=cwd, env=env, reason=reason)


def checkpoint_label(cp: CheckpointInfo) -> str:
    """``#SEQ kind name`` (the kind said once)."""
    return f"#{cp.seq} {step_label(cp.kind, cp.name)}"


def _stop(access: StoreAccess, run_id: str) -> str:
    from inspector.resume.liveness import stop_owner

    with access.read() as store:
        return stop_owner(store.get_run(run_id))


def confirmation_text(plan: ResumePlan, argv: list[str], cwd: str, kind: str = "native") -> str:
    """What the confirmation box says: the command, where, and what happens to the run (and
    which store the agent writes to, when its command line names another)."""
    what = (f"A fork of run {plan.run.id} at #{plan.checkpoint.seq} is made and resumed."
            if plan.mode == FORK else
            f"Run {plan.run.id} continues from #{plan.checkpoint.seq} under a new ownership epoch.")
    other = other_stores(argv, cwd, plan.store_url) if kind == "native" else []
    store = (f" The agent is handed this store ({plan.store_display}); the {', '.join(other)} in its "
             "command line is overridden." if other else "")
    return f"Run this command?\n\n{shlex.join(argv)}\n\nin {cwd}\n\n{what}{store}"


STORE_OPTION = "--store"    # the option naming an agent's store (the demo agent's "--store STORE")


def other_stores(argv: list[str] | tuple[str, ...], cwd: str, store_url: str) -> list[str]:
    """The ``--store PATH`` (or ``--store=URL``) arguments of ``argv`` that name another store
    than the one at ``store_url``, as they read in the command.

    A native run's agent is handed the store it resumes in (``CHECKPOINT_INSPECTOR_RESUME``,
    read by ``inspector.record.Checkpointer``): these are overridden, but read as the target."""
    found: list[str] = []
    for i, arg in enumerate(argv[1:], 1):
        if argv[i - 1] == STORE_OPTION:
            value, shown = arg, f"{STORE_OPTION} {arg}"
        elif arg.startswith(STORE_OPTION + "="):
            value, shown = arg.partition("=")[2], arg
        else:
            continue
        if value and _store_key(value, cwd) != _store_key(store_url, cwd):
            found.append(shown)
    return found


def _store_key(ref: str, cwd: str) -> str:
    """A store reference made comparable: a file's real path (a SQLite URL's too), else the URL."""
    path = ref.removeprefix("sqlite:///") if ref.startswith("sqlite:///") else None if "://" in ref else ref
    return os.path.realpath(os.path.join(cwd, path)) if path else ref


class ResumeDialog(QDialog):
    """Shows a resume plan, lets the user edit the command, and prepares the launch on confirmation.

    Nothing is written before the user confirms (``confirm`` — replaceable in tests — returns
    True). Then the fork (if any) and the ownership take-over happen off the GUI thread and
    ``launch_ready(LaunchSpec)`` is emitted: hand it to the console dock, which starts the process.
    Signals: ``plan_loaded(ResumePlan)``, ``launch_ready(LaunchSpec)``, ``failed(str)``.
    """

    plan_loaded = Signal(object)
    stopped = Signal(str)        # the old owner process was stopped (one sentence)
    launch_ready = Signal(object)
    failed = Signal(str)

    def __init__(self, store: str | StoreAccess, checkpoint: CheckpointInfo | int | str, parent: QWidget | None = None,
                 *, runner: TaskRunner | None = None, heartbeat_threshold: float = 30.0,
                 confirm: Confirm = ask_confirmation) -> None:
        super().__init__(parent)
        self.setWindowTitle("Resume Run")
        self.setWindowIcon(icons.kind_icon("resume"))
        self.setSizeGripEnabled(True)
        fit_to_screen(self, 860, 720)
        self.access = as_access(store)
        self.store_url = self.access.url
        self.confirm = confirm
        self.plan: ResumePlan | None = None
        self.launch: LaunchSpec | None = None
        self._runner = runner or TaskRunner(self)
        self._ref = checkpoint.id if isinstance(checkpoint, CheckpointInfo) else checkpoint
        self._stoppable: int | None = None
        self._threshold = heartbeat_threshold
        self.kind: str | None = None
        self._asks_answer = False     # no plan yet: the checkpoint waits for an answer, none typed
        self._build()
        self._request_plan()

    def _request_plan(self) -> None:
        """Plan (again) off the GUI thread, with the LangGraph choices if any."""
        # the job must not hold the dialog: a widget released on a worker thread breaks Qt
        choices, access, ref, threshold = self.langgraph.choices(), self.access, self._ref, self._threshold
        set_available(self.resume_button, False, "preparing the resume; the command appears in a moment.")
        self._runner.run(lambda: _plan(access, ref, threshold, choices),
                         self._on_outcome, self._on_plan_failed)

    def _on_outcome(self, outcome: PlanOutcome) -> None:
        self.kind = outcome.kind
        self.langgraph.setVisible(outcome.kind == "langgraph")
        if outcome.kind == "langgraph":
            self.langgraph.show_outcome(outcome)
        self._asks_answer = outcome.hint is not None
        if outcome.plan is None and self._asks_answer:
            self._on_answer_needed()
            return
        if outcome.plan is None:
            self.plan = None
            self._on_plan_failed(outcome.error or "This run cannot be resumed.")
            return
        self.error.hide()
        self._on_planned(outcome.plan)

    # -- layout --------------------------------------------------------------------
    def _build(self) -> None:
        self.title = QLabel("Preparing the resume…", self)
        self.title.setWordWrap(True)
        self.mode_label, self.owner_label, self.replay_label, self.store_label = (
            self._info_label() for _ in range(4))
        form = self.info_form = QFormLayout()    # (hidden while there is no plan: nothing to say)
        form.addRow("What happens:", self.mode_label)
        self.stop_button = QPushButton("Stop Old Process…", self)
        self.stop_button.setToolTip("Stop the previous owner's process on this host (asks first)")
        self.stop_button.hide()
        self.stop_button.clicked.connect(self._on_stop_clicked)
        owner_row = QHBoxLayout()
        owner_row.addWidget(self.owner_label, 1)
        owner_row.addWidget(self.stop_button, 0, Qt.AlignmentFlag.AlignTop)
        form.addRow("Current owner:", owner_row)
        self.origin_label = self._info_label()
        self.origin_label.hide()
        form.addRow("Replay cost:", self.replay_label)
        form.addRow("Store:", self.store_label)
        form.addRow("", self.origin_label)
        self.argv_editor = JsonEditor(parse_argv, self, gutter=False)
        self.env_editor = JsonEditor(parse_env, self, gutter=False)
        for editor in (self.argv_editor, self.env_editor):   # never squeezed to one line
            editor.keep_lines(4, 7)
        self.cwd = QLineEdit(self)
        self.reason = QLineEdit(self)
        self.reason.setPlaceholderText("why the fork exists (kept with it)")
        self.preview = self._info_label(mono=True)
        self.store_note = self._info_label()     # the agent writes to this store, whatever its command says
        self.store_note.hide()
        self.env_note = self._info_label()
        self.command_form = QFormLayout()
        self.command_form.addRow("Working &directory:", self.cwd)
        self.command_form.addRow("Fork &reason:", self.reason)
        self.error = self._info_label()
        self.error.setStyleSheet(f"color: {accent(self.palette(), BAD_HUE).name()};")
        self.error.hide()
        self.cancel_button = QPushButton("Cancel", self)
        self.resume_button = QPushButton(icons.kind_icon("resume"), "Resume…", self)
        self.resume_button.setDefault(True)
        set_available(self.resume_button, False, "preparing the resume; the command appears in a moment.")
        self.cancel_button.clicked.connect(self.reject)
        self.resume_button.clicked.connect(self._on_resume_clicked)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.resume_button)
        # the body scrolls when the dialog is smaller than what it must show (a 1024x700 screen
        # with the LangGraph options): every part keeps the height its layout asks for, so no
        # status line is ever drawn over the command or the notes
        body = QWidget(self)
        inner = QVBoxLayout(body)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.addLayout(form)
        self.langgraph = LangGraphOptions(body)    # first: the graph and the answer decide the command
        self.langgraph.hide()
        self.langgraph.replan_requested.connect(self._request_plan)
        inner.addWidget(self.langgraph)
        self.command_group = self._group("Command (one JSON string per argument; never run by a shell)",
                                         self.argv_editor, self.preview, self.store_note)
        self.env_group = self._group("Environment (the complete environment of the process)",
                                     self.env_editor, self.env_note)
        inner.addWidget(self.command_group, 3)
        inner.addWidget(self.env_group, 2)
        inner.addLayout(self.command_form)
        inner.addStretch(0)     # (takes the room only while the groups above are hidden: no plan)
        self.body = QScrollArea(self)
        self.body.setWidgetResizable(True)
        self.body.setFrameShape(QFrame.Shape.NoFrame)
        self.body.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.body.setWidget(body)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.body, 1)
        layout.addWidget(self.error)
        layout.addLayout(buttons)
        clear_size_grip(self, buttons)
        for editor in (self.argv_editor, self.env_editor):
            editor.validated.connect(self._on_edited)
        self.cwd.textChanged.connect(self._on_edited)
        self._show_plan_parts(False)

    def _info_label(self, mono: bool = False) -> QLabel:
        label = QLabel(self)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setTextFormat(Qt.TextFormat.PlainText if mono else Qt.TextFormat.RichText)
        if mono:
            label.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        return label

    def _group(self, title: str, editor: QWidget, *notes: QLabel) -> QGroupBox:
        box = QGroupBox(title, self)
        layout = QVBoxLayout(box)
        layout.addWidget(editor, 1)
        for note in notes:
            layout.addWidget(note)
        return box

    # -- plan ------------------------------------------------------------------------
    def _show_plan_parts(self, shown: bool) -> None:
        """The plan's facts, command and environment: shown once there is a plan (never empty)."""
        for row in range(self.info_form.rowCount()):
            self.info_form.setRowVisible(row, shown)
        self.command_group.setVisible(shown)
        self.env_group.setVisible(shown)
        self.command_form.setRowVisible(self.cwd, shown)
        if not shown:
            self.command_form.setRowVisible(self.reason, False)

    def _on_planned(self, plan: ResumePlan) -> None:
        self.plan = plan
        self._show_plan_parts(True)
        self.langgraph.set_prepared(True)
        cp = plan.checkpoint
        self.title.setText(f"<b>Resume “{visible_html(plan.run.name)}” from "
                           f"{visible_html(checkpoint_label(cp))}</b>.")
        self._show_stop_offer(plan)
        self.origin_label.setText(self._origin_text(plan))
        self.info_form.setRowVisible(self.origin_label, bool(plan.run.parent_run))
        if self.kind == "langgraph":
            action = ("<b>LangGraph replays from this checkpoint as a new branch</b>" if plan.mode == FORK
                      else "<b>LangGraph continues the thread</b>")
        else:
            action = ("<b>Fork first, then resume the fork.</b>" if plan.mode == FORK
                      else "<b>Continue the same run</b> under a new ownership epoch.")
        self.mode_label.setText(f"{action} {html.escape(plan.why[:1].upper() + plan.why[1:])}.")
        hue = accent(self.palette(), OWNER_HUES.get(plan.owner.state, "#57606a")).name()
        live = " — a live process owns this run, so it is not touched" if plan.owner.live else ""
        self.owner_label.setText(f"<span style='color:{hue}'>●</span> {html.escape(plan.owner.text)}{live}")
        self.replay_label.setText(html.escape(plan.replay.describe()))
        self.store_label.setText(html.escape(plan.store_display))
        self.argv_editor.set_text(to_json_text(list(plan.argv)))
        self.env_editor.set_text(to_json_text(dict(plan.env)))
        self.cwd.setText(plan.cwd)
        self.reason.setText(f"resume from {plan.run.id}:{cp.seq}")
        self.command_form.setRowVisible(self.reason, plan.mode == FORK)
        self.resume_button.setText("Fork && Resume…" if plan.mode == FORK else "Resume…")
        self._on_edited()
        self.plan_loaded.emit(plan)

    def _origin_text(self, plan: ResumePlan) -> str:
        run = plan.run
        if not run.parent_run:
            return ""
        return (f"This is a fork of run {html.escape(run.parent_run)}. The command below is <b>the fork's "
                "own</b> resume command, as set when it was forked (prefilled from the original's), and "
                "the agent restores <b>this fork's</b> checkpoint, edits included.")

    def _show_stop_offer(self, plan: ResumePlan) -> None:
        from inspector.resume.liveness import stoppable_owner

        pid = stoppable_owner(plan.run) if plan.owner.state != "none" else None
        self._stoppable = pid
        self.stop_button.setVisible(pid is not None)
        if pid is not None:
            self.stop_button.setText(f"Stop Process {pid}\u2026")

    def _on_stop_clicked(self) -> None:
        pid, plan = self._stoppable, self.plan
        if pid is None or plan is None:
            return
        text = (f"Stop process {pid} on this host, the previous owner of run {plan.run.id}?\n\n"
                "It is sent SIGTERM (SIGKILL after 5 s). Whatever it has not saved is lost; its "
                "checkpoints stay in the store.")
        if not self.confirm(self, "Stop Old Process", text):
            return
        set_available(self.stop_button, False, "stopping the old process; wait a few seconds.")
        access, run_id = self.access, plan.run.id
        self._runner.run(lambda: _stop(access, run_id), self._on_stopped, self._on_stop_failed)

    def _on_stopped(self, message: str) -> None:
        set_available(self.stop_button, True)
        self.owner_label.setText(html.escape(message))
        self.stopped.emit(message)
        self._request_plan()

    def _on_stop_failed(self, message: str) -> None:
        set_available(self.stop_button, True)
        self._show_error(message)

    def _on_plan_failed(self, message: str) -> None:
        self.plan = None
        self._show_plan_parts(False)
        set_available(self.resume_button, False, self._not_ready_reason())
        self.title.setText(self._failed_title())
        self._show_error(message)
        self.failed.emit(message)

    def _on_answer_needed(self) -> None:
        """No plan until the interrupt's answer is typed: the Answer field says so under it (no
        error: nothing was wrong yet) and the title says what to do."""
        self.plan = None
        self._show_plan_parts(False)
        self.error.hide()
        set_available(self.resume_button, False, self._not_ready_reason())
        self.title.setText(self._failed_title())

    def _failed_title(self) -> str:
        """The title when there is no plan: what is needed, where one can be given."""
        if self.kind != "langgraph":
            return "This run cannot be resumed."
        button = self.langgraph.replan.text()
        if self.langgraph.needs_graph:
            return ("<b>Resuming a LangGraph thread needs its graph.</b> Give it below as "
                    "<code>module:attr</code> (the compiled graph, as in langgraph.json), then press "
                    f"<i>{button}</i>.")
        if self._asks_answer:
            return (f"<b>This checkpoint waits for an answer to its interrupt.</b> Type it in the "
                    f"<i>{ANSWER_FIELD}</i> field below, then press <i>{button}</i>.")
        return (f"<b>This thread cannot be resumed as set below</b>: see the message at the bottom, "
                f"change the graph or the answer, then press <i>{button}</i>.")

    def _on_edited(self, *_args: object) -> None:
        argv, env = self.argv_editor.value, self.env_editor.value
        if argv is not None:
            self.preview.setText("$ " + shlex.join(argv))
            self._show_store_note(argv)
        if env is not None and self.plan is not None:
            self.env_note.setText(env_note(env, self.plan.inherit, self.plan.missing))
            self.env_note.setToolTip(env_tooltip(self.plan.inherit, self.plan.missing))
        set_available(self.resume_button, self.ready, self._not_ready_reason())

    def _show_store_note(self, argv: list[str]) -> None:
        """Under the command, when it names another store than this one (a copy of the store
        was opened): the agent is handed this store, so that one is not the target."""
        plan = self.plan
        other = other_stores(argv, self.cwd.text().strip() or os.getcwd(), plan.store_url) \
            if plan is not None and self.kind == "native" else []
        self.store_note.setVisible(bool(other))
        if plan is not None and other:
            named = ", ".join(f"<code>{html.escape(o)}</code>" for o in other)
            self.store_note.setText(
                f"<b>The agent is handed this store</b> (<code>{html.escape(plan.store_display)}</code>) when it "
                f"starts, through <code>{ENV_VAR}</code>; the {named} in its own command line is overridden.")

    def _not_ready_reason(self) -> str:
        """Why Resume is unavailable and what to do (one sentence)."""
        if self.launch is not None:
            return "this resume was started; open Resume… again for another."
        if self.plan is None and self._asks_answer:
            return (f"type the interrupt's answer in the {ANSWER_FIELD} field"
                    + (" and give the graph" if self.langgraph.needs_graph else "")
                    + f", then press {self.langgraph.replan.text()}.")
        if self.plan is None:
            return ("this run cannot be resumed as it is: see the message above"
                    + (f" (set the graph or the answer, then press {self.langgraph.replan.text()})."
                       if self.kind == "langgraph" else "."))
        for editor, what in ((self.argv_editor, "command"), (self.env_editor, "environment")):
            if editor.error:
                return f"the {what} is invalid ({editor.error.rstrip('.')}); fix it to resume."
        return "give the working directory the process starts in."

    @property
    def ready(self) -> bool:
        """True when a plan is loaded and the command, environment and directory are valid."""
        return (self.plan is not None and self.argv_editor.error is None
                and self.env_editor.error is None and bool(self.cwd.text().strip()) and self.launch is None)

    # -- launch ------------------------------------------------------------------------
    def _on_resume_clicked(self) -> None:
        if not self.ready or self.plan is None:
            return
        argv, env, cwd = self.argv_editor.value, self.env_editor.value, self.cwd.text().strip()
        if not self.confirm(self, "Resume Run", confirmation_text(self.plan, argv, cwd, self.kind or "native")):
            return
        plan, reason = self.plan, self.reason.text().strip() or None
        choices = self.langgraph.choices() if self.kind == "langgraph" else None
        set_available(self.resume_button, False, "starting the process; it appears in the Console.")
        self.resume_button.setText("Starting…")
        access = self.access
        self._runner.run(lambda: _start(access, plan, argv, cwd, env, reason, choices),
                         self._on_started, self._on_start_failed)

    def _on_started(self, launch: LaunchSpec) -> None:
        self.launch = launch
        self.launch_ready.emit(launch)
        self.accept()

    def _on_start_failed(self, message: str) -> None:
        self.resume_button.setText("Fork && Resume…" if self.plan and self.plan.mode == FORK else "Resume…")
        self._show_error(message)
        self._on_edited()
        self.failed.emit(message)

    def _show_error(self, message: str) -> None:
        self.error.setText(html.escape(message))
        self.error.show()


def env_note(env: Mapping[str, Any], inherit: tuple[str, ...], missing: tuple[str, ...],
             here: Mapping[str, str] | None = None) -> str:
    """The line under the environment editor: what is added, and what differs from this process."""
    here = os.environ if here is None else here
    parts = [f"Also passed: <code>{ENV_VAR}</code> (the hand-off: store, run, checkpoint, new epoch)"]
    given = [k for k in inherit if k not in missing]
    if given:
        parts.append("from this environment: " + _names(given, code=True))
    if missing:
        parts.append("<b>not set here, so not passed:</b> " + _names(missing))
    differ = sorted(k for k, v in env.items() if here.get(k) != v)
    if differ:
        parts.append("differs from this inspector's environment: " + _names(differ))
    return ". ".join(parts[:1]) + ("; " + "; ".join(parts[1:]) if parts[1:] else "") + "."



NAMES_SHOWN = 6   # a runner may pass dozens of names through; the tooltip lists them all


def _names(names: list[str] | tuple[str, ...], *, code: bool = False) -> str:
    shown = [f"<code>{html.escape(k)}</code>" if code else html.escape(k) for k in names[:NAMES_SHOWN]]
    more = len(names) - NAMES_SHOWN
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def env_tooltip(inherit: tuple[str, ...], missing: tuple[str, ...]) -> str:
    """Every name passed from this environment and every one missing, for the note's tooltip."""
    given = [k for k in inherit if k not in missing]
    lines = ([f"Passed from this environment: {', '.join(given)}"] if given else []) + (
        [f"Not set here, so not passed: {', '.join(missing)}"] if missing else [])
    return "\n".join(lines)
