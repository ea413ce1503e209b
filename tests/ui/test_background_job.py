"""LatestJob delivers a job's exception to ``failed`` (the worker's ``except`` name is gone by then)."""

from __future__ import annotations

from inspector.ui.tasks import LatestJob


def test_a_failing_job_reaches_failed_with_its_exception(qtbot) -> None:
    job = LatestJob()
    problem = ValueError("unreadable snapshot")

    def work(_ctx: object) -> None:
        raise problem

    with qtbot.waitSignal(job.failed, timeout=5000) as blocker:
        job.submit(work)
    assert blocker.args == [problem]
    assert not job.busy


def test_an_outcome_is_in_flight_from_the_pool_to_the_gui_thread(qtbot) -> None:
    """A finished job leaves the pool before the GUI thread handles its outcome: screenshot
    mode must see that gap as busy (it grabbed a half-done Diff tab in it)."""
    from PySide6.QtCore import QThreadPool

    from inspector.ui.tasks import outcomes_in_flight
    job = LatestJob()
    got: list = []
    job.finished.connect(got.append)
    before = outcomes_in_flight()
    job.submit(lambda _ctx: 42)
    assert QThreadPool.globalInstance().waitForDone(5000)     # the pool is idle, nothing handled yet
    assert got == [] and outcomes_in_flight() == before + 1
    qtbot.waitUntil(lambda: got == [42], timeout=5000)
    assert outcomes_in_flight() == before


def test_running_out_of_memory_still_ends_the_job_with_a_sentence(qtbot, monkeypatch) -> None:
    """A job that runs out of memory, or whose failure runs out of memory while it is logged,
    still reaches ``failed`` (once, its outcome was never posted: a view that waited forever)."""
    from inspector.errors import StoreError
    from inspector.ui import tasks

    job = LatestJob()

    def out_of_memory(_ctx: object) -> None:
        raise MemoryError

    with qtbot.waitSignal(job.failed, timeout=5000) as blocker:
        job.submit(out_of_memory)
    assert isinstance(blocker.args[0], StoreError) and "not enough memory" in str(blocker.args[0])

    def broken(_ctx: object) -> None:
        raise ValueError("a bug")

    def no_memory_to_log(*_args: object) -> None:
        raise MemoryError
    monkeypatch.setattr(tasks.log, "error", no_memory_to_log)
    with qtbot.waitSignal(job.failed, timeout=5000) as blocker:
        job.submit(broken)
    assert "not enough memory" in tasks.describe_error(blocker.args[0])
    assert not job.busy
