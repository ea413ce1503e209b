"""The Diff tab's text change in the real window: an edited line reads as one line (its
change inside it, not a new line after it), a long prose line that wraps reads as one line,
and the unchanged lines left out say how many they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.diff import TextDelta
from inspector.record import Checkpointer, Interval
from inspector.store import open_store
from tests.ui.conftest import open_in, select_checkpoint, select_run

TIMEOUT = 60_000
BIG = "\n".join(f"line {i}: def f{i}(x): return x + {i}" for i in range(2000))
EDITED = BIG.replace("line 1234: def f1234(x): return x + 1234", "line 1234: def f1234(x): return x * 1234  # fixed")
PROSE = ("The quick brown fox jumps over the lazy dog. " * 8 + "\n") * 200


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("textdetail") / "text.db"
    for name, old, new in (("source", BIG, EDITED),
                           ("prose", PROSE, PROSE.replace("lazy dog. The", "lazy CAT. The", 1))):
        with Checkpointer(path, name=name, interval=Interval.every_step()) as cp:
            cp.save({"doc": old})
            cp.save({"doc": new})
    return path


def _shown_text_change(window, qtbot, store: Path, name: str, size: tuple[int, int]):
    """Open the run ``name`` at its second checkpoint in the Diff tab; its text change shown."""
    window.resize(*size)
    open_in(window, qtbot, store)
    with open_store(store) as st:
        run = next(r.id for r in st.list_runs() if r.name == name)
    select_run(window, qtbot, run)
    select_checkpoint(window, qtbot, 1)
    window.details.set_tab("diff")
    qtbot.waitUntil(lambda: "diff" in window.details.panels, timeout=TIMEOUT)
    panel = window.details.panels["diff"]
    qtbot.waitUntil(lambda: panel.result is not None and not panel.busy, timeout=TIMEOUT)
    panel.select_change(0)
    qtbot.waitUntil(lambda: isinstance(getattr(panel.detail._change, "detail", None), TextDelta), timeout=TIMEOUT)
    return panel


@pytest.mark.parametrize("size", [(1024, 700), (1920, 1200)])
def test_an_edited_line_reads_as_one_line_with_its_change_inside(window, qtbot, store: Path, size, tmp_path) -> None:
    panel = _shown_text_change(window, qtbot, store, "source", size)
    assert panel.proxy.index(0, 2).data() == "text: +1 −1 lines"
    document = panel.detail.text.document()
    blocks = [document.findBlockByNumber(n).text() for n in range(document.blockCount())]
    (edited,) = [b for b in blocks if "# fixed" in b]
    assert edited == "line 1234: def f1234(x): return x + 1234* 1234  # fixed"    # old then new, one line
    assert "line 1235: def f1235(x): return x + 1235" in blocks
    assert any(b.startswith("⋯ ") and b.endswith(" unchanged lines ⋯") for b in blocks)
    # the change is scrolled to: the edited line is in view
    cursor = document.find("# fixed")
    rect = panel.detail.text.cursorRect(cursor)
    assert 0 <= rect.top() < panel.detail.text.viewport().height()
    window.grab().save(str(tmp_path / f"source_{size[0]}.png"))


def test_a_wrapped_prose_line_is_one_paragraph_with_the_word_changed(window, qtbot, store: Path) -> None:
    panel = _shown_text_change(window, qtbot, store, "prose", (1024, 700))
    assert panel.proxy.index(0, 2).data() == "text: +1 −1 lines"
    document = panel.detail.text.document()
    first = document.findBlockByNumber(0)
    assert first.text().startswith("The quick brown fox jumps over the lazy dogCAT. The quick")
    assert first.layout().lineCount() > 1                            # it wraps in the narrow pane …
    assert first.blockFormat().textIndent() < 0 < first.blockFormat().leftMargin()   # … under a hanging indent
    shown = document.blockCount() - 1
    assert 1 < shown < 200 and document.lastBlock().text() == f"⋯ {200 - shown:,} unchanged lines ⋯"
