"""Deleting one person from ``state.db`` so that no byte of them is left in the files.

Why apart from the store: forgetting is rare, destructive and whole-file work (an index
rebuild, a checkpoint, a ``VACUUM``) that the store's everyday methods never need.

A deleted row's bytes survive in three places unless they are cleared: free pages and free
space inside pages (``secure_delete`` zeroes them as rows go), old FTS5 segments (an
external-content index keeps the deleted terms until its segments are merged: ``rebuild``
writes it anew from the rows left) and the ``-wal`` file (a ``TRUNCATE`` checkpoint empties
it). ``VACUUM`` then rewrites the file from the live rows only.

The mixin uses the store's ``_pool`` (:class:`~.connection.ConnectionPool`) and ``fts``.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from hermes_core.sessions.sqlite import fts as fts_index

if TYPE_CHECKING:
    from hermes_core.sessions.sqlite.connection import ConnectionPool

__all__ = ["SQLiteForgetRows"]


class SQLiteForgetRows:
    """``forget_user`` and ``scrub`` for :class:`~.store.SQLiteSessionStore`."""

    _pool: ConnectionPool
    fts: bool

    def forget_user(self, user_id: str | None) -> dict[str, int]:
        """Delete every session of ``user_id`` (``None``: the anonymous principal only) and
        all their messages (active, compacted, archived) with their index entries, in one
        transaction. Returns ``{"sessions": n, "messages": m}``. Call :meth:`scrub` after."""

        def delete(conn: sqlite3.Connection) -> dict[str, int]:
            conn.execute("PRAGMA secure_delete = ON")
            ids = [
                row[0]
                for row in conn.execute("SELECT id FROM sessions WHERE user_id IS ?", (user_id,))
            ]
            messages = 0
            for session_id in ids:
                cursor = conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
                messages += max(cursor.rowcount, 0)
            # children first: a session's parent is always the same user's
            conn.execute(
                "UPDATE sessions SET parent_session_id = NULL WHERE user_id IS ?", (user_id,)
            )
            cursor = conn.execute("DELETE FROM sessions WHERE user_id IS ?", (user_id,))
            return {"sessions": max(cursor.rowcount, 0), "messages": messages}

        return self._pool.write(delete)

    def scrub(self, *, full: bool = False) -> list[str]:
        """Leave no deleted byte in the files: rebuild the full-text index, ``VACUUM``, and
        truncate the ``-wal`` (``full`` changes nothing here: ``VACUUM`` always rewrites).
        Returns what could not be done (another process holding a read open keeps the
        checkpoint from finishing), empty when all was done."""
        del full
        problems: list[str] = []
        has_index = self._pool.read(lambda c: fts_index.index_state(c)[0])
        if has_index and (self.fts or self._pool.call(fts_index.fts5_available)):
            self._pool.write(_rebuild_index)  # a stale index too: it holds deleted terms
        elif has_index:
            problems.append(
                f"{self._pool_path()}: the full-text index tables hold terms of deleted rows "
                "and this SQLite has no FTS5 to rebuild them; run forget again with a Python "
                "whose SQLite has FTS5"
            )
        self._pool.call(_vacuum)
        busy = self._pool.call(_truncate_wal)
        if busy:
            problems.append(
                f"{self._pool_path()}-wal: another connection is reading, so the write-ahead "
                "log could not be emptied; close other hosts and run `hermes-context forget` "
                "again (nothing is left to delete, it only truncates the log)"
            )
        return problems

    def _pool_path(self) -> str:
        return str(self._pool.path)


def _rebuild_index(conn: sqlite3.Connection) -> None:
    """Write both index tables anew from the rows left (an external-content index keeps
    deleted terms in old segments until they merge)."""
    for table in fts_index.TABLES:
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")


def _vacuum(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("VACUUM")


def _truncate_wal(conn: sqlite3.Connection) -> bool:
    """Whether the checkpoint was kept from finishing (``busy``)."""
    busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return bool(busy)
