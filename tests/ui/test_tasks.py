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


# -- the one job module under a busy GUI thread ----------------------------------------------------
# "Busy" is the GUI thread not returning to its event loop until every worker has finished and
# posted its outcome: then only what the module itself keeps can reach the callbacks.
def _busy_until_idle(pool) -> None:
    assert pool.waitForDone(10_000)


def test_a_failure_arrives_after_the_gui_thread_was_busy(qtbot) -> None:
    from PySide6.QtCore import QThreadPool

    from inspector.ui.tasks import LatestJob

    job = LatestJob()
    busy: list[bool] = []
    job.busy_changed.connect(busy.append)

    def broken(_ctx) -> None:
        raise StoreError("The blob is unreadable.")

    with qtbot.waitSignal(job.failed, timeout=5_000) as blocker:
        job.submit(broken)
        _busy_until_idle(QThreadPool.globalInstance())
    assert isinstance(blocker.args[0], StoreError)
    assert str(blocker.args[0]) == "The blob is unreadable."
    assert busy == [True, False] and not job.busy


def test_a_runner_failure_arrives_after_the_gui_thread_was_busy(qtbot) -> None:
    from inspector.ui.tasks import Outcome

    runner = TaskRunner()
    outcomes: list[Outcome] = []
    messages: list[str] = []

    def broken() -> None:
        raise StoreError("The store is corrupt.")

    runner.submit(broken, outcomes.append, key="k")
    runner.run(broken, on_error=messages.append)
    runner.wait()
    qtbot.waitUntil(lambda: len(outcomes) == 1 and len(messages) == 1)
    assert not outcomes[0].ok and outcomes[0].message == "The store is corrupt."
    assert messages == ["The store is corrupt."]
    try:
        outcomes[0].result()
    except StoreError as exc:
        assert str(exc) == "The store is corrupt."
    else:
        raise AssertionError("result() did not raise the job's exception")
    assert runner.active == 0
    runner.shutdown()


def test_a_superseded_job_is_told_and_its_outcome_dropped_while_busy(qtbot) -> None:
    from PySide6.QtCore import QThreadPool

    from inspector.ui.tasks import LatestJob

    job = LatestJob()
    started, release = threading.Event(), threading.Event()
    saw_cancel: list[bool] = []
    finished: list[object] = []
    failed: list[object] = []
    job.finished.connect(finished.append)
    job.failed.connect(failed.append)

    def old(ctx) -> str:
        started.set()
        release.wait(10)
        saw_cancel.append(ctx.cancelled())
        ctx.progress(1, 2, "old")      # a stale progress report must not arrive either
        raise RuntimeError("old failure must be dropped")

    job.submit(old)
    assert started.wait(10)
    job.submit(lambda _ctx: "new")
    release.set()
    _busy_until_idle(QThreadPool.globalInstance())
    progress: list[tuple] = []
    job.progressed.connect(lambda *a: progress.append(a))
    qtbot.waitUntil(lambda: finished == ["new"])
    qtbot.wait(50)   # let any (wrong) late report of the old job through
    assert saw_cancel == [True] and failed == [] and progress == [] and not job.busy


def test_a_cancelled_keyed_task_never_runs_or_delivers(qtbot) -> None:
    runner = TaskRunner(max_threads=1)
    gate = threading.Event()
    ran: list[str] = []
    delivered: list[str] = []
    runner.run(lambda: gate.wait(10), key="blocker")       # occupies the only thread
    runner.run(lambda: ran.append("queued") or "queued", delivered.append, key="snapshot")
    runner.cancel("snapshot")
    gate.set()
    runner.wait()
    qtbot.waitUntil(lambda: runner.active == 0)
    assert ran == [] and delivered == []
    runner.shutdown()


def test_shutdown_drops_outcomes_still_in_flight(qtbot) -> None:
    runner = TaskRunner()
    delivered: list[str] = []
    runner.run(lambda: "late", delivered.append)
    runner.shutdown()          # waits for the job; its outcome is already posted
    qtbot.wait(50)
    assert delivered == []
    assert runner.run(lambda: "after", delivered.append) == 0
