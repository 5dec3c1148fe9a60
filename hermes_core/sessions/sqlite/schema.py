"""Tables, the schema version and the forward migrations of ``state.db``.

The version lives in ``PRAGMA user_version``. :data:`MIGRATIONS` holds one entry per version:
the statements that take a database from the version before to that one. A fresh file runs
them all; an older file runs the missing ones, in one write transaction, so a crash halfway
leaves the old version whole. A file whose version is newer than :data:`SCHEMA_VERSION` was
written by a newer hermes-context and is refused before anything is written to it.

Version 1 holds the columns of spec 40 §1; version 2 adds what a lossless round trip, the
active view's order and search need (``extra``, ``pos``, ``tool_names``, ``tool_args``,
``owner``, filled in for old rows) and the ``meta`` table. The full-text tables are derived
data and are managed apart, in :mod:`.fts`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from hermes_core.errors import SessionError
from hermes_core.sessions.checks import newer_schema
from hermes_core.sessions.sqlite.rows import owner_token, tool_text

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "check_file",
    "check_version",
    "migrate",
    "user_version",
]

#: a migration step: one SQL statement, or a function of the connection (for backfills)
Step = str | Callable[[sqlite3.Connection], None]

_V1: tuple[Step, ...] = (
    """CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        parent_session_id TEXT,
        user_id TEXT,
        title TEXT,
        model TEXT,
        started_at REAL NOT NULL,
        ended_at REAL,
        end_reason TEXT,
        counters TEXT NOT NULL DEFAULT '{}',
        state TEXT NOT NULL DEFAULT '{}'
    )""",
    "CREATE INDEX sessions_user ON sessions (user_id, started_at)",
    "CREATE INDEX sessions_parent ON sessions (parent_session_id)",
    """CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions (id),
        seq INTEGER NOT NULL,
        role TEXT,
        content TEXT,
        tool_calls TEXT,
        tool_call_id TEXT,
        name TEXT,
        timestamp REAL NOT NULL,
        token_count INTEGER,
        active INTEGER NOT NULL DEFAULT 1,
        compacted INTEGER NOT NULL DEFAULT 0,
        api_content TEXT
    )""",
    "CREATE UNIQUE INDEX messages_session_seq ON messages (session_id, seq)",
)


def _fill_search_columns(conn: sqlite3.Connection) -> None:
    """Give version-1 rows their ``tool_names``, ``tool_args`` and ``owner`` (computed as for
    new rows)."""
    rows = conn.execute(
        "SELECT m.id, m.tool_calls, m.name, s.user_id FROM messages AS m "
        "JOIN sessions AS s ON s.id = m.session_id"
    ).fetchall()
    updates = []
    for row_id, tool_calls, name, user_id in rows:
        try:
            calls = json.loads(tool_calls) if tool_calls else None
        except ValueError:  # written by hand or by something else: no tool text
            calls = None
        names, args = tool_text({"tool_calls": calls, "name": name})
        updates.append((names, args, owner_token(user_id), row_id))
    conn.executemany(
        "UPDATE messages SET tool_names = ?, tool_args = ?, owner = ? WHERE id = ?", updates
    )


_V2: tuple[Step, ...] = (
    "ALTER TABLE messages ADD COLUMN extra TEXT",
    "ALTER TABLE messages ADD COLUMN pos INTEGER",
    "ALTER TABLE messages ADD COLUMN tool_names TEXT",
    "ALTER TABLE messages ADD COLUMN tool_args TEXT",
    "ALTER TABLE messages ADD COLUMN owner TEXT",
    "UPDATE messages SET pos = seq WHERE active = 1",
    _fill_search_columns,
    "CREATE INDEX messages_active_view ON messages (session_id, active, pos)",
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)

#: version 3: retention (``archived_at`` of a session, the packed body of an archived row)
_V3: tuple[Step, ...] = (
    "ALTER TABLE sessions ADD COLUMN archived_at REAL",
    "ALTER TABLE messages ADD COLUMN body_z BLOB",
)

#: MIGRATIONS[n - 1] takes a database from version n - 1 to version n
MIGRATIONS: tuple[tuple[Step, ...], ...] = (_V1, _V2, _V3)
SCHEMA_VERSION = len(MIGRATIONS)


def user_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def check_version(version: int, path: object) -> None:
    """Refuse a file written by a newer hermes-context (before anything is written to it)."""
    if version > SCHEMA_VERSION:
        raise SessionError(newer_schema(f"session store {path}", version, SCHEMA_VERSION, "file"))
    if version < 0:
        raise SessionError(f"session store {path} has an invalid schema version {version}")


def check_file(conn: sqlite3.Connection, path: object) -> int:
    """The file's schema version, after refusing what this code must not touch: a newer
    schema, or another program's database (tables but no version). Reads only."""
    version = user_version(conn)
    check_version(version, path)
    if version == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
        raise SessionError(
            f"session store {path} is a SQLite database of something else (it has tables but "
            "no hermes-context schema version); point sessions.db_path elsewhere (the file "
            "was not changed)"
        )
    return version


def migrate(conn: sqlite3.Connection, path: object) -> int:
    """Run the missing migrations; the caller holds a write transaction. Returns the old
    version (the current one when nothing was missing)."""
    version = check_file(conn, path)  # again: another process may have migrated meanwhile
    for number in range(version + 1, SCHEMA_VERSION + 1):
        for step in MIGRATIONS[number - 1]:
            if isinstance(step, str):
                conn.execute(step)
            else:
                step(conn)
    if version != SCHEMA_VERSION:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return version
