"""Deleting one person from the PostgreSQL memory tables (``memory.backend: postgres``).

Why here and not in the memory documents class: forgetting a person is one transaction over
four tables (the person's blocks and the copies kept of them, their staged writes, their
audit rows), then a ``VACUUM`` of each (see :mod:`.sessions.forget_rows` for why not
``VACUUM FULL`` unless asked). The block every user shares (``scope = ''``, target
``memory``) is never deleted: the person's entries in it are reported by the core.

For the anonymous principal (``None``) the rows are its ``USER.md`` (``scope = ''``, target
``user``), the staged writes and audit rows that carry no user id.
"""

from __future__ import annotations

from typing import Any

import psycopg

from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.memory.schema import AUDIT, BLOCKS, HISTORY, PENDING
from hermes_plugins.postgres.sessions.forget_rows import vacuum_tables

__all__ = ["forget_memory_rows"]

Conn = psycopg.Connection[Any]


def _tables_exist(conn: Conn) -> bool:
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (AUDIT,)).fetchone()
    return bool(row and row[0])


def _delete(conn: Conn, user_id: str | None) -> dict[str, int]:
    if not _tables_exist(conn):
        return {}
    if user_id is None:
        blocks = "scope = '' AND target = 'user'"
        staged = "(record::jsonb -> 'user_id') = 'null'::jsonb"
        audit = "(record -> 'user_id') = 'null'::jsonb"
        params: tuple[Any, ...] = ()
    else:
        blocks = "scope = %s"
        staged = "(record::jsonb ->> 'user_id') = %s"
        audit = "(record ->> 'user_id') = %s"
        params = (user_id,)
    counts: dict[str, int] = {}
    for kind, sql in (
        ("memory blocks", f"DELETE FROM {BLOCKS} WHERE {blocks}"),
        ("memory copies", f"DELETE FROM {HISTORY} WHERE {blocks}"),
        ("staged writes", f"DELETE FROM {PENDING} WHERE {staged}"),
        ("audit rows", f"DELETE FROM {AUDIT} WHERE {audit}"),
    ):
        counts[kind] = max(conn.execute(sql, params).rowcount, 0)
    return counts


def forget_memory_rows(
    database: Database, user_id: str | None, *, full: bool = False
) -> dict[str, int]:
    """Delete ``user_id``'s memory rows in one transaction, then vacuum the tables; the
    counts per kind. Raises ``psycopg.Error`` when the delete fails (nothing was deleted)."""
    counts = database.run(lambda conn: _delete(conn, user_id), idempotent=True)
    if counts:
        vacuum_tables(database, (BLOCKS, HISTORY, PENDING, AUDIT), full=full)
    return counts
