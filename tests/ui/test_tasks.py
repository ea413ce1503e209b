"""TaskRunner: work off the GUI thread, results on it, errors as sentences, stale results dropped."""

from __future__ import annotations

import threading

from PySide6.QtCore import QThread

from inspector.errors import StoreError
from inspector.ui.tasks import TaskRunner


def test_result_arrives_on_the_gui_thread(qtbot) -> None:
    runner = TaskRunner()
    gui = QThread.currentThread()
    worker_threads, results = [], []

    def work() -> int:
        worker_threads.append(QThread.currentThread())
        return 42

    def done(value: int) -> None:
        results.append((value, QThread.currentThread()))

    runner.run(work, done)
    qtbot.waitUntil(lambda: bool(results))
    assert results == [(42, gui)]
    assert worker_threads[0] is not gui
    runner.shutdown()


def test_errors_become_one_sentence(qtbot, caplog) -> None:
    runner = TaskRunner()
    messages: list[str] = []

    def broken_store() -> None:
        raise StoreError("The store is locked by another process; try again in a moment.")

    def bug() -> None:
        raise KeyError("oops")

    runner.run(broken_store, on_error=messages.append)
    with qtbot.waitSignal(runner.failed) as blocker:
        runner.run(bug)
    qtbot.waitUntil(lambda: len(messages) == 1)
    assert messages == ["The store is locked by another process; try again in a moment."]
    assert "KeyError" in blocker.args[0] and "Traceback" not in blocker.args[0]
    assert "Traceback" in caplog.text  # the bug's traceback went to the log
    runner.shutdown()


def test_a_newer_task_with_the_same_key_supersedes_an_older_one(qtbot) -> None:
    runner = TaskRunner()
    release = threading.Event()
    delivered: list[str] = []

    def slow() -> str:
        release.wait(10)
        return "old"

    runner.run(slow, delivered.append, key="snapshot")
    runner.run(lambda: "new", delivered.append, key="snapshot")
    qtbot.waitUntil(lambda: delivered == ["new"])
    release.set()
    qtbot.waitUntil(lambda: runner.active == 0)
    assert delivered == ["new"]
    runner.shutdown()
