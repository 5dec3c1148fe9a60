"""The memory tables, their schema version and forward migrations, in the schema ``hermes``.

Why like this: the session store lives in the same schema (``hermes.sessions``,
``hermes.messages``, its version in ``hermes.sessions_schema``); memory keeps to tables named
``memory_*`` with its version in ``hermes.memory_schema`` and migrates under its own advisory
lock (:data:`MIGRATION_LOCK`), so either can be installed, upgraded or dropped without the
other.

* ``memory_blocks``: one row per (scope, target): ``scope`` is the user id that owns the text,
  or ``''`` for the text every user shares; ``version`` is bumped by a trigger on every
  update, an operator's ``UPDATE`` included, so a writer that read version *n* can store its
  text only while the row is still at *n* (optimistic concurrency).
* ``memory_history``: the copies kept before a reset and of a drifted text.
* ``memory_pending``: staged writes, one JSON record per row.
* ``memory_audit`` (version 2): the audit log, one row per decision about a write (who wrote
  what, when, from where; ``memory audit``), append-only.
* ``memory_blocks.meta`` (version 3): the dates of the block's entries
  (:mod:`hermes_plugins.postgres.memory.dates`).
"""

from __future__ import annotations

from typing import Any

import psycopg

from hermes_core.errors import MemoryStoreError
from hermes_plugins.postgres import migrations
from hermes_plugins.postgres.memory.dates import V3_DATES
from hermes_plugins.postgres.migrations import SCHEMA

__all__ = [
    "AUDIT",
    "BLOCKS",
    "HISTORY",
    "MIGRATIONS",
    "MIGRATION_LOCK",
    "PENDING",
    "SCHEMA",
    "SCHEMA_VERSION",
    "VERSION_TABLE",
    "migrate",
    "read_version",
]

BLOCKS = f"{SCHEMA}.memory_blocks"
HISTORY = f"{SCHEMA}.memory_history"
PENDING = f"{SCHEMA}.memory_pending"
AUDIT = f"{SCHEMA}.memory_audit"
_VERSION = "memory_schema"
VERSION_TABLE = f"{SCHEMA}.{_VERSION}"
_TABLES = tuple(name.split(".", 1)[1] for name in (BLOCKS, HISTORY, PENDING, AUDIT))
_BUMP = f"{SCHEMA}.memory_blocks_bump"
#: ``pg_advisory_xact_lock`` key of memory's schema changes: "hermes" and 2 (sessions: 1)
MIGRATION_LOCK = 0x6865726D65730002

_V1: tuple[str, ...] = (
    f"""CREATE TABLE {BLOCKS} (
        scope text NOT NULL,
        target text NOT NULL CHECK (target IN ('memory', 'user')),
        text text NOT NULL,
        version bigint NOT NULL DEFAULT 1,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (scope, target)
    )""",
    f"""CREATE FUNCTION {_BUMP}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.version := OLD.version + 1;
            NEW.updated_at := now();
            RETURN NEW;
        END $$""",
    f"""CREATE TRIGGER memory_blocks_bump BEFORE UPDATE ON {BLOCKS}
        FOR EACH ROW EXECUTE FUNCTION {_BUMP}()""",
    f"""CREATE TABLE {HISTORY} (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        scope text NOT NULL,
        target text NOT NULL,
        version bigint NOT NULL,
        text text NOT NULL,
        reason text NOT NULL CHECK (reason IN ('drift', 'reset')),
        kept_at timestamptz NOT NULL DEFAULT now()
    )""",
    f"CREATE INDEX memory_history_key ON {HISTORY} (scope, target, reason, kept_at)",
    f"""CREATE TABLE {PENDING} (
        id text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{{8}}$'),
        created double precision NOT NULL,
        record text NOT NULL
    )""",
)

_V2: tuple[str, ...] = (
    f"""CREATE TABLE {AUDIT} (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now(),
        scope text NOT NULL,
        event text NOT NULL,
        record jsonb NOT NULL
    )""",
    f"CREATE INDEX memory_audit_at ON {AUDIT} (at)",
)

#: MIGRATIONS[n - 1] takes the memory tables from version n - 1 to version n
MIGRATIONS: tuple[tuple[str, ...], ...] = (_V1, _V2, V3_DATES)
SCHEMA_VERSION = len(MIGRATIONS)


def _check_server(conn: psycopg.Connection[Any], where: str) -> None:
    row = conn.execute("SELECT current_setting('server_encoding')").fetchone()
    encoding = str(row[0]) if row else ""
    if encoding.upper() not in ("UTF8", "UTF-8"):
        raise MemoryStoreError(
            f"memory in PostgreSQL {where}: the database's encoding is {encoding}, which cannot "
            "hold every entry; use a database created with ENCODING 'UTF8' (nothing was changed)"
        )


def read_version(conn: psycopg.Connection[Any], where: str) -> int:
    """The memory tables' schema version (0: none yet), after refusing a newer one or
    ``memory_*`` tables without a version (another program's). Reads only."""
    return migrations.read_version(
        conn,
        table=_VERSION,
        tables=_TABLES,
        known=SCHEMA_VERSION,
        label=f"memory in PostgreSQL {where}",
        what="memory_* tables",
        error=MemoryStoreError,
    )


def migrate(conn: psycopg.Connection[Any], where: str) -> int | None:
    """Run the missing migrations inside the caller's transaction, holding the migration
    lock; returns the version found (None when it was already current)."""
    _check_server(conn, where)
    if read_version(conn, where) == SCHEMA_VERSION:
        return None  # the common case: no lock, no waiting behind another host's start
    return migrations.migrate(
        conn,
        lock=MIGRATION_LOCK,
        current=lambda c: read_version(c, where),
        table=_VERSION,
        migrations=MIGRATIONS,
    )
