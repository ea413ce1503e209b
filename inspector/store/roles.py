"""PostgreSQL roles for a shared store: a login role that can only read (for the inspector)."""

from __future__ import annotations

import re

import sqlalchemy as sa

from inspector.errors import StoreError
from inspector.store.engine import guard
from inspector.store.native.schema import LANGGRAPH_TABLES, REQUIRED_TABLES, pins

ROLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def _ident(conn: sa.Connection, name: str) -> str:
    return conn.dialect.identifier_preparer.quote_identifier(name)


def _literal(conn: sa.Connection, text: str) -> str:
    """A SQL string literal (role passwords cannot be bound as parameters)."""
    return sa.literal(text).compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}).string


def grant_readonly_role(engine: sa.Engine, display: str, role: str, password: str | None = None) -> bool:
    """Create (if missing) a login role that may read the store's tables and nothing else.

    The role gets CONNECT on the database, USAGE on the tables' schema, SELECT on the store's
    tables — those there now, and those this user creates later (the pins table a first pin
    makes, InspectorSaver's lane tables), by default privileges — and
    ``default_transaction_read_only = on``. Idempotent; returns True when the role was created
    now. Raises StoreError when the connected user may not manage roles.
    """
    if engine.dialect.name != "postgresql":
        raise StoreError("Read-only roles exist only on PostgreSQL; open a SQLite store read-only instead "
                         "(the inspector does so by default).")
    if not ROLE_NAME.match(role):
        raise StoreError(f"{role!r} is not a plain role name (letters, digits and _; at most 63).")
    with guard(display), engine.begin() as conn:
        created = conn.execute(sa.text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": role}).first() is None
        who = _ident(conn, role)
        if created:
            conn.exec_driver_sql(f"CREATE ROLE {who} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE")
        if password is not None:
            conn.exec_driver_sql(f"ALTER ROLE {who} PASSWORD {_literal(conn, password)}")
        database = conn.execute(sa.text("SELECT current_database()")).scalar_one()
        schema = conn.execute(sa.text("SELECT current_schema()")).scalar_one()
        conn.exec_driver_sql(f"GRANT CONNECT ON DATABASE {_ident(conn, database)} TO {who}")
        conn.exec_driver_sql(f"GRANT USAGE ON SCHEMA {_ident(conn, schema)} TO {who}")
        present = {t for t in LANGGRAPH_TABLES | {pins.name}    # made by writers when first needed
                   if conn.execute(sa.text("SELECT to_regclass(:t)"), {"t": t}).scalar() is not None}
        tables = ", ".join(_ident(conn, t) for t in sorted(REQUIRED_TABLES | present))
        conn.exec_driver_sql(f"GRANT SELECT ON {tables} TO {who}")
        conn.exec_driver_sql(f"ALTER DEFAULT PRIVILEGES IN SCHEMA {_ident(conn, schema)} GRANT SELECT ON TABLES TO {who}")
        conn.exec_driver_sql(f"ALTER ROLE {who} SET default_transaction_read_only = on")
    return created


def readonly_url(url: str, role: str) -> str:
    """The store URL with the read-only role as the user (password left out)."""
    parsed = sa.engine.make_url(url).set(username=role, password=None)
    return parsed.render_as_string(hide_password=False)
