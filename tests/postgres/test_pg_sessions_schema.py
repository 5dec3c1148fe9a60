"""Opening a PostgreSQL store: the ``hermes`` schema, the version and forward migrations run
once under the advisory lock, refusals that write nothing, and the CJK trigram index created
when ``pg_trgm`` can be had (a log line and ILIKE when it cannot)."""

from __future__ import annotations

import logging
import multiprocessing
import time
import uuid
from typing import Any

import psycopg
import pytest
from pg import ADMIN_DSN, drop_database, dsn_for, fresh_database

from hermes_core.errors import SessionError
from hermes_core.testing.store_kit import user
from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.sessions import PostgresSessionStore, schema

OPENERS = 3


def catalog(dsn: str) -> dict[str, Any]:
    """What the database holds, for before/after comparisons: relations, functions,
    extensions, and the version row when there is one."""
    with psycopg.connect(dsn) as conn:
        relations = conn.execute(
            "SELECT n.nspname || '.' || c.relname FROM pg_class AS c "
            "JOIN pg_namespace AS n ON n.oid = c.relnamespace "
            "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') "
            "ORDER BY 1"
        ).fetchall()
        extensions = conn.execute("SELECT extname FROM pg_extension ORDER BY 1").fetchall()
        schemas = conn.execute("SELECT nspname FROM pg_namespace ORDER BY 1").fetchall()
        version = None
        if conn.execute("SELECT to_regclass('hermes.sessions_schema')").fetchone() != (None,):
            version = conn.execute("SELECT version FROM hermes.sessions_schema").fetchall()
    return {"relations": relations, "extensions": extensions, "schemas": schemas, "v": version}


def execute(dsn: str, *statements: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)


def test_a_fresh_database_gets_the_schema_and_a_reopen_has_nothing_to_do(pg_dsn: str) -> None:
    first = PostgresSessionStore(Database(pg_dsn))
    assert first.migrated_from == 0 and first.trigram is True
    first.open_session("s", user_id="u")
    first.append_messages("s", [user("kept across opens")])
    first.close()
    state = catalog(pg_dsn)
    assert state["v"] == [(schema.SCHEMA_VERSION,)]
    names = {name for (name,) in state["relations"]}
    assert {
        "hermes.sessions",
        "hermes.messages",
        "hermes.sessions_schema",
        "hermes.messages_search",
        "hermes.messages_trigram",
    } <= names
    assert not any(name.startswith("public.") for name in names)  # nothing outside hermes
    again = PostgresSessionStore(Database(pg_dsn))
    assert again.migrated_from is None
    assert [m.message["content"] for m in again.messages("s")] == ["kept across opens"]
    again.close()
    assert catalog(pg_dsn) == state


def test_an_operators_own_tables_of_the_same_names_are_left_alone(pg_dsn: str) -> None:
    execute(
        pg_dsn,
        "CREATE TABLE public.sessions (cookie text)",
        "CREATE TABLE public.messages (body text)",
        "INSERT INTO public.sessions VALUES ('theirs')",
    )
    store = PostgresSessionStore(Database(pg_dsn))
    store.open_session("s", user_id=None)
    store.close()
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT * FROM public.sessions").fetchall() == [("theirs",)]
        assert conn.execute("SELECT count(*) FROM public.messages").fetchone() == (0,)


def test_a_schema_from_a_newer_version_is_refused_before_anything_is_written(
    pg_dsn: str,
) -> None:
    execute(
        pg_dsn,
        "CREATE SCHEMA hermes",
        "CREATE TABLE hermes.sessions_schema (version integer NOT NULL)",
        f"INSERT INTO hermes.sessions_schema VALUES ({schema.SCHEMA_VERSION + 1})",
    )
    before = catalog(pg_dsn)
    database = Database(pg_dsn)
    with pytest.raises(SessionError, match="upgrade hermes-context") as err:
        PostgresSessionStore(database)
    assert f"schema version {schema.SCHEMA_VERSION + 1}" in str(err.value)
    assert catalog(pg_dsn) == before  # no table, no index, no extension
    with pytest.raises(SessionError, match="closed"):  # the failed store released the pool
        database.run(lambda conn: None, idempotent=True)


def test_another_programs_tables_in_the_schema_are_refused(pg_dsn: str) -> None:
    execute(pg_dsn, "CREATE SCHEMA hermes", "CREATE TABLE hermes.sessions (cookie text)")
    before = catalog(pg_dsn)
    with pytest.raises(SessionError, match="not hermes-context's"):
        PostgresSessionStore(Database(pg_dsn))
    assert catalog(pg_dsn) == before


def test_a_database_that_cannot_hold_every_message_is_refused() -> None:
    name = f"hc_test_ascii_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        conn.execute(
            f"CREATE DATABASE \"{name}\" ENCODING 'SQL_ASCII' TEMPLATE template0 "
            "LC_COLLATE 'C' LC_CTYPE 'C'"
        )
    try:
        dsn = dsn_for(name)
        before = catalog(dsn)
        with pytest.raises(SessionError, match="ENCODING 'UTF8'"):
            PostgresSessionStore(Database(dsn))
        assert catalog(dsn) == before
    finally:
        drop_database(name)


def _v2_step(conn: psycopg.Connection[Any]) -> None:
    conn.execute("ALTER TABLE hermes.sessions ADD COLUMN tags text")
    conn.execute("UPDATE hermes.sessions SET tags = 'migrated'")


def test_forward_migrations_run_once_and_a_failed_one_changes_nothing(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = PostgresSessionStore(Database(pg_dsn))
    old.open_session("s", user_id="u")
    old.append_messages("s", [user("from version 1")])
    old.close()
    before = catalog(pg_dsn)

    current = schema.SCHEMA_VERSION
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, (_v2_step, "SELECT 1/0")))
    monkeypatch.setattr(schema, "SCHEMA_VERSION", current + 1)
    with pytest.raises(SessionError, match="division by zero"):
        PostgresSessionStore(Database(pg_dsn))
    assert catalog(pg_dsn) == before  # the half-run migration was rolled back whole

    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS[:current], (_v2_step,)))
    upgraded = PostgresSessionStore(Database(pg_dsn))
    assert upgraded.migrated_from == current
    assert [m.message["content"] for m in upgraded.messages("s")] == ["from version 1"]
    upgraded.close()
    assert catalog(pg_dsn)["v"] == [(current + 1,)]
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT tags FROM hermes.sessions").fetchall() == [("migrated",)]
    assert PostgresSessionStore(Database(pg_dsn)).migrated_from is None


def _open_and_write(dsn: str, worker: int, results: Any) -> None:
    try:
        store = PostgresSessionStore(Database(dsn, timeout=120))
        store.open_session("shared", user_id="u")
        store.append_messages("shared", [user(f"opener {worker}")])
        results.put((worker, store.migrated_from, store.trigram))
        store.close()
    except BaseException as exc:
        results.put((worker, "error", repr(exc)))
        raise


def _lock_waiters(conn: psycopg.Connection[Any]) -> int:
    key = schema.MIGRATION_LOCK
    row = conn.execute(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
        "AND classid::bigint = %s AND objid::bigint = %s AND objsubid = 1",
        (key >> 32, key & 0xFFFFFFFF),
    ).fetchone()
    return int(row[0]) if row else 0


def test_processes_opening_a_fresh_database_together_migrate_it_once(pg_dsn: str) -> None:
    """The test holds the migration lock until every opener is waiting for it, so they all
    found no schema and all try to migrate at once; exactly one does the work."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    with psycopg.connect(pg_dsn, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (schema.MIGRATION_LOCK,))
        procs = [
            context.Process(target=_open_and_write, args=(pg_dsn, w, results))
            for w in range(OPENERS)
        ]
        for proc in procs:
            proc.start()
        deadline = time.monotonic() + 120
        while _lock_waiters(holder) < OPENERS:  # a state the server reports, polled
            assert time.monotonic() < deadline, "the openers never all waited for the lock"
            assert all(p.is_alive() for p in procs), "an opener ended before migrating"
            time.sleep(0.02)
        # they all wait to migrate: nothing exists yet (no one got past the lock)
        assert holder.execute("SELECT to_regnamespace('hermes')").fetchone() == (None,)
        holder.execute("SELECT pg_advisory_unlock(%s)", (schema.MIGRATION_LOCK,))
        reports = sorted(results.get(timeout=120) for _ in procs)
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    assert [migrated for _, migrated, _ in reports].count(0) == 1, reports
    assert [migrated for _, migrated, _ in reports].count(None) == OPENERS - 1, reports
    assert all(trigram is True for _, _, trigram in reports), reports
    assert catalog(pg_dsn)["v"] == [(schema.SCHEMA_VERSION,)]
    store = PostgresSessionStore(Database(pg_dsn))
    rows = store.messages("shared")
    assert sorted(m.message["content"] for m in rows) == [f"opener {w}" for w in range(OPENERS)]
    assert [m.seq for m in rows] == list(range(1, OPENERS + 1))
    store.close()


def test_without_pg_trgm_cjk_search_falls_back_to_ilike_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A role that may create tables in its schema but not extensions in the database (a
    common managed-database setup): the store opens, logs why, and still finds CJK text; a
    later open by a role that may creates the index."""
    role = f"hc_limited_{uuid.uuid4().hex[:10]}"
    execute(ADMIN_DSN, f'CREATE ROLE "{role}" LOGIN')
    try:
        with fresh_database() as dsn:
            execute(dsn, f'CREATE SCHEMA hermes AUTHORIZATION "{role}"')
            limited = psycopg.conninfo.make_conninfo(dsn, user=role)
            with caplog.at_level(logging.WARNING, logger="hermes_context.sessions"):
                store = PostgresSessionStore(Database(limited))
            assert store.trigram is False
            (line,) = [r.getMessage() for r in caplog.records if "pg_trgm" in r.getMessage()]
            assert "falls back to ILIKE" in line and "permission denied" in line
            store.open_session("cjk", user_id=None)
            store.append_messages("cjk", [user("english"), user("数据库迁移到新的服务器")])
            for query in ("数据", "服务器", "数据库迁移"):
                assert [(h.session_id, h.seq) for h in store.search(query, user_id=None)] == [
                    ("cjk", 2)
                ], query
            store.close()
            assert "pg_trgm" not in str(catalog(dsn)["extensions"])

            owner = PostgresSessionStore(Database(dsn))  # the superuser may
            assert owner.trigram is True
            assert [h.seq for h in owner.search("数据", user_id=None)] == [2]
            owner.close()
    finally:
        execute(ADMIN_DSN, f'DROP ROLE IF EXISTS "{role}"')
