"""Versioned tables in the schema ``hermes``, migrated under an advisory lock.

Why shared: the session store and memory each keep their tables, a one-row version table and
a list of migrations in the same schema, and must both be opened by several hosts at once
without migrating twice. Each reads its version first and refuses a newer one (or its tables
without a version: another program's) before anything is written; the missing migrations
then run in the caller's transaction under a transaction-level advisory lock of its own, and
the version is read again once the lock is held, so hosts that start together migrate once
and the others find the work done.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from hermes_core.sessions.checks import newer_schema

__all__ = ["SCHEMA", "Step", "existing", "migrate", "read_version"]

SCHEMA = "hermes"

Conn = psycopg.Connection[Any]
#: a migration step: one SQL statement, or a function of the connection (for backfills)
Step = str | Callable[[Conn], None]


def existing(conn: Conn, *names: str) -> set[str]:
    """Which of the relations ``names`` exist in :data:`SCHEMA`.

    A query on the catalog tables, not ``to_regclass``: name lookups use the backend's
    catalog cache, which is not refreshed by waiting for an advisory lock, so right after
    the lock another host's fresh tables could still look absent."""
    rows = conn.execute(
        "SELECT c.relname FROM pg_catalog.pg_class AS c "
        "JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = ANY(%s::text[])",
        (SCHEMA, list(names)),
    ).fetchall()
    return {str(row[0]) for row in rows}


def read_version(
    conn: Conn,
    *,
    table: str,
    tables: Sequence[str],
    known: int,
    label: str,
    what: str,
    error: type[Exception],
) -> int:
    """The version in :data:`SCHEMA`'s ``table`` (0: none yet). Reads only.

    ``tables`` are the component's own tables; when they exist without ``table`` they are
    another program's (``what`` names them). ``known`` is the newest version this code knows;
    ``label`` names the store in the ``error`` raised."""
    found = existing(conn, table, *tables)
    if table not in found:
        if found:
            raise error(
                f"{label}: schema {SCHEMA!r} holds {what} that are not hermes-context's (no "
                "schema version); point sessions.dsn at another database (nothing was changed)"
            )
        return 0
    row = conn.execute(f"SELECT max(version) FROM {SCHEMA}.{table}").fetchone()
    version = int(row[0]) if row and row[0] is not None else 0
    if version > known:
        raise error(newer_schema(label, version, known))
    return version


def _create_schema(conn: Conn) -> None:
    exists = conn.execute(
        "SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = %s", (SCHEMA,)
    ).fetchone()
    if exists:
        return
    try:
        with conn.transaction():  # a savepoint: another component may create it meanwhile
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
    except psycopg.errors.UniqueViolation:
        pass  # created by someone else between the check and ours: it is there now


def migrate(
    conn: Conn,
    *,
    lock: int,
    current: Callable[[Conn], int],
    table: str,
    migrations: Sequence[Sequence[Step]],
) -> int | None:
    """Run the missing ``migrations`` (``migrations[n - 1]`` takes version n - 1 to n) inside
    the caller's transaction, holding the advisory ``lock``; ``current`` reads the version.
    Returns the version found, or ``None`` when it was current once the lock was held."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
    version = current(conn)  # again, now that no one else can be migrating
    target = len(migrations)
    if version == target:
        return None
    _create_schema(conn)
    if version == 0:
        conn.execute(
            f"CREATE TABLE {SCHEMA}.{table} (version integer NOT NULL, "
            "only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row))"
        )
    for number in range(version + 1, target + 1):
        for step in migrations[number - 1]:
            if isinstance(step, str):
                conn.execute(step)
            else:
                step(conn)
    conn.execute(
        f"INSERT INTO {SCHEMA}.{table} (version) VALUES (%s) "
        "ON CONFLICT (only_row) DO UPDATE SET version = excluded.version",
        (target,),
    )
    return version
