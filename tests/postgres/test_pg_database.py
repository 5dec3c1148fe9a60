"""The PostgreSQL settings: each one changes what happens (``sessions.dsn``, ``dsn_env``,
``pool_size``, ``timeout``, ``backend``), against the real server."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hermes_core.config.loader import load_config
from hermes_core.errors import ConfigError, SessionError
from hermes_core.plugins import PluginContext
from hermes_plugins.postgres import PostgresBackend
from hermes_plugins.postgres.database import Database, DatabaseUnavailable, dsn_from


def backend(tmp_path: Path, sessions: dict[str, object], environ: dict[str, str] | None = None):
    loaded = load_config(
        {"sessions": {"backend": "postgres", **sessions}}, home=tmp_path, environ=environ or {}
    )
    context = PluginContext(
        name="postgres",
        config={},
        home=tmp_path,
        logger=logging.getLogger("t"),
        settings=loaded.settings,
    )
    return PostgresBackend(context), loaded


def test_dsn_picks_the_database(tmp_path: Path, pg_dsn: str) -> None:
    plugin, _ = backend(tmp_path, {"dsn": pg_dsn})
    database = plugin.database()
    try:
        name = database.run(
            lambda c: c.execute("SELECT current_database()").fetchone(), idempotent=True
        )
        assert name is not None and name[0] == pg_dsn.rsplit("/", 1)[1]
    finally:
        database.release()
        plugin.memory_shutdown()


def test_dsn_env_wins_and_a_missing_variable_is_named(tmp_path: Path, pg_dsn: str) -> None:
    _, loaded = backend(
        tmp_path, {"dsn": "postgresql://nobody@127.0.0.1:1/none", "dsn_env": "HC_TEST_DSN"}
    )
    assert dsn_from(loaded.settings.sessions, {"HC_TEST_DSN": pg_dsn}) == pg_dsn
    with pytest.raises(ConfigError, match="HC_TEST_DSN"):
        dsn_from(loaded.settings.sessions, {})


def test_env_reference_form_sets_dsn_env(tmp_path: Path) -> None:
    loaded = load_config(
        {"sessions": {"backend": "postgres", "dsn": {"$env": "HC_TEST_DSN"}}},
        home=tmp_path,
        environ={},
    )
    assert loaded.settings.sessions.dsn_env == "HC_TEST_DSN"
    assert loaded.settings.sessions.dsn == ""


def test_a_password_in_the_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"sessions\.dsn"):
        load_config(
            {"sessions": {"backend": "postgres", "dsn": "postgresql://u:S3cretpw9@db/x"}},
            home=tmp_path,
            environ={},
        )


@pytest.mark.parametrize("key", ["sessions", "memory"])
def test_postgres_without_a_database_is_refused(tmp_path: Path, key: str) -> None:
    with pytest.raises(ConfigError, match=rf"{key}\.backend: postgres needs a database"):
        load_config({key: {"backend": "postgres"}}, home=tmp_path, environ={})


def test_pool_size_caps_the_connections(pg_dsn: str) -> None:
    for size, third_gets_one in ((2, False), (3, True)):
        database = Database(pg_dsn, pool_size=size, timeout=0.5)
        try:
            with contextlib.ExitStack() as held:
                held.enter_context(database.connection())
                held.enter_context(database.connection())
                if third_gets_one:
                    with database.connection() as conn:
                        assert conn.execute("SELECT 1").fetchone() == (1,)
                else:
                    with (
                        pytest.raises(DatabaseUnavailable, match="pool_size"),
                        database.connection(),
                    ):
                        pass
        finally:
            database.release()


def test_timeout_cancels_a_statement_that_runs_over(pg_dsn: str) -> None:
    database = Database(pg_dsn, pool_size=1, timeout=0.5)
    try:
        shown = database.run(
            lambda c: c.execute("SHOW statement_timeout").fetchone(), idempotent=True
        )
        assert shown == ("500ms",)
        with pytest.raises(DatabaseUnavailable, match=r"sessions\.timeout"):
            database.run(lambda c: c.execute("SELECT pg_sleep(60)"), idempotent=True)
    finally:
        database.release()


def test_an_unreachable_server_says_where_and_hides_the_password() -> None:
    with pytest.raises(DatabaseUnavailable) as caught:
        Database("postgresql://hermes:Sup3rSecretPw@127.0.0.1:1/db", timeout=1)
    text = str(caught.value)
    assert "hermes@127.0.0.1:1/db" in text
    assert "Sup3rSecretPw" not in text


def test_release_closes_the_pool_after_the_last_user(pg_dsn: str) -> None:
    database = Database(pg_dsn, pool_size=1, timeout=2)
    database.acquire()
    database.release()
    assert not database.pool.closed
    database.release()
    assert database.pool.closed
    database.release()  # too often is harmless
    with pytest.raises(DatabaseUnavailable, match="closed"):
        database.acquire()


def test_a_server_error_is_not_taken_for_a_lost_connection(pg_dsn: str) -> None:
    """An OperationalError the server reports about the statement (here: a limit) is said as
    it is, once, not as "the connection failed", and not retried."""
    database = Database(pg_dsn, pool_size=1, timeout=5)
    calls = []

    def work(conn: Any) -> None:
        calls.append(1)
        conn.execute("SELECT repeat('x', 3000)::tsvector")

    try:
        with pytest.raises(SessionError, match="refused the statement: word is too long") as e:
            database.run(work, idempotent=True)
        assert not isinstance(e.value, DatabaseUnavailable)
        assert calls == [1]
    finally:
        database.release()


def test_a_database_that_went_away_is_not_called_a_busy_pool() -> None:
    from pg import create_database, drop_database, dsn_for

    name = create_database("hc_gone")
    database = Database(dsn_for(name), pool_size=2, timeout=1)
    try:
        drop_database(name)
        with pytest.raises(DatabaseUnavailable) as caught:
            for _ in range(3):  # the first call may still find the dropped connection
                database.run(lambda c: c.execute("SELECT 1").fetchone(), idempotent=True)
        assert "busy" not in str(caught.value)
    finally:
        database.release()
        drop_database(name)


def test_sessions_opening_at_once_share_one_memory_backend_and_close_it(
    tmp_path: Path, pg_dsn: str
) -> None:
    import threading

    from hermes_core import Hermes

    config = {"sessions": {"backend": "postgres", "dsn": pg_dsn}, "memory": {"backend": "postgres"}}
    host = Hermes.from_config(config, home=tmp_path)
    start = threading.Barrier(8)
    found: list[object] = []

    def open_documents() -> None:
        start.wait()
        found.append(host.memory_documents())

    threads = [threading.Thread(target=open_documents) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(d) for d in found}) == 1
    plugin = host.plugins.get_plugin("postgres")
    database = plugin.database()  # type: ignore[union-attr]
    database.release()
    host.close()
    assert database.pool.closed
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'hermes-context' "
            "AND datname = current_database()"
        ).fetchone()
    assert left == (0,)


@pytest.mark.parametrize("where", ["dsn", "PGOPTIONS"])
def test_the_users_own_options_are_kept(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """``options`` in the DSN, or libpq's ``PGOPTIONS``, survive our statement timeout."""
    dsn = pg_dsn
    if where == "dsn":
        dsn = f"{pg_dsn}?options=-c%20work_mem%3D77MB"
    else:
        monkeypatch.setenv("PGOPTIONS", "-c work_mem=77MB")
    database = Database(dsn, pool_size=1, timeout=0.5)
    try:
        shown = database.run(
            lambda c: c.execute(
                "SELECT current_setting('work_mem'), current_setting('statement_timeout')"
            ).fetchone(),
            idempotent=True,
        )
        assert shown == ("77MB", "500ms")
    finally:
        database.release()
