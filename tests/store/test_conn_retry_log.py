"""A save retrying while the PostgreSQL server is down logs one sentence per retry (the
store's StoreError wording), never SQLAlchemy's text with its driver class and web link."""

from __future__ import annotations

import logging

import pytest

from inspector.bench._pgserver import TempPostgres
from inspector.errors import StoreError
from inspector.record import Checkpointer

pytestmark = pytest.mark.postgres


def test_retry_warnings_are_sentences(pg_private_server: TempPostgres, caplog: pytest.LogCaptureFixture) -> None:
    cp = Checkpointer(pg_private_server.url, name="agent", heartbeat=3600, retry_for=2.0)
    try:
        cp.save({"step": 0})
        pg_private_server.halt()
        with caplog.at_level(logging.WARNING, logger="inspector.record.checkpointer"), pytest.raises(StoreError):
            cp.save({"step": 1})
        pg_private_server.resume()
    finally:
        cp.close()
    retries = [r.getMessage() for r in caplog.records if r.getMessage().startswith("store unreachable")]
    assert len(retries) >= 2        # the first try's error and the reconnects' errors
    for text in retries:
        said = text.split(": ", 1)[1]
        assert said.startswith("Cannot reach the database at ") and "\n" not in said, text
        assert "sqlalche.me" not in said and "(psycopg" not in said, text
