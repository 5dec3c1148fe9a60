"""Opening a file: forward migrations, refusals that leave the file as it was, and the
full-text index built (or rebuilt) from the rows whenever FTS5 is there."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sessions_support import assistant, call, raw, user

from hermes_core.errors import SessionError
from hermes_core.sessions.sqlite import SQLiteSessionStore, fts
from hermes_core.sessions.sqlite.schema import SCHEMA_VERSION

# The version-1 layout exactly as it was written (the columns of spec 40 §1), frozen here so
# that the migration is tested against the real old format, not against today's code.
V1_DDL = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, parent_session_id TEXT, user_id TEXT, title TEXT, model TEXT,
    started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
    counters TEXT NOT NULL DEFAULT '{}', state TEXT NOT NULL DEFAULT '{}');
CREATE INDEX sessions_user ON sessions (user_id, started_at);
CREATE INDEX sessions_parent ON sessions (parent_session_id);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY, session_id TEXT NOT NULL REFERENCES sessions (id),
    seq INTEGER NOT NULL, role TEXT, content TEXT, tool_calls TEXT, tool_call_id TEXT,
    name TEXT, timestamp REAL NOT NULL, token_count INTEGER,
    active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0, api_content TEXT);
CREATE UNIQUE INDEX messages_session_seq ON messages (session_id, seq);
PRAGMA user_version = 1;
"""


def make_v1(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(V1_DDL)
    conn.execute(
        "INSERT INTO sessions (id, user_id, title, started_at, counters) "
        "VALUES ('old', 'alice', 'from version 1', 10.0, '{\"messages\": 4}')"
    )
    calls = (
        '[{"id": "c1", "type": "function", "function": {"name": "grep_tool", "arguments": "{}"}}]'
    )
    rows = [
        (1, "user", "how do I rotate the nginx logs", None, None, 1, 0),
        (2, "assistant", None, calls, None, 0, 1),  # archived by an old compaction
        (3, "tool", "logrotate is configured", None, "grep_tool", 0, 1),
        (4, "assistant", "use logrotate", None, None, 1, 0),
    ]
    conn.executemany(
        "INSERT INTO messages (session_id, seq, role, content, tool_calls, name, timestamp, "
        "active, compacted) VALUES ('old', ?, ?, ?, ?, ?, 11.0, ?, ?)",
        rows,
    )
    conn.commit()
    conn.close()


def test_a_version_1_database_opens_and_migrates(db_path: Path) -> None:
    make_v1(db_path)
    store = SQLiteSessionStore(db_path)
    assert raw(db_path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    record = store.get_session("old", user_id="alice")
    assert record is not None and record.counters == {"messages": 4}
    assert [m.seq for m in store.messages("old")] == [1, 4]  # the active view, in order
    every = store.messages("old", include_archived=True)
    assert [m.message.get("content") for m in every] == [
        "how do I rotate the nginx logs",
        None,
        "logrotate is configured",
        "use logrotate",
    ]
    assert every[1].message["tool_calls"][0]["function"]["name"] == "grep_tool"
    # old rows are in the index: words, tool names, and archived rows
    assert [h.seq for h in store.search("nginx", user_id="alice")] == [1]
    assert [h.matches for h in store.search("grep_tool", user_id="alice")] == [2]
    assert store.search("nginx", user_id=None) == []
    # and the store goes on from there
    assert store.append_messages("old", [user("thanks")]) == [5]
    assert [m.seq for m in store.messages("old")] == [1, 4, 5]
    store.close()
    again = SQLiteSessionStore(db_path)  # a second open has nothing left to do
    assert [m.seq for m in again.messages("old")] == [1, 4, 5]
    again.close()


def test_a_schema_from_a_newer_version_is_refused_and_left_alone(db_path: Path) -> None:
    SQLiteSessionStore(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = db_path.read_bytes()
    with pytest.raises(SessionError, match="upgrade hermes-context"):
        SQLiteSessionStore(db_path)
    assert db_path.read_bytes() == before


@pytest.mark.parametrize(
    "content",
    [b"this is not a database at all " * 200, b"SQLite format 3\x00" + b"\xff" * 4000],
    ids=["text", "damaged-header"],
)
def test_a_file_that_is_no_database_is_refused_and_left_alone(
    db_path: Path, content: bytes
) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(content)
    with pytest.raises(SessionError, match="move it aside") as err:
        SQLiteSessionStore(db_path)
    assert str(db_path) in str(err.value)
    assert db_path.read_bytes() == content
    assert not db_path.with_name("state.db-wal").exists()


def test_another_programs_database_is_refused_and_left_alone(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path)
    conn.execute("CREATE TABLE sessions (cookie TEXT)")
    conn.commit()
    conn.close()
    before = db_path.read_bytes()
    with pytest.raises(SessionError, match="something else"):
        SQLiteSessionStore(db_path)
    assert db_path.read_bytes() == before


def test_an_unreadable_path_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a-directory.db").mkdir()
    with pytest.raises(SessionError, match=r"a-directory\.db"):
        SQLiteSessionStore(tmp_path / "a-directory.db")


def test_without_fts_writes_work_and_a_later_open_builds_the_index(db_path: Path) -> None:
    plain = SQLiteSessionStore(db_path, fts=False)
    assert plain.fts is False
    plain.open_session("s", user_id=None)
    plain.append_messages(
        "s", [user("kubernetes ingress"), assistant(None, tool_calls=[call("c", "kubectl", "")])]
    )
    assert [h.seq for h in plain.search("ingress", user_id=None)] == [1]
    plain.close()
    names = {row[0] for row in raw(db_path, "SELECT name FROM sqlite_master")}
    assert "messages_fts" not in names  # a store told not to use FTS5 creates no index

    indexed = SQLiteSessionStore(db_path)
    assert indexed.fts is True
    assert [h.seq for h in indexed.search("ingress", user_id=None)] == [1]
    assert [h.seq for h in indexed.search("kubectl", user_id=None)] == [2]
    indexed.close()


def test_where_fts5_is_missing_the_triggers_go_and_the_index_is_rebuilt_later(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This SQLite has FTS5, so its absence is simulated at the one place it is detected."""
    store = SQLiteSessionStore(db_path)
    store.open_session("s", user_id=None)
    store.append_messages("s", [user("before the downgrade")])
    store.close()

    monkeypatch.setattr(fts, "fts5_available", lambda conn: False)
    without = SQLiteSessionStore(db_path)
    assert without.fts is False
    without.append_messages("s", [user("written while unindexed")])
    assert [h.seq for h in without.search("unindexed", user_id=None)] == [2]
    without.close()
    assert raw(db_path, "SELECT value FROM meta WHERE key = 'fts'") == [("stale",)]
    monkeypatch.undo()

    with_fts = SQLiteSessionStore(db_path)
    assert [h.seq for h in with_fts.search("unindexed", user_id=None)] == [2]
    assert [h.seq for h in with_fts.search("downgrade", user_id=None)] == [1]
    with_fts.close()
    assert raw(db_path, "SELECT value FROM meta WHERE key = 'fts'") == [(fts.FTS_VERSION,)]


def test_requiring_fts_where_it_is_missing_is_an_error(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fts, "fts5_available", lambda conn: False)
    with pytest.raises(SessionError, match="no FTS5"):
        SQLiteSessionStore(db_path, fts=True)


def test_the_index_follows_updates_and_deletes(store: SQLiteSessionStore) -> None:
    """The triggers keep the index in sync for every write, including ones the store itself
    never makes (a repair by hand)."""
    store.open_session("s", user_id=None)
    store.append_messages("s", [user("original words"), user("doomed words")])
    conn = sqlite3.connect(store.path)
    conn.execute("UPDATE messages SET content = 'replacement text' WHERE seq = 1")
    conn.execute("DELETE FROM messages WHERE seq = 2")
    conn.commit()
    fts.integrity_check(conn)
    conn.close()
    assert store.search("original", user_id=None) == []
    assert store.search("doomed", user_id=None) == []
    assert [h.seq for h in store.search("replacement", user_id=None)] == [1]
