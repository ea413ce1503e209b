"""Maintenance writes (prune, delete, pin) as a PostgreSQL role that may only read say so in
one sentence, before anything claims to be deleting."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from inspector.cli import main
from inspector.record import Checkpointer
from inspector.store import open_store
from tests.pg_plugin import PgServer

pytestmark = pytest.mark.postgres


@pytest.fixture
def viewer_url(pg_server: PgServer, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The store's URL as a read-only role ``init --readonly-role`` made (removed afterwards)."""
    name = f"viewer_{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("VIEWER_PW", "pw")
    assert main(["init", pg_url, "--readonly-role", name, "--readonly-password-env", "VIEWER_PW"]) == 0
    yield sa.engine.make_url(pg_url).set(username=name, password="pw").render_as_string(hide_password=False)
    engine = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    with engine.connect() as conn:
        conn.exec_driver_sql(f'DROP OWNED BY "{name}"')
    engine.dispose()
    pg_server.admin(f'DROP ROLE IF EXISTS "{name}"')


def test_apply_as_a_read_only_role_says_read_only(pg_url: str, viewer_url: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with Checkpointer(pg_url, name="done") as cp:
        for step in range(5):
            cp.save({"step": step})
    capsys.readouterr()
    display = sa.engine.make_url(viewer_url).set(drivername="postgresql+psycopg").render_as_string(hide_password=True)
    sentence = f"checkpoint-inspector: {display} is read-only here: your database role may only read.\n"
    for args in (["pin", viewer_url, "done:1"], ["prune", viewer_url, "--keep-last", "1", "--apply"],
                 ["delete", viewer_url, "done", "--apply"]):
        assert main(args) == 2
        out, err = capsys.readouterr()
        assert (out, err) == ("", sentence), args
    with open_store(pg_url) as store:     # nothing was deleted
        assert len(store.list_checkpoints(cp.run_id)) == 5
