"""A host killed in the middle of a compaction commit leaves the store as it was: the server
rolls the open transaction back, and the next host sees the whole transcript, once."""

from __future__ import annotations

import multiprocessing
import os
import signal

import psycopg
from killed_commit import PAUSE, commit_and_hang

from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.sessions import PostgresSessionStore

LOCK = 424_242


def _messages_table(conn: psycopg.Connection) -> str:
    row = conn.execute(
        "SELECT table_schema FROM information_schema.tables WHERE table_name = 'messages'"
    ).fetchone()
    assert row is not None, "the store made no messages table"
    return f'"{row[0]}".messages'


def _install_pause(dsn: str) -> None:
    """A trigger that makes inserting a row that mentions PAUSE wait for our advisory lock."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        table = _messages_table(conn)
        conn.execute(
            f"""CREATE FUNCTION pause_insert() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW::text LIKE '%{PAUSE}%' THEN
                    PERFORM pg_advisory_lock({LOCK});
                    PERFORM pg_advisory_unlock({LOCK});
                END IF;
                RETURN NEW;
            END $$"""
        )
        conn.execute(
            f"CREATE TRIGGER pause_insert BEFORE INSERT ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION pause_insert()"
        )


def _waiting_on_lock(conn: psycopg.Connection) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = %s",
        (LOCK,),
    ).fetchone()
    return bool(row and row[0])


def test_a_process_killed_mid_commit_leaves_the_store_whole(pg_dsn: str) -> None:
    store = PostgresSessionStore(Database(pg_dsn, pool_size=2, timeout=30))
    try:
        store.open_session("s", user_id="alice")
        turns = [
            {"role": "user" if n % 2 == 0 else "assistant", "content": f"line {n}"}
            for n in range(12)
        ]
        store.append_messages("s", turns)
        before = [
            (r.seq, r.active, r.compacted, dict(r.message))
            for r in store.messages("s", include_archived=True)
        ]
        _install_pause(pg_dsn)
        with psycopg.connect(pg_dsn, autocommit=True) as holder:
            holder.execute("SELECT pg_advisory_lock(%s)", (LOCK,))
            context = multiprocessing.get_context("spawn")
            ready = context.Queue()
            worker = context.Process(target=commit_and_hang, args=(pg_dsn, "s", "alice", ready))
            worker.start()
            assert ready.get(timeout=120) == "committing"
            # wait for the state, not for a time: the commit is inside its transaction,
            # the old rows already archived, its summary row waiting on our lock
            while not _waiting_on_lock(holder):
                assert worker.is_alive(), "the worker ended before reaching the pause"
                holder.execute("SELECT pg_sleep(0.05)")
            os.kill(worker.pid or 0, signal.SIGKILL)
            worker.join(timeout=60)
            assert worker.exitcode == -signal.SIGKILL
            holder.execute("SELECT pg_advisory_unlock(%s)", (LOCK,))
        after = [
            (r.seq, r.active, r.compacted, dict(r.message))
            for r in store.messages("s", include_archived=True)
        ]
        assert after == before
        assert [dict(r.message) for r in store.messages("s")] == turns
        assert store.last_seq("s") == 12
        # and the store goes on: the next commit lands
        rows = store.messages("s")
        commit = store.commit_compaction(
            "s",
            [
                {"role": "user", "content": "[summary] first ten lines"},
                *(dict(r.message) for r in rows[-2:]),
            ],
            [None, rows[-2].seq, rows[-1].seq],
            in_place=True,
            after_seq=12,
        )
        assert len(commit.seqs) == 3
        assert len(store.messages("s")) == 3
    finally:
        store.close()
