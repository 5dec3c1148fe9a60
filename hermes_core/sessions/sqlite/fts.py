"""The full-text index: two FTS5 external-content tables over ``messages``, and triggers.

* ``messages_fts`` (``unicode61``, diacritics folded): word search with BM25 over
  ``content``, ``tool_names`` and ``tool_args``; ``owner`` (a token per user, weight 0 in
  BM25) lets the index itself select one user's rows.
* ``messages_trigram`` (``trigram``): substring search for Chinese, Japanese and Korean,
  which have no spaces between words. Only rows holding such characters are indexed there
  (its content is the view ``messages_cjk``), which keeps it small for everything else.

Both read their text from the rows (external content: nothing is stored twice) and stay in
sync through triggers on insert, delete and an update of the indexed columns (a compaction,
which changes only ``active``, ``compacted`` and ``pos``, does not touch the index).

The index is derived data: it is not part of the schema version. Where FTS5 is missing the
store searches with ``LIKE``; a later open with FTS5 (re)builds the index from the rows.
``meta.fts`` records the index's version, or ``stale`` when writes went unindexed.
"""

from __future__ import annotations

import sqlite3

from hermes_core.sessions.query import CJK_RANGES

__all__ = [
    "FTS_VERSION",
    "TEXT_COLUMNS",
    "fts5_available",
    "index_ready",
    "index_state",
    "install",
    "integrity_check",
    "uninstall_triggers",
]

FTS_VERSION = "1"
TABLES = ("messages_fts", "messages_trigram")
_COLUMNS = "content, tool_names, tool_args, owner"
#: the columns a query's terms are matched against (``owner`` only selects the user)
TEXT_COLUMNS = ("content", "tool_names", "tool_args")


def _has_cjk(row: str) -> str:
    text = " || ".join(f"coalesce({row}.{c}, '')" for c in TEXT_COLUMNS)
    return f"({text}) GLOB '*[{CJK_RANGES}]*'"


_CJK_VIEW = (
    f"CREATE VIEW messages_cjk AS SELECT id, {_COLUMNS} FROM messages AS m WHERE {_has_cjk('m')}"
)
_TABLE_DDL = (
    f"CREATE VIRTUAL TABLE messages_fts USING fts5({_COLUMNS}, content='messages', "
    "content_rowid='id', tokenize='unicode61 remove_diacritics 2')",
    f"CREATE VIRTUAL TABLE messages_trigram USING fts5({_COLUMNS}, content='messages_cjk', "
    "content_rowid='id', tokenize='trigram')",
)
TRIGGERS = (
    "messages_index_insert",
    "messages_index_delete",
    "messages_index_update",
)


def _add(row: str) -> str:
    values = f"{row}.id, {row}.content, {row}.tool_names, {row}.tool_args, {row}.owner"
    return (
        f"INSERT INTO messages_fts (rowid, {_COLUMNS}) VALUES ({values}); "
        f"INSERT INTO messages_trigram (rowid, {_COLUMNS}) SELECT {values} WHERE {_has_cjk(row)};"
    )


def _remove(row: str) -> str:
    values = f"'delete', {row}.id, {row}.content, {row}.tool_names, {row}.tool_args, {row}.owner"
    return (
        f"INSERT INTO messages_fts (messages_fts, rowid, {_COLUMNS}) VALUES ({values}); "
        f"INSERT INTO messages_trigram (messages_trigram, rowid, {_COLUMNS}) "
        f"SELECT {values} WHERE {_has_cjk(row)};"
    )


_TRIGGER_DDL = (
    f"CREATE TRIGGER messages_index_insert AFTER INSERT ON messages BEGIN {_add('new')} END",
    f"CREATE TRIGGER messages_index_delete AFTER DELETE ON messages BEGIN {_remove('old')} END",
    f"CREATE TRIGGER messages_index_update AFTER UPDATE OF {_COLUMNS} ON messages "
    f"BEGIN {_remove('old')} {_add('new')} END",
)


def fts5_available(conn: sqlite3.Connection) -> bool:
    """True when this SQLite has FTS5 with the trigram tokenizer (3.34+); probes the temp
    schema only, so the database file is not touched."""
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.hermes_fts_probe USING fts5(x, tokenize='trigram')")
    except sqlite3.OperationalError:
        return False
    conn.execute("DROP TABLE temp.hermes_fts_probe")
    return True


def index_state(conn: sqlite3.Connection) -> tuple[bool, int, str | None]:
    """(the index tables exist, how many of the triggers exist, ``meta.fts``)."""
    names = {
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger', 'view')"
        )
    }
    row = conn.execute("SELECT value FROM meta WHERE key = 'fts'").fetchone()
    return (
        all(t in names for t in TABLES) and "messages_cjk" in names,
        sum(t in names for t in TRIGGERS),
        row[0] if row else None,
    )


def index_ready(conn: sqlite3.Connection) -> bool:
    """True when the tables and all triggers exist and the index is current."""
    tables, triggers, state = index_state(conn)
    return tables and triggers == len(TRIGGERS) and state == FTS_VERSION


def install(conn: sqlite3.Connection) -> None:
    """(Re)create the index tables and triggers and fill them from the rows; the caller holds
    a write transaction and has checked that FTS5 is available."""
    uninstall_triggers(conn)
    for table in TABLES:
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute("DROP VIEW IF EXISTS messages_cjk")
    conn.execute(_CJK_VIEW)
    for statement in (*_TABLE_DDL, *_TRIGGER_DDL):
        conn.execute(statement)
    for table in TABLES:
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
    _set_state(conn, FTS_VERSION)


def uninstall_triggers(conn: sqlite3.Connection) -> None:
    """Drop the triggers (possible without FTS5, unlike dropping the tables) so writes work
    where the module is missing; the index is marked stale and rebuilt by the next open that
    has FTS5."""
    for trigger in TRIGGERS:
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    _set_state(conn, "stale")


def _set_state(conn: sqlite3.Connection, value: str) -> None:
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('fts', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (value,),
    )


def integrity_check(conn: sqlite3.Connection) -> None:
    """Raise ``sqlite3.DatabaseError`` when an index does not match its rows (tests, doctor)."""
    for table in TABLES:
        conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
