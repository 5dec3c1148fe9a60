"""Deleting one person from the PostgreSQL session tables, then vacuuming them.

Why plain ``VACUUM`` and not ``VACUUM FULL``: the rows are gone for every reader the moment
the delete commits; ``VACUUM`` then removes the dead tuples and their index entries (the GIN
search index included) so the space is reused, without blocking the other hosts that share
the database. ``VACUUM FULL`` rewrites each table into new files (no old tuple bytes left on
disk) but holds an ``ACCESS EXCLUSIVE`` lock on it for the whole rewrite, stopping every
host's turns: it is offered (``full=True``, ``forget --vacuum-full``) for an operator who
can afford that pause, never run on its own.

The mixin uses the store's ``_run`` and ``_database``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import psycopg

from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.sessions.rows import text_in
from hermes_plugins.postgres.sessions.schema import MESSAGES, SESSIONS

__all__ = ["PostgresForgetRows", "vacuum_tables"]

T = TypeVar("T")
Conn = psycopg.Connection[Any]


def vacuum_tables(database: Database, tables: Sequence[str], *, full: bool = False) -> None:
    """``VACUUM`` (``full``: ``VACUUM FULL``) and ``ANALYZE`` ``tables``, outside a
    transaction (PostgreSQL refuses it inside one)."""
    verb = "VACUUM (FULL, ANALYZE)" if full else "VACUUM (ANALYZE)"
    with database.connection() as conn:
        conn.autocommit = True
        try:
            for table in tables:
                conn.execute(f"{verb} {table}")
        finally:
            conn.autocommit = False


class PostgresForgetRows:
    """``forget_user`` and ``scrub`` for
    :class:`~hermes_plugins.postgres.sessions.store.PostgresSessionStore`."""

    _database: Database
    _run: Callable[..., Any]

    def forget_user(self, user_id: str | None) -> dict[str, int]:
        """Delete every session of ``user_id`` (``None``: the anonymous principal only) and
        all their messages (active, compacted, archived), in one transaction. Returns
        ``{"sessions": n, "messages": m}``. Call :meth:`scrub` after."""
        stored = text_in(user_id)

        def delete(conn: Conn) -> dict[str, int]:
            owned = f"SELECT id FROM {SESSIONS} WHERE user_id IS NOT DISTINCT FROM %s"
            cursor = conn.execute(
                f"DELETE FROM {MESSAGES} WHERE session_id IN ({owned})", (stored,)
            )
            messages = max(cursor.rowcount, 0)
            cursor = conn.execute(
                f"DELETE FROM {SESSIONS} WHERE user_id IS NOT DISTINCT FROM %s", (stored,)
            )
            return {"sessions": max(cursor.rowcount, 0), "messages": messages}

        result: dict[str, int] = self._run(delete, idempotent=True)
        return result

    def scrub(self, *, full: bool = False) -> list[str]:
        """``VACUUM`` the session tables (see the module docstring); returns what could not
        be done (empty when all was)."""
        try:
            vacuum_tables(self._database, (MESSAGES, SESSIONS), full=full)
        except psycopg.Error as exc:
            return [f"VACUUM of the session tables failed ({type(exc).__name__}); run it again"]
        return []
