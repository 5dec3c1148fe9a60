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
from hermes_core.sessions.sqlite.packing import (
    PACKED_COLUMNS,
    UNPACK,
    register,
    unpacked,
    unpacked_list,
)

__all__ = [
    "FTS_VERSION",
    "TEXT_COLUMNS",
    "attach",
    "fts5_available",
    "index_ready",
    "index_state",
    "install",
    "integrity_check",
    "uninstall_triggers",
]

#: 2: the index reads archived (packed) rows through the view ``messages_text``
FTS_VERSION = "2"
TABLES = ("messages_fts", "messages_trigram")
_COLUMNS = "content, tool_names, tool_args, owner"
#: the columns a query's terms are matched against (``owner`` only selects the user)
TEXT_COLUMNS = ("content", "tool_names", "tool_args")


def _has_cjk(row: str, *, packed: bool = False) -> str:
    """SQL: the row holds CJK text; ``packed``: the row may be an archived, packed one."""
    columns = (unpacked(c, f"{row}.") if packed else f"{row}.{c}" for c in TEXT_COLUMNS)
    text = " || ".join(f"coalesce({c}, '')" for c in columns)
    return f"({text}) GLOB '*[{CJK_RANGES}]*'"


#: every row as the index sees it, archived (packed) rows unpacked
_TEXT_VIEW = (
    "CREATE VIEW messages_text AS SELECT id, "
    f"{unpacked_list(('content', 'tool_names', 'tool_args', 'owner'))} FROM messages"
)
_CJK_VIEW = (
    f"CREATE VIEW messages_cjk AS SELECT id, {_COLUMNS} FROM messages_text AS m "
    f"WHERE {_has_cjk('m')}"
)
_TABLE_DDL = (
    f"CREATE VIRTUAL TABLE messages_fts USING fts5({_COLUMNS}, content='messages_text', "
    "content_rowid='id', tokenize='unicode61 remove_diacritics 2')",
    f"CREATE VIRTUAL TABLE messages_trigram USING fts5({_COLUMNS}, content='messages_cjk', "
    "content_rowid='id', tokenize='trigram')",
)
TRIGGERS = (
    "messages_index_insert",
    "messages_index_delete",
    "messages_index_update",
    "messages_packed_guard",
    "messages_packed_guard_update",
)


def _add(row: str) -> str:
    values = f"{row}.id, {row}.content, {row}.tool_names, {row}.tool_args, {row}.owner"
    return (
        f"INSERT INTO messages_fts (rowid, {_COLUMNS}) VALUES ({values}); "
        f"INSERT INTO messages_trigram (rowid, {_COLUMNS}) SELECT {values} WHERE {_has_cjk(row)};"
    )


def _remove(row: str, *, packed: bool = False) -> str:
    """Remove a row from the index with the text it was indexed with (``packed``: an archived
    row, whose text is unpacked by ``hermes_unpack``)."""
    texts = ", ".join(
        unpacked(c, f"{row}.") if packed and c in PACKED_COLUMNS else f"{row}.{c}"
        for c in ("content", "tool_names", "tool_args", "owner")
    )
    values = f"'delete', {row}.id, {texts}"
    return (
        f"INSERT INTO messages_fts (messages_fts, rowid, {_COLUMNS}) VALUES ({values}); "
        f"INSERT INTO messages_trigram (messages_trigram, rowid, {_COLUMNS}) "
        f"SELECT {values} WHERE {_has_cjk(row, packed=packed)};"
    )


#: where ``hermes_unpack`` is missing (the ``sqlite3`` shell), a packed row cannot leave the
#: index correctly: deleting it or unpacking it is refused there, and nothing changes
_NO_UNPACK = f"NOT EXISTS (SELECT 1 FROM pragma_function_list WHERE name = '{UNPACK}')"
_REFUSED = (
    "SELECT RAISE(ABORT, 'an archived (packed) message changes only through hermes-context');"
)
_TRIGGER_DDL = (
    f"CREATE TRIGGER messages_index_insert AFTER INSERT ON messages BEGIN {_add('new')} END",
    f"CREATE TRIGGER messages_index_delete AFTER DELETE ON messages WHEN old.body_z IS NULL "
    f"BEGIN {_remove('old')} END",
    # packing a row (archiving) keeps its words: the index is left as it is
    f"CREATE TRIGGER messages_index_update AFTER UPDATE OF {_COLUMNS} ON messages "
    f"WHEN old.body_z IS NULL AND new.body_z IS NULL BEGIN {_remove('old')} {_add('new')} END",
    f"CREATE TRIGGER messages_packed_guard BEFORE DELETE ON messages "
    f"WHEN old.body_z IS NOT NULL AND {_NO_UNPACK} BEGIN {_REFUSED} END",
    f"CREATE TRIGGER messages_packed_guard_update BEFORE UPDATE OF {_COLUMNS} ON messages "
    f"WHEN old.body_z IS NOT NULL AND new.body_z IS NULL AND {_NO_UNPACK} BEGIN {_REFUSED} END",
)
#: per connection (TEMP: they name ``hermes_unpack``, which only the store's connections have):
#: a packed row deleted or unpacked leaves the index with the text it was indexed with
_PACKED_DDL = (
    "CREATE TEMP TRIGGER IF NOT EXISTS hermes_packed_delete AFTER DELETE ON main.messages "
    f"WHEN old.body_z IS NOT NULL BEGIN {_remove('old', packed=True)} END",
    f"CREATE TEMP TRIGGER IF NOT EXISTS hermes_packed_update AFTER UPDATE OF {_COLUMNS} "
    "ON main.messages WHEN old.body_z IS NOT NULL AND new.body_z IS NULL "
    f"BEGIN {_remove('old', packed=True)} {_add('new')} END",
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
        all(t in names for t in TABLES) and {"messages_cjk", "messages_text"} <= names,
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
    conn.execute("DROP VIEW IF EXISTS messages_text")
    conn.execute(_TEXT_VIEW)
    conn.execute(_CJK_VIEW)
    for statement in (*_TABLE_DDL, *_TRIGGER_DDL):
        conn.execute(statement)
    attach(conn)
    for table in TABLES:
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
    _set_state(conn, FTS_VERSION)


def uninstall_triggers(conn: sqlite3.Connection) -> None:
    """Drop the triggers (possible without FTS5, unlike dropping the tables) so writes work
    where the module is missing; the index is marked stale and rebuilt by the next open that
    has FTS5."""
    for trigger in TRIGGERS:
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    for trigger in ("hermes_packed_delete", "hermes_packed_update"):
        conn.execute(f"DROP TRIGGER IF EXISTS temp.{trigger}")
    _set_state(conn, "stale")


def attach(conn: sqlite3.Connection) -> None:
    """Give a store connection ``hermes_unpack`` and, where the index is kept by triggers, the
    TEMP triggers for packed rows (:mod:`.packing`). Called for every new connection and after
    :func:`install`; a file that is not (yet) a store is left to the open's checks."""
    register(conn)
    try:
        names = {
            row[0]
            for row in conn.execute(
                "SELECT name FROM main.sqlite_master "
                "WHERE type = 'trigger' AND name LIKE 'messages_%'"
            )
        }
    except sqlite3.DatabaseError:
        return  # not a database, or damaged: the store's open says so
    if "messages_index_delete" in names:
        for statement in _PACKED_DDL:
            conn.execute(statement)


def _set_state(conn: sqlite3.Connection, value: str) -> None:
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('fts', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (value,),
    )


def integrity_check(conn: sqlite3.Connection) -> None:
    """Raise ``sqlite3.DatabaseError`` when an index does not match its rows (tests, doctor)."""
    register(conn)  # the index reads archived rows through hermes_unpack
    for table in TABLES:
        conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
