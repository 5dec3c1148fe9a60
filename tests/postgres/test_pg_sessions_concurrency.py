"""Several hosts on one database: a stale writer changes nothing, a writer waits for the
session's row lock and then sees the other's rows, and four processes appending at once
lose nothing and never share a seq."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from pg import wait_for

from hermes_core.errors import SessionError, StaleSessionError
from hermes_core.sessions.sqlite.rows import owner_token
from hermes_core.testing.store_kit import assistant, snapshot, user
from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.sessions import PostgresSessionStore

WORKERS, APPENDS = 4, 20


@pytest.fixture
def hosts(pg_dsn: str) -> Iterator[tuple[PostgresSessionStore, PostgresSessionStore]]:
    """Two stores with pools of their own: two hosts."""
    first = PostgresSessionStore(Database(pg_dsn))
    second = PostgresSessionStore(Database(pg_dsn))
    yield first, second
    first.close()
    second.close()


def test_a_stale_append_changes_nothing(
    hosts: tuple[PostgresSessionStore, PostgresSessionStore],
) -> None:
    one, two = hosts
    one.open_session("s", user_id="u")
    assert two.open_session("s", user_id="u").id == "s"
    assert one.append_messages("s", [user("first")], after_seq=0) == [1]
    before = snapshot(one, "s")
    with pytest.raises(StaleSessionError, match="newest row 1, expected 0"):
        two.append_messages("s", [user("late")], state={"lost": True}, after_seq=0)
    assert snapshot(two, "s") == before
    record = two.get_session("s", user_id="u")
    assert record is not None and dict(record.state) == {}  # the state was not written either
    assert two.append_messages("s", [user("reloaded")], after_seq=two.last_seq("s")) == [2]


def _waiting_for_a_row_lock(dsn: str) -> bool:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        ).fetchone()
    return bool(row and row[0])


@pytest.mark.parametrize("guarded", [True, False], ids=["after_seq", "unguarded"])
def test_a_writer_waits_for_the_session_lock_and_then_sees_the_other_hosts_row(
    pg_dsn: str, hosts: tuple[PostgresSessionStore, PostgresSessionStore], guarded: bool
) -> None:
    """Another host, inside its write transaction, holds the session's row lock and has
    written seq 1 (not committed yet). Our append waits for the lock, then reads the newest
    seq anew: stale with ``after_seq=0``, else seq 2; never a duplicate key, never a lost
    row. (Without the lock it would read seq 0, pass the check and collide on seq 1.)"""
    store, _ = hosts
    store.open_session("s", user_id="u")
    outcome: dict[str, Any] = {}

    def append() -> None:
        try:
            after = 0 if guarded else None
            outcome["seqs"] = store.append_messages("s", [user("ours")], after_seq=after)
        except SessionError as exc:
            outcome["error"] = exc

    with psycopg.connect(pg_dsn) as other:
        other.execute("SELECT 1 FROM hermes.sessions WHERE id = 's' FOR UPDATE")
        other.execute(
            "INSERT INTO hermes.messages (session_id, seq, pos, role, content, owner, "
            "\"timestamp\") VALUES ('s', 1, 1, 'user', 'theirs', %s, 0)",
            (owner_token("u"),),
        )
        worker = threading.Thread(target=append)
        worker.start()
        wait_for(lambda: _waiting_for_a_row_lock(pg_dsn), "our append waiting for the lock")
        other.commit()
        worker.join(60)
    assert not worker.is_alive()
    contents = [m.message["content"] for m in store.messages("s")]
    if guarded:
        assert isinstance(outcome.get("error"), StaleSessionError), outcome
        assert contents == ["theirs"]
    else:
        assert outcome == {"seqs": [2]}, outcome
        assert contents == ["theirs", "ours"]


def _append_from_a_process(dsn: str, worker: int, start: Any, done: Any) -> None:
    store = PostgresSessionStore(Database(dsn, pool_size=2, timeout=60))
    try:
        start.wait(120)
        store.open_session("shared", user_id="u")
        store.open_session(f"own-{worker}", user_id="u")
        for n in range(APPENDS):
            store.append_messages(f"own-{worker}", [user(f"w{worker} own {n}")])
            store.append_messages(
                "shared", [user(f"w{worker} ask {n}"), assistant(f"w{worker} reply {n}")]
            )
        done.put((worker, "ok"))
    except BaseException as exc:
        done.put((worker, repr(exc)))
        raise
    finally:
        store.close()


def test_four_processes_appending_to_their_own_and_a_shared_session_lose_nothing(
    pg_dsn: str,
) -> None:
    PostgresSessionStore(Database(pg_dsn)).close()  # the schema exists before they start
    context = multiprocessing.get_context("spawn")
    start, done = context.Event(), context.Queue()
    procs = [
        context.Process(target=_append_from_a_process, args=(pg_dsn, w, start, done))
        for w in range(WORKERS)
    ]
    for proc in procs:
        proc.start()
    start.set()
    reports = sorted(done.get(timeout=300) for _ in procs)
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    assert reports == [(w, "ok") for w in range(WORKERS)]

    store = PostgresSessionStore(Database(pg_dsn))
    rows = store.messages("shared")
    assert [r.seq for r in rows] == list(range(1, WORKERS * APPENDS * 2 + 1))  # unique, no gap
    texts = [str(r.message["content"]) for r in rows]
    for w in range(WORKERS):
        mine = [t for t in texts if t.startswith(f"w{w} ")]
        assert mine == [x for n in range(APPENDS) for x in (f"w{w} ask {n}", f"w{w} reply {n}")]
        for r in rows:  # each append's two rows stayed together
            if r.message["content"] == f"w{w} ask 0":
                assert texts[r.seq] == f"w{w} reply 0"
        own = store.messages(f"own-{w}")
        assert [str(r.message["content"]) for r in own] == [f"w{w} own {n}" for n in range(APPENDS)]
        assert [r.seq for r in own] == list(range(1, APPENDS + 1))
        (hit,) = store.search(f'"w{w} ask"', user_id="u")
        assert (hit.session_id, hit.matches) == ("shared", APPENDS)
    assert store.search("ask", user_id="v") == []
    store.close()
