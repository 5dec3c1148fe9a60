"""Busy databases: bounded retries with jitter, then a SessionError that changes nothing.

Another connection holds a write transaction; the store's busy timeout is 0 and its retry
policy's ``sleep`` is the test's own function, so nothing waits for wall time and what
happens between attempts is under the test's control.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from sessions_support import user

from hermes_core.errors import SessionError
from hermes_core.sessions.sqlite import RetryPolicy, SQLiteSessionStore


@pytest.fixture
def blocker(db_path: Path) -> Iterator[sqlite3.Connection]:
    SQLiteSessionStore(db_path).close()  # the schema exists before the lock is taken
    conn = sqlite3.connect(db_path, isolation_level=None)
    yield conn
    if conn.in_transaction:
        conn.execute("ROLLBACK")
    conn.close()


def test_a_lock_held_past_every_retry_is_a_clear_error(
    db_path: Path, blocker: sqlite3.Connection
) -> None:
    slept: list[float] = []
    retry = RetryPolicy(attempts=4, base_delay=0.1, max_delay=0.25, sleep=slept.append)
    store = SQLiteSessionStore(db_path, busy_timeout=0, retry=retry)
    store.open_session("s", user_id=None)
    blocker.execute("BEGIN IMMEDIATE")
    with pytest.raises(SessionError, match=r"locked by another connection .* 4 attempts") as err:
        store.append_messages("s", [user("hello")])
    assert "nothing was changed" in str(err.value) and "retry" in str(err.value)
    assert len(slept) == 3
    caps = [0.1, 0.2, 0.25]  # base * 2**n, capped
    assert all(cap / 2 <= wait <= cap for wait, cap in zip(slept, caps, strict=True))
    blocker.execute("ROLLBACK")
    assert store.messages("s") == []
    store.close()


def test_a_lock_released_between_attempts_lets_the_write_through(
    db_path: Path, blocker: sqlite3.Connection
) -> None:
    def release(_seconds: float) -> None:
        blocker.execute("COMMIT")

    store = SQLiteSessionStore(db_path, busy_timeout=0, retry=RetryPolicy(sleep=release))
    store.open_session("s", user_id=None)
    blocker.execute("BEGIN IMMEDIATE")
    assert store.append_messages("s", [user("hello")]) == [1]
    assert [m.message for m in store.messages("s")] == [user("hello")]
    store.close()


def test_jitter_spreads_the_waits() -> None:
    low = RetryPolicy(base_delay=1.0, max_delay=8.0, random=lambda: 0.0)
    high = RetryPolicy(base_delay=1.0, max_delay=8.0, random=lambda: 0.999)
    assert [low.delay(n) for n in range(5)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert [round(high.delay(n), 2) for n in range(5)] == [1.0, 2.0, 4.0, 8.0, 8.0]


def test_readers_are_not_blocked_by_a_writer(db_path: Path, blocker: sqlite3.Connection) -> None:
    store = SQLiteSessionStore(db_path, busy_timeout=0, retry=RetryPolicy(attempts=1))
    store.open_session("s", user_id=None)
    store.append_messages("s", [user("visible")])
    blocker.execute("BEGIN IMMEDIATE")
    blocker.execute("UPDATE messages SET content = 'uncommitted'")
    assert [m.message["content"] for m in store.messages("s")] == ["visible"]  # WAL snapshot
    assert len(store.search("visible", user_id=None)) == 1
    store.close()
