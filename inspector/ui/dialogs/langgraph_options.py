"""The LangGraph part of the Resume dialog: graph entry point, trust, and the answer to an interrupt."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QFormLayout, QGroupBox, QLabel, QLineEdit, QPlainTextEdit, QPushButton,
                               QWidget)

from inspector.errors import StoreError
from inspector.store.base import Store
from inspector.ui.formatting import visible_html

QUIET_SECONDS = 5.0   # refuse to resume a thread that wrote a checkpoint this recently (may be running)
ANSWER_HINT = 'The answer to the interrupt, as JSON: "approved", true, 3 or {"ok": true, "note": "…"}'
PREPARE, PREPARE_AGAIN = "Prepare Resume", "Prepare Again"   # the button, before and after a plan was shown
ANSWER_FIELD = "Answer"     # the field's label, as the messages about the answer name it


@dataclass(frozen=True)
class LangGraphChoices:
    """What the user chose: ``graph`` (module:attr or ''), ``trusted``, ``answer`` text ('' = none)."""

    graph: str = ""
    trusted: bool = False
    answer: str = ""


@dataclass(frozen=True)
class PlanOutcome:
    """A planning attempt: the store kind, the plan or the reason, and LangGraph context.
    ``hint``: no plan yet because the checkpoint waits for an answer none was typed for (what
    to type where; not an error)."""

    kind: str
    plan: Any = None
    error: str | None = None
    interrupts: tuple = ()
    saved_graph: str = ""
    saved_trusted: bool = False
    limits: tuple = field(default=())
    hint: str | None = None


def plan_langgraph(store: Store, ref: int | str, choices: LangGraphChoices) -> PlanOutcome:
    """Worker: plan a LangGraph resume with the user's choices (a refusal comes back as text)."""
    from inspector.resume import langgraph as lg
    from inspector.store.langgraph.fork import ThreadBusyError
    from inspector.store.langgraph.settings import load_settings

    saved = load_settings(store.info.url)
    interrupts = tuple(lg.pending_interrupts(store, ref))
    options: dict[str, Any] = {"graph": choices.graph or None, "trusted": choices.trusted,
                               "quiet_seconds": QUIET_SECONDS, "answer_field": ANSWER_FIELD}
    try:
        if choices.answer.strip():
            try:
                options["answer"] = json.loads(choices.answer)
            except ValueError as err:
                raise StoreError(f"The answer is not valid JSON ({err}); quote text like \"yes\".") from err
        plan = lg.plan_resume(store, ref, **options)
        return PlanOutcome("langgraph", plan, None, interrupts, saved.graph or "", saved.trusted)
    except lg.UnansweredError as err:
        return PlanOutcome("langgraph", None, None, interrupts, saved.graph or "", saved.trusted, hint=str(err))
    except StoreError as err:
        busy = err if isinstance(err, ThreadBusyError) else err.__cause__
        # a thread that may be mid-run: said without the command line's --force
        text = f"{busy.wait}, then prepare the resume again." if isinstance(busy, ThreadBusyError) else str(err)
        return PlanOutcome("langgraph", None, text, interrupts, saved.graph or "", saved.trusted)


def remember(store: Store, choices: LangGraphChoices) -> None:
    """Keep the graph and trust chosen for this store (after a confirmed resume)."""
    from inspector.store.langgraph.settings import load_settings, save_settings

    if choices.graph:
        save_settings(store.info.url, load_settings(store.info.url).merged(
            graph=choices.graph, trusted=choices.trusted))


class LangGraphOptions(QGroupBox):
    """Graph entry point, trust and interrupt answer; ``replan_requested`` asks for a new plan."""

    replan_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("LangGraph", parent)
        self.graph = QLineEdit(self)
        self.graph.setPlaceholderText("my_agent.graph:app — the compiled graph, as in langgraph.json")
        self.trusted = QCheckBox("Trusted database (let LangGraph revive any type it names)", self)
        self.answer = QPlainTextEdit(self)        # an editor: answers may be objects over lines
        self.answer.setPlaceholderText(ANSWER_HINT)
        self.answer.setTabChangesFocus(True)
        line = self.fontMetrics().lineSpacing()   # 3 lines, growing to 5 when there is room
        self.answer.setMinimumHeight(line * 3 + 14)
        self.answer.setMaximumHeight(line * 5 + 14)
        self.answer_check = QLabel(self)
        self.answer_check.setWordWrap(True)     # (the hint while the answer is empty is a sentence)
        self.answer.textChanged.connect(self._check_answer)
        self.question = QLabel(self)
        self.question.setWordWrap(True)
        self.question.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)   # ids to copy
        self.note = QLabel("Your graph runs in a separate process, in your environment; the database is "
                           "decoded with LANGGRAPH_STRICT_MSGPACK=true unless you trust it.", self)
        self.note.setWordWrap(True)
        self.replan = QPushButton(PREPARE, self)
        self._hint = ""     # what to type in the answer while it is empty (``show_outcome``)
        form = QFormLayout(self)
        form.addRow("&Graph:", self.graph)
        form.addRow("", self.trusted)
        form.addRow("Interrupt:", self.question)
        form.addRow(f"&{ANSWER_FIELD}:", self.answer)
        form.addRow("", self.answer_check)
        form.addRow("", self.note)
        form.addRow("", self.replan)
        self._form = form
        self.replan.clicked.connect(self.replan_requested)
        self.graph.returnPressed.connect(self.replan_requested)

    def _check_answer(self) -> None:
        text = self.answer.toPlainText().strip()
        if not text:
            self.answer_check.setText(html.escape(self._hint) + (f" Then press <i>{self.replan.text()}</i>."
                                                                 if self._hint else ""))
            return
        try:
            json.loads(text)
        except ValueError as err:
            self.answer_check.setText(f"<span style='color:#c0392b'>not JSON yet: {html.escape(str(err))} "
                                      "— quote text like \"yes\"</span>")
        else:
            self.answer_check.setText("<span style='color:#2e7d32'>valid JSON</span> — press "
                                      f"<i>{self.replan.text()}</i> to review the command")

    def set_prepared(self, prepared: bool) -> None:
        """Name the button for what it does: prepare the resume, or prepare it again (a plan is shown)."""
        self.replan.setText(PREPARE_AGAIN if prepared else PREPARE)
        self._check_answer()

    @property
    def needs_graph(self) -> bool:
        """True while no graph is given (nor saved for the store): a thread resumes only through it."""
        return not self.graph.text().strip()

    def choices(self) -> LangGraphChoices:
        """The current choices."""
        return LangGraphChoices(self.graph.text().strip(), self.trusted.isChecked(), self.answer.toPlainText())

    def show_outcome(self, outcome: PlanOutcome) -> None:
        """Fill in saved settings and the pending interrupts' questions (several: each with the id
        its answer is keyed by)."""
        from inspector.resume.langgraph import question_text

        if not self.graph.text() and outcome.saved_graph:
            self.graph.setText(outcome.saved_graph)
            self.trusted.setChecked(outcome.saved_trusted)
        self._hint = outcome.hint or ""
        self._check_answer()
        waiting = outcome.interrupts
        for row in (self.question, self.answer, self.answer_check):
            self._form.setRowVisible(row, bool(waiting))
        if not waiting:
            return
        lines = [f"<b>{visible_html(question_text(i))}</b> (node {visible_html(str(i.get('node')))})"
                 + (f"<br>&nbsp;&nbsp;id <code>{visible_html(str(i.get('id')))}</code>" if len(waiting) > 1 else "")
                 for i in waiting]
        if len(waiting) > 1:
            lines.insert(0, f"{len(waiting)} interrupts wait; answer each by its id (one left out stays waiting):")
        self.question.setText("<br>".join(lines))
        example = json.dumps({str(i.get("id")): "…" for i in waiting}, ensure_ascii=False) if len(waiting) > 1 \
            else None
        self.answer.setPlaceholderText(example or ANSWER_HINT)
