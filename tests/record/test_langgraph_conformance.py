"""LangGraph's own conformance suite (``langgraph-checkpoint-conformance``) against both savers.

Every capability — base (put, put_writes, get_tuple, list, delete_thread) and extended
(delete_for_runs, copy_thread, prune) — must be detected and pass, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES

from inspector.record.langgraph import AsyncInspectorSaver, InspectorSaver


def _run(kind: str, target_for: callable) -> dict:
    if kind == "sync":
        @checkpointer_test(name=f"InspectorSaver-{uuid.uuid4().hex[:6]}")
        async def factory():
            with InspectorSaver.from_conn_string(target_for()) as saver:
                yield saver
    else:
        @checkpointer_test(name=f"AsyncInspectorSaver-{uuid.uuid4().hex[:6]}")
        async def factory():
            async with AsyncInspectorSaver.from_conn_string(target_for()) as saver:
                yield saver
    report = asyncio.run(validate(factory))
    return report


def _check(report) -> None:
    failures = {name: r.failures for name, r in report.results.items() if r.failures}
    assert not failures, failures
    assert {c.value for c in ALL_CAPABILITIES} == set(report.results)
    for name, result in report.results.items():
        assert result.detected, f"{name} not detected"
        assert result.passed is True and result.tests_failed == 0 and result.tests_passed > 0, name
    assert report.conformance_level() == "FULL"


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_conformance_sqlite(kind: str, tmp_path: Path) -> None:
    counter = iter(range(100))
    report = _run(kind, lambda: str(tmp_path / f"store{next(counter)}.db"))
    _check(report)


@pytest.mark.postgres
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_conformance_postgres(kind: str, pg_url: str) -> None:
    # every capability suite gets a fresh saver on the same database (as LangGraph's own
    # PostgreSQL suite does): the suites use fresh thread ids
    report = _run(kind, lambda: pg_url)
    _check(report)
