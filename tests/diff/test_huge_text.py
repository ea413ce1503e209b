"""Two huge stored strings are compared streamed (``inspector.diff.huge_text``): on a real
recorded store, the change's text delta is exactly ``text_delta`` of the whole strings,
whatever the change's place, and the values are read whole only when asked for."""

from __future__ import annotations

import base64
import random
from pathlib import Path

import pytest

from inspector.diff import diff_checkpoints
from inspector.diff.text import text_delta
from inspector.diff.engine import HUGE_PIECE
from inspector.diff.huge_text import StreamedText
from inspector.record import Checkpointer
from inspector.store import open_store

CHARS = HUGE_PIECE + 300_000


def _text(seed: int, lines: bool = False) -> str:
    text = base64.b64encode(random.Random(seed).randbytes(CHARS * 3 // 4)).decode("ascii")[:CHARS]
    if lines:    # a line end every 76 characters, as base64 tools write it
        text = "\n".join(text[i:i + 76] for i in range(0, len(text), 76))
    return text


def _variants() -> dict[str, tuple[str, str]]:
    base, multi = _text(1), _text(2, lines=True)
    mid = len(base) // 2
    return {
        "tail": (base, base[:-1000] + "the changed tail. " * 50),
        "middle": (base, base[:mid] + "INSERTED TEXT " * 9 + base[mid + 40:]),
        "start": (base, "a new start " + base[64:]),
        "lines": (multi, multi[:len(multi) // 3] + "\nan added line\n" + multi[len(multi) // 3:]),
        "two places": (base, base[:70_000] + "X" + base[70_001:-5] + "END"),
        "not ascii": (base, base[:-10] + "é" * 10),
    }


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("hugetext") / "huge.db"
    with Checkpointer(path, name="huge") as rec:
        for old, new in _variants().values():
            rec.save({"text": old}, force=True)
            rec.save({"text": new}, force=True)
        run = rec.run_id
    runs = {name: (f"{run}:{2 * n}", f"{run}:{2 * n + 1}") for n, name in enumerate(_variants())}
    return path, runs


@pytest.mark.parametrize("case", ["tail", "middle", "start", "lines", "two places"])
def test_a_streamed_huge_text_change_equals_the_text_delta_of_the_whole_strings(store_path, case: str) -> None:
    path, runs = store_path
    old, new = _variants()[case]
    a, b = runs[case]
    with open_store(path) as store:
        result = diff_checkpoints(store, a, b)
    (change,) = result.changes
    assert change.path == ("text",)
    assert isinstance(change.old, StreamedText) and isinstance(change.new, StreamedText)
    assert change.detail == text_delta(old, new)
    assert len(change.old) == len(old) and old.startswith(change.old.prefix)
    assert change.new.materialize() == new


def test_a_huge_string_that_is_not_ascii_is_decoded_as_before(store_path) -> None:
    path, runs = store_path
    old, new = _variants()["not ascii"]
    with open_store(path) as store:
        (change,) = diff_checkpoints(store, *runs["not ascii"]).changes
    assert change.old == old and change.new == new and change.detail == text_delta(old, new)


def test_diff_json_of_a_streamed_change_gives_lengths_and_segments(store_path) -> None:
    from inspector.diff.serialize import change_json
    path, runs = store_path
    old, new = _variants()["tail"]
    with open_store(path) as store:
        (change,) = diff_checkpoints(store, *runs["tail"]).changes
    out = change_json(change)
    assert out["old_length"] == len(old) and out["new_length"] == len(new) and "old" not in out
