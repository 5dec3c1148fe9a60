"""One PostgreSQL database for a host process: the pool, timeouts, retries, safe errors.

Why one object: the session store and the memory rows of one host share a pool (a gateway
process should hold a handful of connections, not one per feature), and every failure must
reach the user as a short error that names what to check, with the password never in it.

Retries: a transaction PostgreSQL rolled back itself (serialization failure, deadlock) is
always retried with jittered back-off; a broken connection is retried only for work marked
``idempotent`` (a read, or a write whose repeat cannot double anything), since a commit whose
answer was lost may have landed.
"""

from __future__ import annotations

import contextlib
import os
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool, PoolTimeout

from hermes_core.config.settings import SessionsSettings
from hermes_core.errors import ConfigError, SessionError
from hermes_core.redact import redact

__all__ = ["Database", "DatabaseUnavailable", "dsn_from", "safe_dsn"]

T = TypeVar("T")

#: attempts for one unit of work (the first try included)
ATTEMPTS = 4
_ROLLED_BACK = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)


class DatabaseUnavailable(SessionError):
    """The database cannot be reached (or stopped answering); nothing was changed by the
    failed call unless it says so."""


def dsn_from(settings: SessionsSettings, environ: Mapping[str, str] | None = None) -> str:
    """The connection string the settings name: ``dsn_env``'s variable, else ``dsn``."""
    env = os.environ if environ is None else environ
    if settings.dsn_env:
        value = env.get(settings.dsn_env, "")
        if not value.strip():
            raise ConfigError(
                f"sessions.dsn_env names {settings.dsn_env}, which is not set (or empty): "
                "export the connection string in it"
            )
        return value
    if not settings.dsn:
        raise ConfigError(
            "the postgres backend needs sessions.dsn (or sessions.dsn_env): the database "
            "every host shares"
        )
    return settings.dsn


def safe_dsn(dsn: str) -> str:
    """The connection string as it may be shown: host, port, database and user only."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "<unparsable connection string>"
    host = info.get("host") or info.get("hostaddr") or "local socket"
    port = info.get("port") or "5432"
    return f"{info.get('user') or 'default user'}@{host}:{port}/{info.get('dbname') or '?'}"


def _why(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return redact(text)[:300]


def _with_options(dsn: str, ours: str) -> str:
    """The DSN's own ``options`` (a ``search_path``, ``work_mem``), else libpq's
    ``PGOPTIONS``, followed by ours: the keyword argument would replace them otherwise."""
    try:
        theirs = psycopg.conninfo.conninfo_to_dict(dsn).get("options")
    except psycopg.ProgrammingError:
        theirs = None
    theirs = theirs or os.environ.get("PGOPTIONS", "").strip()
    return f"{theirs} {ours}" if theirs else ours


def _connection_lost(exc: psycopg.OperationalError) -> bool:
    """Whether the connection itself failed (no answer, or the server going away), as
    opposed to an error the server reported about the statement (out of memory, a limit)."""
    state = exc.sqlstate
    return state is None or state.startswith("08") or state in {"57P01", "57P02", "57P03"}


class Database:
    """A pool of connections to one database; share it by :meth:`acquire` / :meth:`release`.

    ``pool_size`` caps the open connections, ``timeout`` bounds a connect, a wait for a
    pooled connection and every statement (``statement_timeout``). Opening waits for one
    connection, so an unreachable server fails here, at start, with
    :class:`DatabaseUnavailable`.
    """

    def __init__(
        self, dsn: str, *, pool_size: int = 4, timeout: float = 10.0, name: str = "hermes-context"
    ) -> None:
        self.where = safe_dsn(dsn)
        self.timeout = float(timeout)
        statement_ms = max(1, int(self.timeout * 1000))
        self._users = 1
        self._lock = threading.Lock()
        try:
            kwargs: dict[str, Any] = {
                "connect_timeout": max(1, round(self.timeout)),
                "application_name": name,
                "options": _with_options(dsn, f"-c statement_timeout={statement_ms}"),
                "autocommit": False,
            }
            self._dsn, self._kwargs = dsn, kwargs  # for the probe; never shown
            # one direct connection first: the pool would only say "timed out", while the
            # server's own reason (no such database, role, refused) tells the user what to fix
            psycopg.connect(dsn, **kwargs).close()
            self.pool = ConnectionPool(
                dsn,
                min_size=1,
                max_size=max(1, int(pool_size)),
                timeout=self.timeout,
                kwargs=kwargs,
                open=False,
                reconnect_timeout=self.timeout,
                check=ConnectionPool.check_connection,
                name=name,
            )
            self.pool.open(wait=True, timeout=self.timeout)
        except PoolTimeout:
            self._close_quietly()
            raise DatabaseUnavailable(
                f"cannot reach PostgreSQL at {self.where} within {self.timeout:g} s: is the "
                "server running, and do sessions.dsn's host, port, user and database exist? "
                "(`hermes-context config check` tests the connection)"
            ) from None
        except psycopg.Error as exc:
            self._close_quietly()
            raise DatabaseUnavailable(
                f"cannot open PostgreSQL at {self.where}: {_why(exc)} (check sessions.dsn; "
                "`hermes-context config check` tests the connection)"
            ) from None

    # --- sharing ----------------------------------------------------------------------------

    def acquire(self) -> Database:
        """One more user of this pool; each calls :meth:`release` once."""
        with self._lock:
            if self._users == 0:
                raise DatabaseUnavailable(f"the pool for {self.where} is closed")
            self._users += 1
        return self

    def release(self) -> None:
        """Drop one user; the last one closes the pool. Safe to call too often."""
        with self._lock:
            if self._users == 0:
                return
            self._users -= 1
            last = self._users == 0
        if last:
            self._close_quietly()

    def _close_quietly(self) -> None:
        pool = getattr(self, "pool", None)
        if pool is not None:
            with contextlib.suppress(Exception):  # closing must not hide the real error
                pool.close(timeout=self.timeout)

    # --- work -------------------------------------------------------------------------------

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection (no retries; the caller owns the transaction)."""
        try:
            with self.pool.connection(timeout=self.timeout) as conn:
                yield conn
        except PoolTimeout:
            down = self._probe()  # the server gone, or only every connection in use?
            if down:
                raise DatabaseUnavailable(
                    f"PostgreSQL at {self.where} does not answer ({down}); nothing was changed"
                ) from None
            raise DatabaseUnavailable(
                f"no PostgreSQL connection to {self.where} became free within "
                f"{self.timeout:g} s: all {self.pool.max_size} are busy "
                "(sessions.pool_size, sessions.timeout); nothing was changed"
            ) from None

    def _probe(self) -> str:
        """Why a new connection cannot be made now ("" when one can)."""
        try:
            psycopg.connect(self._dsn, **self._kwargs).close()
        except psycopg.Error as exc:
            return _why(exc)
        return ""

    def run(self, work: Callable[[psycopg.Connection[Any]], T], *, idempotent: bool) -> T:
        """``work(conn)`` in one transaction, committed when it returns.

        Rolled-back transactions are retried; a lost connection is retried only when
        ``idempotent``; other errors pass through (after the rollback) as they are.
        """
        for attempt in range(1, ATTEMPTS + 1):
            try:
                with self.connection() as conn, conn.transaction():
                    return work(conn)
            except _ROLLED_BACK:
                if attempt == ATTEMPTS:
                    raise
            except pg_errors.QueryCanceled as exc:
                raise DatabaseUnavailable(
                    f"a PostgreSQL statement on {self.where} ran over sessions.timeout "
                    f"({self.timeout:g} s) and was cancelled; nothing was changed"
                ) from exc
            except psycopg.OperationalError as exc:
                if not _connection_lost(exc):  # a server error: the transaction rolled back
                    raise SessionError(
                        f"PostgreSQL at {self.where} refused the statement: {_why(exc)}; "
                        "nothing was changed"
                    ) from None
                if not idempotent:
                    raise DatabaseUnavailable(
                        f"the connection to {self.where} failed during a write ({_why(exc)}); "
                        "the write either landed whole or not at all: reopen the session to "
                        "see which"
                    ) from None
                if attempt == ATTEMPTS:
                    raise DatabaseUnavailable(
                        f"PostgreSQL at {self.where} stopped answering: {_why(exc)}"
                    ) from None
            time.sleep(random.uniform(0.01, 0.05) * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover
