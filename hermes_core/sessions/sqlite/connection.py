"""Opening ``state.db``: the file, per-thread connections, transactions and bounded retries.

* The file is created with mode 0600 (parents 0700) before SQLite opens it; SQLite gives its
  ``-wal`` and ``-shm`` files the same mode.
* One connection per thread (SQLite connections are cheap and WAL lets readers run beside a
  writer); a process that forked drops its parent's connections without touching them.
* Writes run in ``BEGIN IMMEDIATE`` transactions, so two processes never both prepare a
  write from the same snapshot (the next ``seq`` is computed inside the transaction).
* ``database is locked`` / ``busy``: SQLite's busy timeout waits first; past it the whole
  transaction is retried a bounded number of times with jittered backoff, then a
  :class:`~hermes_core.errors.SessionError` says what to do.
"""

from __future__ import annotations

import logging
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from hermes_core.errors import SessionError
from hermes_core.sessions.sqlite import fts
from hermes_core.sessions.sqlite.read_only import ReadOnlySource

__all__ = ["ConnectionPool", "RetryPolicy", "create_file", "describe_error", "is_busy"]

log = logging.getLogger("hermes_context.sessions")
T = TypeVar("T")
OnConnect = Callable[[sqlite3.Connection], None]
# Connections inherited through fork(): never used nor closed by the child (closing one could
# disturb the parent's locks), only kept referenced so the garbage collector leaves them be.
_INHERITED: list[sqlite3.Connection] = []


@dataclass(frozen=True)
class RetryPolicy:
    """How often a busy transaction is retried, and how long to wait between attempts.

    The wait before retry ``n`` (0-based) is ``min(max_delay, base_delay * 2**n)`` scaled by
    a random factor in [0.5, 1): jitter, so that processes that collided do not collide again.
    """

    attempts: int = 5
    base_delay: float = 0.05
    max_delay: float = 1.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    random: Callable[[], float] = field(default=random.random, repr=False)

    def delay(self, attempt: int) -> float:
        return float(min(self.max_delay, self.base_delay * 2**attempt) * (0.5 + self.random() / 2))


def is_busy(exc: BaseException) -> bool:
    """True for SQLITE_BUSY / SQLITE_LOCKED (another connection holds the lock)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def describe_error(path: Path, exc: sqlite3.Error) -> SessionError:
    """A :class:`SessionError` that says what went wrong with ``path`` and what to do."""
    text = str(exc)
    lowered = text.lower()
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        hint = (
            "the file is not a SQLite database or is damaged; move it aside (a new store is "
            "created on the next start) or restore a backup"
        )
    elif "readonly" in lowered or "read-only" in lowered:
        hint = "the file or its directory is read-only; check the permissions"
    elif "unable to open" in lowered:
        hint = "check that the path is a file you may read and write, in an existing directory"
    elif "disk is full" in lowered or "disk i/o" in lowered:
        hint = "check the disk (space, errors) and retry"
    else:
        hint = "nothing was changed"
    return SessionError(f"session store {path}: {text}: {hint}")


def create_file(path: Path) -> None:
    """Create ``path`` (mode 0600) and its missing parents (0700); an existing file is kept."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
    except OSError as exc:
        raise SessionError(
            f"session store {path}: cannot create the file ({exc.strerror or exc}); check "
            "that its directory is writable"
        ) from None
    os.close(fd)


class ConnectionPool:
    """A connection per thread to one database file, all closed by :meth:`close`."""

    def __init__(
        self,
        path: Path,
        *,
        busy_timeout: float,
        retry: RetryPolicy,
        on_connect: OnConnect | None = None,
        read_only: bool = False,
    ) -> None:
        self.path = path
        #: open for reading only, through :class:`ReadOnlySource` (nothing created or changed)
        self.read_only = read_only
        self._source = ReadOnlySource(path) if read_only else None
        self.busy_timeout = busy_timeout
        self.retry = retry
        self._on_connect = on_connect
        self._lock = threading.Lock()
        self._local = threading.local()
        self._open: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._pid = os.getpid()
        self._closed = False

    def get(self) -> sqlite3.Connection:
        """This thread's connection (opened on first use)."""
        if self._closed:
            raise SessionError(f"session store {self.path} is closed")
        if os.getpid() != self._pid:
            self._forget_inherited()
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        with self._lock:
            if self._closed:
                raise SessionError(f"session store {self.path} is closed")
            self._close_dead_threads()
            conn = self._connect()
            self._open.append((threading.current_thread(), conn))
        self._local.conn = conn
        return conn

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self._source.uri() if self._source is not None else str(self.path),
                uri=self._source is not None,
                timeout=self.busy_timeout,
                isolation_level=None,  # transactions are explicit (BEGIN IMMEDIATE)
                check_same_thread=False,  # close() may run in another thread
            )
        except sqlite3.Error as exc:
            raise describe_error(self.path, exc) from None
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            fts.attach(conn)  # archived (packed) rows: the triggers and reads unpack them
            if not self.read_only:
                conn.execute("PRAGMA synchronous = FULL")  # a commit survives power loss too
            if self._on_connect is not None:
                self._on_connect(conn)
        except sqlite3.Error as exc:
            conn.close()
            raise describe_error(self.path, exc) from None
        except BaseException:
            conn.close()
            raise
        return conn

    def _forget_inherited(self) -> None:
        with self._lock:
            _INHERITED.extend(conn for _, conn in self._open)
            self._open = []
            self._local = threading.local()
            self._pid = os.getpid()

    def _close_dead_threads(self) -> None:
        alive = []
        for thread, conn in self._open:
            if thread.is_alive():
                alive.append((thread, conn))
            else:
                conn.close()
        self._open = alive

    def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` in a ``BEGIN IMMEDIATE`` transaction: committed whole or not at all."""
        return self._retrying(work, "BEGIN IMMEDIATE")

    def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` in a read transaction (one consistent snapshot for all its queries)."""
        return self._retrying(work, "BEGIN")

    def call(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` outside a transaction (pragmas that cannot run inside one)."""
        return self._retrying(work, None)

    def _retrying(self, work: Callable[[sqlite3.Connection], T], begin: str | None) -> T:
        started = time.monotonic()
        for attempt in range(self.retry.attempts):
            conn = self.get()
            try:
                return _transaction(conn, work, begin)
            except sqlite3.Error as exc:
                if not is_busy(exc):
                    raise describe_error(self.path, exc) from None
                if attempt + 1 == self.retry.attempts:
                    break
                log.debug("session store busy (attempt %d): %s", attempt + 1, exc)
                self.retry.sleep(self.retry.delay(attempt))
        waited = time.monotonic() - started
        raise SessionError(
            f"session store {self.path} is locked by another connection (still busy after "
            f"{self.retry.attempts} attempts over {waited:.1f}s); nothing was changed: retry "
            "later, and check for a process that keeps a write transaction open"
        )

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            owned, self._open = self._open, []
        if os.getpid() != self._pid:
            _INHERITED.extend(conn for _, conn in owned)
            return
        for _, conn in owned:
            conn.close()
        if self._source is not None:
            self._source.close()


def _transaction(
    conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], T], begin: str | None
) -> T:
    if begin is None:
        return work(conn)
    conn.execute(begin)
    try:
        result = work(conn)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error as exc:  # the rollback is automatic then; say so and go on
                log.warning("session store rollback failed: %s", exc)
        raise
    return result
