"""Deleting one person from the PostgreSQL session tables, then vacuuming them.

Why plain ``VACUUM`` and not ``VACUUM FULL``: the rows are gone for every transaction that
starts after the delete commits; ``VACUUM`` then removes the dead tuples and their index
entries (the GIN search index included) so the space is reused, without blocking the other
hosts that share the database. ``VACUUM FULL`` rewrites each table into new files (no old
tuple bytes left on disk) but holds an ``ACCESS EXCLUSIVE`` lock on it for the whole
rewrite, stopping every host's turns: it is offered (``full=True``, ``forget --vacuum-full``)
for an operator who can afford that pause, never run on its own.

Why the delete's transaction id is kept: a transaction that took its snapshot before the
delete committed (an open ``REPEATABLE READ`` transaction, a long report, a prepared
transaction, a replication slot or a standby's feedback) still sees the rows, and no
``VACUUM`` (``FULL`` neither) may remove them while it lasts: the tuples stay on the pages.
:func:`snapshot_holders` finds those holders, before and after the vacuum, by comparing
their oldest transaction id with the delete's, and the scrub reports them instead of
calling the person forgotten.

The mixin uses the store's ``_run`` and ``_database``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import psycopg

from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.sessions.rows import text_in
from hermes_plugins.postgres.sessions.schema import MESSAGES, SESSIONS

__all__ = [
    "PostgresForgetRows",
    "current_xid",
    "held_back",
    "snapshot_holders",
    "vacuum_tables",
]

T = TypeVar("T")
Conn = psycopg.Connection[Any]

#: who holds a snapshot from before transaction %(x)s (compared by age: the older, the
#: larger), in this database or in all of them (a standby's feedback, a physical slot)
_HOLDERS = """
SELECT 'backend ' || pid || coalesce(' (' || nullif(application_name, '') || ')', '')
  FROM pg_stat_activity
 WHERE pid <> pg_backend_pid()
   AND (datname = current_database() OR datname IS NULL)
   AND backend_type IS DISTINCT FROM 'autovacuum worker'
   AND greatest(age(backend_xmin), age(backend_xid)) >= age(%(x)s::xid)
UNION ALL
SELECT 'prepared transaction ' || quote_literal(gid)
  FROM pg_prepared_xacts
 WHERE database = current_database() AND age(transaction) >= age(%(x)s::xid)
UNION ALL
SELECT 'replication slot ' || quote_literal(slot_name)
  FROM pg_replication_slots
 WHERE (database = current_database() OR database IS NULL) AND age(xmin) >= age(%(x)s::xid)
"""


def current_xid(conn: Conn) -> int:
    """The id of the transaction ``conn`` is in (assigning one), without its epoch."""
    row = conn.execute("SELECT txid_current() % 4294967296").fetchone()
    return int(row[0]) if row else 0


def snapshot_holders(database: Database, xid: int) -> list[str]:
    """What still holds a snapshot taken before transaction ``xid`` ended (empty: nothing,
    so a vacuum may remove every tuple that transaction deleted)."""
    with database.connection() as conn:
        conn.autocommit = True
        try:
            return [str(r[0]) for r in conn.execute(_HOLDERS, {"x": str(xid)}).fetchall()]
        finally:
            conn.autocommit = False


def held_back(holders: Sequence[str], tables: Sequence[str]) -> str:
    """The report's sentence for deleted rows a vacuum could not remove."""
    shown = ", ".join(sorted(set(holders))[:5]) + (" ..." if len(set(holders)) > 5 else "")
    return (
        f"{', '.join(tables)}: the user's deleted rows could not be removed yet: "
        f"{shown} hold(s) a snapshot from before the delete, so VACUUM must keep them (that "
        "snapshot still reads them) and they stay in the table files; once those "
        "transactions end (or the slot is dropped), run forget again (it deletes nothing "
        "more and vacuums them away; add --vacuum-full to rewrite the files as well)"
    )


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
    #: the id of the last delete's transaction, which :meth:`scrub` checks snapshots against
    _forget_xid: int | None = None

    def forget_user(self, user_id: str | None) -> dict[str, int]:
        """Delete every session of ``user_id`` (``None``: the anonymous principal only) and
        all their messages (active, compacted, archived), in one transaction. Returns
        ``{"sessions": n, "messages": m}``. Call :meth:`scrub` after."""
        stored = text_in(user_id)

        def delete(conn: Conn) -> tuple[dict[str, int], int]:
            owned = f"SELECT id FROM {SESSIONS} WHERE user_id IS NOT DISTINCT FROM %s"
            cursor = conn.execute(
                f"DELETE FROM {MESSAGES} WHERE session_id IN ({owned})", (stored,)
            )
            messages = max(cursor.rowcount, 0)
            cursor = conn.execute(
                f"DELETE FROM {SESSIONS} WHERE user_id IS NOT DISTINCT FROM %s", (stored,)
            )
            counts = {"sessions": max(cursor.rowcount, 0), "messages": messages}
            return counts, current_xid(conn)

        counts, xid = self._run(delete, idempotent=True)
        self._forget_xid = xid
        result: dict[str, int] = counts
        return result

    def scrub(self, *, full: bool = False) -> list[str]:
        """``VACUUM`` the session tables (see the module docstring); returns what could not
        be done (empty when all was): a failed vacuum, or deleted rows a snapshot older than
        the delete keeps on the pages."""
        xid = self._forget_xid
        try:
            holders = snapshot_holders(self._database, xid) if xid is not None else []
            vacuum_tables(self._database, (MESSAGES, SESSIONS), full=full)
            if xid is not None:
                holders += snapshot_holders(self._database, xid)
        except psycopg.Error as exc:
            return [f"VACUUM of the session tables failed ({type(exc).__name__}); run it again"]
        return [held_back(holders, (MESSAGES, SESSIONS))] if holders else []
