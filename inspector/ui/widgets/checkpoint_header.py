"""A one-line header naming the checkpoint a panel shows: run, #seq, kind, name and time."""

from __future__ import annotations

import html
import time

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from inspector.model import CheckpointInfo, RunInfo
from inspector.ui.formatting import local_time, readable_part, visible, visible_html
from inspector.ui.widgets.palette import accent, muted_text, theme_changed, tint

KIND_HUES = {"llm": "#8250df", "tool": "#bf8700", "step": "#0969da", "input": "#1a7f37",
             "fork": "#bc4c00", "resume": "#1a7f37", "final": "#1a7f37", "update": "#0969da",
             "loop": "#57606a"}


def fmt_time(stamp: float | None) -> str:
    """Local time of a Unix timestamp (``2026-11-29 21:11:58``), '—' when unknown."""
    if not stamp:
        return "—"
    local = local_time(stamp)
    return time.strftime("%Y-%m-%d %H:%M:%S", local) if local else "? (not a time)"


def kind_chip(label: QLabel, kind: str, hue: str | None = None) -> str:
    """Rich text of a small coloured chip for a checkpoint kind (or any word, in ``hue``)."""
    pal = label.palette()
    hue = hue or KIND_HUES.get(kind, "#57606a")
    return (f"<span style='background-color:{tint(pal, hue, 0.22).name()};"
            f"color:{accent(pal, hue).name()};'>&nbsp;{visible_html(kind)}&nbsp;</span>")


def damaged_label(problems: tuple[str, ...] | list[str]) -> str:
    """The chip text of a checkpoint with ``problems`` (parts that could not be read)."""
    return f"damaged: {len(problems)} part" + ("s" if len(problems) > 1 else "")


class CheckpointHeader(QLabel):
    """Rich-text header; ``show_checkpoint(None, None)`` shows a placeholder."""

    def __init__(self, parent: QWidget | None = None, placeholder: str = "No checkpoint selected") -> None:
        super().__init__(parent)
        self._placeholder = placeholder
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setContentsMargins(4, 2, 4, 2)
        self._shown: tuple = (None, None)     # what ``show_checkpoint`` was given: drawn again after a theme switch
        self.show_checkpoint(None, None)

    def show_checkpoint(self, info: CheckpointInfo | None, run: RunInfo | None, live_note: str = "",
                        inferred_note: str = "", problems: tuple[str, ...] = ()) -> None:
        """Describe a checkpoint (and its run when known); ``live_note`` (a LangGraph head shown
        with its finished tasks' pending writes applied) adds a "pending writes applied" chip,
        ``inferred_note`` (empty reducer channels shown from inferred channel kinds, no graph
        set) a "reducers inferred" chip, ``problems`` (parts of the checkpoint that could not be
        read) a "damaged" chip; the notes and problems are in the tooltip."""
        self._shown = (info, run, live_note, inferred_note, problems)
        muted = muted_text(self.palette()).name()
        if info is None:
            self.setText(f"<span style='color:{muted}'>{html.escape(self._placeholder)}</span>")
            return
        # a run named by an opaque id (a CrewAI flow's UUID) by its first characters, and the
        # chips before the step's name and time: on a narrow pane the end of the line is cut
        run_name = html.escape(readable_part(visible(run.name), run.id) if run else info.run_id)
        lane = f" <span style='color:{muted}'>[{html.escape(visible(info.lane))}]</span>" if info.lane else ""
        self.setText(
            f"<b>{run_name}</b>&nbsp;&nbsp;<b>#{info.seq}</b>{lane}&nbsp;&nbsp;{kind_chip(self, info.kind)}"
            + (f"&nbsp;&nbsp;{kind_chip(self, damaged_label(problems), '#cf222e')}" if problems else "")
            + (f"&nbsp;&nbsp;{kind_chip(self, 'pending writes applied', '#bf8700')}" if live_note else "")
            + (f"&nbsp;&nbsp;{kind_chip(self, 'reducers inferred', '#57606a')}" if inferred_note else "")
            + f"&nbsp;&nbsp;{html.escape(visible(info.name))}"
            f"&nbsp;&nbsp;<span style='color:{muted}'>{fmt_time(info.created)}</span>")
        notes = "".join(f"\n\n{n}" for n in (live_note, inferred_note, *(f"damaged: {p}" for p in problems)) if n)
        self.setToolTip(f"checkpoint {info.id} of run {info.run_id}{notes}")

    def changeEvent(self, event: QEvent) -> None:  # Qt override: a theme switch redraws the chips
        super().changeEvent(event)
        if theme_changed(self, event):
            self.show_checkpoint(*self._shown)
