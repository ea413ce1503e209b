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
