"""``sessions`` and ``messages`` rows as the records of :mod:`hermes_core.sessions.store`
(built as every backend builds them, :mod:`hermes_core.sessions.records`), and the small
lookups the store's transactions share."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from hermes_core.sessions import records as neutral
from hermes_core.sessions.checks import check_not_undone, no_such_session
from hermes_core.sessions.sqlite.packing import unpacked_list
from hermes_core.sessions.sqlite.rows import decode_message
from hermes_core.sessions.store import SessionRecord, StoredMessage

__all__ = [
    "MESSAGE_COLUMNS",
    "SESSION_COLUMNS",
    "lineage",
    "record",
    "require_session",
    "session",
    "session_user",
    "stored_message",
    "writable_user",
]

SESSION_COLUMNS = (
    "id, user_id, parent_session_id, title, model, started_at, ended_at, end_reason, "
    "counters, state"
)
#: archived (packed) rows read back through ``hermes_unpack`` (:mod:`.packing`)
MESSAGE_COLUMNS = unpacked_list(
    (
        *("session_id", "seq", "role", "content", "tool_calls", "tool_call_id", "name"),
        *("extra", "active", "compacted", "api_content", "timestamp", "token_count"),
    )
)


def session(conn: sqlite3.Connection, session_id: str) -> SessionRecord | None:
    row = conn.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    return record(row) if row is not None else None


def require_session(conn: sqlite3.Connection, session_id: str) -> None:
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
        raise no_such_session(session_id)


def session_user(conn: sqlite3.Connection, session_id: str) -> str | None:
    """The user of ``session_id``; :class:`SessionError` when there is no such session."""
    row = conn.execute("SELECT user_id FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None:
        raise no_such_session(session_id)
    user_id: str | None = row[0]
    return user_id


def writable_user(conn: sqlite3.Connection, session_id: str) -> str | None:
    """The user of ``session_id``, a session a write may change: :class:`SessionError` when
    there is no such session, :class:`StaleSessionError` when an undo abandoned it."""
    row = conn.execute(
        "SELECT user_id, end_reason FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if row is None:
        raise no_such_session(session_id)
    check_not_undone(session_id, row[1])
    user_id: str | None = row[0]
    return user_id


def record(row: Sequence[Any]) -> SessionRecord:
    return neutral.session_record(row, counters=lambda text: json.loads(text or "{}"))


def stored_message(row: Sequence[Any]) -> StoredMessage:
    return neutral.stored_message(row, decode_message)


_LINEAGE = """
WITH RECURSIVE
    up(id, parent, depth) AS (
        SELECT id, parent_session_id, 0 FROM sessions WHERE id = :id
        UNION ALL
        SELECT s.id, s.parent_session_id, up.depth + 1 FROM sessions AS s
        JOIN up ON s.id = up.parent WHERE up.depth < 10000),
    down(id, depth, started) AS (
        SELECT id, 0, started_at FROM sessions WHERE id = :id
        UNION ALL
        SELECT s.id, down.depth + 1, s.started_at FROM sessions AS s
        JOIN down ON s.parent_session_id = down.id WHERE down.depth < 10000)
SELECT id FROM (
    SELECT id, -depth AS rank, 0 AS started FROM up WHERE depth > 0
    UNION ALL SELECT id, depth, started FROM down)
ORDER BY rank, started
"""


def lineage(conn: sqlite3.Connection, session_id: str) -> list[str]:
    """Ancestors (oldest first), the session, then descendants (generation by generation)."""
    ids: list[str] = []
    for (found,) in conn.execute(_LINEAGE, {"id": session_id}):
        if found not in ids:
            ids.append(found)
    return ids or [session_id]
