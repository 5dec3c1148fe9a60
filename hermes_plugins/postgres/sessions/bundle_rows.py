"""Writing whole sessions back into PostgreSQL, as the SQLite mixin does
(:mod:`hermes_core.sessions.sqlite.bundle_rows`): every row's ``seq``, flags, place in the
active view, timestamp and token count, and the session's counters, state and parent link,
kept as exported, all sessions of an import in one transaction. The ``search`` column is
generated, so the index is right as soon as the transaction commits. Strings go through
:func:`~.rows.text_in` like every other write of this backend.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeVar

import psycopg

from hermes_core.sessions import checks
from hermes_core.sessions.sqlite.bundle_rows import BundleSession, collision_error
from hermes_core.sessions.sqlite.rows import EncodedMessage, owner_token
from hermes_plugins.postgres.sessions.rows import (
    counters_value,
    message_values,
    state_text,
    text_in,
    text_out,
)
from hermes_plugins.postgres.sessions.schema import MESSAGES, SESSIONS

__all__ = ["PostgresBundleRows"]

T = TypeVar("T")
Conn = psycopg.Connection[Any]

_SESSION = (
    f"INSERT INTO {SESSIONS} (id, parent_session_id, user_id, title, model, started_at, "
    "ended_at, end_reason, counters, state) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
_MESSAGE = (
    f"INSERT INTO {MESSAGES} (session_id, seq, pos, role, content, tool_calls, tool_call_id, "
    'name, extra, tool_names, tool_args, owner, api_content, token_count, "timestamp", '
    "active, compacted) VALUES "
    "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


class PostgresBundleRows:
    """Mixin of :class:`~hermes_plugins.postgres.sessions.PostgresSessionStore`: uses its
    ``_run`` (one transaction; a database error becomes a ``SessionError``)."""

    _run: Callable[..., Any]

    def existing_sessions(self, session_ids: Collection[str]) -> set[str]:
        """Which of ``session_ids`` the store holds (under any user)."""
        wanted = [text_in(i) for i in session_ids]
        found: list[str] = self._run(lambda c: _present(c, wanted), idempotent=True)
        return {text_out(i) or "" for i in found}

    def import_sessions(self, sessions: Sequence[BundleSession]) -> int:
        """Insert ``sessions`` with all their rows in one transaction; returns the rows
        written. Any id already stored refuses the whole import."""
        prepared = [(s, s.encoded(), state_text(s.record.state)) for s in sessions]
        for session, _, _ in prepared:
            checks.check_counters(session.record.counters)

        def insert(conn: Conn) -> int:
            found = _present(conn, [text_in(s.record.id) for s, _, _ in prepared])
            if found:
                raise collision_error({text_out(i) or "" for i in found})
            written = 0
            for session, encoded, state in prepared:
                written += _insert(conn, session, encoded, state)
            return written

        # not retried: after a lost answer the rows may have landed, and a retry would then
        # report them as a collision; the error says the connection was lost instead
        written: int = self._run(insert, idempotent=False)
        return written


def _present(conn: Conn, ids: Sequence[str | None]) -> list[str]:
    if not ids:
        return []
    rows = conn.execute(f"SELECT id FROM {SESSIONS} WHERE id = ANY(%s)", (list(ids),))
    return [row[0] for row in rows.fetchall()]


def _insert(
    conn: Conn, session: BundleSession, encoded: Sequence[EncodedMessage], state: str
) -> int:
    record = session.record
    stored = text_in(record.id)
    conn.execute(
        _SESSION,
        (
            stored,
            text_in(record.parent_session_id),
            text_in(record.user_id),
            text_in(record.title),
            text_in(record.model),
            record.started_at,
            record.ended_at,
            text_in(record.end_reason),
            counters_value(record.counters),
            state,
        ),
    )
    if not session.rows:
        return 0
    owner = owner_token(record.user_id)
    with conn.cursor() as cursor:
        cursor.executemany(
            _MESSAGE,
            [
                (
                    stored,
                    row.seq,
                    row.pos,
                    *message_values(enc),
                    owner,
                    text_in(row.api_content),
                    row.token_count,
                    row.timestamp,
                    row.active,
                    row.compacted,
                )
                for row, enc in zip(session.rows, encoded, strict=True)
            ],
        )
    return len(session.rows)
