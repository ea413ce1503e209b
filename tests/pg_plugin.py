"""PostgreSQL fixtures: a real server (``CI_PG_URL``, or one started here) and fresh databases.

* ``pg_server`` (session): the server every PostgreSQL test shares. With ``CI_PG_URL`` set
  (``.ci/run`` does) that server is used; otherwise a temporary one is started with
  initdb/pg_ctl. Without either, PostgreSQL tests are skipped locally and FAIL in CI
  (``CI=true``), so a CI run can never pass by skipping them.
* ``pg_url``: a fresh, empty database (``CREATE DATABASE t_<random>``) for one test.
* ``store_url``: parametrised over ``sqlite`` and ``postgresql``: a new store target.
* ``pg_private_server``: a server of the test's own, which it may restart or stop.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from inspector.bench._pgserver import TempPostgres, find_bindir
from inspector.errors import StoreError

IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def pg_unavailable(reason: str) -> None:
    """Skip (locally) or fail (in CI) a test that needs PostgreSQL."""
    if IN_CI:
        pytest.fail(f"PostgreSQL is required in CI but unavailable: {reason}", pytrace=False)
    pytest.skip(f"PostgreSQL unavailable: {reason}")


@dataclass
class PgServer:
    """A reachable server: an admin URL (may CREATE DATABASE) and, if ours, its process."""

    admin_url: str
    temp: TempPostgres | None = None

    def url_for(self, database: str) -> str:
        """The SQLAlchemy URL of another database on this server."""
        url = sa.engine.make_url(self.admin_url)
        if url.drivername == "postgresql":
            url = url.set(drivername="postgresql+psycopg")
        return url.set(database=database).render_as_string(hide_password=False)

    def admin(self, *statements: str) -> list:
        """Run statements outside a transaction on the admin database; rows of the last."""
        engine = sa.create_engine(self.url_for(sa.engine.make_url(self.admin_url).database or "postgres"),
                                  isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
        try:
            with engine.connect() as conn:
                result = None
                for stmt in statements:
                    result = conn.exec_driver_sql(stmt)
                return list(result) if result is not None and result.returns_rows else []
        finally:
            engine.dispose()

    def create_database(self) -> str:
        """A new empty database; returns its name."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        version = int(self.admin("SHOW server_version_num")[0][0])
        # FILE_COPY (PostgreSQL 15+) is much faster than WAL-logging a copy of the template
        self.admin(f'CREATE DATABASE "{name}"' + (" STRATEGY FILE_COPY" if version >= 150000 else ""))
        return name

    def drop_database(self, name: str) -> None:
        """Drop a database even if connections are left open."""
        self.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _start_temp_server() -> TempPostgres:
    if find_bindir() is None:
        pg_unavailable("CI_PG_URL is not set and the PostgreSQL server binaries (initdb, pg_ctl) "
                       "are not installed (apt-get install postgresql)")
    try:
        return TempPostgres().start()
    except (StoreError, OSError) as err:
        pg_unavailable(f"could not start a temporary server: {err}")
        raise  # unreachable: pg_unavailable raises


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """The PostgreSQL server of the test session."""
    url = os.environ.get("CI_PG_URL", "").strip()
    if url:
        server = PgServer(url)
        try:
            server.admin("SELECT 1")
        except sa.exc.SQLAlchemyError as err:
            pg_unavailable(f"CI_PG_URL={sa.engine.make_url(url).render_as_string(hide_password=True)} "
                           f"is not reachable ({str(err).splitlines()[0]})")
        yield server
        return
    temp = _start_temp_server()
    try:
        yield PgServer(temp.url, temp)
    finally:
        temp.stop()


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """The SQLAlchemy URL of a fresh database, dropped after the test."""
    name = pg_server.create_database()
    try:
        yield pg_server.url_for(name)
    finally:
        pg_server.drop_database(name)


@pytest.fixture(params=[pytest.param("sqlite"), pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new store target on each backend: a SQLite file path or a fresh PostgreSQL database URL."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    return request.getfixturevalue("pg_url")


@pytest.fixture
def pg_private_server() -> Iterator[TempPostgres]:
    """A temporary server owned by one test (it may restart it); removed afterwards."""
    temp = _start_temp_server()
    try:
        yield temp
    finally:
        temp.stop()


def pytest_report_header(config: pytest.Config) -> str:
    """Say which PostgreSQL the PostgreSQL tests use."""
    url = os.environ.get("CI_PG_URL", "").strip()
    if url:
        where = sa.engine.make_url(url).render_as_string(hide_password=True)
    else:
        bindir = find_bindir()
        where = f"a temporary server from {bindir}" if bindir else "none (PostgreSQL tests will skip)"
    return f"postgresql: {where}{' (required: CI=true)' if IN_CI else ''}"
