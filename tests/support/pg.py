"""A throw-away PostgreSQL database per test, on this machine's real server.

``HERMES_TEST_PG_ADMIN`` (default ``postgresql://postgres@127.0.0.1:5432/postgres``) is the
maintenance connection used to create and drop databases: a role that may create databases.
Without psycopg (the core-only test environment) the PostgreSQL tests skip; without a server
they skip too, all with the one reason :func:`server_problem` gives (asked once per run, so
pytest's summary folds them into one line); with ``HERMES_POSTGRES_REQUIRED=1`` (set by tox's
py3-all, which CI runs) a server that does not answer fails them instead.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
import uuid
from collections.abc import Callable, Iterator

import pytest

ADMIN_DSN = os.environ.get("HERMES_TEST_PG_ADMIN", "postgresql://postgres@127.0.0.1:5432/postgres")


def _psycopg():  # type: ignore[no-untyped-def]
    try:
        import psycopg
    except ImportError:
        pytest.skip("psycopg is not installed (the postgres extra)")
    return psycopg


def dsn_for(database: str) -> str:
    """The admin connection string pointed at ``database``."""
    base, _, _ = ADMIN_DSN.rpartition("/")
    return f"{base}/{database}"


@functools.cache
def server_problem() -> str | None:
    """Why the PostgreSQL tests cannot run here (None when they can); asked once per run."""
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (the postgres extra)"
    try:
        with psycopg.connect(ADMIN_DSN, connect_timeout=5, autocommit=True) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return (
            f"no PostgreSQL server answers at {ADMIN_DSN} ({first_line}); set "
            "HERMES_TEST_PG_ADMIN to a role that may create databases to run these tests"
        )
    return None


def require_server() -> None:
    """Skip (or fail, when required) unless the server answers."""
    problem = server_problem()
    if problem is None:
        return
    if os.environ.get("HERMES_POSTGRES_REQUIRED") == "1":
        pytest.fail(f"HERMES_POSTGRES_REQUIRED=1: {problem}")
    pytest.skip(problem)


def create_database(prefix: str = "hc_test") -> str:
    """A new empty database; returns its name."""
    psycopg = _psycopg()
    name = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(ADMIN_DSN, connect_timeout=5, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name


def drop_database(name: str) -> None:
    psycopg = _psycopg()
    with psycopg.connect(ADMIN_DSN, connect_timeout=5, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def fresh_database(prefix: str = "hc_test") -> Iterator[str]:
    """Create a database, yield its connection string, drop it afterwards."""
    require_server()
    name = create_database(prefix)
    try:
        yield dsn_for(name)
    finally:
        drop_database(name)


@pytest.fixture
def pg_dsn() -> Iterator[str]:
    """The connection string of a fresh database, dropped after the test."""
    with fresh_database() as dsn:
        yield dsn


def sql(dsn: str, query: str, *params: object) -> list[tuple[object, ...]]:
    """Run one statement through a connection of the test's own (autocommit); its rows."""
    psycopg = _psycopg()
    with psycopg.connect(dsn, autocommit=True) as conn:
        cursor = conn.execute(query, params or None)
        return cursor.fetchall() if cursor.description else []


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Poll a condition the server reports (not a guess at how long something takes)."""
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, f"never saw: {what}"
        time.sleep(0.01)
