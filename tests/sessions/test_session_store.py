"""The SQLite store's own promises: its file (0600, WAL), lossless rows, fork safety; and the
cases both built-in stores share (tests/support/store_cases.py). The protocol itself is held
by the conformance kit (test_store_conformance.py)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from sessions_support import raw, snapshot, user
from store_cases import Clocked, RecordCases, closing

from hermes_core.errors import SessionError
from hermes_core.sessions import SessionStore
from hermes_core.sessions.sqlite import SQLiteSessionStore
from hermes_core.testing.store_kit import ROUND_TRIP_MESSAGES


@pytest.fixture
def clocked(tmp_path: Path) -> Iterator[Clocked]:
    yield from closing(lambda clock: SQLiteSessionStore(tmp_path / "clocked.db", clock=clock))


class TestSQLiteRecordCases(RecordCases):
    """The cases both built-in stores share, on the SQLite store."""


def test_it_is_a_session_store_named_sqlite(store: SQLiteSessionStore) -> None:
    assert isinstance(store, SessionStore)
    assert store.backend == "sqlite"
    assert store.fts is True  # this SQLite (3.40) has FTS5 and the trigram tokenizer


def test_the_file_is_created_0600_with_its_parents(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "state.db"
    store = SQLiteSessionStore(path)
    store.open_session("s", user_id=None)
    store.append_messages("s", [user("hi")])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    for sidecar in (path.with_name("state.db-wal"), path.with_name("state.db-shm")):
        if sidecar.exists():
            assert stat.S_IMODE(sidecar.stat().st_mode) & 0o077 == 0
    assert raw(path, "PRAGMA journal_mode") == [("wal",)]
    store.close()


def test_the_content_column_stays_searchable_text(store: SQLiteSessionStore) -> None:
    store.open_session("s", user_id=None)
    (parts,) = [m for m in ROUND_TRIP_MESSAGES if isinstance(m.get("content"), list)]
    store.append_messages("s", [parts])  # list content: text parts and an image
    assert raw(store.path, "SELECT content FROM messages") == [("look at this\nand this",)]


def test_close_is_idempotent_and_then_calls_fail_clearly(store: SQLiteSessionStore) -> None:
    store.open_session("s", user_id=None)
    store.close()
    store.close()
    with pytest.raises(SessionError, match="is closed"):
        store.messages("s")


def test_a_store_opened_before_fork_is_usable_in_the_parent_after(
    store: SQLiteSessionStore,
) -> None:
    if not hasattr(os, "fork"):
        pytest.skip("needs fork")
    store.open_session("s", user_id=None)
    pid = os.fork()
    if pid == 0:  # the child: the inherited connection is dropped, a new one opened
        try:
            store.append_messages("s", [user("from the child")])
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    store.append_messages("s", [user("from the parent")])
    assert [m.message["content"] for m in store.messages("s")] == [
        "from the child",
        "from the parent",
    ]
    assert snapshot(store, "s")[0][0] == 1
