"""The Checks column of a LangGraph thread's timeline says what the Tasks tab says of each
checkpoint: its node tasks (finished, failed, interrupted, or next and not run yet), counted
from the writes the listing reads; for every checkpoint of the corpus LangGraph wrote, on
SQLite and PostgreSQL, read whole and a page at a time."""

from __future__ import annotations

import pytest

from inspector import taskstate
from inspector.store import open_store


def _checks(info) -> tuple[int, int]:
    return info.checks_passed, info.checks_total


def _compare(target: str) -> None:
    rows = differ = 0
    scored: set[str] = set()
    with open_store(target) as store:
        for run in store.list_runs():
            whole = store.list_checkpoints(run.id)
            paged = [info for seq in range(0, len(whole), 2)
                     for info in store.list_checkpoints(run.id, after_seq=seq - 1, limit=2)]
            assert [(i.id, _checks(i)) for i in paged] == [(i.id, _checks(i)) for i in whole]
            for info in whole:
                snap = store.load(info.id)
                board = taskstate.score(snap.tasks) if snap.tasks else taskstate.Score()
                rows += 1
                if _checks(info) != (board.checks_passed, board.checks_total):
                    differ += 1
                    print(run.id, info.seq, info.kind, _checks(info), board)
                if info.checks_total and info.seq != run.head_seq:
                    scored.add(info.kind)
    assert rows > 50 and differ == 0
    assert "loop" in scored and scored & {"update", "fork"}      # not only heads


def test_the_checks_column_is_the_tasks_tab_on_sqlite(corpus_sqlite) -> None:
    _compare(str(corpus_sqlite))


@pytest.mark.postgres
def test_the_checks_column_is_the_tasks_tab_on_postgres(corpus_pg) -> None:
    _compare(corpus_pg)
