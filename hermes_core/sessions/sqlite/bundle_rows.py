"""Writing whole sessions back, rows and bookkeeping as they were: what ``import`` needs.

Why apart from the store's own writes: an append numbers rows on and stamps them with the
clock; a restored session must keep every row's ``seq``, ``active``/``compacted`` flags, its
place in the active view, its timestamp and token count, and the session's counters, state
and parent link exactly as exported. One transaction holds every session of an import, so a
failure leaves the store as it was. The index follows by itself (the insert triggers of
:mod:`.fts`).

The two records below are every backend's (the PostgreSQL mixin uses them too).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_core.errors import SessionError
from hermes_core.sessions import checks
from hermes_core.sessions.sqlite.connection import ConnectionPool
from hermes_core.sessions.sqlite.rows import EncodedMessage, encode_message, owner_token
from hermes_core.sessions.store import SessionRecord

__all__ = ["BundleRow", "BundleSession", "SQLiteBundleRows", "collision_error"]


@dataclass(frozen=True)
class BundleRow:
    """One ``messages`` row to restore; ``pos`` is its place in the active view (``None``
    for an archived row)."""

    seq: int
    message: Mapping[str, Any]
    active: bool
    compacted: bool
    pos: int | None
    api_content: str | None
    timestamp: float
    token_count: int | None


@dataclass(frozen=True)
class BundleSession:
    """One session to restore: its row and every one of its message rows."""

    record: SessionRecord
    rows: Sequence[BundleRow] = field(default_factory=tuple)

    def encoded(self) -> list[EncodedMessage]:
        """The rows' messages as columns; :class:`SessionError` for one JSON cannot hold."""
        return [encode_message(row.message, row.seq) for row in self.rows]


def collision_error(found: Collection[str]) -> SessionError:
    """The sessions that exist already, named (at most ten), and what to do."""
    names = sorted(found)
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    return SessionError(
        f"{len(names)} session(s) of the bundle exist in the target store already ({shown}); "
        "nothing was imported. Import with --skip-existing to keep the stored ones and import "
        "the rest"
    )


class SQLiteBundleRows:
    """Mixin of :class:`~hermes_core.sessions.sqlite.SQLiteSessionStore`: uses its
    ``_pool`` (``read`` and ``write``: one ``BEGIN IMMEDIATE`` transaction, retried when busy)."""

    _pool: ConnectionPool

    def existing_sessions(self, session_ids: Collection[str]) -> set[str]:
        """Which of ``session_ids`` the store holds (under any user)."""
        wanted = list(session_ids)
        return set(self._pool.read(lambda c: _present(c, wanted)))

    def import_sessions(self, sessions: Sequence[BundleSession]) -> int:
        """Insert ``sessions`` with all their rows in one transaction; returns the rows
        written. Any id already stored refuses the whole import (:func:`collision_error`)."""
        prepared = [(s, s.encoded()) for s in sessions]
        for session, _ in prepared:
            checks.dump_json(dict(session.record.state), "state")
            checks.check_counters(session.record.counters)

        def insert(conn: sqlite3.Connection) -> int:
            found = _present(conn, [s.record.id for s, _ in prepared])
            if found:
                raise collision_error(found)
            written = 0
            for session, encoded in prepared:
                written += _insert(conn, session, encoded)
            return written

        written: int = self._pool.write(insert)
        return written


def _present(conn: sqlite3.Connection, ids: Sequence[str]) -> list[str]:
    found: list[str] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        found += [
            row[0] for row in conn.execute(f"SELECT id FROM sessions WHERE id IN ({marks})", chunk)
        ]
    return found


def _insert(
    conn: sqlite3.Connection, session: BundleSession, encoded: Sequence[EncodedMessage]
) -> int:
    record = session.record
    conn.execute(
        "INSERT INTO sessions (id, parent_session_id, user_id, title, model, started_at, "
        "ended_at, end_reason, counters, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            record.id,
            record.parent_session_id,
            record.user_id,
            record.title,
            record.model,
            record.started_at,
            record.ended_at,
            record.end_reason,
            json.dumps(dict(record.counters)),
            checks.dump_json(dict(record.state), "state"),
        ),
    )
    owner = owner_token(record.user_id)
    conn.executemany(
        "INSERT INTO messages (session_id, seq, pos, role, content, tool_calls, tool_call_id, "
        "name, extra, tool_names, tool_args, owner, api_content, token_count, timestamp, "
        "active, compacted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                record.id,
                row.seq,
                row.pos,
                *enc.columns(),
                *enc.search_columns(),
                owner,
                row.api_content,
                row.token_count,
                row.timestamp,
                int(row.active),
                int(row.compacted),
            )
            for row, enc in zip(session.rows, encoded, strict=True)
        ],
    )
    return len(session.rows)
