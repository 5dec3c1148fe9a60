"""The memory tables in PostgreSQL: their own schema version beside the session store's, what
opening refuses, the version trigger, the size bound, and the database reference."""

from __future__ import annotations

import pytest
from pg import sql

from hermes_core.errors import MemoryStoreError
from hermes_core.memory import MemoryStore

psycopg = pytest.importorskip("psycopg")

from hermes_plugins.postgres.database import Database, DatabaseUnavailable  # noqa: E402
from hermes_plugins.postgres.memory import PostgresMemoryDocuments  # noqa: E402
from hermes_plugins.postgres.memory.schema import SCHEMA_VERSION  # noqa: E402


def test_memory_and_sessions_share_the_schema_with_their_own_tables(pg_dsn: str) -> None:
    from hermes_plugins.postgres.sessions import PostgresSessionStore

    database = Database(pg_dsn)
    sessions = PostgresSessionStore(database.acquire())
    memory = PostgresMemoryDocuments(database.acquire())
    again = PostgresMemoryDocuments(database.acquire())  # a second open finds the work done
    try:
        tables = {
            row[0]
            for row in sql(pg_dsn, "SELECT tablename FROM pg_tables WHERE schemaname = 'hermes'")
        }
        assert {"memory_blocks", "memory_history", "memory_pending", "memory_schema"} <= tables
        assert {"sessions", "messages", "sessions_schema"} <= tables
        assert sql(pg_dsn, "SELECT version FROM hermes.memory_schema") == [(SCHEMA_VERSION,)]
        assert MemoryStore(again, scanner=lambda t: []).add("memory", "a fact")["success"]
    finally:
        memory.close()
        again.close()
        sessions.close()
        database.release()


def test_a_newer_schema_version_is_refused_and_the_database_released(pg_dsn: str) -> None:
    PostgresMemoryDocuments(Database(pg_dsn)).close()
    sql(pg_dsn, "UPDATE hermes.memory_schema SET version = 99")
    database = Database(pg_dsn)
    with pytest.raises(MemoryStoreError, match=r"schema version 99.*upgrade hermes-context"):
        PostgresMemoryDocuments(database)
    with pytest.raises(DatabaseUnavailable, match="closed"):  # its only reference was released
        database.acquire()


def test_memory_tables_without_a_version_are_someone_elses(pg_dsn: str) -> None:
    sql(pg_dsn, "CREATE SCHEMA hermes")
    sql(pg_dsn, "CREATE TABLE hermes.memory_blocks (anything text)")
    with pytest.raises(MemoryStoreError, match="not hermes-context's"):
        PostgresMemoryDocuments(Database(pg_dsn))
    assert sql(pg_dsn, "SELECT to_regclass('hermes.memory_schema')") == [(None,)]


def test_every_update_bumps_the_version_an_operators_too(pg_dsn: str) -> None:
    docs = PostgresMemoryDocuments(Database(pg_dsn))
    try:
        store = MemoryStore(docs, scanner=lambda t: [], user_id="alice")
        assert store.add("user", "one")["success"] and store.add("user", "two")["success"]
        key = "WHERE scope = 'alice' AND target = 'user'"
        assert sql(pg_dsn, f"SELECT version FROM hermes.memory_blocks {key}") == [(2,)]
        sql(pg_dsn, f"UPDATE hermes.memory_blocks SET text = 'one', version = 1 {key}")
        assert sql(pg_dsn, f"SELECT version FROM hermes.memory_blocks {key}") == [(3,)]
    finally:
        docs.close()


def test_an_oversized_row_is_refused_never_read_as_empty(pg_dsn: str) -> None:
    docs = PostgresMemoryDocuments(Database(pg_dsn, timeout=60))
    try:
        store = MemoryStore(docs, scanner=lambda t: [])
        assert store.add("memory", "small")["success"]
        sql(
            pg_dsn,
            "UPDATE hermes.memory_blocks SET text = repeat('x', 17 * 1024 * 1024) "
            "WHERE scope = '' AND target = 'memory'",
        )
        result = store.add("memory", "more")
        assert result["reason"] == "unreadable" and "larger than 16 MiB" in result["error"]
        with pytest.raises(MemoryStoreError, match="larger than"):
            store.entries("memory")
        assert store.snapshot() == ""  # the block is left out, the prompt still builds
        length = "SELECT octet_length(text) FROM hermes.memory_blocks WHERE target = 'memory'"
        assert sql(pg_dsn, length) == [(17 * 1024 * 1024,)]
    finally:
        docs.close()


def test_a_user_id_postgresql_cannot_hold_is_refused(pg_dsn: str) -> None:
    docs = PostgresMemoryDocuments(Database(pg_dsn))
    try:
        store = MemoryStore(docs, scanner=lambda t: [], user_id="nul\x00id")
        result = store.add("user", "x")
        assert result["success"] is False and "cannot be kept in PostgreSQL" in result["error"]
        assert sql(pg_dsn, "SELECT count(*) FROM hermes.memory_blocks") == [(0,)]
    finally:
        docs.close()


def test_close_releases_the_database_reference_once(pg_dsn: str) -> None:
    database = Database(pg_dsn)
    docs = PostgresMemoryDocuments(database.acquire())
    docs.close()
    docs.close()  # a second close must not release the other user's reference
    assert database.run(lambda conn: conn.execute("SELECT 1").fetchone(), idempotent=True) == (1,)
    database.release()
    with pytest.raises(DatabaseUnavailable, match="closed"):
        database.acquire()
