"""Deleting one person from the PostgreSQL memory tables (``memory.backend: postgres``).

Why here and not in the memory documents class: forgetting a person is one transaction over
four tables (the person's blocks and the copies kept of them, their staged writes, their
audit rows), then a ``VACUUM`` of each (see :mod:`.sessions.forget_rows` for why not
``VACUUM FULL`` unless asked). The block every user shares (``scope = ''``, target
``memory``) is never deleted: the person's entries in it are reported by the core.

For the anonymous principal (``None``) the rows are its ``USER.md`` (``scope = ''``, target
``user``), the staged writes that carry no user id, and the audit rows it owns by the rule of
the home's audit files (:func:`hermes_core.lifecycle.forget_files.owns_line`): a named user's
rows name them at the top level or in the provenance; the anonymous principal's name no user
anywhere and were not written by a person at the command line about anything but its own
``USER.md``.

When a snapshot from before the delete still holds the deleted rows (see
:mod:`.sessions.forget_rows`), the rows are deleted but the vacuum cannot remove them: the
error raised says so and what was deleted, so the report does not call the person forgotten.
"""

from __future__ import annotations

from typing import Any

import psycopg

from hermes_core.errors import ProviderError
from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.memory.schema import AUDIT, BLOCKS, HISTORY, PENDING
from hermes_plugins.postgres.sessions.forget_rows import (
    current_xid,
    held_back,
    snapshot_holders,
    vacuum_tables,
)

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
        audit = (
            "coalesce(record -> 'user_id', 'null') = 'null'::jsonb"
            " AND coalesce(record -> 'provenance' -> 'user_id', 'null') = 'null'::jsonb"
            " AND (coalesce(record ->> 'actor', '') NOT LIKE 'cli:%%'"
            " OR (record ->> 'store' = 'memory' AND record ->> 'target' = 'user'))"
        )
        params: tuple[Any, ...] = ()
    else:
        blocks = "scope = %s"
        staged = "(record::jsonb ->> 'user_id') = %s"
        audit = "(record ->> 'user_id') = %s OR (record -> 'provenance' ->> 'user_id') = %s"
        params = (user_id,)
    counts: dict[str, int] = {}
    for kind, sql, args in (
        ("memory blocks", f"DELETE FROM {BLOCKS} WHERE {blocks}", params),
        ("memory copies", f"DELETE FROM {HISTORY} WHERE {blocks}", params),
        ("staged writes", f"DELETE FROM {PENDING} WHERE {staged}", params),
        ("audit rows", f"DELETE FROM {AUDIT} WHERE {audit}", params * 2),
    ):
        counts[kind] = max(conn.execute(sql, args).rowcount, 0)
    return counts


def forget_memory_rows(
    database: Database, user_id: str | None, *, full: bool = False
) -> dict[str, int]:
    """Delete ``user_id``'s memory rows in one transaction, then vacuum the tables; the
    counts per kind. Raises ``psycopg.Error`` when the delete fails (nothing was deleted),
    ``ProviderError`` when a snapshot older than the delete keeps the deleted rows."""
    counts, xid = database.run(
        lambda conn: (_delete(conn, user_id), current_xid(conn)), idempotent=True
    )
    if not counts:
        return counts
    tables = (BLOCKS, HISTORY, PENDING, AUDIT)
    holders = snapshot_holders(database, xid)
    vacuum_tables(database, tables, full=full)
    holders += snapshot_holders(database, xid)
    if holders:
        done = ", ".join(f"{n} {kind}" for kind, n in counts.items())
        raise ProviderError(f"deleted {done}, but {held_back(holders, tables)}")
    return counts
